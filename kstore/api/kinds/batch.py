"""batch/v1 Job and CronJob: the hub has v1's shape (one version, conversion only rewrites
``apiVersion``); storage is batch/v1.

Defaulting is Kubernetes' generated ``SetObjectDefaults_Job`` / ``SetObjectDefaults_CronJob``:

- **Job** (``SetDefaults_Job``): ``completions`` and ``parallelism`` 1 when both are unset,
  else ``parallelism`` 1 when unset; ``backoffLimit`` 6, or the int32 maximum when
  ``backoffLimitPerIndex`` is set; the Job's labels taken from the pod template's labels when
  the template has labels (even ``{}``) and the Job has none; ``completionMode`` ``NonIndexed``;
  ``suspend`` false; ``podReplacementPolicy`` ``Failed`` with a pod failure policy, else
  ``TerminatingOrFailed`` (the JobPodReplacementPolicy feature is GA); ``manualSelector`` false.
- **CronJob** (``SetDefaults_CronJob``): ``concurrencyPolicy`` ``Allow``, ``suspend`` false,
  ``successfulJobsHistoryLimit`` 3, ``failedJobsHistoryLimit`` 1. The job template's spec gets
  no Job defaults (Kubernetes defaults the Job when the controller creates it), only the nested
  ones below.
- Both: each pod failure policy ``onPodConditions`` pattern's ``status`` defaults to ``True``,
  and the pod template's spec gets the pod spec defaults
  (:func:`kstore.api.kinds.core.default_pod_spec`).

Kubernetes shares one map between the Job's labels and its template's labels when it defaults
the former from the latter, so the selector labels the API server adds to the template on create
show on the Job as well. A dict's identity does not survive the copies a request makes, so the
Job strategy (:mod:`kstore.registry.strategies.batch`) reproduces that whenever the Job's labels
equal its template's on create (:func:`labels_from_template`): also when a client wrote the same
labels twice, where Kubernetes would keep two maps.

Validation runs on the hub (:mod:`kstore.api.kinds._job_validation`,
:mod:`kstore.api.kinds._cron_job_validation`).
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.kinds._cron_job_validation import validate_cron_job, validate_cron_job_update
from kstore.api.kinds._job_validation import validate_job, validate_job_update
from kstore.api.kinds._lists import list_definition
from kstore.api.kinds.core import default_pod_spec
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo

__all__ = [
    "CRON_JOB",
    "DEFINITIONS",
    "GROUP",
    "JOB",
    "default_cron_job",
    "default_job",
    "job_fields",
    "labels_from_template",
]

GROUP: Final = "batch"
_INT32_MAX: Final = 2**31 - 1


def _child(parent: MutableMapping[str, Any], key: str) -> MutableMapping[str, Any] | None:
    """``parent[key]`` as a dict, created when absent or null (a Go struct is always there);
    None when it holds something else (left for validation to report)."""
    value = parent.get(key)
    if value is None:
        value = parent[key] = {}
    return value if isinstance(value, dict) else None


def _default_pod_failure_policy(spec: Mapping[str, Any]) -> None:
    policy = spec.get("podFailurePolicy")
    rules = policy.get("rules") if isinstance(policy, dict) else None
    for rule in rules if isinstance(rules, list) else ():
        patterns = rule.get("onPodConditions") if isinstance(rule, dict) else None
        for pattern in patterns if isinstance(patterns, list) else ():
            if isinstance(pattern, dict) and not pattern.get("status"):
                pattern["status"] = "True"


def _default_template(spec: MutableMapping[str, Any]) -> None:
    """The nested defaults of a JobSpec: pod failure policy patterns and the pod spec."""
    _default_pod_failure_policy(spec)
    template = _child(spec, "template")
    if template is not None:
        pod_spec = _child(template, "spec")
        if pod_spec is not None:
            default_pod_spec(pod_spec)


def _set_if_none(obj: MutableMapping[str, Any], key: str, value: Any) -> None:
    if obj.get(key) is None:
        obj[key] = value


def default_job(obj: Object) -> None:
    """batch/v1 ``SetObjectDefaults_Job``, in place."""
    spec = _child(obj, "spec")
    if spec is None:
        return
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    _set_if_none(spec, "parallelism", 1)
    if spec.get("backoffLimit") is None:
        per_index = spec.get("backoffLimitPerIndex") is not None
        spec["backoffLimit"] = _INT32_MAX if per_index else 6
    template = spec.get("template")
    template_meta = template.get("metadata") if isinstance(template, dict) else None
    labels = template_meta.get("labels") if isinstance(template_meta, dict) else None
    meta = obj.get("metadata")
    if isinstance(labels, dict) and (meta is None or isinstance(meta, dict)):
        if meta is None:
            meta = obj["metadata"] = {}
        if not meta.get("labels"):
            meta["labels"] = dict(labels)
    _set_if_none(spec, "completionMode", "NonIndexed")
    _set_if_none(spec, "suspend", False)
    if spec.get("podReplacementPolicy") is None:
        with_policy = spec.get("podFailurePolicy") is not None
        spec["podReplacementPolicy"] = "Failed" if with_policy else "TerminatingOrFailed"
    _set_if_none(spec, "manualSelector", False)
    _default_template(spec)


def default_cron_job(obj: Object) -> None:
    """batch/v1 ``SetObjectDefaults_CronJob``, in place."""
    spec = _child(obj, "spec")
    if spec is None:
        return
    if not spec.get("concurrencyPolicy"):
        spec["concurrencyPolicy"] = "Allow"
    _set_if_none(spec, "suspend", False)
    _set_if_none(spec, "successfulJobsHistoryLimit", 3)
    _set_if_none(spec, "failedJobsHistoryLimit", 1)
    job_template = _child(spec, "jobTemplate")
    job_spec = _child(job_template, "spec") if job_template is not None else None
    if job_spec is not None:
        _default_template(job_spec)


def labels_from_template(job: Mapping[str, Any]) -> bool:
    """Whether the Job's labels are its template's (as defaulting leaves a Job that had none)."""
    meta = job.get("metadata")
    spec = job.get("spec")
    template = spec.get("template") if isinstance(spec, Mapping) else None
    template_meta = template.get("metadata") if isinstance(template, Mapping) else None
    if not isinstance(meta, Mapping) or not isinstance(template_meta, Mapping):
        return False
    labels = meta.get("labels")
    return isinstance(labels, Mapping) and labels == template_meta.get("labels")


def job_fields(job: Object) -> Mapping[str, str]:
    """The Job's own field selector field: ``status.successful`` (the succeeded count)."""
    status = job.get("status")
    succeeded = status.get("succeeded") if isinstance(status, Mapping) else None
    count = succeeded if isinstance(succeeded, int) and not isinstance(succeeded, bool) else 0
    return {"status.successful": str(count)}


JOB = KindDefinition(
    group=GROUP,
    kind="Job",
    versions=(KindVersion(version="v1", default=default_job),),
    storage_version="v1",
    validate=validate_job,
    validate_update=validate_job_update,
    resource=ResourceInfo(
        plural="jobs",
        singular="job",
        namespaced=True,
        categories=("all",),
        subresources=("status",),
    ),
    field_labels=job_fields,
    list_kind="JobList",
)

CRON_JOB = KindDefinition(
    group=GROUP,
    kind="CronJob",
    versions=(KindVersion(version="v1", default=default_cron_job),),
    storage_version="v1",
    validate=validate_cron_job,
    validate_update=validate_cron_job_update,
    resource=ResourceInfo(
        plural="cronjobs",
        singular="cronjob",
        namespaced=True,
        short_names=("cj",),
        categories=("all",),
        subresources=("status",),
    ),
    list_kind="CronJobList",
)

DEFINITIONS: tuple[KindDefinition, ...] = (
    JOB,
    list_definition(JOB),
    CRON_JOB,
    list_definition(CRON_JOB),
)
