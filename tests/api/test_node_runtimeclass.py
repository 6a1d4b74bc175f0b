"""node.k8s.io/v1 RuntimeClass: validation as Kubernetes' node API words it."""

from __future__ import annotations

import copy
from typing import Any

from kstore.api.kinds import builtin_scheme
from kstore.api.kinds.runtimeclass import validate_runtime_class, validate_runtime_class_update
from kstore.errors import Cause

SCHEME = builtin_scheme()


def _runtime_class(**fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": "node.k8s.io/v1",
        "kind": "RuntimeClass",
        "metadata": {"name": "gvisor", "resourceVersion": "2"},
        "handler": "runsc",
        **fields,
    }


def _rendered(causes: list[Cause]) -> list[str]:
    return [c.render() for c in causes]


def test_no_defaults_and_a_valid_class() -> None:
    rc = _runtime_class(
        overhead={"podFixed": {"cpu": "250m", "memory": "120Mi"}},
        scheduling={
            "nodeSelector": {"runtime": "gvisor"},
            "tolerations": [{"key": "runtime", "operator": "Exists", "effect": "NoSchedule"}],
        },
    )
    before = copy.deepcopy(rc)
    SCHEME.default(rc)
    assert rc == before
    assert validate_runtime_class(rc) == []


def test_the_handler_is_a_dns_label() -> None:
    assert _rendered(validate_runtime_class(_runtime_class(handler=""))) == [
        'handler: Invalid value: "": a lowercase RFC 1123 label must consist of lower case '
        "alphanumeric characters or '-', and must start and end with an alphanumeric character "
        "(e.g. 'my-name',  or '123-abc', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
    ]


def test_overhead_and_scheduling() -> None:
    rc = _runtime_class(
        overhead={"podFixed": {"cpu": "-1", "pods": "1", "gpus": "1", "example.com/gpu": "0.5"}},
        scheduling={
            "nodeSelector": {"bad key": "v"},
            "tolerations": [{"operator": "Equal", "value": "x"}],
        },
    )
    assert _rendered(validate_runtime_class(rc)) == [
        'overhead.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0',
        'overhead.limits[example.com/gpu]: Invalid value: "0.5": must be an integer',
        'overhead.limits[gpus]: Invalid value: "gpus": must be a standard resource type or '
        "fully qualified",
        'overhead.limits[pods]: Invalid value: "pods": must be a standard resource for containers',
        'scheduling.nodeSelector: Invalid value: "bad key": name part must consist of '
        "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
        "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        'scheduling.tolerations[0].operator: Invalid value: "Equal": operator must be Exists '
        'when `key` is empty, which means "match all values and all keys"',
    ]


def test_the_handler_is_immutable() -> None:
    old = _runtime_class()
    new = copy.deepcopy(old)
    new["handler"] = "kata"
    assert _rendered(validate_runtime_class_update(new, old)) == [
        'handler: Invalid value: "kata": field is immutable'
    ]
    new["handler"] = "Kata"
    assert len(validate_runtime_class_update(new, old)) == 2
