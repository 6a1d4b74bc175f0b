"""apps Deployment in v1, v1beta2 and v1beta1; hub: the internal version; storage: apps/v1.

The hub has Kubernetes' internal ``apps.Deployment`` shape, which is apps/v1's plus
``spec.rollbackTo`` (only apps/v1beta1 can still express it). In dict form the hub keeps absent
fields absent (Kubernetes' internal ``replicas`` is a plain int32), so that round trips of
objects that were never defaulted are exact too.

Conversion (as ``pkg/apis/apps/v1*/conversion.go``):

- apps/v1beta1 has the hub's shape: conversion only rewrites ``apiVersion``;
- apps/v1 and apps/v1beta2 keep ``spec.rollbackTo`` in the annotation
  ``deprecated.deployment.rollback.to`` (the revision as decimal text) and restore it, removing
  the annotation, on the way back. Where Kubernetes' text would lose something (see
  :mod:`kstore.api.kinds._annotations`) the annotation holds a JSON envelope instead.

The only other difference between the versions, ``spec.selector`` being optional in v1beta1 and
required in v1/v1beta2, is a matter of defaulting (v1beta1 derives it from the template labels)
and validation, not of shape.

Validation runs on the hub (:mod:`kstore.api.kinds._deployment_validation`).

Defaulting is Kubernetes' ``SetDefaults_Deployment`` of each version: ``replicas`` 1, strategy
``RollingUpdate`` with ``maxUnavailable``/``maxSurge`` 25%, ``progressDeadlineSeconds`` 600,
``revisionHistoryLimit`` 10 (v1, v1beta2) or 2 (v1beta1), and in v1beta1 only the selector and
the object's labels taken from the template's labels; then, as Kubernetes' generated
``SetObjectDefaults_Deployment``, the pod template's spec gets the pod spec defaults
(:func:`kstore.api.kinds._workload.default_pod_template`).
"""

from __future__ import annotations

from typing import Any

from kstore.api.gvk import GroupVersionKind, Object
from kstore.api.kinds._annotations import MISSING, StashedField, int64_text, int64_value
from kstore.api.kinds._deployment_validation import (
    validate_deployment,
    validate_deployment_status_update,
    validate_deployment_update,
)
from kstore.api.kinds._lists import list_definition
from kstore.api.kinds._rolling_update import default_rolling_update
from kstore.api.kinds._workload import default_pod_template
from kstore.api.scheme import KindDefinition, KindVersion, Lifecycle, ResourceInfo

__all__ = [
    "DEFINITIONS",
    "DEPLOYMENT",
    "ROLLBACK_TO",
    "ROLLBACK_TO_ANNOTATION",
    "default_deployment_v1",
    "default_deployment_v1beta1",
    "default_deployment_v1beta2",
    "validate_deployment",
    "validate_deployment_status_update",
    "validate_deployment_update",
]

GROUP = "apps"

#: Kubernetes' ``appsv1.DeprecatedRollbackTo``.
ROLLBACK_TO_ANNOTATION = "deprecated.deployment.rollback.to"

#: DeploymentSpec fields in declaration order (where a restored ``rollbackTo`` is placed).
_SPEC_ORDER = (
    "replicas",
    "selector",
    "template",
    "strategy",
    "minReadySeconds",
    "revisionHistoryLimit",
    "paused",
    "rollbackTo",
    "progressDeadlineSeconds",
)


def _revision_text(rollback_to: Any) -> str | None:
    """Kubernetes' annotation text for a ``rollbackTo``, when it reads back to the same dict.

    Kubernetes omits a zero revision (``omitempty``), so revision 0 is ``{}`` on the wire.
    """
    if not isinstance(rollback_to, dict):
        return None
    if not rollback_to:
        return "0"
    revision = rollback_to.get("revision")
    if len(rollback_to) != 1 or revision == 0:
        return None
    return int64_text(revision)


def _revision_value(text: str) -> Any:
    """The ``rollbackTo`` a canonical annotation text stands for; MISSING for any other text."""
    revision = int64_value(text)
    if revision is MISSING:
        return MISSING
    return {} if revision == 0 else {"revision": revision}


