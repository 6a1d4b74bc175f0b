"""storage.k8s.io/v1 StorageClass, CSIDriver, CSINode and VolumeAttachment: one external
version each, with the hub's shape; all four cluster-scoped, without categories.

StorageClass is ``sc`` (the fields sit at the top level, there is no ``spec``); the others have
no short names. VolumeAttachment alone has a ``status`` subresource.

Defaulting (``pkg/apis/storage/v1/defaults.go`` with v1.36's default feature gates):

- StorageClass: ``reclaimPolicy`` ``Delete`` and ``volumeBindingMode`` ``Immediate`` when unset;
- CSIDriver: ``attachRequired`` true; ``podInfoOnMount``, ``storageCapacity``,
  ``requiresRepublish`` and ``seLinuxMount`` false; ``fsGroupPolicy``
  ``ReadWriteOnceWithFSType``; ``volumeLifecycleModes`` ``[Persistent]`` when empty;
- CSINode: none;
- VolumeAttachment: the volume sources' defaults in an inline volume spec.

Validation runs on the hub with ``pkg/apis/storage/validation``'s paths and messages, ObjectMeta
first (cluster-scoped, DNS-1123 subdomain names):

- StorageClass: a provisioner (a qualified name once lower-cased), at most 512 parameters of at
  most 256 KiB together with no empty key, ``Delete`` or ``Retain``, ``Immediate`` or
  ``WaitForFirstConsumer``, allowed topologies whose terms have label keys, non-empty sets of
  values and no key or term twice; on update provisioner, parameters and reclaim policy are
  forbidden to change, the binding mode is immutable;
- CSIDriver: the defaulted booleans present (``spec.attachedRequired`` is Kubernetes' own
  spelling), a known ``fsGroupPolicy`` and lifecycle modes, token requests with distinct
  audiences and 10 minutes to 2^32 seconds, ``serviceAccountTokenInSecrets`` only beside token
  requests, a node allocatable update period of at least 10 seconds; on update
  ``attachRequired`` and ``volumeLifecycleModes`` are immutable;
- CSINode: each driver named as a CSI driver (at most 63 characters, a DNS subdomain once
  lower-cased) and only once, a node ID of at most 256 characters, a non-negative allocatable
  count, topology keys that are qualified names, non-empty and distinct; on update an existing
  driver's entry may change only its allocatable count;
- VolumeAttachment (``ValidateVolumeAttachment`` then ``ValidateVolumeAttachmentV1``): an
  attacher (a CSI driver name), exactly one of ``persistentVolumeName`` (a DNS-1123 subdomain)
  and ``inlineVolumeSpec`` (a CSI volume spec under the inline rules), a node name; status
  metadata of at most 256 KiB, error messages of at most 1024 bytes (reported with Kubernetes'
  256 KiB limit), non-negative error codes; the spec is immutable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.kinds._lists import list_definition
from kstore.api.kinds.persistentvolume import (
    default_volume_sources,
    validate_persistent_volume_spec,
)
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo
from kstore.api.validation._access import get_list, get_map, get_str, maps
from kstore.api.validation.field import (
    GoStruct,
    JSONValue,
    Path,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
)
from kstore.api.validation.names import (
    byte_len,
    inclusive_range_error,
    is_dns1123_subdomain,
    is_qualified_name,
    name_is_dns_subdomain,
)
from kstore.api.validation.objectmeta import (
    validate_immutable_field,
    validate_nonnegative_field,
    validate_object_meta,
    validate_object_meta_update,
)
from kstore.errors import Cause

__all__ = [
    "CSI_DRIVER",
    "CSI_NODE",
    "DEFINITIONS",
    "GROUP",
    "STORAGE_CLASS",
    "VOLUME_ATTACHMENT",
    "default_csi_driver",
    "default_storage_class",
    "default_volume_attachment",
    "validate_csi_driver",
    "validate_csi_driver_name",
    "validate_csi_driver_update",
    "validate_csi_node",
    "validate_csi_node_update",
    "validate_storage_class",
    "validate_storage_class_update",
    "validate_topology_selector_terms",
    "validate_volume_attachment",
    "validate_volume_attachment_update",
]

GROUP: Final = "storage.k8s.io"

_MAX_PARAMETERS: Final = 512
_MAX_PARAMETERS_BYTES: Final = 256 * (1 << 10)
#: ``supportedReclaimPolicy`` and ``supportedVolumeBindingModes``, sorted as ``sets.List`` does.
_RECLAIM_POLICIES: Final = ("Delete", "Retain")
_BINDING_MODES: Final = ("Immediate", "WaitForFirstConsumer")
_FS_GROUP_POLICIES: Final = ("File", "None", "ReadWriteOnceWithFSType")
_LIFECYCLE_MODES: Final = ("Persistent", "Ephemeral")
_MIN_TOKEN_SECONDS: Final = 600
_MAX_TOKEN_SECONDS: Final = 1 << 32
_MIN_ALLOCATABLE_PERIOD: Final = 10
_MAX_CSI_DRIVER_NAME: Final = 63
#: ``csiNodeIDLongerMaxLength``: the CSINode strategy always allows the long node IDs.
_MAX_NODE_ID: Final = 256
_MAX_ATTACHMENT_METADATA: Final = 256 * (1 << 10)
_MAX_VOLUME_ERROR_MESSAGE: Final = 1024
_MAX_INT32: Final = 2**31 - 1

_SPEC: Final = Path("spec")


def _str_or_none(obj: Mapping[str, Any], key: str) -> str | None:
    value = obj.get(key)
    return value if isinstance(value, str) else None


# ----------------------------------------------------------------------------- StorageClass


def default_storage_class(storage_class: Object) -> None:
    """``SetDefaults_StorageClass``, in place."""
    if storage_class.get("reclaimPolicy") is None:
        storage_class["reclaimPolicy"] = "Delete"
    if storage_class.get("volumeBindingMode") is None:
        storage_class["volumeBindingMode"] = "Immediate"


def _validate_parameters(params: Mapping[str, Any], path: Path) -> list[Cause]:
    if len(params) > _MAX_PARAMETERS:
        return [too_long(path, _MAX_PARAMETERS)]
    causes: list[Cause] = []
    total = 0
    for key, value in params.items():
        if not key:
            causes.append(invalid(path, key, "field can not be empty."))
        total += byte_len(key) + byte_len(value if isinstance(value, str) else "")
    if total > _MAX_PARAMETERS_BYTES:
        causes.append(too_long(path, _MAX_PARAMETERS_BYTES))
    return causes


def _topology_term(term: Mapping[str, Any], path: Path) -> tuple[dict[str, set[str]], list[Cause]]:
    """``ValidateTopologySelectorTerm``: the term's keys with their value sets, and causes."""
    causes: list[Cause] = []
    by_key: dict[str, set[str]] = {}
    expressions = path.child("matchLabelExpressions")
    for i, requirement in enumerate(maps(get_list(term, "matchLabelExpressions"))):
        item = expressions.index(i)
        values_path = item.child("values")
        values = [v for v in get_list(requirement, "values") if isinstance(v, str)]
        if not values:
            causes.append(required(values_path))
        seen: set[str] = set()
        for j, value in enumerate(values):
            if value in seen:
                causes.append(duplicate(values_path.index(j), value))
            seen.add(value)
        key = get_str(requirement, "key")
        causes.extend(invalid(item.child("key"), key, m) for m in is_qualified_name(key))
        if key in by_key:
            causes.append(duplicate(item.child("key"), key))
        by_key[key] = seen
    return by_key, causes


