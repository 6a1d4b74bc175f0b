"""StatefulSet validation on the hub, as ``pkg/apis/apps/validation`` and the registry strategy
do it (Kubernetes v1.36).

:func:`validate_stateful_set` is ``ValidateStatefulSet`` (create),
:func:`validate_stateful_set_update` is ``ValidateStatefulSetUpdate`` and
:func:`validate_stateful_set_status_update` is ``ValidateStatefulSetStatusUpdate`` (the
``status`` subresource). Each returns one cause per problem, in Kubernetes' order, with its
paths and messages, the bad value printed as Go prints the internal type.

What the rules say:

- names are DNS labels (the pods' hostnames derive from them); ``serviceName`` may be empty,
  and when set must be a DNS label (on create only: it is immutable, so a stored invalid one is
  tolerated on update);
- the selector is required, non-empty and must match the template's labels; the template is
  validated as a pod template (after blanking ``hostname`` and ``subdomain``, which the
  controller sets, and adding a volume for each of ``volumeClaimTemplates``, which the pods
  get), with ``restartPolicy`` ``Always`` and no ``activeDeadlineSeconds``; an update whose
  stored template already fails that validation skips it, so an old object can still be
  changed;
- each of ``volumeClaimTemplates`` has a valid claim spec
  (:func:`kstore.api.kinds._persistentvolumeclaim_validation.validate_persistent_volume_claim_spec`),
  checked on create only (the templates are immutable);
- on update, only ``replicas``, ``ordinals``, ``template``, ``updateStrategy``,
  ``revisionHistoryLimit``, ``persistentVolumeClaimRetentionPolicy`` and ``minReadySeconds``
  may change: any other difference in the spec (compared as Kubernetes does, see
  :mod:`kstore.api.kinds._semantic`) is "updates to statefulset spec for fields other than ...
  are forbidden".

Expects a defaulted object, as Kubernetes validates after defaulting.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kstore.api.kinds._persistentvolumeclaim_validation import (
    validate_persistent_volume_claim_spec,
)
from kstore.api.kinds._rolling_update import (
    int_or_percent_value,
    int_or_string,
    validate_not_more_than_100_percent,
    validate_positive_int_or_percent,
)
from kstore.api.kinds._selector import (
    Matcher,
    as_matcher,
    selector_value,
    validate_label_selector,
)
from kstore.api.kinds._semantic import semantic_equal
from kstore.api.proto_schema import message_type
from kstore.api.validation._access import get_int, get_list, get_map, get_str, maps, opt_int
from kstore.api.validation.core import validate_pod_template_spec
from kstore.api.validation.core.podspec import pod_specific_annotations
from kstore.api.validation.field import (
    GoStruct,
    JSONValue,
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
)
from kstore.api.validation.names import is_dns1123_label, name_is_dns_label
from kstore.api.validation.objectmeta import (
    metadata_of,
    validate_annotations,
    validate_labels,
    validate_nonnegative_field,
    validate_object_meta,
    validate_object_meta_update,
)
from kstore.errors import Cause

__all__ = [
    "validate_stateful_set",
    "validate_stateful_set_status_update",
    "validate_stateful_set_update",
]

_SPEC: Final = Path("spec")
_STATUS: Final = Path("status")
_POLICIES: Final = ("OrderedReady", "Parallel")
_RETENTION: Final = ("Retain", "Delete")
#: The spec fields an update may change; everything else is compared with the stored spec.
_MUTABLE: Final = (
    "replicas",
    "template",
    "updateStrategy",
    "minReadySeconds",
    "ordinals",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
)
_IMMUTABLE_MESSAGE: Final = (
    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
    "'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and "
    "'minReadySeconds' are forbidden"
)


def _opt_map(obj: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else None


# ------------------------------------------------------------------------ update strategy


def _rolling_update_value(rolling: Mapping[str, Any] | None) -> GoStruct | None:
    """The internal ``*apps.RollingUpdateStatefulSetStrategy`` as ``json.Marshal`` prints it."""
    if rolling is None:
        return None
    unavailable = rolling.get("maxUnavailable")
    return GoStruct(
        Partition=get_int(rolling, "partition"),
        MaxUnavailable=None if unavailable is None else int_or_string(unavailable),
    )


def _validate_rolling_update(rolling: Mapping[str, Any], path: Path) -> list[Cause]:
    """``validateRollingUpdateStatefulSet``."""
    causes = validate_nonnegative_field(get_int(rolling, "partition"), path.child("partition"))
    if rolling.get("maxUnavailable") is not None:
        value = int_or_string(rolling.get("maxUnavailable"))
        unavailable_path = path.child("maxUnavailable")
        causes.extend(validate_positive_int_or_percent(value, unavailable_path))
        if int_or_percent_value(value) == 0:
            causes.append(invalid(unavailable_path, JSONValue(value), "cannot be 0"))
        causes.extend(validate_not_more_than_100_percent(value, unavailable_path))
    return causes


def _validate_update_strategy(strategy: Mapping[str, Any], path: Path) -> list[Cause]:
    kind = get_str(strategy, "type")
    rolling = _opt_map(strategy, "rollingUpdate")
    if not kind:
        return [required(path)]
    if kind == "OnDelete":
        if rolling is None:
            return []
        return [
            invalid(
                path.child("rollingUpdate"),
                _rolling_update_value(rolling),
                "only allowed for updateStrategy 'RollingUpdate'",
            )
        ]
    if kind == "RollingUpdate":
        return (
            []
            if rolling is None
            else _validate_rolling_update(rolling, path.child("rollingUpdate"))
        )
    value = GoStruct(Type=kind, RollingUpdate=_rolling_update_value(rolling))
    return [invalid(path, value, "must be 'RollingUpdate' or 'OnDelete'")]


# ------------------------------------------------------------------------ template


def _template_to_validate(spec: Mapping[str, Any]) -> Mapping[str, Any]:
    """The template as the pods will have it: ``hostname`` and ``subdomain`` blanked (the
    controller sets them) and a claim volume for each volume claim template, in place of any
    template volume of the same name."""
    template = get_map(spec, "template")
    pod_spec = get_map(template, "spec")
    claims = maps(get_list(spec, "volumeClaimTemplates"))
    if not (get_str(pod_spec, "hostname") or get_str(pod_spec, "subdomain") or claims):
        return template
    new_spec = {k: v for k, v in pod_spec.items() if k not in ("hostname", "subdomain")}
    if claims:
        volumes: dict[str, Any] = {}
        for claim in claims:
            name = get_str(metadata_of(claim), "name")
            volumes[name] = {"name": name, "persistentVolumeClaim": {"claimName": name}}
        others = [
            v for v in maps(get_list(pod_spec, "volumes")) if get_str(v, "name") not in volumes
        ]
        new_spec["volumes"] = [*volumes.values(), *others]
    return {**template, "spec": new_spec}


def _validate_template(
    spec: Mapping[str, Any], matcher: Matcher, path: Path, skip_pod_template: bool
) -> list[Cause]:
    """``ValidatePodTemplateSpecForStatefulSet``."""
    template = _template_to_validate(spec)
    causes: list[Cause] = []
    meta = metadata_of(template)
    labels = _opt_map(meta, "labels")
    if not matcher.empty() and not matcher.matches(labels or {}):
        causes.append(
            invalid(
                path.child("metadata", "labels"),
                dict(labels) if labels is not None else None,
                "`selector` does not match template `labels`",
            )
        )
    if not skip_pod_template:
        causes.extend(validate_pod_template_spec(template, path))
    # Kubernetes checks the template's metadata again here, whatever the pod template said.
    annotations = get_map(meta, "annotations")
    causes.extend(validate_labels(labels or {}, path.child("labels")))
    causes.extend(validate_annotations(annotations, path.child("annotations")))
    causes.extend(
        pod_specific_annotations(
            annotations, get_map(template, "spec"), path.child("annotations"), False
        )
    )
    return causes


# ------------------------------------------------------------------------ spec


def _validate_spec(
    spec: Mapping[str, Any],
    path: Path,
    *,
    on_update: bool = False,
    skip_pod_template: bool = False,
) -> list[Cause]:
    """``ValidateStatefulSetSpec``; ``on_update`` tolerates what is immutable (an invalid
    ``serviceName``, invalid ``volumeClaimTemplates``)."""
    causes: list[Cause] = []
    policy = get_str(spec, "podManagementPolicy")
    if not policy:
        causes.append(required(path.child("podManagementPolicy")))
    elif policy not in _POLICIES:
        causes.append(
            invalid(
                path.child("podManagementPolicy"),
                JSONValue(policy),
                "must be 'OrderedReady' or 'Parallel'",
            )
        )
    causes.extend(
        _validate_update_strategy(get_map(spec, "updateStrategy"), path.child("updateStrategy"))
    )
    retention = _opt_map(spec, "persistentVolumeClaimRetentionPolicy")
    if retention is not None:
        retention_path = path.child("persistentVolumeClaimRetentionPolicy")
        for key in ("whenDeleted", "whenScaled"):
            value = get_str(retention, key)
            if value not in _RETENTION:
                causes.append(
                    not_supported(retention_path.child(key), JSONValue(value), _RETENTION)
                )
    if not on_update:
        claims_path = path.child("volumeClaimTemplates")
        for i, claim in enumerate(maps(get_list(spec, "volumeClaimTemplates"))):
            causes.extend(
                validate_persistent_volume_claim_spec(
                    get_map(claim, "spec"), claims_path.index(i).child("spec")
                )
            )
    causes.extend(validate_nonnegative_field(get_int(spec, "replicas"), path.child("replicas")))
    causes.extend(
        validate_nonnegative_field(get_int(spec, "minReadySeconds"), path.child("minReadySeconds"))
    )
    ordinals = _opt_map(spec, "ordinals")
    if ordinals is not None:
        causes.extend(
            validate_nonnegative_field(get_int(ordinals, "start"), path.child("ordinals.start"))
        )
    service = get_str(spec, "serviceName")
    if service and not on_update:
        causes.extend(
            invalid(path.child("serviceName"), service, msg) for msg in is_dns1123_label(service)
        )
    selector = _opt_map(spec, "selector")
    selector_path = path.child("selector")
    if selector is None:
        causes.append(required(selector_path))
    else:
        causes.extend(validate_label_selector(selector, selector_path))
        if not get_map(selector, "matchLabels") and not get_list(selector, "matchExpressions"):
            causes.append(
                invalid(
                    selector_path,
                    selector_value(selector),
                    "empty selector is invalid for statefulset",
                )
            )
    matcher = as_matcher(selector)
    if matcher is None:
        causes.append(invalid(selector_path, selector_value(selector), ""))
    else:
        causes.extend(_validate_template(spec, matcher, path.child("template"), skip_pod_template))
    pod_spec = get_map(get_map(spec, "template"), "spec")
    restart_policy = get_str(pod_spec, "restartPolicy")
    if restart_policy != "Always":
        causes.append(
            not_supported(
                path.child("template", "spec", "restartPolicy"),
                JSONValue(restart_policy),
                ["Always"],
            )
        )
    if pod_spec.get("activeDeadlineSeconds") is not None:
        causes.append(
            forbidden(
                path.child("template", "spec", "activeDeadlineSeconds"),
                "activeDeadlineSeconds in StatefulSet is not Supported",
            )
        )
    return causes


# ------------------------------------------------------------------------ status


def _validate_status(status: Mapping[str, Any], path: Path) -> list[Cause]:
    """``ValidateStatefulSetStatus``."""
    counts = {
        key: get_int(status, key)
        for key in (
            "replicas",
            "readyReplicas",
            "currentReplicas",
            "updatedReplicas",
            "availableReplicas",
        )
    }
    causes: list[Cause] = []
    for key, value in counts.items():
        causes.extend(validate_nonnegative_field(value, path.child(key)))
    for key in ("observedGeneration", "collisionCount"):
        pointer = opt_int(status, key)
        if pointer is not None:
            causes.extend(validate_nonnegative_field(pointer, path.child(key)))
    for key in ("readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"):
        if counts[key] > counts["replicas"]:
            causes.append(
                invalid(path.child(key), counts[key], "cannot be greater than status.replicas")
            )
    if counts["availableReplicas"] > counts["readyReplicas"]:
        causes.append(
            invalid(
                path.child("availableReplicas"),
                counts["availableReplicas"],
                "cannot be greater than status.readyReplicas",
            )
        )
    return causes


# ------------------------------------------------------------------------ entry points


def validate_stateful_set(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidateStatefulSet``: a StatefulSet (hub) on create."""
    causes = validate_object_meta(obj, True, name_is_dns_label)
    causes.extend(_validate_spec(get_map(obj, "spec"), _SPEC))
    return causes


