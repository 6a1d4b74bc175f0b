"""core/v1 ReplicationController (``rc``, category ``all``, ``status`` and ``scale``).

One external version, ``v1``, shaped as the hub. ``spec.selector`` is a plain label map (not
a ``LabelSelector``) and ``spec.template`` a pointer: a controller may have none, and is then
refused by validation.

Defaulting is ``SetObjectDefaults_ReplicationController``: with a template that has labels, an
empty selector becomes those labels and so do empty object labels; ``replicas`` 1; then the pod
spec defaults of the template, when there is one.

Validation runs on the hub, with Kubernetes' paths, order and messages
(``pkg/apis/core/validation``):

- :func:`validate_replication_controller` is ``ValidateReplicationController``: ObjectMeta (a
  DNS-subdomain name), then ``ValidateReplicationControllerSpec``: ``minReadySeconds`` not
  negative, the selector not empty, ``replicas`` not negative, then the template
  (``ValidatePodTemplateSpecForRC``): required; its labels matched by the selector; the pod
  template rules; ``restartPolicy: Always``; no ``activeDeadlineSeconds``;
- :func:`validate_replication_controller_update` is the strategy's ``ValidateUpdate``: the
  above, then ``ValidateReplicationControllerUpdate`` (ObjectMeta update rules and the spec
  again, so a spec problem is listed twice among the causes, as Kubernetes lists it);
- :func:`validate_replication_controller_status_update` is
  ``ValidateReplicationControllerStatusUpdate``: the counts not negative, none above
  ``status.replicas``, ``availableReplicas`` not above ``readyReplicas``.

A field selector may use ``status.replicas`` besides the name and namespace.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.kinds._lists import list_definition
from kstore.api.kinds._workload import validate_replica_counts
from kstore.api.kinds.core import default_pod_spec
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo
from kstore.api.validation.core.podspec import validate_pod_template_spec
from kstore.api.validation.field import (
    JSONValue,
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
)
from kstore.api.validation.names import name_is_dns_subdomain
from kstore.api.validation.objectmeta import (
    validate_nonnegative_field,
    validate_object_meta,
    validate_object_meta_update,
)
from kstore.errors import Cause

__all__ = [
    "DEFINITIONS",
    "REPLICATION_CONTROLLER",
    "default_replication_controller_v1",
    "replication_controller_fields",
    "selector_string",
    "validate_replication_controller",
    "validate_replication_controller_status_update",
    "validate_replication_controller_update",
]

_SPEC: Final = Path("spec")
_STATUS: Final = Path("status")


def _map(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else {}


def _int(obj: Mapping[str, Any], key: str) -> int:
    value = obj.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def selector_string(selector: Mapping[str, Any]) -> str:
    """``labels.SelectorFromSet(selector).String()``: ``key=value`` pairs sorted by key."""
    return ",".join(f"{k}={v}" for k, v in sorted(selector.items()))


# ------------------------------------------------------------------------------ defaulting


def default_replication_controller_v1(obj: Object) -> None:
    """v1 ``SetObjectDefaults_ReplicationController``, in place."""
    spec = obj.get("spec")
    if spec is None:
        spec = obj["spec"] = {}
    if not isinstance(spec, dict):
        return
    template = spec.get("template")
    if isinstance(template, dict):
        labels = _map(template, "metadata").get("labels")
        if isinstance(labels, dict):
            if not spec.get("selector"):
                spec["selector"] = dict(labels)
            meta = obj.get("metadata")
            if meta is None:
                meta = obj["metadata"] = {}
            if isinstance(meta, dict) and not meta.get("labels"):
                meta["labels"] = dict(labels)
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    if isinstance(template, dict):
        pod_spec = template.get("spec")
        if pod_spec is None:
            pod_spec = template["spec"] = {}
        if isinstance(pod_spec, dict):
            default_pod_spec(pod_spec)


# ------------------------------------------------------------------------------ validation


def _validate_template(template: Any, selector: Mapping[str, Any], path: Path) -> list[Cause]:
    """``ValidatePodTemplateSpecForRC``."""
    if not isinstance(template, Mapping):
        return [required(path)]
    causes: list[Cause] = []
    labels = _map(template, "metadata").get("labels")
    label_map = labels if isinstance(labels, Mapping) else {}
    if selector and any(label_map.get(k) != v for k, v in selector.items()):
        causes.append(
            invalid(
                path.child("metadata", "labels"),
                dict(labels) if isinstance(labels, Mapping) else None,
                "`selector` does not match template `labels`",
            )
        )
    causes.extend(validate_pod_template_spec(template, path))
    pod_spec = _map(template, "spec")
    restart_policy = pod_spec.get("restartPolicy")
    if restart_policy != "Always":
        causes.append(
            not_supported(
                path.child("spec", "restartPolicy"),
                JSONValue(restart_policy if isinstance(restart_policy, str) else ""),
                ["Always"],
            )
        )
    if pod_spec.get("activeDeadlineSeconds") is not None:
        causes.append(
            forbidden(
                path.child("spec", "activeDeadlineSeconds"),
                "activeDeadlineSeconds in ReplicationController is not Supported",
            )
        )
    return causes


def _validate_spec(spec: Mapping[str, Any]) -> list[Cause]:
    """``ValidateReplicationControllerSpec``."""
    causes = validate_nonnegative_field(
        _int(spec, "minReadySeconds"), _SPEC.child("minReadySeconds")
    )
    selector = _map(spec, "selector")
    if not selector:
        causes.append(required(_SPEC.child("selector")))
    replicas = _int(spec, "replicas")
    causes.extend(validate_nonnegative_field(replicas, _SPEC.child("replicas")))
    causes.extend(_validate_template(spec.get("template"), selector, _SPEC.child("template")))
    return causes


def validate_replication_controller(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidateReplicationController``: a controller (hub) on create."""
    causes = validate_object_meta(obj, True, name_is_dns_subdomain)
    causes.extend(_validate_spec(_map(obj, "spec")))
    return causes


