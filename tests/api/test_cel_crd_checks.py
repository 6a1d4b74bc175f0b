"""What Kubernetes refuses in a CRD's x-kubernetes-validations when the CRD is written.

Paths and texts from apiextensions-apiserver v0.36 (pkg/apis/apiextensions/validation:
validation.go and its tests, e.g. "forbid transition rule on element of list of type atomic"
expects invalid(...properties[value].items.x-kubernetes-validations[0].rule)).
"""

from __future__ import annotations

from typing import Any

from kstore.api.cel import compile_schema_rules
from kstore.api.validation.field import Path

CRD = Path("spec", "validation", "openAPIV3Schema")
RULES = "spec.validation.openAPIV3Schema.properties[value].x-kubernetes-validations"


def errors_for(value_schema: dict[str, Any]) -> list[tuple[str, str, str]]:
    schema = {"type": "object", "properties": {"value": value_schema}}
    return [(c.type, c.field, c.message) for c in compile_schema_rules(schema, CRD).errors]


def test_message_checks_follow_kubernetes_order() -> None:
    found = errors_for(
        {
            "type": "integer",
            "x-kubernetes-validations": [
                {"rule": "self >= 0 &&\nself <= 100"},
                {"rule": "self == 50", "message": "value requirements:\nmust be >= 0"},
                {"rule": "self == 50", "message": " "},
            ],
        }
    )
    assert found == [
        (
            "FieldValueRequired",
            f"{RULES}[0].message",
            "Required value: message must be specified if rule contains line breaks",
        ),
        (
            "FieldValueInvalid",
            f"{RULES}[1].message",
            'Invalid value: "value requirements:\\nmust be >= 0": must not contain line breaks',
        ),
        (
            "FieldValueInvalid",
            f"{RULES}[2].message",
            'Invalid value: " ": must be non-empty if specified',
        ),
    ]


def test_unsupported_reason_and_invalid_field_path() -> None:
    found = errors_for(
        {
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "x-kubernetes-validations": [
                {"rule": "true", "reason": "Bogus"},
                {"rule": "true", "fieldPath": ".b"},
                {"rule": "true", "messageExpression": " "},
            ],
        }
    )
    assert found == [
        (
            "FieldValueNotSupported",
            f"{RULES}[0].reason",
            'Unsupported value: "Bogus": supported values: "FieldValueDuplicate", '
            '"FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"',
        ),
        ("FieldValueInvalid", f"{RULES}[1].fieldPath", 'Invalid value: ".b": must be a valid path'),
        (
            "FieldValueRequired",
            f"{RULES}[2].messageExpression",
            "Required value: messageExpression must be non-empty if specified",
        ),
    ]


def test_field_check_failures_suppress_cel_errors() -> None:
    # Kubernetes skips the CEL checks when field checks failed at or below the node.
    found = errors_for(
        {"type": "integer", "x-kubernetes-validations": [{"rule": "self.x", "message": " "}]}
    )
    assert [f for _, f, _ in found] == [f"{RULES}[0].message"]


def test_transition_rule_under_atomic_list_is_refused() -> None:
    found = errors_for(
        {
            "type": "array",
            "items": {
                "type": "string",
                "maxLength": 10,
                "x-kubernetes-validations": [{"rule": "self == oldSelf"}],
            },
        }
    )
    assert found == [
        (
            "FieldValueInvalid",
            "spec.validation.openAPIV3Schema.properties[value].items.x-kubernetes-validations[0].rule",
            'Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable '
            "portion of the schema within spec.validation.openAPIV3Schema.properties[value]",
        )
    ]


def test_transition_rule_under_list_map_is_allowed() -> None:
    found = errors_for(
        {
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["k"],
            "maxItems": 10,
            "items": {
                "type": "object",
                "required": ["k"],
                "properties": {"k": {"type": "string", "maxLength": 10}},
                "x-kubernetes-validations": [{"rule": "self.k == oldSelf.k"}],
            },
        }
    )
    assert found == []


def test_optional_old_self_needs_old_self() -> None:
    found = errors_for(
        {
            "type": "integer",
            "x-kubernetes-validations": [{"rule": "self > 0", "optionalOldSelf": True}],
        }
    )
    assert found == [
        (
            "FieldValueInvalid",
            f"{RULES}[0].optionalOldSelf",
            "Invalid value: true: may not be set if oldSelf is not used in rule",
        )
    ]


