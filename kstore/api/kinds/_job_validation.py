"""Job validation on the hub, as ``pkg/apis/batch/validation`` and the registry strategy call
it.

- :func:`validate_job` is ``ValidateJob`` with the options of a create: metadata (a DNS
  subdomain name), the generated selector and pod template labels (unless ``manualSelector``),
  the spec (counts, completion mode and the indexed-job limits, pod failure and success
  policies, pod replacement policy, ``managedBy``, the pod template with a restart policy of
  ``OnFailure`` or ``Never``), the selector matching the template labels, and for indexed jobs
  a name that still makes valid pod hostnames;
- :func:`validate_job_update` is the strategy's ``ValidateUpdate``: ``ValidateJob`` then
  ``ValidateJobUpdate``, which validates the spec again (so Kubernetes reports a spec problem
  twice on update, and so does kstore) and keeps ``selector``, the pod template (but for the
  scheduling directives of a suspended Job that never started), ``completionMode``,
  ``podFailurePolicy``, ``backoffLimitPerIndex``, ``managedBy`` and ``successPolicy``
  immutable, and ``completions`` too except for indexed jobs scaled with ``parallelism``;
- :func:`validate_job_status_update` is ``ValidateJobUpdateStatus``: non-negative counters,
  unique uncounted pod UIDs, and the transitions Kubernetes refuses (counters going down, a
  terminal condition switched off, Complete with Failed);
- :func:`validate_job_spec_fields` is ``validateJobSpec`` (everything but the selector), which
  a CronJob's job template is held to as well (:mod:`kstore.api.kinds._cron_job_validation`).

The pod failure and success policies are checked by :mod:`kstore.api.kinds._job_policies`.

Expects defaulted objects, as Kubernetes validates after defaulting. Field paths, messages and
the order of the causes are Kubernetes'.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kstore.api.kinds._job_policies import (
    success_policy_value,
    validate_domain_prefixed_path,
    validate_pod_failure_policy,
    validate_success_policy,
)
from kstore.api.kinds._selector import as_matcher, selector_value, validate_label_selector
from kstore.api.validation.core.podspec import validate_pod_template_spec
from kstore.api.validation.field import (
    OMIT_VALUE,
    JSONValue,
    Path,
    duplicate,
    invalid,
    not_supported,
    required,
    too_long,
)
from kstore.api.validation.names import is_dns1123_label, name_is_dns_subdomain
from kstore.api.validation.objectmeta import (
    validate_immutable_field,
    validate_nonnegative_field,
    validate_object_meta,
    validate_object_meta_update,
)
from kstore.errors import Cause

__all__ = [
    "CONTROLLER_UID_LABEL",
    "JOB_NAME_LABEL",
    "LEGACY_CONTROLLER_UID_LABEL",
    "LEGACY_JOB_NAME_LABEL",
    "validate_job",
    "validate_job_spec_fields",
    "validate_job_status_update",
    "validate_job_update",
]

#: The labels the API server puts on a Job's pod template (batch/v1 constants).
CONTROLLER_UID_LABEL: Final = "batch.kubernetes.io/controller-uid"
JOB_NAME_LABEL: Final = "batch.kubernetes.io/job-name"
LEGACY_CONTROLLER_UID_LABEL: Final = "controller-uid"
LEGACY_JOB_NAME_LABEL: Final = "job-name"

_META: Final = Path("metadata")
_SPEC: Final = Path("spec")
_STATUS: Final = Path("status")

_MAX_PARALLELISM_INDEXED: Final = 100_000
_MAX_FAILED_INDEXES: Final = 100_000
_COMPLETIONS_SOFT_LIMIT: Final = 100_000
_PARALLELISM_HIGH_COMPLETIONS: Final = 10_000
_MAX_FAILED_INDEXES_HIGH_COMPLETIONS: Final = 10_000
_MAX_MANAGED_BY_LENGTH: Final = 63

# sets.List order (sorted), as Kubernetes lists the supported values.
_REPLACEMENT_POLICIES: Final = ("Failed", "TerminatingOrFailed")
#: The conditions a status write may not switch off, in the order Kubernetes checks them.
_TERMINAL_CONDITIONS: Final = ("Failed", "Complete", "FailureTarget")


# ----------------------------------------------------------------------------- access


def _map(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else {}


def _opt_map(obj: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else None


def _list(obj: Mapping[str, Any], key: str) -> list[Any]:
    value = obj.get(key)
    return value if isinstance(value, list) else []


def _opt_int(obj: Mapping[str, Any], key: str) -> int | None:
    value = obj.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _int(obj: Mapping[str, Any], key: str) -> int:
    value = _opt_int(obj, key)
    return value if value is not None else 0


def _opt_str(obj: Mapping[str, Any], key: str) -> str | None:
    value = obj.get(key)
    return value if isinstance(value, str) else None


def _str(obj: Mapping[str, Any], key: str) -> str:
    return _opt_str(obj, key) or ""


def _template_labels(spec: Mapping[str, Any]) -> Mapping[str, Any] | None:
    return _opt_map(_map(_map(spec, "template"), "metadata"), "labels")


def _is_indexed(spec: Mapping[str, Any]) -> bool:
    return spec.get("completionMode") == "Indexed"


# ----------------------------------------------------------------------------- selector


def _validate_has_label(
    labels: Mapping[str, Any] | None, path: Path, key: str, expected: str
) -> list[Cause]:
    """``ValidateHasLabel`` on the template's metadata at ``path``."""
    where = path.child("labels").key(key)
    if labels is None or key not in labels:
        return [required(where, f"must be '{expected}'")]
    if labels[key] != expected:
        return [invalid(where, dict(labels), f"must be '{expected}'")]
    return []


