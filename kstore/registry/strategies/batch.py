"""batch Job and CronJob: Kubernetes' ``pkg/registry/batch/job`` and ``.../cronjob`` strategies.

Job:

- create: unless ``spec.manualSelector`` is true, the API server generates the selector and the
  pod template labels that tie the Job's pods to it: ``batch.kubernetes.io/controller-uid`` and
  ``controller-uid`` (the Job's uid), ``batch.kubernetes.io/job-name`` and ``job-name`` (its
  name) are added to the template labels where absent, and ``spec.selector.matchLabels`` gets
  ``batch.kubernetes.io/controller-uid`` (a selector the user set is kept and extended;
  validation then refuses one that does not select those labels). When defaulting gave the Job
  its template's labels, the two are one map in Kubernetes, so the Job shows the generated
  labels too (kstore: when the two are equal, see :mod:`kstore.api.kinds.batch`). ``status``
  starts empty, ``generation`` at 1; the alpha ``spec.scheduling`` field (feature
  WorkloadWithJob, off by default) is dropped, as Kubernetes drops disabled fields;
- update: ``status`` kept, ``generation`` bumped when ``spec`` changes; ``status`` writes keep
  ``spec``; each validated by Kubernetes' rules (:mod:`kstore.api.kinds._job_validation`);
- deleting through batch/v1 without a propagation policy orphans the Job's pods (Kubernetes
  keeps that default for compatibility); without a request version it deletes them;
- a name that is not a DNS label draws Kubernetes' warning (pod names and hostnames come from it).

CronJob: ``status`` starts empty, ``generation`` at 1 and follows ``spec``; ``status`` writes keep
``spec`` and are not validated further (as Kubernetes); deletes take dependents along; the same
name warning.
"""

from __future__ import annotations

from typing import Any, Final

from kstore.api.gvk import GroupVersion, Object
from kstore.api.kinds._job_validation import (
    CONTROLLER_UID_LABEL,
    JOB_NAME_LABEL,
    LEGACY_CONTROLLER_UID_LABEL,
    LEGACY_JOB_NAME_LABEL,
    validate_job_status_update,
)
from kstore.api.kinds.batch import labels_from_template
from kstore.errors import Cause
from kstore.registry.interface import RequestContext
from kstore.registry.strategies.base import (
    DELETE_DEPENDENTS,
    ORPHAN_DEPENDENTS,
    STATUS,
    BuiltinStrategy,
    meta,
    pod_name_warnings,
    read_meta,
)

__all__ = ["CronJobStrategy", "JobStrategy", "generate_selector"]

_BATCH_V1: Final = GroupVersion("batch", "v1")


def _dict_at(parent: dict[str, Any], key: str) -> dict[str, Any] | None:
    value = parent.get(key)
    if value is None:
        value = parent[key] = {}
    return value if isinstance(value, dict) else None


def generate_selector(job: Object) -> None:
    """``generateSelector``: the template labels and the selector that tie pods to this Job.

    Labels already on the template are kept (validation reports a conflicting value)."""
    meta = read_meta(job)
    name, uid = str(meta.get("name") or ""), str(meta.get("uid") or "")
    spec = _dict_at(job, "spec")
    template = _dict_at(spec, "template") if spec is not None else None
    template_meta = _dict_at(template, "metadata") if template is not None else None
    labels = _dict_at(template_meta, "labels") if template_meta is not None else None
    if spec is None or labels is None:
        return
    for key, value in (
        (LEGACY_JOB_NAME_LABEL, name),
        (JOB_NAME_LABEL, name),
        (LEGACY_CONTROLLER_UID_LABEL, uid),
        (CONTROLLER_UID_LABEL, uid),
    ):
        labels.setdefault(key, value)
    selector = _dict_at(spec, "selector")
    match_labels = _dict_at(selector, "matchLabels") if selector is not None else None
    if match_labels is not None:
        match_labels.setdefault(CONTROLLER_UID_LABEL, uid)


def _template_labels(job: Object) -> dict[str, Any]:
    labels = job["spec"]["template"]["metadata"]["labels"]
    return labels if isinstance(labels, dict) else {}


class JobStrategy(BuiltinStrategy):
    tracks_generation = True

    def prepare_for_create(self, ctx: RequestContext, obj: Object) -> list[str]:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            if spec.get("manualSelector") is not True:
                shared = labels_from_template(obj)
                generate_selector(obj)
                if shared:
                    meta(obj)["labels"] = dict(_template_labels(obj))
            spec.pop("scheduling", None)
        warnings = super().prepare_for_create(ctx, obj)
        warnings.extend(pod_name_warnings(obj))
        return warnings

    def prepare_for_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> None:
        spec, old_spec = obj.get("spec"), old.get("spec")
        had_scheduling = isinstance(old_spec, dict) and old_spec.get("scheduling") is not None
        if subresource != STATUS and isinstance(spec, dict) and not had_scheduling:
            spec.pop("scheduling", None)
        super().prepare_for_update(ctx, obj, old, subresource)

    def validate_kind_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> list[Cause]:
        if subresource == STATUS:
            return validate_job_status_update(obj, old)
        return super().validate_kind_update(ctx, obj, old, subresource)

    def default_gc_policy(self, ctx: RequestContext) -> str:
        return ORPHAN_DEPENDENTS if ctx.request_version == _BATCH_V1 else DELETE_DEPENDENTS


class CronJobStrategy(BuiltinStrategy):
    tracks_generation = True
    default_policy = DELETE_DEPENDENTS

    def prepare_for_create(self, ctx: RequestContext, obj: Object) -> list[str]:
        warnings = super().prepare_for_create(ctx, obj)
        warnings.extend(pod_name_warnings(obj))
        return warnings

    def validate_kind_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> list[Cause]:
        if subresource == STATUS:
            return []
        return super().validate_kind_update(ctx, obj, old, subresource)