def validate_topology_selector_terms(terms: Sequence[Any], path: Path) -> list[Cause]:
    """``validateAllowedTopologies``: each term, and no term twice. Kubernetes compares each
    term with a list that starts with one empty entry per term, so an empty term is reported
    once per term before it, plus once for every empty term already seen."""
    causes: list[Cause] = []
    terms_seen: list[dict[str, set[str]]] = [{} for _ in terms]
    for i, term in enumerate(maps(terms)):
        by_key, term_causes = _topology_term(term, path.index(i))
        causes.extend(term_causes)
        causes.extend(
            duplicate(path.index(i).child("matchLabelExpressions"), "")
            for seen in terms_seen
            if seen == by_key
        )
        terms_seen.append(by_key)
    return causes


def validate_storage_class(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidateStorageClass``."""
    causes = validate_object_meta(obj, False, name_is_dns_subdomain)
    provisioner = get_str(obj, "provisioner")
    where = Path("provisioner")
    if not provisioner:
        causes.append(required(where))
    else:
        lowered = provisioner.lower()
        causes.extend(invalid(where, lowered, m) for m in is_qualified_name(lowered))
    causes.extend(_validate_parameters(get_map(obj, "parameters"), Path("parameters")))
    policy = _str_or_none(obj, "reclaimPolicy")
    if policy and policy not in _RECLAIM_POLICIES:
        causes.append(not_supported(Path("reclaimPolicy"), policy, _RECLAIM_POLICIES))
    mode = _str_or_none(obj, "volumeBindingMode")
    if mode is None:
        causes.append(required(Path("volumeBindingMode")))
    elif mode not in _BINDING_MODES:
        causes.append(not_supported(Path("volumeBindingMode"), mode, _BINDING_MODES))
    causes.extend(
        validate_topology_selector_terms(
            get_list(obj, "allowedTopologies"), Path("allowedTopologies")
        )
    )
    return causes


def validate_storage_class_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """The strategy's ``ValidateUpdate``: the new class, then ``ValidateStorageClassUpdate``."""
    causes = validate_storage_class(new)
    causes.extend(validate_object_meta_update(new, old))
    if get_map(new, "parameters") != get_map(old, "parameters"):
        causes.append(forbidden(Path("parameters"), "updates to parameters are forbidden."))
    if get_str(new, "provisioner") != get_str(old, "provisioner"):
        causes.append(forbidden(Path("provisioner"), "updates to provisioner are forbidden."))
    if _str_or_none(new, "reclaimPolicy") != _str_or_none(old, "reclaimPolicy"):
        causes.append(forbidden(Path("reclaimPolicy"), "updates to reclaimPolicy are forbidden."))
    causes.extend(
        validate_immutable_field(
            _str_or_none(new, "volumeBindingMode"),
            _str_or_none(old, "volumeBindingMode"),
            Path("volumeBindingMode"),
        )
    )
    return causes


STORAGE_CLASS: Final = KindDefinition(
    group=GROUP,
    kind="StorageClass",
    versions=(KindVersion(version="v1", default=default_storage_class),),
    storage_version="v1",
    resource=ResourceInfo(
        plural="storageclasses", singular="storageclass", namespaced=False, short_names=("sc",)
    ),
    validate=validate_storage_class,
    validate_update=validate_storage_class_update,
    list_kind="StorageClassList",
)


# -------------------------------------------------------------------------------- CSIDriver


def default_csi_driver(driver: Object) -> None:
    """``SetDefaults_CSIDriver``, in place, with the feature gates v1.36 enables."""
    spec = driver.get("spec")
    if not isinstance(spec, dict):
        spec = driver["spec"] = {}
    for key, value in (
        ("attachRequired", True),
        ("podInfoOnMount", False),
        ("storageCapacity", False),
        ("fsGroupPolicy", "ReadWriteOnceWithFSType"),
    ):
        if spec.get(key) is None:
            spec[key] = value
    if not spec.get("volumeLifecycleModes"):
        spec["volumeLifecycleModes"] = ["Persistent"]
    for key in ("requiresRepublish", "seLinuxMount"):
        if spec.get(key) is None:
            spec[key] = False


def validate_csi_driver_name(name: str, path: Path) -> list[Cause]:
    """Core's ``ValidateCSIDriverName``: required, at most 63 characters, a DNS-1123 subdomain
    once lower-cased (the value shown as written)."""
    causes: list[Cause] = []
    if not name:
        causes.append(required(path))
    if byte_len(name) > _MAX_CSI_DRIVER_NAME:
        causes.append(too_long(path, _MAX_CSI_DRIVER_NAME))
    causes.extend(invalid(path, name, m) for m in is_dns1123_subdomain(name.lower()))
    return causes


def _validate_token_requests(requests: Sequence[Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    audiences: set[str] = set()
    for i, request in enumerate(maps(requests)):
        item = path.index(i)
        audience = get_str(request, "audience")
        if audience in audiences:
            causes.append(duplicate(item.child("audience"), audience))
            continue
        audiences.add(audience)
        seconds = request.get("expirationSeconds")
        if not isinstance(seconds, int) or isinstance(seconds, bool):
            continue
        if seconds < _MIN_TOKEN_SECONDS:
            causes.append(
                invalid(
                    item.child("expirationSeconds"),
                    seconds,
                    "may not specify a duration less than 10 minutes",
                )
            )
        if seconds > _MAX_TOKEN_SECONDS:
            causes.append(
                invalid(
                    item.child("expirationSeconds"),
                    seconds,
                    "may not specify a duration larger than 2^32 seconds",
                )
            )
    return causes


def _validate_csi_driver_spec(spec: Mapping[str, Any]) -> list[Cause]:
    causes: list[Cause] = []
    # Kubernetes reports a missing attachRequired at "attachedRequired".
    for key, where in (
        ("attachRequired", "attachedRequired"),
        ("podInfoOnMount", "podInfoOnMount"),
        ("storageCapacity", "storageCapacity"),
    ):
        if spec.get(key) is None:
            causes.append(required(_SPEC.child(where)))
    policy = _str_or_none(spec, "fsGroupPolicy")
    if policy is not None and policy not in _FS_GROUP_POLICIES:
        causes.append(not_supported(_SPEC.child("fsGroupPolicy"), policy, _FS_GROUP_POLICIES))
    requests = get_list(spec, "tokenRequests")
    causes.extend(_validate_token_requests(requests, _SPEC.child("tokenRequests")))
    modes_path = _SPEC.child("volumeLifecycleModes")
    for mode in get_list(spec, "volumeLifecycleModes"):
        if mode not in _LIFECYCLE_MODES:
            causes.append(not_supported(modes_path, mode, _LIFECYCLE_MODES))
    if spec.get("seLinuxMount") is None:
        causes.append(required(_SPEC.child("seLinuxMount")))
    period = spec.get("nodeAllocatableUpdatePeriodSeconds")
    if isinstance(period, int) and not isinstance(period, bool) and period < 10:
        causes.append(
            invalid(
                _SPEC.child("nodeAllocatableUpdatePeriodSeconds"),
                period,
                "must be greater than or equal to 10 seconds",
            )
        )
    in_secrets = spec.get("serviceAccountTokenInSecrets")
    if isinstance(in_secrets, bool) and not requests:
        causes.append(
            invalid(
                _SPEC.child("serviceAccountTokenInSecrets"),
                in_secrets,
                "serviceAccountTokenInSecrets is set but no tokenRequests are specified",
            )
        )
    return causes


def validate_csi_driver(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidateCSIDriver``."""
    causes = validate_object_meta(obj, False, name_is_dns_subdomain)
    causes.extend(_validate_csi_driver_spec(get_map(obj, "spec")))
    return causes


def validate_csi_driver_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """``ValidateCSIDriverUpdate``: metadata, the new spec, the two immutable fields."""
    causes = validate_object_meta_update(new, old)
    new_spec, old_spec = get_map(new, "spec"), get_map(old, "spec")
    causes.extend(_validate_csi_driver_spec(new_spec))
    causes.extend(
        validate_immutable_field(
            new_spec.get("attachRequired"),
            old_spec.get("attachRequired"),
            _SPEC.child("attachedRequired"),
        )
    )
    causes.extend(
        validate_immutable_field(
            list(get_list(new_spec, "volumeLifecycleModes")),
            list(get_list(old_spec, "volumeLifecycleModes")),
            _SPEC.child("volumeLifecycleModes"),
        )
    )
    return causes


CSI_DRIVER: Final = KindDefinition(
    group=GROUP,
    kind="CSIDriver",
    versions=(KindVersion(version="v1", default=default_csi_driver),),
    storage_version="v1",
    resource=ResourceInfo(plural="csidrivers", singular="csidriver", namespaced=False),
    validate=validate_csi_driver,
    validate_update=validate_csi_driver_update,
    list_kind="CSIDriverList",
)


# ---------------------------------------------------------------------------------- CSINode


def _validate_csi_node_driver(
    driver: Mapping[str, Any], names: set[str], path: Path
) -> list[Cause]:
    name = get_str(driver, "name")
    causes = validate_csi_driver_name(name, path.child("name"))
    node_id = get_str(driver, "nodeID")
    if not node_id:
        causes.append(required(path.child("nodeID")))
    if byte_len(node_id) > _MAX_NODE_ID:
        causes.append(
            invalid(path.child("nodeID"), node_id, f"must be {_MAX_NODE_ID} characters or less")
        )
    count = get_map(driver, "allocatable").get("count")
    if isinstance(count, int) and not isinstance(count, bool):
        causes.extend(validate_nonnegative_field(count, path.child("allocatable", "count")))
    if name in names:
        causes.append(duplicate(path.child("name"), name))
    names.add(name)
    keys: set[str] = set()
    for key in get_list(driver, "topologyKeys"):
        text = key if isinstance(key, str) else ""
        if not text:
            causes.append(required(path))
        if text in keys:
            causes.append(duplicate(path, text))
        keys.add(text)
        causes.extend(invalid(path, text, m) for m in is_qualified_name(text))
    return causes


def validate_csi_node(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidateCSINode`` with the strategy's ``AllowLongNodeID`` (node IDs of at most 256
    characters)."""
    causes = validate_object_meta(obj, False, name_is_dns_subdomain)
    names: set[str] = set()
    drivers = _SPEC.child("drivers")
    for i, driver in enumerate(maps(get_list(get_map(obj, "spec"), "drivers"))):
        causes.extend(_validate_csi_node_driver(driver, names, drivers.index(i)))
    return causes


def _without_allocatable(driver: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in driver.items() if k != "allocatable"}


def validate_csi_node_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """``ValidateCSINodeUpdate``: the new object, then each driver present before and after
    unchanged but for its allocatable count (reported at ``spec.drivers``)."""
    causes = validate_object_meta_update(new, old)
    causes.extend(validate_csi_node(new))
    new_drivers = maps(get_list(get_map(new, "spec"), "drivers"))
    for old_driver in maps(get_list(get_map(old, "spec"), "drivers")):
        for new_driver in new_drivers:
            if get_str(old_driver, "name") != get_str(new_driver, "name"):
                continue
            causes.extend(
                validate_immutable_field(
                    _without_allocatable(new_driver),
                    _without_allocatable(old_driver),
                    _SPEC.child("drivers"),
                )
            )
    return causes


CSI_NODE: Final = KindDefinition(
    group=GROUP,
    kind="CSINode",
    versions=(KindVersion(version="v1"),),
    storage_version="v1",
    resource=ResourceInfo(plural="csinodes", singular="csinode", namespaced=False),
    validate=validate_csi_node,
    validate_update=validate_csi_node_update,
    list_kind="CSINodeList",
)


# ------------------------------------------------------------------------- VolumeAttachment


def default_volume_attachment(attachment: Object) -> None:
    """The defaults an inline volume spec's sources get, in place."""
    spec = attachment.get("spec")
    source = spec.get("source") if isinstance(spec, dict) else None
    inline = source.get("inlineVolumeSpec") if isinstance(source, dict) else None
    if isinstance(inline, dict):
        default_volume_sources(inline)


def _validate_attachment_source(source: Mapping[str, Any], path: Path) -> list[Cause]:
    inline = source.get("inlineVolumeSpec")
    name = _str_or_none(source, "persistentVolumeName")
    exactly_one = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"
    if inline is None and name is None:
        return [required(path, exactly_one)]
    if inline is not None and name is not None:
        return [forbidden(path, exactly_one)]
    if name is not None:
        if not name:
            message = "must specify non empty persistentVolumeName"
            return [required(path.child("persistentVolumeName"), message)]
        return []
    spec = inline if isinstance(inline, Mapping) else {}
    return validate_persistent_volume_spec(spec, path.child("inlineVolumeSpec"), inline=True)


def _validate_volume_error(error: Any, path: Path) -> list[Cause]:
    if not isinstance(error, Mapping):
        return []
    causes: list[Cause] = []
    if byte_len(get_str(error, "message")) > _MAX_VOLUME_ERROR_MESSAGE:
        # Kubernetes reports the metadata limit here, not the message's.
        causes.append(too_long(path.child("message"), _MAX_ATTACHMENT_METADATA))
    code = error.get("errorCode")
    if isinstance(code, int) and not isinstance(code, bool) and code < 0:
        causes.append(invalid(path.child("errorCode"), code, inclusive_range_error(0, _MAX_INT32)))
    return causes


def validate_volume_attachment(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidateVolumeAttachment`` and ``ValidateVolumeAttachmentV1``."""
    causes = validate_object_meta(obj, False, name_is_dns_subdomain)
    spec = get_map(obj, "spec")
    attacher = get_str(spec, "attacher")
    if not attacher:
        causes.append(required(_SPEC.child("attacher")))
    source_path = _SPEC.child("source")
    causes.extend(_validate_attachment_source(get_map(spec, "source"), source_path))
    node = get_str(spec, "nodeName")
    causes.extend(invalid(_SPEC.child("nodeName"), node, m) for m in is_dns1123_subdomain(node))
    status = get_map(obj, "status")
    size = sum(
        byte_len(k) + byte_len(v if isinstance(v, str) else "")
        for k, v in get_map(status, "attachmentMetadata").items()
    )
    if size > _MAX_ATTACHMENT_METADATA:
        where = Path("status", "attachmentMetadata")
        causes.append(too_long(where, _MAX_ATTACHMENT_METADATA))
    for key in ("attachError", "detachError"):
        causes.extend(_validate_volume_error(status.get(key), Path("status", key)))
    # The v1 rules.
    causes.extend(validate_csi_driver_name(attacher, _SPEC.child("attacher")))
    name = _str_or_none(get_map(spec, "source"), "persistentVolumeName")
    if name is not None:
        where = source_path.child("persistentVolumeName")
        causes.extend(invalid(where, name, m) for m in is_dns1123_subdomain(name))
    return causes


def _spec_value(spec: Mapping[str, Any]) -> GoStruct:
    """The internal ``VolumeAttachmentSpec`` as ``json.Marshal`` prints it (Go field names)."""
    source = get_map(spec, "source")
    inline = source.get("inlineVolumeSpec")
    return GoStruct(
        Attacher=get_str(spec, "attacher"),
        Source=GoStruct(
            PersistentVolumeName=_str_or_none(source, "persistentVolumeName"),
            InlineVolumeSpec=JSONValue(inline) if isinstance(inline, Mapping) else None,
        ),
        NodeName=get_str(spec, "nodeName"),
    )


def validate_volume_attachment_update(
    new: Mapping[str, Any], old: Mapping[str, Any]
) -> list[Cause]:
    """``ValidateVolumeAttachmentUpdate``: the new object, and a spec that did not change."""
    causes = validate_volume_attachment(new)
    new_spec = get_map(new, "spec")
    if new_spec != get_map(old, "spec"):
        causes.append(invalid(_SPEC, _spec_value(new_spec), "field is immutable"))
    return causes


VOLUME_ATTACHMENT: Final = KindDefinition(
    group=GROUP,
    kind="VolumeAttachment",
    versions=(KindVersion(version="v1", default=default_volume_attachment),),
    storage_version="v1",
    resource=ResourceInfo(
        plural="volumeattachments",
        singular="volumeattachment",
        namespaced=False,
        subresources=("status",),
    ),
    validate=validate_volume_attachment,
    validate_update=validate_volume_attachment_update,
    list_kind="VolumeAttachmentList",
)

DEFINITIONS: tuple[KindDefinition, ...] = (
    STORAGE_CLASS,
    list_definition(STORAGE_CLASS),
    CSI_DRIVER,
    list_definition(CSI_DRIVER),
    CSI_NODE,
    list_definition(CSI_NODE),
    VOLUME_ATTACHMENT,
    list_definition(VOLUME_ATTACHMENT),
)