ROLLBACK_TO = StashedField(
    annotation=ROLLBACK_TO_ANNOTATION,
    container="spec",
    field="rollbackTo",
    order=_SPEC_ORDER,
    to_text=_revision_text,
    from_text=_revision_value,
)


# ------------------------------------------------------------------------------ defaulting


def _is_unset(value: Any) -> bool:
    """A Go pointer left nil: the key is absent or JSON ``null``."""
    return value is None


def _default_deployment(obj: Object, revision_history_limit: int) -> None:
    spec = obj.get("spec")
    if spec is None:
        spec = obj["spec"] = {}
    if not isinstance(spec, dict):
        return
    if _is_unset(spec.get("replicas")):
        spec["replicas"] = 1
    default_rolling_update(spec, "strategy", max_unavailable="25%", max_surge="25%")
    if _is_unset(spec.get("revisionHistoryLimit")):
        spec["revisionHistoryLimit"] = revision_history_limit
    if _is_unset(spec.get("progressDeadlineSeconds")):
        spec["progressDeadlineSeconds"] = 600
    default_pod_template(spec)


def default_deployment_v1(obj: Object) -> None:
    """apps/v1 ``SetDefaults_Deployment``, in place."""
    _default_deployment(obj, revision_history_limit=10)


def default_deployment_v1beta2(obj: Object) -> None:
    """apps/v1beta2 ``SetDefaults_Deployment`` (the same values as apps/v1), in place."""
    _default_deployment(obj, revision_history_limit=10)


def default_deployment_v1beta1(obj: Object) -> None:
    """apps/v1beta1 ``SetDefaults_Deployment``, in place.

    Before the common defaults, a template that has labels (even an empty map: Go tests for a
    non-nil map) supplies the selector when there is none, and the object's labels when it has
    none. The copies are separate dicts so that later edits of one do not show in the others.
    """
    spec = obj.get("spec")
    template = spec.get("template") if isinstance(spec, dict) else None
    template_meta = template.get("metadata") if isinstance(template, dict) else None
    labels = template_meta.get("labels") if isinstance(template_meta, dict) else None
    if isinstance(spec, dict) and isinstance(labels, dict):
        if spec.get("selector") is None:
            spec["selector"] = {"matchLabels": dict(labels)} if labels else {}
        meta = obj.get("metadata")
        if meta is None and labels:
            meta = obj["metadata"] = {}
        if isinstance(meta, dict) and not meta.get("labels") and labels:
            meta["labels"] = dict(labels)
    _default_deployment(obj, revision_history_limit=2)


# ------------------------------------------------------------------------------ the kind

_V1 = GroupVersionKind(GROUP, "v1", "Deployment")
#: prerelease-lifecycle-gen's releases for apps/v1beta2 and apps/v1beta1 Deployment.
_V1BETA2_LIFECYCLE = Lifecycle(
    introduced=(1, 8), deprecated=(1, 9), removed=(1, 16), replacement=_V1
)
_V1BETA1_LIFECYCLE = Lifecycle(
    introduced=(1, 6), deprecated=(1, 8), removed=(1, 16), replacement=_V1
)

DEPLOYMENT = KindDefinition(
    group=GROUP,
    kind="Deployment",
    versions=(
        KindVersion(
            version="v1",
            to_hub=ROLLBACK_TO.restore,
            from_hub=ROLLBACK_TO.stash,
            default=default_deployment_v1,
        ),
        KindVersion(
            version="v1beta2",
            to_hub=ROLLBACK_TO.restore,
            from_hub=ROLLBACK_TO.stash,
            default=default_deployment_v1beta2,
            lifecycle=_V1BETA2_LIFECYCLE,
        ),
        KindVersion(
            version="v1beta1", default=default_deployment_v1beta1, lifecycle=_V1BETA1_LIFECYCLE
        ),
    ),
    storage_version="v1",
    validate=validate_deployment,
    validate_update=validate_deployment_update,
    resource=ResourceInfo(
        plural="deployments",
        singular="deployment",
        namespaced=True,
        short_names=("deploy",),
        categories=("all",),
        subresources=("status", "scale"),
    ),
    list_kind="DeploymentList",
)

DEFINITIONS: tuple[KindDefinition, ...] = (DEPLOYMENT, list_definition(DEPLOYMENT))