def _validate_generated_selector(job: Mapping[str, Any], prefixed_labels: bool) -> list[Cause]:
    spec = _map(job, "spec")
    if spec.get("manualSelector") is True:
        return []
    selector = _opt_map(spec, "selector")
    if selector is None:
        return []
    meta = _map(job, "metadata")
    uid, name = _str(meta, "uid"), _str(meta, "name")
    causes: list[Cause] = []
    if not uid:
        causes.append(required(_META.child("uid")))
    labels = _template_labels(spec)
    template_meta = _SPEC.child("template", "metadata")
    causes.extend(_validate_has_label(labels, template_meta, LEGACY_CONTROLLER_UID_LABEL, uid))
    causes.extend(_validate_has_label(labels, template_meta, LEGACY_JOB_NAME_LABEL, name))
    expected: dict[str, str] = {}
    if prefixed_labels:
        causes.extend(_validate_has_label(labels, template_meta, CONTROLLER_UID_LABEL, uid))
        causes.extend(_validate_has_label(labels, template_meta, JOB_NAME_LABEL, name))
        expected[CONTROLLER_UID_LABEL] = uid
        expected[JOB_NAME_LABEL] = name
    expected[LEGACY_CONTROLLER_UID_LABEL] = uid
    expected[LEGACY_JOB_NAME_LABEL] = name
    matcher = as_matcher(selector)
    if matcher is not None and not matcher.matches(expected):
        causes.append(
            invalid(
                _SPEC.child("selector"), selector_value(selector), "`selector` not auto-generated"
            )
        )
    return causes


# ----------------------------------------------------------------------------- spec


