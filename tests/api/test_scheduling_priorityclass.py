"""scheduling.k8s.io/v1 PriorityClass: the default preemption policy, the reserved ``system-``
prefix, the user value limit and the immutable fields, as Kubernetes words them."""

from __future__ import annotations

import copy
from typing import Any

from kstore.api.kinds import builtin_scheme
from kstore.api.kinds.priorityclass import (
    system_priority_classes,
    validate_priority_class,
    validate_priority_class_update,
)
from kstore.errors import Cause

SCHEME = builtin_scheme()
_RESERVED = (
    "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for "
    "system use only. error: "
)


def _class(name: str = "high", value: int = 1000, **fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name, "resourceVersion": "4"},
        "value": value,
        **fields,
    }


def _rendered(causes: list[Cause]) -> list[str]:
    return [c.render() for c in causes]


def test_preemption_policy_defaults_to_preempt_lower_priority() -> None:
    pc = _class()
    SCHEME.default(pc)
    assert pc["preemptionPolicy"] == "PreemptLowerPriority"
    never = _class(preemptionPolicy="Never")
    SCHEME.default(never)
    assert never["preemptionPolicy"] == "Never"


def test_the_system_prefix_is_reserved_for_the_two_system_classes() -> None:
    for obj in system_priority_classes():
        SCHEME.default(obj)
        assert validate_priority_class(obj) == []
    assert [(o["metadata"]["name"], o["value"]) for o in system_priority_classes()] == [
        ("system-node-critical", 2000001000),
        ("system-cluster-critical", 2000000000),
    ]
    cases = {
        "unknown": _class("system-mine", 10),
        "value": _class("system-node-critical", 2000000000),
        "default": _class("system-cluster-critical", 2000000000, globalDefault=True),
    }
    assert {k: _rendered(validate_priority_class(v)) for k, v in cases.items()} == {
        "unknown": [_RESERVED + "system-mine is not a known system priority class"],
        "value": [_RESERVED + "value of system-node-critical PriorityClass must be 2000001000"],
        "default": [
            _RESERVED + "globalDefault of system-cluster-critical PriorityClass must be false"
        ],
    }


def test_user_values_and_preemption_policies() -> None:
    assert validate_priority_class(_class(value=1000000000)) == []
    assert validate_priority_class(_class(value=-5)) == []
    assert _rendered(validate_priority_class(_class(value=1000000001))) == [
        "value: Forbidden: maximum allowed value of a user defined priority is 1000000000"
    ]
    assert _rendered(validate_priority_class(_class(preemptionPolicy="Sometimes"))) == [
        'preemptionPolicy: Unsupported value: "Sometimes": supported values: "Never", '
        '"PreemptLowerPriority"'
    ]
    assert _rendered(validate_priority_class(_class(preemptionPolicy=""))) == [
        "preemptionPolicy: Required value"
    ]


def test_value_and_preemption_policy_are_immutable() -> None:
    old = _class(preemptionPolicy="PreemptLowerPriority", description="a")
    described = copy.deepcopy(old)
    described["description"] = "b"
    described["globalDefault"] = True
    assert validate_priority_class_update(described, old) == []
    changed = copy.deepcopy(old)
    changed["value"] = 7
    changed["preemptionPolicy"] = "Never"
    assert _rendered(validate_priority_class_update(changed, old)) == [
        "value: Forbidden: may not be changed in an update.",
        'preemptionPolicy: Invalid value: "Never": field is immutable',
    ]
