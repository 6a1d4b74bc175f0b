"""batch/v1 CronJob: defaulting, the schedule parser and validation as Kubernetes has them."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kstore.api.kinds import builtin_scheme
from kstore.api.kinds._cron import schedule_error
from kstore.api.kinds._cron_job_validation import validate_cron_job, validate_cron_job_update
from kstore.errors import Cause

SCHEME = builtin_scheme()


def _cron_job(schedule: str = "*/5 * * * *", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "nightly", "namespace": "default", "resourceVersion": "3"},
        "spec": {
            "schedule": schedule,
            "jobTemplate": {
                "spec": {
                    "template": {
                        "spec": {
                            "containers": [{"name": "c", "image": "busybox"}],
                            "restartPolicy": "OnFailure",
                        }
                    }
                }
            },
            **spec,
        },
    }
    SCHEME.default(body)
    return body


def _rendered(causes: list[Cause]) -> list[str]:
    return [f"{c.field}: {c.message}" for c in causes]


def test_cron_job_defaults() -> None:
    spec = _cron_job()["spec"]
    assert spec["concurrencyPolicy"] == "Allow"
    assert spec["suspend"] is False
    assert spec["successfulJobsHistoryLimit"] == 3
    assert spec["failedJobsHistoryLimit"] == 1
    job_spec = spec["jobTemplate"]["spec"]
    # The job template gets the pod spec defaults, not the Job's own.
    assert job_spec["template"]["spec"]["dnsPolicy"] == "ClusterFirst"
    assert "backoffLimit" not in job_spec and "completions" not in job_spec


@pytest.mark.parametrize(
    "schedule",
    [
        "*/5 * * * *",
        "0 0 1 1 *",
        "0 9-17 * * mon-fri",
        "15,45 */2 ? JAN,jul SUN",
        "5/15 * * * *",
        "@hourly",
        "@daily",
        "@midnight",
        "@weekly",
        "@monthly",
        "@yearly",
        "@annually",
        "@every 1h30m",
    ],
)
def test_schedules_kubernetes_accepts(schedule: str) -> None:
    assert schedule_error(schedule) is None


@pytest.mark.parametrize(
    ("schedule", "error"),
    [
        ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
        ("* * * * * *", "expected exactly 5 fields, found 6: [* * * * * *]"),
        ("60 * * * *", "end of range (60) above maximum (59): 60"),
        ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
        ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
        ("*/0 * * * *", "step of range should be a positive number: */0"),
        ("a * * * *", 'failed to parse int from a: strconv.Atoi: parsing "a": invalid syntax'),
        ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
        ("*/2/3 * * * *", "too many slashes: */2/3"),
        ("@fortnightly", "unrecognized descriptor: @fortnightly"),
        ("@every soon", 'failed to parse duration @every soon: time: invalid duration "soon"'),
    ],
)
def test_schedule_errors_carry_the_parsers_words(schedule: str, error: str) -> None:
    assert schedule_error(schedule) == error
    assert _rendered(validate_cron_job(_cron_job(schedule))) == [
        f'spec.schedule: Invalid value: "{schedule}": {error}'
    ]


def test_a_valid_cron_job() -> None:
    assert validate_cron_job(_cron_job(timeZone="Europe/Paris")) == []


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"schedule": ""}, "spec.schedule: Required value"),
        (
            {"schedule": "TZ=UTC 0 * * * *"},
            'spec.schedule: Invalid value: "TZ=UTC 0 * * * *": '
            "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
        ),
        (
            {"timeZone": "Mars/Olympus"},
            'spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus',
        ),
        (
            {"timeZone": "Local"},
            'spec.timeZone: Invalid value: "Local": timeZone must be an explicit time zone as '
            "defined in https://www.iana.org/time-zones",
        ),
        (
            {"timeZone": ""},
            'spec.timeZone: Invalid value: "": timeZone must be nil or non-empty string',
        ),
        (
            {"concurrencyPolicy": "Sometimes"},
            'spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: '
            '"Allow", "Forbid", "Replace"',
        ),
        (
            {"startingDeadlineSeconds": -1},
            "spec.startingDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            {"successfulJobsHistoryLimit": -1},
            "spec.successfulJobsHistoryLimit: Invalid value: -1: "
            "must be greater than or equal to 0",
        ),
    ],
)
def test_cron_job_validation_messages(spec: dict[str, Any], expected: str) -> None:
    cron_job = _cron_job()
    cron_job["spec"].update(spec)
    assert _rendered(validate_cron_job(cron_job)) == [expected]


def test_the_job_template_is_validated_as_a_job_spec_without_selector() -> None:
    cron_job = _cron_job()
    job_spec = cron_job["spec"]["jobTemplate"]["spec"]
    job_spec.update(selector={"matchLabels": {"a": "b"}}, manualSelector=True)
    job_spec["template"]["spec"]["restartPolicy"] = "Always"
    assert _rendered(validate_cron_job(cron_job)) == [
        "spec.jobTemplate.spec.template.spec.restartPolicy: Required value: "
        'valid values: "OnFailure", "Never"',
        'spec.jobTemplate.spec.selector: Invalid value: {"matchLabels":{"a":"b"}}: '
        "`selector` will be auto-generated",
        "spec.jobTemplate.spec.manualSelector: Unsupported value: true: "
        'supported values: "nil", "false"',
    ]


def test_long_names_are_refused_on_create_only() -> None:
    old = _cron_job()
    name = "n" * 53
    old["metadata"]["name"] = name
    assert _rendered(validate_cron_job(old)) == [
        f'metadata.name: Invalid value: "{name}": must be no more than 52 characters'
    ]
    new = copy.deepcopy(old)
    new["spec"]["suspend"] = True
    assert validate_cron_job_update(new, old) == []