def _validate_indexed(spec: Mapping[str, Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    completions = _opt_int(spec, "completions")
    parallelism = _opt_int(spec, "parallelism")
    max_failed = _opt_int(spec, "maxFailedIndexes")
    if completions is None:
        causes.append(required(path.child("completions"), "when completion mode is Indexed"))
    if parallelism is not None and parallelism > _MAX_PARALLELISM_INDEXED:
        causes.append(
            invalid(
                path.child("parallelism"),
                parallelism,
                f"must be less than or equal to {_MAX_PARALLELISM_INDEXED} "
                "when completion mode is Indexed",
            )
        )
    if completions is not None and max_failed is not None and max_failed > completions:
        causes.append(
            invalid(
                path.child("maxFailedIndexes"),
                max_failed,
                "must be less than or equal to completions",
            )
        )
    if max_failed is not None and max_failed > _MAX_FAILED_INDEXES:
        causes.append(
            invalid(
                path.child("maxFailedIndexes"),
                max_failed,
                f"must be less than or equal to {_MAX_FAILED_INDEXES}",
            )
        )
    high = (
        completions is not None
        and completions > _COMPLETIONS_SOFT_LIMIT
        and spec.get("backoffLimitPerIndex") is not None
    )
    if high:
        suffix = (
            f"when completions are above {_COMPLETIONS_SOFT_LIMIT} "
            "and used with backoff limit per index"
        )
        if max_failed is None:
            causes.append(
                required(
                    path.child("maxFailedIndexes"),
                    f"must be specified when completions is above {_COMPLETIONS_SOFT_LIMIT}",
                )
            )
        if parallelism is not None and parallelism > _PARALLELISM_HIGH_COMPLETIONS:
            causes.append(
                invalid(
                    path.child("parallelism"),
                    parallelism,
                    f"must be less than or equal to {_PARALLELISM_HIGH_COMPLETIONS} {suffix}",
                )
            )
        if max_failed is not None and max_failed > _MAX_FAILED_INDEXES_HIGH_COMPLETIONS:
            causes.append(
                invalid(
                    path.child("maxFailedIndexes"),
                    max_failed,
                    f"must be less than or equal to {_MAX_FAILED_INDEXES_HIGH_COMPLETIONS} "
                    f"{suffix}",
                )
            )
    return causes


def validate_job_spec_fields(spec: Mapping[str, Any], path: Path) -> list[Cause]:
    """``validateJobSpec``: everything but the selector."""
    causes: list[Cause] = []
    for key in (
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
        "backoffLimitPerIndex",
    ):
        value = _opt_int(spec, key)
        if value is not None:
            causes.extend(validate_nonnegative_field(value, path.child(key)))
    max_failed = _opt_int(spec, "maxFailedIndexes")
    if max_failed is not None:
        causes.extend(validate_nonnegative_field(max_failed, path.child("maxFailedIndexes")))
        if spec.get("backoffLimitPerIndex") is None:
            causes.append(
                required(path.child("backoffLimitPerIndex"), "when maxFailedIndexes is specified")
            )
    managed_by = _opt_str(spec, "managedBy")
    if managed_by is not None:
        causes.extend(validate_domain_prefixed_path(managed_by, path.child("managedBy")))
        if len(managed_by.encode()) > _MAX_MANAGED_BY_LENGTH:
            causes.append(too_long(path.child("managedBy"), _MAX_MANAGED_BY_LENGTH))
    mode = _opt_str(spec, "completionMode")
    if mode is not None:
        if mode not in ("NonIndexed", "Indexed"):
            causes.append(
                not_supported(
                    path.child("completionMode"), JSONValue(mode), ("NonIndexed", "Indexed")
                )
            )
        if mode == "Indexed":
            causes.extend(_validate_indexed(spec, path))
    if mode in (None, "NonIndexed"):
        for key in ("backoffLimitPerIndex", "maxFailedIndexes"):
            value = _opt_int(spec, key)
            if value is not None:
                causes.append(invalid(path.child(key), value, "requires indexed completion mode"))
    has_failure_policy = _opt_map(spec, "podFailurePolicy") is not None
    if has_failure_policy:
        causes.extend(validate_pod_failure_policy(spec, path.child("podFailurePolicy")))
    success_policy = _opt_map(spec, "successPolicy")
    if success_policy is not None:
        if not _is_indexed(spec):
            causes.append(
                invalid(
                    path.child("successPolicy"),
                    success_policy_value(success_policy),
                    "requires indexed completion mode",
                )
            )
        else:
            causes.extend(validate_success_policy(spec, path.child("successPolicy")))
    replacement = _opt_str(spec, "podReplacementPolicy")
    if replacement is not None:
        where = path.child("podReplacementPolicy")
        if has_failure_policy:
            if replacement != "Failed":
                causes.append(not_supported(where, JSONValue(replacement), ("Failed",)))
        elif replacement not in _REPLACEMENT_POLICIES:
            causes.append(not_supported(where, JSONValue(replacement), _REPLACEMENT_POLICIES))
    causes.extend(validate_pod_template_spec(_map(spec, "template"), path.child("template")))
    restart = _str(_map(_map(spec, "template"), "spec"), "restartPolicy")
    restart_path = path.child("template", "spec", "restartPolicy")
    if restart in ("Always", ""):
        causes.append(required(restart_path, 'valid values: "OnFailure", "Never"'))
    elif restart not in ("OnFailure", "Never"):
        causes.append(not_supported(restart_path, JSONValue(restart), ("OnFailure", "Never")))
    elif has_failure_policy and restart != "Never":
        causes.append(
            invalid(
                restart_path,
                JSONValue(restart),
                'only "Never" is supported when podFailurePolicy is specified',
            )
        )
    return causes


def _validate_job_spec(spec: Mapping[str, Any], path: Path) -> list[Cause]:
    """``ValidateJobSpec``: the fields, a selector, and the selector matching the template."""
    causes = validate_job_spec_fields(spec, path)
    selector = _opt_map(spec, "selector")
    if selector is None:
        causes.append(required(path.child("selector")))
    else:
        causes.extend(validate_label_selector(selector, path.child("selector")))
    matcher = as_matcher(selector)
    labels = _template_labels(spec)
    if matcher is not None and not matcher.matches(labels or {}):
        causes.append(
            invalid(
                path.child("template", "metadata", "labels"),
                dict(labels) if labels is not None else None,
                "`selector` does not match template `labels`",
            )
        )
    return causes


def _validate_job(job: Mapping[str, Any], prefixed_labels: bool) -> list[Cause]:
    """``ValidateJob``."""
    causes = validate_object_meta(job, True, name_is_dns_subdomain)
    causes.extend(_validate_generated_selector(job, prefixed_labels))
    spec = _map(job, "spec")
    causes.extend(_validate_job_spec(spec, _SPEC))
    completions = _opt_int(spec, "completions")
    if _is_indexed(spec) and completions is not None and completions > 0:
        name = _str(_map(job, "metadata"), "name")
        hostname = f"{name}-{completions - 1}"
        if is_dns1123_label(hostname):
            causes.append(
                invalid(
                    _META.child("name"),
                    name,
                    f"will not able to create pod with invalid DNS label: {hostname}",
                )
            )
    return causes


def validate_job(job: Mapping[str, Any]) -> list[Cause]:
    """``ValidateJob`` with the options of a create (the prefixed labels are required)."""
    return _validate_job(job, prefixed_labels=True)


# ----------------------------------------------------------------------------- update

#: What a suspended Job that never started may change in its pod template.
_SCHEDULING_DIRECTIVES: Final = ("nodeSelector", "tolerations", "schedulingGates")


def _template_for_comparison(
    template: Mapping[str, Any], old_template: Mapping[str, Any]
) -> Mapping[str, Any]:
    """The old template with the new one's scheduling directives (``validatePodTemplateUpdate``
    with ``AllowMutableSchedulingDirectives``): labels, annotations, node selector,
    tolerations, scheduling gates and node affinity may change."""
    new_meta, new_spec = _map(template, "metadata"), _map(template, "spec")
    meta = dict(_map(old_template, "metadata"))
    spec = dict(_map(old_template, "spec"))
    for key in ("labels", "annotations"):
        _copy_key(meta, new_meta, key)
    for key in _SCHEDULING_DIRECTIVES:
        _copy_key(spec, new_spec, key)
    new_affinity = _opt_map(new_spec, "affinity")
    old_affinity = _opt_map(spec, "affinity")
    if new_affinity is None and old_affinity is not None:
        rest = {k: v for k, v in old_affinity.items() if k != "nodeAffinity" and v is not None}
        if rest:
            spec["affinity"] = rest
        else:
            spec.pop("affinity", None)
    elif new_affinity is not None:
        affinity = dict(old_affinity or {})
        _copy_key(affinity, new_affinity, "nodeAffinity")
        spec["affinity"] = affinity
    out = dict(old_template)
    out["metadata"] = meta
    out["spec"] = spec
    return out


def _copy_key(target: dict[str, Any], source: Mapping[str, Any], key: str) -> None:
    if key in source:
        target[key] = source[key]
    else:
        target.pop(key, None)


def _validate_completions_update(
    spec: Mapping[str, Any], old_spec: Mapping[str, Any], path: Path
) -> list[Cause]:
    """``validateCompletions`` with elastic indexed jobs (GA): only an indexed Job may change
    ``completions``, and only to its new ``parallelism``."""
    new, old = spec.get("completions"), old_spec.get("completions")
    if not _is_indexed(spec):
        return validate_immutable_field(new, old, path)
    if new == old or new is None:
        return []
    if new != spec.get("parallelism"):
        return [invalid(path, new, "can only be modified in tandem with spec.parallelism")]
    return []


def _validate_job_spec_update(
    spec: Mapping[str, Any], old_spec: Mapping[str, Any], mutable_scheduling: bool
) -> list[Cause]:
    causes = _validate_job_spec(spec, _SPEC)
    causes.extend(_validate_completions_update(spec, old_spec, _SPEC.child("completions")))
    causes.extend(
        validate_immutable_field(
            selector_value(_opt_map(spec, "selector")),
            selector_value(_opt_map(old_spec, "selector")),
            _SPEC.child("selector"),
        )
    )
    template, old_template = _map(spec, "template"), _map(old_spec, "template")
    if mutable_scheduling:
        old_template = _template_for_comparison(template, old_template)
    causes.extend(_immutable(template, old_template, _SPEC.child("template")))
    for key in (
        "completionMode",
        "podFailurePolicy",
        "backoffLimitPerIndex",
        "managedBy",
        "successPolicy",
    ):
        causes.extend(_immutable(spec.get(key), old_spec.get(key), _SPEC.child(key)))
    return causes


def _immutable(new: Any, old: Any, path: Path) -> list[Cause]:
    """``ValidateImmutableField`` of a Go struct or pointer, printed as JSON."""
    return validate_immutable_field(
        JSONValue(_without_nulls(new)), JSONValue(_without_nulls(old)), path
    )


def _without_nulls(value: Any) -> Any:
    """A JSON value with null members dropped (Go compares the decoded structs, where an
    absent and a null field are the same)."""
    if isinstance(value, Mapping):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def validate_job_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """The Job strategy's ``ValidateUpdate``: ``ValidateJob`` then ``ValidateJobUpdate``."""
    old_spec = _map(old, "spec")
    old_labels = _template_labels(old_spec) or {}
    # Jobs created before the prefixed labels existed are not held to them.
    prefixed = JOB_NAME_LABEL in old_labels and CONTROLLER_UID_LABEL in old_labels
    mutable_scheduling = old_spec.get("suspend") is True and (
        _map(old, "status").get("startTime") is None
    )
    causes = _validate_job(new, prefixed)
    causes.extend(validate_object_meta_update(new, old))
    causes.extend(_validate_job_spec_update(_map(new, "spec"), old_spec, mutable_scheduling))
    return causes


# ----------------------------------------------------------------------------- status


def _condition_true(job: Mapping[str, Any], kind: str) -> bool:
    return any(
        isinstance(c, Mapping) and c.get("type") == kind and c.get("status") == "True"
        for c in _list(_map(job, "status"), "conditions")
    )


def validate_job_status_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """``ValidateJobUpdateStatus`` (the status checks that do not depend on indexes)."""
    causes = validate_object_meta_update(new, old)
    status, old_status = _map(new, "status"), _map(old, "status")
    for key in ("active", "succeeded", "failed"):
        causes.extend(validate_nonnegative_field(_int(status, key), _STATUS.child(key)))
    for key in ("ready", "terminating"):
        value = _opt_int(status, key)
        if value is not None:
            causes.extend(validate_nonnegative_field(value, _STATUS.child(key)))
    uncounted = _opt_map(status, "uncountedTerminatedPods")
    if uncounted is not None:
        seen: set[str] = set()
        uncounted_path = _STATUS.child("uncountedTerminatedPods")
        for key in ("succeeded", "failed"):
            for i, uid in enumerate(_list(uncounted, key)):
                where = uncounted_path.child(key).index(i)
                if not uid:
                    causes.append(invalid(where, JSONValue(uid or ""), "must not be empty"))
                elif uid in seen:
                    causes.append(duplicate(where, JSONValue(uid)))
                else:
                    seen.add(uid)
    conditions = _STATUS.child("conditions")
    complete_changed = _condition_true(new, "Complete") != _condition_true(old, "Complete")
    failed_changed = _condition_true(new, "Failed") != _condition_true(old, "Failed")
    if (complete_changed or failed_changed) and (
        _condition_true(new, "Complete") and _condition_true(new, "Failed")
    ):
        causes.append(
            invalid(conditions, OMIT_VALUE, "cannot set Complete=True and Failed=true conditions")
        )
    for kind in _TERMINAL_CONDITIONS:
        if _condition_true(old, kind) and not _condition_true(new, kind):
            causes.append(
                invalid(
                    conditions, OMIT_VALUE, f"cannot disable the terminal {kind}=True condition"
                )
            )
    if _int(status, "failed") < _int(old_status, "failed"):
        causes.append(
            invalid(
                _STATUS.child("failed"),
                _int(status, "failed"),
                "cannot decrease the failed counter",
            )
        )
    spec = _map(new, "spec")
    elastic = _is_indexed(spec) and spec.get("completions") == spec.get("parallelism")
    if not elastic and _int(status, "succeeded") < _int(old_status, "succeeded"):
        causes.append(
            invalid(
                _STATUS.child("succeeded"),
                _int(status, "succeeded"),
                "cannot decrease the succeeded counter",
            )
        )
    return causes