def validate_replication_controller_update(
    new: Mapping[str, Any], old: Mapping[str, Any]
) -> list[Cause]:
    """The strategy's ``ValidateUpdate`` (see the module docstring)."""
    causes = validate_replication_controller(new)
    causes.extend(validate_object_meta_update(new, old))
    causes.extend(_validate_spec(_map(new, "spec")))
    return causes


def _validate_status(status: Mapping[str, Any]) -> list[Cause]:
    """``ValidateReplicationControllerStatus``."""
    return validate_replica_counts(status, _STATUS, terminating=False)


def validate_replication_controller_status_update(
    new: Mapping[str, Any], old: Mapping[str, Any]
) -> list[Cause]:
    """``ValidateReplicationControllerStatusUpdate``."""
    causes = validate_object_meta_update(new, old)
    causes.extend(_validate_status(_map(new, "status")))
    return causes


# ------------------------------------------------------------------------------ the kind


def replication_controller_fields(obj: Object) -> Mapping[str, str]:
    """The field-selector fields Kubernetes adds (``ControllerToSelectableFields``)."""
    return {"status.replicas": str(_int(_map(obj, "status"), "replicas"))}


REPLICATION_CONTROLLER = KindDefinition(
    group="",
    kind="ReplicationController",
    versions=(KindVersion(version="v1", default=default_replication_controller_v1),),
    storage_version="v1",
    validate=validate_replication_controller,
    validate_update=validate_replication_controller_update,
    resource=ResourceInfo(
        plural="replicationcontrollers",
        singular="replicationcontroller",
        namespaced=True,
        short_names=("rc",),
        categories=("all",),
        subresources=("status", "scale"),
    ),
    field_labels=replication_controller_fields,
    list_kind="ReplicationControllerList",
)

DEFINITIONS: tuple[KindDefinition, ...] = (
    REPLICATION_CONTROLLER,
    list_definition(REPLICATION_CONTROLLER),
)