def validate_stateful_set_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """``ValidateStatefulSetUpdate``: metadata, the new spec (tolerating what the stored
    object already had), and no change outside the mutable fields."""
    causes = validate_object_meta_update(new, old)
    new_spec, old_spec = get_map(new, "spec"), get_map(old, "spec")
    # A stored spec that no longer validates keeps its pod template from being re-validated.
    skip = bool(_validate_spec(old_spec, _SPEC, on_update=True))
    causes.extend(_validate_spec(new_spec, _SPEC, on_update=True, skip_pod_template=skip))
    unchanged = {k: v for k, v in new_spec.items() if k not in _MUTABLE}
    unchanged.update((k, old_spec[k]) for k in _MUTABLE if k in old_spec)
    spec_desc = message_type("k8s.io.api.apps.v1.StatefulSetSpec")
    if not semantic_equal(spec_desc, unchanged, old_spec):
        causes.append(forbidden(_SPEC, _IMMUTABLE_MESSAGE))
    return causes


def validate_stateful_set_status_update(
    new: Mapping[str, Any], old: Mapping[str, Any]
) -> list[Cause]:
    """``ValidateStatefulSetStatusUpdate``: status counts, metadata, no smaller
    ``collisionCount``."""
    status = get_map(new, "status")
    causes = _validate_status(status, _STATUS)
    causes.extend(validate_object_meta_update(new, old))
    collisions = opt_int(status, "collisionCount")
    old_collisions = opt_int(get_map(old, "status"), "collisionCount")
    # apivalidation.IsDecremented: only a set old value can be decremented (to nil or lower).
    if old_collisions is not None and (collisions is None or collisions < old_collisions):
        causes.append(
            invalid(
                _STATUS.child("collisionCount"),
                collisions if collisions is not None else 0,
                "cannot be decremented",
            )
        )
    return causes
