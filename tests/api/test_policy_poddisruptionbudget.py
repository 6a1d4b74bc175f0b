"""policy/v1 PodDisruptionBudget: no defaults, and validation as Kubernetes' policy API does it."""

from __future__ import annotations

from typing import Any

import pytest

from kstore.api.kinds import builtin_scheme
from kstore.api.kinds.poddisruptionbudget import (
    validate_pod_disruption_budget,
    validate_pod_disruption_budget_status_update,
    validate_pod_disruption_budget_update,
)
from kstore.errors import Cause

SCHEME = builtin_scheme()


def _pdb(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec},
    }


def _rendered(causes: list[Cause]) -> list[str]:
    return [f"{c.field}: {c.message}" for c in causes]


def test_nothing_is_defaulted() -> None:
    pdb = _pdb()
    SCHEME.default(pdb)
    assert pdb["spec"] == {"selector": {"matchLabels": {"app": "web"}}}


@pytest.mark.parametrize(
    "spec",
    [
        {},
        {"minAvailable": 2},
        {"minAvailable": "100%"},
        {"maxUnavailable": 0},
        {"maxUnavailable": "25%", "unhealthyPodEvictionPolicy": "AlwaysAllow"},
        {"minAvailable": 1, "unhealthyPodEvictionPolicy": "IfHealthyBudget"},
    ],
)
def test_valid_budgets(spec: dict[str, Any]) -> None:
    assert validate_pod_disruption_budget(_pdb(**spec)) == []


def test_min_available_and_max_unavailable_are_exclusive() -> None:
    causes = validate_pod_disruption_budget(_pdb(minAvailable=1, maxUnavailable="10%"))
    assert _rendered(causes) == [
        'spec: Invalid value: {"MinAvailable":1,"Selector":{"matchLabels":{"app":"web"}},'
        '"MaxUnavailable":"10%","UnhealthyPodEvictionPolicy":null}: '
        "minAvailable and maxUnavailable cannot be both set"
    ]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            {"minAvailable": -1},
            "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            {"maxUnavailable": "120%"},
            'spec.maxUnavailable: Invalid value: "120%": must not be greater than 100%',
        ),
        (
            {"minAvailable": "half"},
            'spec.minAvailable: Invalid value: "half": a valid percent string must be a numeric '
            "string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation "
            "is '[0-9]+%')",
        ),
        (
            {"maxUnavailable": 1, "unhealthyPodEvictionPolicy": "Never"},
            'spec.unhealthyPodEvictionPolicy: Unsupported value: "Never": supported values: '
            '"AlwaysAllow", "IfHealthyBudget"',
        ),
        (
            {
                "maxUnavailable": 1,
                "selector": {"matchExpressions": [{"key": "app", "operator": "Near"}]},
            },
            'spec.selector.matchExpressions[0].operator: Invalid value: "Near": '
            "not a valid selector operator",
        ),
    ],
)
def test_invalid_budgets(spec: dict[str, Any], expected: str) -> None:
    body = _pdb()
    body["spec"] = {"selector": {"matchLabels": {"app": "web"}}, **spec}
    assert _rendered(validate_pod_disruption_budget(body)) == [expected]


def test_an_update_keeps_a_stored_selector_with_an_invalid_label_value() -> None:
    selector = {"matchExpressions": [{"key": "app", "operator": "In", "values": ["a b"]}]}
    old = _pdb(minAvailable=1, selector=selector)
    assert validate_pod_disruption_budget(old) != []
    new = _pdb(minAvailable=2, selector=selector)
    assert validate_pod_disruption_budget_update(new, old) == []
    assert validate_pod_disruption_budget_update(new, _pdb(minAvailable=1)) != []


def test_status_counters_may_not_be_negative() -> None:
    new = _pdb(minAvailable=1)
    new["status"] = {
        "disruptionsAllowed": -1,
        "currentHealthy": 0,
        "desiredHealthy": 0,
        "expectedPods": -2,
    }
    assert _rendered(validate_pod_disruption_budget_status_update(new, _pdb())) == [
        "status.disruptionsAllowed: Invalid value: -1: must be greater than or equal to 0",
        "status.expectedPods: Invalid value: -2: must be greater than or equal to 0",
    ]
