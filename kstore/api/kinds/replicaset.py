"""apps ReplicaSet in v1; hub: the internal version, which has apps/v1's shape; storage: apps/v1.

Kubernetes serves ReplicaSets in apps/v1 only (extensions/v1beta1 and apps/v1beta2 stopped in
1.16), so conversion only rewrites ``apiVersion``.

Defaulting is ``SetObjectDefaults_ReplicaSet``: ``replicas`` 1 (``SetDefaults_ReplicaSet``),
then the pod spec defaults of the template
(:func:`kstore.api.kinds._workload.default_pod_template`).

Validation runs on the hub, with Kubernetes' paths, order and messages
(``pkg/apis/apps/validation``):

- :func:`validate_replica_set` is ``ValidateReplicaSet``: ObjectMeta (the name a DNS
  subdomain), ``replicas`` and ``minReadySeconds`` not negative, then the selector and the pod
  template as Deployments check theirs (the selector required, valid, not empty, matching the
  template labels; ``restartPolicy: Always``; no ``activeDeadlineSeconds``);
- :func:`validate_replica_set_update` is what the strategy's ``ValidateUpdate`` runs:
  ``ValidateReplicaSet``, then ``ValidateReplicaSetUpdate`` (ObjectMeta update rules and the
  spec again, so Kubernetes lists a spec problem twice among the causes and once in the
  message), then, unless asked not to, an immutable ``spec.selector``. Kubernetes judges that
  last rule by the request's version (the strategy passes it, see
  :class:`kstore.registry.strategies.replicaset.ReplicaSetStrategy`); the Scheme's update
  validator applies apps/v1's rule;
- :func:`validate_replica_set_status_update` is ``ValidateReplicaSetStatusUpdate`` (the
  ``status`` subresource): the counts not negative, none above ``status.replicas``,
  ``availableReplicas`` not above ``readyReplicas``.

A field selector may use ``status.replicas`` besides the name and namespace.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.kinds._lists import list_definition
from kstore.api.kinds._workload import (
    default_pod_template,
    validate_replica_counts,
    validate_selector_and_template,
    validate_selector_unchanged,
)
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo
from kstore.api.validation.field import Path
from kstore.api.validation.names import name_is_dns_subdomain
from kstore.api.validation.objectmeta import (
    validate_nonnegative_field,
    validate_object_meta,
    validate_object_meta_update,
)
from kstore.errors import Cause

__all__ = [
    "DEFINITIONS",
    "REPLICA_SET",
    "default_replica_set_v1",
    "replica_set_fields",
    "validate_replica_set",
    "validate_replica_set_status_update",
    "validate_replica_set_update",
]

GROUP = "apps"

_SPEC: Final = Path("spec")
_STATUS: Final = Path("status")


def _map(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else {}


def _int(obj: Mapping[str, Any], key: str) -> int:
    value = obj.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


# ------------------------------------------------------------------------------ defaulting


def default_replica_set_v1(obj: Object) -> None:
    """apps/v1 ``SetObjectDefaults_ReplicaSet``, in place."""
    spec = obj.get("spec")
    if spec is None:
        spec = obj["spec"] = {}
    if not isinstance(spec, dict):
        return
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    default_pod_template(spec)


# ------------------------------------------------------------------------------ validation


def _validate_spec(spec: Mapping[str, Any]) -> list[Cause]:
    """``ValidateReplicaSetSpec``."""
    causes = validate_nonnegative_field(_int(spec, "replicas"), _SPEC.child("replicas"))
    causes.extend(
        validate_nonnegative_field(_int(spec, "minReadySeconds"), _SPEC.child("minReadySeconds"))
    )
    causes.extend(validate_selector_and_template(spec, _SPEC))
    return causes


def validate_replica_set(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidateReplicaSet``: a ReplicaSet (hub) on create."""
    causes = validate_object_meta(obj, True, name_is_dns_subdomain)
    causes.extend(_validate_spec(_map(obj, "spec")))
    return causes


def validate_replica_set_update(
    new: Mapping[str, Any], old: Mapping[str, Any], *, selector_immutable: bool = True
) -> list[Cause]:
    """The strategy's ``ValidateUpdate`` (see the module docstring)."""
    causes = validate_replica_set(new)
    causes.extend(validate_object_meta_update(new, old))
    new_spec = _map(new, "spec")
    causes.extend(_validate_spec(new_spec))
    if selector_immutable:
        causes.extend(validate_selector_unchanged(new_spec, _map(old, "spec"), _SPEC))
    return causes


def _validate_status(status: Mapping[str, Any]) -> list[Cause]:
    """``ValidateReplicaSetStatus``."""
    return validate_replica_counts(status, _STATUS, terminating=True)


def validate_replica_set_status_update(
    new: Mapping[str, Any], old: Mapping[str, Any]
) -> list[Cause]:
    """``ValidateReplicaSetStatusUpdate``: ObjectMeta update rules, then the status counts."""
    causes = validate_object_meta_update(new, old)
    causes.extend(_validate_status(_map(new, "status")))
    return causes


# ------------------------------------------------------------------------------ the kind


def replica_set_fields(obj: Object) -> Mapping[str, str]:
    """The field-selector fields Kubernetes adds for ReplicaSets (``ToSelectableFields``)."""
    return {"status.replicas": str(_int(_map(obj, "status"), "replicas"))}


REPLICA_SET = KindDefinition(
    group=GROUP,
    kind="ReplicaSet",
    versions=(KindVersion(version="v1", default=default_replica_set_v1),),
    storage_version="v1",
    validate=validate_replica_set,
    validate_update=validate_replica_set_update,
    resource=ResourceInfo(
        plural="replicasets",
        singular="replicaset",
        namespaced=True,
        short_names=("rs",),
        categories=("all",),
        subresources=("status", "scale"),
    ),
    field_labels=replica_set_fields,
    list_kind="ReplicaSetList",
)

DEFINITIONS: tuple[KindDefinition, ...] = (REPLICA_SET, list_definition(REPLICA_SET))
