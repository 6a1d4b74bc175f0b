"""CronJob validation on the hub: ``ValidateCronJobCreate`` (:func:`validate_cron_job`) and
``ValidateCronJobUpdate`` (:func:`validate_cron_job_update`) of ``pkg/apis/batch/validation``.

The schedule must parse as ``cron.ParseStandard`` parses it (:mod:`kstore.api.kinds._cron`,
whose error text is the message) and may not carry ``TZ=``/``CRON_TZ=`` (unless the stored one
already did, and then not together with ``timeZone``); ``timeZone``, checked only when it
changes, must be an IANA name the zone database knows, not ``Local``; the concurrency policy is
``Allow``, ``Forbid`` or ``Replace``; deadlines and history limits are non-negative; the job
template is validated as a Job spec that may not have a selector or ``manualSelector: true``;
a new CronJob's name has at most 52 characters (the controller appends an 11-character suffix
to name its Jobs). Field paths, messages and the order of the causes are Kubernetes'.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from kstore.api.kinds._cron import load_location_error, schedule_error
from kstore.api.kinds._job_validation import validate_job_spec_fields
from kstore.api.kinds._selector import selector_value
from kstore.api.validation._access import get_map, get_str, opt_int
from kstore.api.validation.field import JSONValue, Path, invalid, not_supported, required
from kstore.api.validation.names import name_is_dns_subdomain
from kstore.api.validation.objectmeta import (
    validate_nonnegative_field,
    validate_object_meta,
    validate_object_meta_update,
)
from kstore.errors import Cause

__all__ = ["validate_cron_job", "validate_cron_job_update"]

_META: Final = Path("metadata")
_SPEC: Final = Path("spec")
#: ``DNS1035LabelMaxLength - 11``: the controller appends ``-<timestamp>`` to Job names.
_MAX_CRON_JOB_NAME: Final = 52
_CONCURRENCY_POLICIES: Final = ("Allow", "Forbid", "Replace")
_TIME_ZONE_PART: Final = re.compile(r"[A-Za-z.\-_0-9+]{1,14}")


def _opt_map(obj: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else None


def _validate_time_zone(zone: Any, path: Path) -> list[Cause]:
    if not isinstance(zone, str):
        return []
    if not zone:
        return [invalid(path, zone, "timeZone must be nil or non-empty string")]
    for part in zone.split("/"):
        if part in (".", "..") or part.startswith("-") or _TIME_ZONE_PART.fullmatch(part) is None:
            return [invalid(path, zone, f"unknown time zone {zone}")]
    causes: list[Cause] = []
    if zone.lower() == "local":
        causes.append(
            invalid(
                path,
                zone,
                "timeZone must be an explicit time zone as defined in "
                "https://www.iana.org/time-zones",
            )
        )
    error = load_location_error(zone)
    if error is not None:
        causes.append(invalid(path, zone, error))
    return causes


def _validate_job_template(template: Mapping[str, Any], path: Path) -> list[Cause]:
    """``ValidateJobTemplateSpec``: the Job spec without its selector rules."""
    spec = get_map(template, "spec")
    spec_path = path.child("spec")
    causes = validate_job_spec_fields(spec, spec_path)
    selector = _opt_map(spec, "selector")
    if selector is not None:
        causes.append(
            invalid(
                spec_path.child("selector"),
                selector_value(selector),
                "`selector` will be auto-generated",
            )
        )
    if spec.get("manualSelector") is True:
        causes.append(not_supported(spec_path.child("manualSelector"), True, ("nil", "false")))
    return causes


def _validate_cron_job_spec(
    spec: Mapping[str, Any], old_spec: Mapping[str, Any] | None, path: Path
) -> list[Cause]:
    causes: list[Cause] = []
    schedule = get_str(spec, "schedule")
    schedule_path = path.child("schedule")
    time_zone = spec.get("timeZone")
    if not schedule:
        causes.append(required(schedule_path))
    else:
        error = schedule_error(schedule)
        if error is not None:
            causes.append(invalid(schedule_path, schedule, error))
        tz_allowed = old_spec is not None and "TZ" in get_str(old_spec, "schedule")
        if tz_allowed and "TZ" in schedule and time_zone is not None:
            causes.append(
                invalid(
                    schedule_path,
                    schedule,
                    "cannot use both timeZone field and TZ or CRON_TZ in schedule",
                )
            )
        elif not tz_allowed and "TZ" in schedule:
            causes.append(
                invalid(
                    schedule_path,
                    schedule,
                    "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
                )
            )
    deadline = opt_int(spec, "startingDeadlineSeconds")
    if deadline is not None:
        causes.extend(validate_nonnegative_field(deadline, path.child("startingDeadlineSeconds")))
    if old_spec is None or old_spec.get("timeZone") != time_zone:
        causes.extend(_validate_time_zone(time_zone, path.child("timeZone")))
    policy = get_str(spec, "concurrencyPolicy")
    policy_path = path.child("concurrencyPolicy")
    if not policy:
        causes.append(required(policy_path))
    elif policy not in _CONCURRENCY_POLICIES:
        causes.append(not_supported(policy_path, JSONValue(policy), _CONCURRENCY_POLICIES))
    causes.extend(_validate_job_template(get_map(spec, "jobTemplate"), path.child("jobTemplate")))
    for key in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        value = opt_int(spec, key)
        if value is not None:
            causes.extend(validate_nonnegative_field(value, path.child(key)))
    return causes


def validate_cron_job(cron_job: Mapping[str, Any]) -> list[Cause]:
    """``ValidateCronJobCreate``; names longer than 52 characters are refused on create only."""
    causes = validate_object_meta(cron_job, True, name_is_dns_subdomain)
    causes.extend(_validate_cron_job_spec(get_map(cron_job, "spec"), None, _SPEC))
    name = get_str(get_map(cron_job, "metadata"), "name")
    if len(name) > _MAX_CRON_JOB_NAME:
        causes.append(invalid(_META.child("name"), name, "must be no more than 52 characters"))
    return causes


def validate_cron_job_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """``ValidateCronJobUpdate``."""
    causes = validate_object_meta_update(new, old)
    causes.extend(_validate_cron_job_spec(get_map(new, "spec"), get_map(old, "spec"), _SPEC))
    return causes
