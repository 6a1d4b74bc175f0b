"""batch/v1 Job: defaulting and validation as Kubernetes' batch API does them."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kstore.api.gvk import GroupVersionKind
from kstore.api.kinds import builtin_scheme
from kstore.api.kinds._job_validation import (
    validate_job,
    validate_job_status_update,
    validate_job_update,
)
from kstore.api.kinds.batch import default_job
from kstore.errors import Cause

SCHEME = builtin_scheme()
UID = "0b1e6f7c-3c1a-4a53-9f3b-4d6a1b2c3d4e"
GENERATED = {
    "batch.kubernetes.io/controller-uid": UID,
    "batch.kubernetes.io/job-name": "pi",
    "controller-uid": UID,
    "job-name": "pi",
}


def _job(**spec: Any) -> dict[str, Any]:
    """A Job as the API server validates it: defaulted, its selector and labels generated."""
    body: dict[str, Any] = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "pi", "namespace": "default", "uid": UID, "resourceVersion": "7"},
        "spec": {
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": UID}},
            "template": {
                "metadata": {"labels": dict(GENERATED)},
                "spec": {"containers": [{"name": "pi", "image": "perl"}], "restartPolicy": "Never"},
            },
            **spec,
        },
    }
    default_job(body)
    return body


def _rendered(causes: list[Cause]) -> list[str]:
    return [f"{c.field}: {c.message}" for c in causes]


def test_job_defaults() -> None:
    job: dict[str, Any] = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}}
    SCHEME.default(job)
    spec = job["spec"]
    assert {k: v for k, v in spec.items() if k != "template"} == {
        "completions": 1,
        "parallelism": 1,
        "backoffLimit": 6,
        "completionMode": "NonIndexed",
        "suspend": False,
        "podReplacementPolicy": "TerminatingOrFailed",
        "manualSelector": False,
    }
    # The pod template's spec gets the pod spec defaults.
    assert spec["template"]["spec"]["restartPolicy"] == "Always"
    assert spec["template"]["spec"]["dnsPolicy"] == "ClusterFirst"


def test_job_defaults_that_depend_on_other_fields() -> None:
    job: dict[str, Any] = {
        "metadata": {"name": "j"},
        "spec": {
            "parallelism": 3,
            "backoffLimitPerIndex": 1,
            "podFailurePolicy": {
                "rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]
            },
            "template": {"metadata": {"labels": {"app": "x"}}},
        },
    }
    default_job(job)
    spec = job["spec"]
    # completions stays unset when parallelism is set.
    assert "completions" not in spec and spec["parallelism"] == 3
    assert spec["backoffLimit"] == 2**31 - 1
    assert spec["podReplacementPolicy"] == "Failed"
    assert spec["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["status"] == "True"
    # A Job without labels takes its template's.
    assert job["metadata"]["labels"] == {"app": "x"}


def test_a_generated_job_is_valid() -> None:
    assert validate_job(_job()) == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            lambda j: j["spec"]["template"]["spec"].update(restartPolicy="Always"),
            'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
        ),
        (
            lambda j: j["spec"].update(parallelism=-1),
            "spec.parallelism: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            lambda j: j["spec"].update(completionMode="Indexed", completions=None),
            "spec.completions: Required value: when completion mode is Indexed",
        ),
        (
            lambda j: j["spec"].update(backoffLimitPerIndex=1),
            "spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode",
        ),
        (
            lambda j: j["spec"].update(podReplacementPolicy="Sometimes"),
            'spec.podReplacementPolicy: Unsupported value: "Sometimes": supported values: '
            '"Failed", "TerminatingOrFailed"',
        ),
        (
            lambda j: j["spec"].update(managedBy="no-slash"),
            'spec.managedBy: Invalid value: "no-slash": must be a domain-prefixed path '
            '(such as "acme.io/foo")',
        ),
        (
            lambda j: j["spec"]["template"]["metadata"]["labels"].update({"job-name": "other"}),
            "spec.template.metadata.labels[job-name]: Invalid value: "
            '{"batch.kubernetes.io/controller-uid":"' + UID + '",'
            '"batch.kubernetes.io/job-name":"pi","controller-uid":"' + UID + '",'
            '"job-name":"other"}: must be \'pi\'',
        ),
        (
            lambda j: j["spec"]["template"]["metadata"]["labels"].pop("controller-uid"),
            f"spec.template.metadata.labels[controller-uid]: Required value: must be '{UID}'",
        ),
    ],
)
def test_job_validation_messages(change: Any, expected: str) -> None:
    job = _job()
    change(job)
    assert expected in _rendered(validate_job(job))


def test_selector_must_match_the_template_labels() -> None:
    job = _job(manualSelector=True, selector={"matchLabels": {"app": "other"}})
    assert _rendered(validate_job(job)) == [
        "spec.template.metadata.labels: Invalid value: "
        '{"batch.kubernetes.io/controller-uid":"' + UID + '",'
        '"batch.kubernetes.io/job-name":"pi","controller-uid":"' + UID + '","job-name":"pi"}: '
        "`selector` does not match template `labels`"
    ]


def test_a_foreign_selector_is_not_auto_generated() -> None:
    job = _job(selector={"matchLabels": {"controller-uid": "someone-else"}})
    assert "spec.selector: Invalid value: " in _rendered(validate_job(job))[0]
    assert _rendered(validate_job(job))[0].endswith("`selector` not auto-generated")


def test_pod_failure_policy_rules() -> None:
    policy = {
        "rules": [
            {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [0, 2, 1]}},
            {"action": "Bogus"},
        ]
    }
    job = _job(podFailurePolicy=policy)
    job["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
    job["spec"]["podReplacementPolicy"] = "Failed"
    assert _rendered(validate_job(job)) == [
        "spec.podFailurePolicy.rules[0].onExitCodes.values[0]: Invalid value: 0: "
        "must not be 0 for the In operator",
        "spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: [0,2,1]: "
        "must be ordered",
        'spec.podFailurePolicy.rules[1].action: Unsupported value: "Bogus": supported values: '
        '"Count", "FailIndex", "FailJob", "Ignore"',
        "spec.podFailurePolicy.rules[1]: Invalid value: "
        "specifying one of OnExitCodes and OnPodConditions is required",
        'spec.template.spec.restartPolicy: Invalid value: "OnFailure": '
        'only "Never" is supported when podFailurePolicy is specified',
    ]


def test_template_selector_and_completions_are_immutable() -> None:
    old = _job()
    new = copy.deepcopy(old)
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "perl:5.34"
    new["spec"]["completions"] = 3
    rendered = _rendered(validate_job_update(new, old))
    assert [r.split(":")[0] for r in rendered] == ["spec.completions", "spec.template"]
    assert all(r.endswith("field is immutable") for r in rendered)


def test_a_suspended_job_that_never_started_may_change_its_scheduling() -> None:
    old = _job(suspend=True)
    new = copy.deepcopy(old)
    new["spec"]["template"]["spec"]["nodeSelector"] = {"disk": "ssd"}
    assert validate_job_update(new, old) == []
    old["status"] = {"startTime": "2026-01-01T00:00:00Z"}
    assert _rendered(validate_job_update(new, old))[0].startswith("spec.template: Invalid value")


def test_status_updates() -> None:
    old = _job()
    old["status"] = {"succeeded": 2, "conditions": [{"type": "Complete", "status": "True"}]}
    new = copy.deepcopy(old)
    new["status"] = {"succeeded": 1, "active": -1}
    assert _rendered(validate_job_status_update(new, old)) == [
        "status.active: Invalid value: -1: must be greater than or equal to 0",
        "status.conditions: Invalid value: cannot disable the terminal Complete=True condition",
        "status.succeeded: Invalid value: 1: cannot decrease the succeeded counter",
    ]


def test_job_is_served_with_status_in_category_all() -> None:
    definition = SCHEME.definition_for(GroupVersionKind("batch", "v1", "Job"))
    assert definition.resource is not None
    assert definition.resource.plural == "jobs"
    assert definition.resource.categories == ("all",)
    assert definition.resource.subresources == ("status",)
    assert definition.storage_version == "v1"