def test_message_expression_must_be_a_string() -> None:
    found = errors_for(
        {
            "type": "integer",
            "x-kubernetes-validations": [{"rule": "true", "messageExpression": "1 + 1"}],
        }
    )
    [(kind, where, message)] = found
    assert (kind, where) == ("FieldValueInvalid", f"{RULES}[0].messageExpression")
    assert message.endswith(": messageExpression must evaluate to a string")


def test_message_expression_compile_error() -> None:
    found = errors_for(
        {
            "type": "integer",
            "x-kubernetes-validations": [{"rule": "true", "messageExpression": "'a' +"}],
        }
    )
    [(_, where, message)] = found
    assert where == f"{RULES}[0].messageExpression"
    assert ": messageExpression compilation failed: ERROR: <input>:1:6: Syntax error:" in message


def test_expensive_rule_over_unbounded_list_is_forbidden() -> None:
    # validation_test.go "forbid double-nested rule with no limit set": the rule exceeds the
    # per-rule limit and contributes to the total being exceeded (one error for each), and
    # the total is exceeded at the schema itself.
    rule = "self.all(x, x.all(y, x[y].key == x[y].key))"
    value = {
        "type": "array",
        "items": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "required": ["key"],
                "properties": {"key": {"type": "string"}},
            },
        },
        "x-kubernetes-validations": [{"rule": rule}],
    }
    found = errors_for(value)
    budget = (
        "exceeds budget by factor of more than 100x (try simplifying the rule, or adding "
        "maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
    assert found == [
        ("FieldValueForbidden", f"{RULES}[0].rule", f"Forbidden: estimated rule cost {budget}"),
        (
            "FieldValueForbidden",
            f"{RULES}[0].rule",
            "Forbidden: contributed to estimated rule cost total exceeding cost limit for entire "
            "OpenAPIv3 schema",
        ),
        (
            "FieldValueForbidden",
            "spec.validation.openAPIV3Schema",
            "Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 "
            f"schema {budget}",
        ),
    ]
    bounded = errors_for(
        {
            "type": "array",
            "maxItems": 100,
            "items": {"type": "integer"},
            "x-kubernetes-validations": [{"rule": "self.all(x, self.all(y, x == y))"}],
        }
    )
    assert bounded == []


def test_rule_cost_is_multiplied_by_how_often_it_runs() -> None:
    # A rule on items of an unbounded list runs once per item: its cost is multiplied by the
    # number of the smallest items that fit in a request.
    rule = "self.contains('abc')"
    item = {"type": "string", "x-kubernetes-validations": [{"rule": rule}]}
    assert errors_for({"type": "array", "maxItems": 10, "items": item}) == []
    (kind, _, message), *_ = errors_for({"type": "array", "items": item})
    assert kind == "FieldValueForbidden"
    assert message.startswith("Forbidden: estimated rule cost exceeds budget by factor of ")


def _compile_error(rule: str) -> str:
    [(_, _, message)] = errors_for(
        {"type": "string", "maxLength": 10, "x-kubernetes-validations": [{"rule": rule}]}
    )
    return message


def test_invalid_regex_literal_is_a_compile_error() -> None:
    # Kubernetes' CEL tests: "self.val1.matches(')')" gives
    # "compilation failed: ERROR: <input>:1:19: invalid matches argument".
    assert "compilation failed: ERROR: <input>:1:14: invalid matches argument" in _compile_error(
        "self.matches(')')"
    )


def test_invalid_duration_and_timestamp_literals_are_compile_errors() -> None:
    assert "ERROR: <input>:1:10: invalid duration argument" in _compile_error(
        "duration('1x') > duration('1s')"
    )
    assert "ERROR: <input>:1:11: invalid timestamp argument" in _compile_error(
        "timestamp('nope') > timestamp('2020-01-01T00:00:00Z')"
    )


def test_mixed_list_literal_is_a_compile_error() -> None:
    assert "ERROR: <input>:1:5: expected type 'int' but found 'string'" in _compile_error(
        "[1, 'a'] == []"
    )
