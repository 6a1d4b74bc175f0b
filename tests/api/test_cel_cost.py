"""Runtime cost limits: a runaway rule is stopped mid-evaluation with Kubernetes' words."""

from __future__ import annotations

import time

from kstore.api.cel import PER_CALL_LIMIT, RUNTIME_COST_BUDGET, compile_schema_rules


def list_schema(rule: str) -> dict[str, object]:
    return {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {"items": {"type": "array", "items": {"type": "integer"}}},
                "x-kubernetes-validations": [{"rule": rule}, {"rule": "false"}],
            }
        },
    }


def test_nested_all_over_a_large_list_stops_at_the_per_call_limit_quickly() -> None:
    rules = compile_schema_rules(
        list_schema("self.items.all(x, self.items.all(y, self.items.all(z, x + y + z >= 0)))")
    )
    # Kubernetes refuses such a rule when the CRD is written; one stored before still runs and
    # must be stopped at run time.
    assert rules.errors[0].message.startswith(
        "Forbidden: estimated rule cost exceeds budget by factor of"
    )
    obj = {"spec": {"items": list(range(2000))}}  # 8e9 innermost steps if it ran to the end
    start = time.perf_counter()
    [cause] = rules.validate(obj)
    assert time.perf_counter() - start < 5
    assert cause.field == "spec"
    # validation.go: "'%v': no further validation rules will be run due to call cost exceeds
    # limit for rule: %v", with cel-go's "operation cancelled: actual cost limit exceeded".
    assert cause.message == (
        "Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': no further "
        "validation rules will be run due to call cost exceeds limit for rule: "
        "self.items.all(x, self.items.all(y, self.items.all(z, x + y + z >= 0)))"
    )


def test_request_budget_running_out_stops_further_rules() -> None:
    rules = compile_schema_rules(list_schema("self.items.all(x, x >= 0)"))
    obj = {"spec": {"items": list(range(1000))}}
    causes = rules.validate(obj, budget=500)
    assert [c.message for c in causes] == [
        'Invalid value: "object": validation failed due to running out of cost budget, '
        "no further validation rules will be run"
    ]


def test_cheap_rules_fit_the_default_budget() -> None:
    rules = compile_schema_rules(list_schema("self.items.all(x, x >= 0)"))
    causes = rules.validate({"spec": {"items": list(range(1000))}})
    # Only the constant-false rule fails: the comprehension fit in its limits.
    assert [c.message for c in causes] == ["Invalid value: failed rule: false"]
    assert PER_CALL_LIMIT == 1_000_000
    assert RUNTIME_COST_BUDGET == 10_000_000
