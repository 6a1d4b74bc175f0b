"""apps/v1 StatefulSet: one external version, ``v1``, with the hub's shape.

Registered as Kubernetes serves it: namespaced ``statefulsets``, short name ``sts``, category
``all``, ``status`` and ``scale`` subresources.

Defaulting is Kubernetes' ``SetObjectDefaults_StatefulSet``: ``SetDefaults_StatefulSet``
(``podManagementPolicy`` ``OrderedReady``; an unset ``updateStrategy`` becomes ``RollingUpdate``
with a ``rollingUpdate`` whose ``partition`` is 0; ``persistentVolumeClaimRetentionPolicy``
``Retain``/``Retain``; ``replicas`` 1; ``revisionHistoryLimit`` 10), then the pod template's
spec gets the pod spec defaults (:func:`kstore.api.kinds.core.default_pod_spec`) and each of
``volumeClaimTemplates`` the PersistentVolumeClaim defaults
(:func:`kstore.api.kinds.persistentvolumeclaim.default_persistent_volume_claim`: ``volumeMode``
``Filesystem``, ``status.phase`` ``Pending``).

``rollingUpdate.maxUnavailable`` is kept as written and not defaulted: Kubernetes v1.36 has the
MaxUnavailableStatefulSet gate off by default (it then drops the field on writes and gives it no
default; with the gate on, as in v1.37, it defaults it to 1); kstore validates it as the gate
does and leaves it to controllers.

Validation runs on the hub (:mod:`kstore.api.kinds._statefulset_validation`).
"""

from __future__ import annotations

from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.kinds._lists import list_definition
from kstore.api.kinds._statefulset_validation import (
    validate_stateful_set,
    validate_stateful_set_update,
)
from kstore.api.kinds.core import default_pod_spec
from kstore.api.kinds.persistentvolumeclaim import default_persistent_volume_claim, struct_at
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo

__all__ = ["DEFINITIONS", "STATEFUL_SET", "default_stateful_set_v1"]

_RETAIN: Final = "Retain"


def _default_spec(spec: dict[str, Any]) -> None:
    """``SetDefaults_StatefulSet`` on the spec."""
    if not spec.get("podManagementPolicy"):
        spec["podManagementPolicy"] = "OrderedReady"
    strategy = struct_at(spec, "updateStrategy")
    if strategy is not None:
        if not strategy.get("type"):
            strategy["type"] = "RollingUpdate"
            if strategy.get("rollingUpdate") is None:
                strategy["rollingUpdate"] = {}
        rolling = strategy.get("rollingUpdate")
        if (
            strategy["type"] == "RollingUpdate"
            and isinstance(rolling, dict)
            and rolling.get("partition") is None
        ):
            rolling["partition"] = 0
    policy = struct_at(spec, "persistentVolumeClaimRetentionPolicy")
    if policy is not None:
        for key in ("whenDeleted", "whenScaled"):
            if not policy.get(key):
                policy[key] = _RETAIN
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10


def default_stateful_set_v1(obj: Object) -> None:
    """apps/v1 ``SetObjectDefaults_StatefulSet``, in place."""
    spec = struct_at(obj, "spec")
    if spec is None:
        return
    _default_spec(spec)
    template = struct_at(spec, "template")
    pod_spec = struct_at(template, "spec") if template is not None else None
    if pod_spec is not None:
        default_pod_spec(pod_spec)
    claims = spec.get("volumeClaimTemplates")
    if isinstance(claims, list):
        for claim in claims:
            if isinstance(claim, dict):
                default_persistent_volume_claim(claim)


STATEFUL_SET: Final = KindDefinition(
    group="apps",
    kind="StatefulSet",
    versions=(KindVersion(version="v1", default=default_stateful_set_v1),),
    storage_version="v1",
    validate=validate_stateful_set,
    validate_update=validate_stateful_set_update,
    resource=ResourceInfo(
        plural="statefulsets",
        singular="statefulset",
        namespaced=True,
        short_names=("sts",),
        categories=("all",),
        subresources=("status", "scale"),
    ),
    list_kind="StatefulSetList",
)

DEFINITIONS: tuple[KindDefinition, ...] = (STATEFUL_SET, list_definition(STATEFUL_SET))
