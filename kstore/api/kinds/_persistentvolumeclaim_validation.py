"""PersistentVolumeClaim validation on the hub, as ``pkg/apis/core/validation`` does it.

:func:`validate_persistent_volume_claim` is ``ValidatePersistentVolumeClaim`` (create),
:func:`validate_persistent_volume_claim_update` is the strategy's update validation (the claim
itself, then ``ValidatePersistentVolumeClaimUpdate``'s immutability rules) and
:func:`validate_persistent_volume_claim_status_update` is
``ValidatePersistentVolumeClaimStatusUpdate`` (the ``status`` subresource).
:func:`validate_persistent_volume_claim_spec` is ``ValidatePersistentVolumeClaimSpec``, which
StatefulSets apply to their ``volumeClaimTemplates``. Causes come in Kubernetes' order, with its
paths (quirks included: the storage request is reported at ``spec.resources[storage]``, a
changed ``volumeMode`` at ``volumeMode``, a status write without access modes at
``Spec.accessModes``) and its messages, for Kubernetes v1.36 with its default feature gates
(VolumeAttributesClass and RecoverVolumeExpansionFailure on).

Where kstore differs: a quantity is printed as written rather than in Kubernetes' canonical
form (a zero is printed ``0``); a quantity that does not parse, which Kubernetes refuses while
decoding, is reported here as an invalid value; and the spec difference Kubernetes appends to
"spec is immutable after creation ..." (a Go ``cmp.Diff``, whose spacing is randomised on
purpose) is a list of the changed fields, ``-`` old and ``+`` new.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any, Final

from kstore.api.kinds._selector import validate_label_selector
from kstore.api.kinds._semantic import semantic_equal
from kstore.api.proto_schema import message_type
from kstore.api.quantity import parse_quantity
from kstore.api.validation._access import get_list, get_map, get_str, opt_str
from kstore.api.validation._render import go_json
from kstore.api.validation.field import (
    GoStruct,
    JSONValue,
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
)
from kstore.api.validation.names import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    name_is_dns_subdomain,
)
from kstore.api.validation.objectmeta import (
    metadata_of,
    validate_object_meta,
    validate_object_meta_update,
)
from kstore.errors import Cause

__all__ = [
    "BETA_STORAGE_CLASS_ANNOTATION",
    "PVCOptions",
    "fractional_storage_warnings",
    "normalize_data_sources",
    "pvc_options",
    "validate_persistent_volume_claim",
    "validate_persistent_volume_claim_spec",
    "validate_persistent_volume_claim_status_update",
    "validate_persistent_volume_claim_update",
]

#: ``core.BetaStorageClassAnnotation``: the storage class before ``storageClassName``.
BETA_STORAGE_CLASS_ANNOTATION: Final = "volume.beta.kubernetes.io/storage-class"

_SPEC: Final = Path("spec")
_STORAGE: Final = "storage"
_ACCESS_MODES: Final = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
_VOLUME_MODES: Final = ("Block", "Filesystem")
_RESIZE_STATUSES: Final = (
    "ControllerResizeInProgress",
    "ControllerResizeInfeasible",
    "NodeResizeInProgress",
    "NodeResizeInfeasible",
    "NodeResizePending",
)
_QUANTITY_FORMAT: Final = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
_SPEC_IMMUTABLE: Final = (
    "spec is immutable after creation except resources.requests and volumeAttributesClassName "
    "for bound claims"
)
# The internal PersistentVolumeClaimSpec's Go field names, in declaration order (for the diff).
_GO_FIELDS: Final = (
    ("accessModes", "AccessModes"),
    ("selector", "Selector"),
    ("resources", "Resources"),
    ("volumeName", "VolumeName"),
    ("storageClassName", "StorageClassName"),
    ("volumeMode", "VolumeMode"),
    ("dataSource", "DataSource"),
    ("dataSourceRef", "DataSourceRef"),
    ("volumeAttributesClassName", "VolumeAttributesClassName"),
)


class PVCOptions:
    """``PersistentVolumeClaimSpecValidationOptions`` (the gates' fields are always on)."""

    __slots__ = ("allow_invalid_api_group", "allow_invalid_label_values")

    def __init__(
        self, *, allow_invalid_label_values: bool = False, allow_invalid_api_group: bool = False
    ) -> None:
        self.allow_invalid_label_values = allow_invalid_label_values
        self.allow_invalid_api_group = allow_invalid_api_group


_CREATE: Final = PVCOptions()


def _opt_map(obj: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else None


def pvc_options(old: Mapping[str, Any] | None) -> PVCOptions:
    """``ValidationOptionsForPersistentVolumeClaim``: what an update keeps accepting because
    the stored claim already had it (an API group in a data source, a selector with invalid
    label values)."""
    if old is None:
        return _CREATE
    spec = get_map(old, "spec")
    selector = _opt_map(spec, "selector")
    return PVCOptions(
        allow_invalid_label_values=bool(validate_label_selector(selector, _SPEC)),
        allow_invalid_api_group=any(
            (ref := _opt_map(spec, key)) is not None and ref.get("apiGroup") is not None
            for key in ("dataSource", "dataSourceRef")
        ),
    )


# ------------------------------------------------------------------------ quantities


def _amount(value: Any) -> Fraction | None:
    return parse_quantity(value) if isinstance(value, (str, int, float)) else None


def _text(value: Any, amount: Fraction) -> str:
    """The quantity as printed in messages: as written, ``0`` for a zero."""
    if amount == 0:
        return "0"
    return value.strip() if isinstance(value, str) else str(value)


def _go_value(amount: Fraction) -> int:
    """``Quantity.Value()``: rounded up, away from zero."""
    rounded = math.ceil(abs(amount))
    return rounded if amount >= 0 else -rounded


def _bad_quantity(value: Any, path: Path) -> Cause:
    return invalid(path, value if isinstance(value, str) else JSONValue(value), _QUANTITY_FORMAT)


def fractional_storage_warnings(spec: Mapping[str, Any], path: Path) -> list[str]:
    """``GetWarningsForPersistentVolumeClaimSpec``: a storage request or limit that is not a
    whole number of bytes."""
    warnings: list[str] = []
    resources = get_map(spec, "resources")
    for key in ("requests", "limits"):
        value = get_map(resources, key).get(_STORAGE)
        amount = _amount(value) if value is not None else None
        if amount is not None and math.ceil(amount * 1000) % 1000:
            where = path.child("resources", key).key(_STORAGE)
            text = go_json(_text(value, amount))
            warnings.append(f"{where}: fractional byte value {text} is invalid, must be an integer")
    return warnings


# ------------------------------------------------------------------------ spec


def _validate_data_source(
    source: Mapping[str, Any], path: Path, allow_invalid_api_group: bool
) -> list[Cause]:
    causes: list[Cause] = []
    if not get_str(source, "name"):
        causes.append(required(path.child("name")))
    kind = get_str(source, "kind")
    if not kind:
        causes.append(required(path.child("kind")))
    api_group = get_str(source, "apiGroup")
    if not api_group and kind != "PersistentVolumeClaim":
        causes.append(
            invalid(
                path, kind, "must be 'PersistentVolumeClaim' when referencing the default apiGroup"
            )
        )
    if api_group and not allow_invalid_api_group:
        causes.extend(
            invalid(path.child("apiGroup"), api_group, msg)
            for msg in is_dns1123_subdomain(api_group)
        )
    return causes


def _validate_storage_request(spec: Mapping[str, Any], path: Path) -> list[Cause]:
    requests = get_map(get_map(spec, "resources"), "requests")
    if _STORAGE not in requests:
        return [required(path)]
    value = requests[_STORAGE]
    amount = _amount(value)
    if amount is None:
        return [_bad_quantity(value, path)]
    if amount <= 0:
        return [invalid(path, _text(value, amount), "must be greater than zero")]
    # ValidateResourceQuantityValue: storage is neither negative now nor an integer resource.
    return []


def validate_persistent_volume_claim_spec(
    spec: Mapping[str, Any], path: Path, options: PVCOptions = _CREATE
) -> list[Cause]:
    """``ValidatePersistentVolumeClaimSpec``."""
    causes: list[Cause] = []
    modes = get_list(spec, "accessModes")
    if not modes:
        causes.append(required(path.child("accessModes"), "at least 1 access mode is required"))
    selector = _opt_map(spec, "selector")
    if selector is not None:
        causes.extend(
            validate_label_selector(
                selector,
                path.child("selector"),
                allow_invalid_label_values=options.allow_invalid_label_values,
            )
        )
    once_pod = other = False
    for mode in modes:
        if mode not in _ACCESS_MODES:
            causes.append(not_supported(path.child("accessModes"), JSONValue(mode), _ACCESS_MODES))
        elif mode == "ReadWriteOncePod":
            once_pod = True
        else:
            other = True
    if once_pod and other:
        causes.append(
            forbidden(
                path.child("accessModes"), "may not use ReadWriteOncePod with other access modes"
            )
        )
    causes.extend(_validate_storage_request(spec, path.child("resources").key(_STORAGE)))
    storage_class = opt_str(spec, "storageClassName")
    if storage_class:
        causes.extend(
            invalid(path.child("storageClassName"), storage_class, msg)
            for msg in name_is_dns_subdomain(storage_class, False)
        )
    volume_mode = opt_str(spec, "volumeMode")
    if volume_mode is not None and volume_mode not in _VOLUME_MODES:
        causes.append(
            not_supported(path.child("volumeMode"), JSONValue(volume_mode), _VOLUME_MODES)
        )
    source, ref = _opt_map(spec, "dataSource"), _opt_map(spec, "dataSourceRef")
    if source is not None:
        causes.extend(
            _validate_data_source(source, path.child("dataSource"), options.allow_invalid_api_group)
        )
    if ref is not None:
        causes.extend(
            _validate_data_source(ref, path.child("dataSourceRef"), options.allow_invalid_api_group)
        )
        namespace = get_str(ref, "namespace")
        causes.extend(
            invalid(path.child("dataSourceRef", "namespace"), namespace, msg)
            for msg in (is_dns1123_label(namespace) if namespace else ())
        )
    # The bad value Kubernetes reports here is a *field.Path, which json.Marshal prints as {}.
    if ref is not None and get_str(ref, "namespace"):
        if source is not None:
            causes.append(
                invalid(
                    path,
                    GoStruct(),
                    "may not be specified when dataSourceRef.namespace is specified",
                )
            )
    elif source is not None and ref is not None and not _same_source(source, ref):
        causes.append(invalid(path, GoStruct(), "must match dataSourceRef"))
    attributes_class = opt_str(spec, "volumeAttributesClassName")
    if attributes_class:
        causes.extend(
            invalid(path.child("volumeAttributesClassName"), attributes_class, msg)
            for msg in name_is_dns_subdomain(attributes_class, False)
        )
    return causes


def _same_source(source: Mapping[str, Any], ref: Mapping[str, Any]) -> bool:
    """``isDataSourceEqualDataSourceRef``: an unset API group differs from an empty one."""
    return (
        opt_str(source, "apiGroup") == opt_str(ref, "apiGroup")
        and get_str(source, "kind") == get_str(ref, "kind")
        and get_str(source, "name") == get_str(ref, "name")
    )


def normalize_data_sources(spec: dict[str, Any]) -> None:
    """``NormalizeDataSources``: ``dataSource`` and ``dataSourceRef`` carry the same reference
    when only one of them is set (a namespaced ``dataSourceRef`` has no ``dataSource`` form)."""
    source, ref = _opt_map(spec, "dataSource"), _opt_map(spec, "dataSourceRef")
    if source is not None and ref is None:
        copied: dict[str, Any] = {"kind": get_str(source, "kind"), "name": get_str(source, "name")}
        if source.get("apiGroup") is not None:
            copied = {"apiGroup": source["apiGroup"], **copied}
        spec["dataSourceRef"] = copied
    elif ref is not None and source is None and not get_str(ref, "namespace"):
        copied = {"kind": get_str(ref, "kind"), "name": get_str(ref, "name")}
        if ref.get("apiGroup") is not None:
            copied = {"apiGroup": ref["apiGroup"], **copied}
        spec["dataSource"] = copied


# ------------------------------------------------------------------------ entry points


def validate_persistent_volume_claim(
    pvc: Mapping[str, Any], options: PVCOptions = _CREATE
) -> list[Cause]:
    """``ValidatePersistentVolumeClaim``: a claim (hub) on create."""
    causes = validate_object_meta(pvc, True, name_is_dns_subdomain)
    causes.extend(validate_persistent_volume_claim_spec(get_map(pvc, "spec"), _SPEC, options))
    return causes


def _storage_class_upgrade_from_annotation(
    old_annotations: Mapping[str, Any],
    new_annotations: Mapping[str, Any],
    old_class: str | None,
    new_class: str | None,
) -> bool:
    """``validateStorageClassUpgradeFromAnnotation``: ``storageClassName`` may take the value
    the beta annotation held, once."""
    if BETA_STORAGE_CLASS_ANNOTATION not in old_annotations or old_class is not None:
        return False
    old_value = old_annotations[BETA_STORAGE_CLASS_ANNOTATION]
    return bool(
        new_class == old_value
        and new_annotations.get(BETA_STORAGE_CLASS_ANNOTATION, old_value) == old_value
    )


def _spec_diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    lines = ["  core.PersistentVolumeClaimSpec{"]
    for key, name in _GO_FIELDS:
        if old.get(key) != new.get(key):
            lines.append(f"- \t{name}: {go_json(old.get(key))},")
            lines.append(f"+ \t{name}: {go_json(new.get(key))},")
    lines.append("  }")
    return "\n".join(lines) + "\n"


def validate_persistent_volume_claim_update(
    new: Mapping[str, Any], old: Mapping[str, Any]
) -> list[Cause]:
    """The claim's update validation: ``ValidatePersistentVolumeClaim`` with the options the
    stored claim allows, then ``ValidatePersistentVolumeClaimUpdate``'s rules."""
    options = pvc_options(old)
    causes = validate_object_meta_update(new, old)
    causes.extend(validate_persistent_volume_claim(new, options))
    new_spec, old_spec = get_map(new, "spec"), dict(get_map(old, "spec"))
    normalize_data_sources(old_spec)
    new_clone, old_clone = dict(new_spec), dict(old_spec)
    if not get_str(old_spec, "volumeName"):
        # The volume controller binds a claim once.
        _copy_key(new_spec, old_clone, "volumeName")
    new_annotations = get_map(metadata_of(new), "annotations")
    old_annotations = get_map(metadata_of(old), "annotations")
    new_class, old_class = (
        opt_str(new_spec, "storageClassName"),
        opt_str(old_spec, "storageClassName"),
    )
    if _storage_class_upgrade_from_annotation(
        old_annotations, new_annotations, old_class, new_class
    ):
        new_clone.pop("storageClassName", None)
    else:
        new_value = get_str(new_annotations, BETA_STORAGE_CLASS_ANNOTATION)
        old_value = get_str(old_annotations, BETA_STORAGE_CLASS_ANNOTATION)
        if new_value != old_value:
            causes.append(
                invalid(
                    Path("metadata", "annotations", BETA_STORAGE_CLASS_ANNOTATION),
                    new_value,
                    "field is immutable",
                )
            )
        # validateStorageClassUpgradeFromNil: a claim without a class may get one (the one its
        # annotation names, if it has the annotation).
        if (
            new_class is not None
            and old_class is None
            and (
                BETA_STORAGE_CLASS_ANNOTATION not in old_annotations
                or new_class == old_annotations[BETA_STORAGE_CLASS_ANNOTATION]
            )
        ):
            _copy_key(old_spec, new_clone, "storageClassName")
    bound = get_str(get_map(new, "status"), "phase") == "Bound"
    if bound:
        # A bound claim may be resized and may change its volume attributes class.
        resources = dict(get_map(new_clone, "resources"))
        requests = get_map(resources, "requests")
        if "requests" in resources and isinstance(resources["requests"], Mapping):
            requests = dict(requests)
            old_request = get_map(get_map(old_spec, "resources"), "requests").get(_STORAGE)
            requests[_STORAGE] = old_request
            resources["requests"] = requests
            new_clone["resources"] = resources
        _copy_key(old_spec, new_clone, "volumeAttributesClassName")
    spec_desc = message_type("k8s.io.api.core.v1.PersistentVolumeClaimSpec")
    if not semantic_equal(spec_desc, new_clone, old_clone):
        causes.append(forbidden(_SPEC, f"{_SPEC_IMMUTABLE}\n{_spec_diff(old_clone, new_clone)}"))
    new_size = _request(new_spec) or 0
    if new_size < (_request(old_spec) or 0):
        status_size = _amount(get_map(get_map(old, "status"), "capacity").get(_STORAGE)) or 0
        # RecoverVolumeExpansionFailure: shrinking is allowed down to above status.capacity.
        if new_size <= status_size:
            causes.append(
                forbidden(
                    Path("spec", "resources", "requests", "storage"),
                    "field can not be less than status.capacity",
                )
            )
    new_mode, old_mode = opt_str(new_spec, "volumeMode"), opt_str(old_spec, "volumeMode")
    if new_mode != old_mode:
        causes.append(invalid(Path("volumeMode"), JSONValue(new_mode), "field is immutable"))
    new_attributes = opt_str(new_spec, "volumeAttributesClassName")
    current = opt_str(get_map(old, "status"), "currentVolumeAttributesClassName")
    if new_attributes != opt_str(old_spec, "volumeAttributesClassName") and current is not None:
        # Once a class has been applied, it may be changed but not removed.
        path = Path("spec", "volumeAttributesClassName")
        if new_attributes is None:
            causes.append(
                forbidden(
                    path,
                    "update to nil is forbidden when status.currentVolumeAttributesClassName "
                    "is not nil",
                )
            )
        elif not new_attributes:
            causes.append(
                forbidden(
                    path,
                    "update to empty string is forbidden when "
                    "status.currentVolumeAttributesClassName is not nil",
                )
            )
    return causes


def _copy_key(source: Mapping[str, Any], target: dict[str, Any], key: str) -> None:
    if key in source:
        target[key] = source[key]
    else:
        target.pop(key, None)


def _request(spec: Mapping[str, Any]) -> Fraction | None:
    value = get_map(get_map(spec, "resources"), "requests").get(_STORAGE)
    return None if value is None else _amount(value)


def _validate_resource_key(key: str, path: Path) -> list[Cause]:
    """``validatePersistentVolumeClaimResourceKey``: a qualified name; a native one (no
    prefix, or a ``kubernetes.io/`` prefix) can only be ``storage``."""
    causes = [invalid(path, key, msg) for msg in is_qualified_name(key)]
    if causes:
        return causes
    native = "/" not in key or "kubernetes.io/" in key
    if native and key != _STORAGE:
        return [not_supported(path, JSONValue(key), [_STORAGE])]
    return []


def _basic_resource(value: Any, path: Path) -> list[Cause]:
    """``validateBasicResource``: not below zero (the value printed rounded up)."""
    amount = _amount(value)
    if amount is None:
        return [_bad_quantity(value, path)]
    if _go_value(amount) < 0:
        return [invalid(path, _go_value(amount), "must be a valid resource quantity")]
    return []


def validate_persistent_volume_claim_status_update(
    new: Mapping[str, Any], old: Mapping[str, Any]
) -> list[Cause]:
    """``ValidatePersistentVolumeClaimStatusUpdate``."""
    causes = validate_object_meta_update(new, old)
    if not get_str(metadata_of(new), "resourceVersion"):
        causes.append(required(Path("resourceVersion")))
    if not get_list(get_map(new, "spec"), "accessModes"):
        causes.append(required(Path("Spec", "accessModes")))
    status = get_map(new, "status")
    capacity_path = Path("status", "capacity")
    for key, value in get_map(status, "capacity").items():
        causes.extend(_basic_resource(value, capacity_path.key(key)))
    statuses_path = Path("status", "allocatedResourceStatuses")
    for key, value in get_map(status, "allocatedResourceStatuses").items():
        causes.extend(_validate_resource_key(key, statuses_path))
        if value not in _RESIZE_STATUSES:
            causes.append(not_supported(statuses_path, JSONValue(key), _RESIZE_STATUSES))
    allocated_path = Path("status", "allocatedResources")
    for key, value in get_map(status, "allocatedResources").items():
        key_causes = _validate_resource_key(key, allocated_path)
        if key_causes:
            causes.extend(key_causes)
            continue
        basic = _basic_resource(value, allocated_path.key(key))
        if basic:
            causes.extend(basic)
            continue
        amount = _amount(value)
        if amount is not None and amount < 0:
            causes.append(
                invalid(
                    allocated_path.key(key),
                    _text(value, amount),
                    "must be greater than or equal to 0",
                )
            )
    return causes
