"""x-kubernetes-validations: compile errors, messages, reasons, field paths, transition rules.

Expected texts are Kubernetes' (apiextensions-apiserver schema/cel validation.go and
compilation.go, and cel-go's checker as quoted in Kubernetes' tests).
"""

from __future__ import annotations

from typing import Any

import pytest

from kstore.api.cel import compile_schema_rules
from kstore.api.validation.field import Path

CRD_PATH = Path("spec", "validation", "openAPIV3Schema")


def spec_schema(rules: list[dict[str, Any]], **props: Any) -> dict[str, Any]:
    properties = {
        "minReplicas": {"type": "integer"},
        "maxReplicas": {"type": "integer"},
        "name": {"type": "string"},
        **props,
    }
    return {
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": properties, "x-kubernetes-validations": rules}
        },
    }


def test_undefined_field_is_a_compile_error_at_the_rule_path() -> None:
    rules = compile_schema_rules(spec_schema([{"rule": "self.nosuchfield == 1"}]), CRD_PATH)
    [cause] = rules.errors
    assert cause.type == "FieldValueInvalid"
    assert cause.field == (
        "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule"
    )
    # cel-go: "ERROR: <input>:1:14: undefined field 'creationTimestamp'" and the caret lines.
    assert cause.message.endswith(
        "compilation failed: ERROR: <input>:1:5: undefined field 'nosuchfield'\n"
        " | self.nosuchfield == 1\n"
        " | ....^"
    )


def test_root_metadata_exposes_only_name_and_generate_name() -> None:
    schema = {
        "type": "object",
        "x-kubernetes-validations": [
            {"rule": "self.metadata.name.startsWith('a')"},
            {"rule": "self.metadata.creationTimestamp != ''"},
        ],
    }
    rules = compile_schema_rules(schema, CRD_PATH)
    [cause] = rules.errors
    assert "x-kubernetes-validations[1].rule" in cause.field
    assert "ERROR: <input>:1:14: undefined field 'creationTimestamp'" in cause.message
    obj = {"metadata": {"name": "bad", "labels": {"a": "b"}}}
    # A stored CRD whose rule does not compile reports it at validation (validation.go:
    # "rule compile error: %v"); the other rule still runs.
    [failure, not_compiled] = rules.validate(obj)
    assert failure.field == ""
    assert failure.message == "Invalid value: failed rule: self.metadata.name.startsWith('a')"
    assert not_compiled.message.startswith(
        'Invalid value: "object": rule compile error: compilation failed: ERROR: <input>:1:14:'
    )


def test_syntax_error_is_worded_as_cel_go() -> None:
    rules = compile_schema_rules(spec_schema([{"rule": "self.minReplicas in [1, 2, "}]), CRD_PATH)
    [cause] = rules.errors
    # Kubernetes' admission tests: "compilation failed: ERROR: <input>:1:20: Syntax error:
    # missing ']' at '<EOF>'" for "object.x in [1, 2, ".
    assert "compilation failed: ERROR: <input>:1:28: Syntax error: missing ']' at '<EOF>'" in (
        cause.message
    )


def test_type_error_is_no_matching_overload() -> None:
    rules = compile_schema_rules(spec_schema([{"rule": "1 + 'a' == 2"}]), CRD_PATH)
    [cause] = rules.errors
    assert "found no matching overload for '_+_' applied to '(int, string)'" in cause.message


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        # An integer property against a string: cel-go knows the field's type from the schema.
        (
            "self.minReplicas == 'one'",
            "1:18: found no matching overload for '_==_' applied to '(int, string)'",
        ),
        ("self.name > 3", "1:11: found no matching overload for '_>_' applied to '(string, int)'"),
        # Inside a nested object, a list of objects and a map of objects.
        (
            "self.tpl.port.startsWith('8')",
            "1:25: found no matching overload for 'startsWith' applied to '(int, string)'",
        ),
        (
            "self.ports.all(p, p.port == 'http')",
            "1:26: found no matching overload for '_==_' applied to '(int, string)'",
        ),
        (
            "self.byName.all(k, self.byName[k].port < 'a')",
            "1:40: found no matching overload for '_<_' applied to '(int, string)'",
        ),
        # An object is not a map: `in` needs a list or a map.
        ("'name' in self", "1:8: found no matching overload for '@in' applied to '(string, "),
        # Still worded as cel-go: no struct named.
        ("self.tpl.nosuch == 1", "1:9: undefined field 'nosuch'\n"),
    ],
)
def test_object_fields_are_typed_when_the_crd_is_written(rule: str, expected: str) -> None:
    port = {"type": "object", "properties": {"port": {"type": "integer"}}}
    rules = compile_schema_rules(
        spec_schema(
            [{"rule": rule}],
            tpl=port,
            ports={"type": "array", "maxItems": 8, "items": port},
            byName={"type": "object", "maxProperties": 8, "additionalProperties": port},
        ),
        CRD_PATH,
    )
    [cause] = rules.errors
    assert "compilation failed: ERROR: <input>:" + expected in cause.message


@pytest.mark.parametrize(
    "rule",
    [
        "self.tpl.port > 0 && self.ports.all(p, p.port > 0)",
        "self.byName.all(k, self.byName[k].port > 0) && self.nested.all(l, l.all(x, x > 0))",
        "self.foo_bar == self.fooBar && self.spec_type == self.tpl.port",
        "self.x__dash__y > 1 && self.__if__ == 'a' && self.ios == 1 || self.ios == 'a'",
        "self.when < timestamp('2020-01-01T00:00:00Z') && self.?tpl.port.orValue(1) == 1",
    ],
)
def test_well_typed_rules_over_objects_compile(rule: str) -> None:
    port = {"type": "object", "properties": {"port": {"type": "integer"}}}
    props = {
        "tpl": port,
        "ports": {"type": "array", "maxItems": 8, "items": port},
        "byName": {"type": "object", "maxProperties": 8, "additionalProperties": port},
        "nested": {
            "type": "array",
            "maxItems": 4,
            "items": {"type": "array", "maxItems": 4, "items": {"type": "integer"}},
        },
        # Names protobuf would clash on (derived JSON names, a nested type's name).
        "foo_bar": {"type": "string"},
        "fooBar": {"type": "string"},
        "spec_type": {"type": "integer"},
        "x-y": {"type": "integer"},
        "if": {"type": "string"},
        "ios": {"x-kubernetes-int-or-string": True},
        "when": {"type": "string", "format": "date-time"},
    }
    rules = compile_schema_rules(spec_schema([{"rule": rule}], **props), CRD_PATH)
    assert rules.errors == []


def test_a_rule_on_a_list_of_objects_types_its_elements() -> None:
    items = {
        "type": "array",
        "maxItems": 8,
        "items": {"type": "object", "properties": {"port": {"type": "integer"}}},
        "x-kubernetes-validations": [{"rule": "self.all(p, p.port != 'x')"}],
    }
    rules = compile_schema_rules({"type": "object", "properties": {"ports": items}}, CRD_PATH)
    [cause] = rules.errors
    assert "found no matching overload for '_!=_' applied to '(int, string)'" in cause.message


def test_rule_must_evaluate_to_bool() -> None:
    rules = compile_schema_rules(spec_schema([{"rule": "1 + 2"}]), CRD_PATH)
    [cause] = rules.errors
    assert cause.message.endswith("cel expression must evaluate to a bool")


def test_empty_rule_is_required() -> None:
    rules = compile_schema_rules(spec_schema([{"rule": "  "}]), CRD_PATH)
    [cause] = rules.errors
    assert cause.type == "FieldValueRequired"
    assert cause.message == "Required value: rule is not specified"


def test_failed_rule_uses_message_then_default() -> None:
    rules = compile_schema_rules(
        spec_schema(
            [
                {"rule": "self.minReplicas <= self.maxReplicas", "message": "min above max"},
                {"rule": "self.name.startsWith('a')"},
            ]
        )
    )
    assert rules.errors == []
    causes = rules.validate({"spec": {"minReplicas": 5, "maxReplicas": 3, "name": "b"}})
    assert [(c.field, c.message) for c in causes] == [
        ("spec", "Invalid value: min above max"),
        ("spec", "Invalid value: failed rule: self.name.startsWith('a')"),
    ]
    assert rules.validate({"spec": {"minReplicas": 1, "maxReplicas": 3, "name": "a"}}) == []


def test_message_expression_is_evaluated() -> None:
    rules = compile_schema_rules(
        spec_schema(
            [
                {
                    "rule": "self.minReplicas <= self.maxReplicas",
                    "messageExpression": "'min ' + string(self.minReplicas) + ' above max'",
                }
            ]
        )
    )
    [cause] = rules.validate({"spec": {"minReplicas": 5, "maxReplicas": 3}})
    assert cause.message == "Invalid value: min 5 above max"


def test_reason_and_field_path_pick_cause_type_and_field() -> None:
    rules = compile_schema_rules(
        spec_schema(
            [
                {
                    "rule": "self.minReplicas > 0",
                    "reason": "FieldValueForbidden",
                    "fieldPath": ".minReplicas",
                    "message": "must be positive",
                },
                {"rule": "has(self.name)", "reason": "FieldValueRequired", "fieldPath": ".name"},
                {"rule": "self.maxReplicas != 7", "reason": "FieldValueDuplicate"},
            ]
        )
    )
    causes = rules.validate({"spec": {"minReplicas": 0, "maxReplicas": 7}})
    assert [(c.type, c.field, c.message) for c in causes] == [
        ("FieldValueForbidden", "spec.minReplicas", "Forbidden: must be positive"),
        ("FieldValueRequired", "spec.name", "Required value: failed rule: has(self.name)"),
        ("FieldValueDuplicate", "spec", "Duplicate value"),
    ]


def test_rules_under_items_and_additional_properties_run_per_element() -> None:
    schema = spec_schema(
        [],
        tags={
            "type": "array",
            "items": {"type": "string", "x-kubernetes-validations": [{"rule": "size(self) < 4"}]},
        },
        labels={
            "type": "object",
            "additionalProperties": {
                "type": "string",
                "x-kubernetes-validations": [{"rule": "self != ''"}],
            },
        },
    )
    rules = compile_schema_rules(schema)
    causes = rules.validate({"spec": {"tags": ["ok", "toolong"], "labels": {"a": "", "b": "x"}}})
    assert [(c.field, c.message) for c in causes] == [
        ("spec.tags[1]", 'Invalid value: "toolong": failed rule: size(self) < 4'),
        ("spec.labels[a]", "Invalid value: \"\": failed rule: self != ''"),
    ]


def test_runtime_error_names_the_rule() -> None:
    rules = compile_schema_rules(
        spec_schema([{"rule": "self.minReplicas / self.maxReplicas == 0"}])
    )
    [cause] = rules.validate({"spec": {"minReplicas": 1, "maxReplicas": 0}})
    # validation.go: "%v evaluating rule: %v"
    assert cause.message == (
        'Invalid value: "object": division by zero evaluating rule: '
        "self.minReplicas / self.maxReplicas == 0"
    )
    [missing] = rules.validate({"spec": {"minReplicas": 1}})
    assert missing.message.startswith('Invalid value: "object": no such key: maxReplicas')


def test_no_such_overload_at_run_time_on_int_or_string() -> None:
    schema = spec_schema(
        [],
        port={
            "x-kubernetes-int-or-string": True,
            "x-kubernetes-validations": [{"rule": "self > 0"}],
        },
    )
    rules = compile_schema_rules(schema)
    assert rules.errors == []
    [cause] = rules.validate({"spec": {"port": "http"}})
    assert cause.message.endswith(
        "': call arguments did not match a supported operator, function or macro signature "
        "for rule: self > 0"
    )
    assert cause.message.startswith('Invalid value: "": \'no such overload')


def test_transition_rule_runs_only_with_an_old_value() -> None:
    rules = compile_schema_rules(
        spec_schema([{"rule": "self.minReplicas >= oldSelf.minReplicas", "message": "no shrink"}])
    )
    new = {"spec": {"minReplicas": 1}}
    assert rules.validate(new) == []
    [cause] = rules.validate(new, {"spec": {"minReplicas": 2}})
    assert cause.message == "Invalid value: no shrink"
    assert rules.validate(new, {"spec": {"minReplicas": 1}}) == []


def test_optional_old_self_runs_on_create_with_an_empty_optional() -> None:
    rules = compile_schema_rules(
        spec_schema(
            [
                {
                    "rule": "!oldSelf.hasValue() || self.name == oldSelf.value().name",
                    "optionalOldSelf": True,
                    "message": "name is immutable",
                }
            ]
        )
    )
    assert rules.validate({"spec": {"name": "a"}}) == []
    [cause] = rules.validate({"spec": {"name": "a"}}, {"spec": {"name": "b"}})
    assert cause.message == "Invalid value: name is immutable"


def test_list_map_items_correlate_by_key() -> None:
    schema = spec_schema(
        [],
        ports={
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "port": {"type": "integer"}},
                "x-kubernetes-validations": [
                    {"rule": "self.port == oldSelf.port", "message": "port is immutable"}
                ],
            },
        },
    )
    rules = compile_schema_rules(schema)
    old = {"spec": {"ports": [{"name": "a", "port": 1}, {"name": "b", "port": 2}]}}
    new = {
        "spec": {
            "ports": [{"name": "b", "port": 2}, {"name": "a", "port": 9}, {"name": "c", "port": 3}]
        }
    }
    [cause] = rules.validate(new, old)
    assert cause.field == "spec.ports[1]"


def test_atomic_list_items_do_not_correlate() -> None:
    schema = spec_schema(
        [],
        ports={
            "type": "array",
            "items": {
                "type": "integer",
                "x-kubernetes-validations": [{"rule": "self == oldSelf"}],
            },
        },
    )
    rules = compile_schema_rules(schema)
    assert rules.validate({"spec": {"ports": [2]}}, {"spec": {"ports": [1]}}) == []


def test_escaped_property_names() -> None:
    schema = spec_schema(
        [{"rule": "self.x__dash__y == 1 && self.__namespace__ == 'a'"}],
        **{"x-y": {"type": "integer"}, "namespace": {"type": "string"}},
    )
    rules = compile_schema_rules(schema)
    assert rules.errors == []
    assert rules.validate({"spec": {"x-y": 1, "namespace": "a"}}) == []
    assert len(rules.validate({"spec": {"x-y": 2, "namespace": "a"}})) == 1


def test_null_values_are_not_validated() -> None:
    rules = compile_schema_rules(spec_schema([{"rule": "false"}]))
    assert rules.validate({"spec": None}) == []


def test_rule_that_is_a_non_bool_field_does_not_compile() -> None:
    rules = compile_schema_rules(spec_schema([{"rule": "self.name"}, {"rule": "self.minReplicas"}]))
    assert [c.message.endswith("cel expression must evaluate to a bool") for c in rules.errors] == [
        True,
        True,
    ]


def test_unchanged_value_failing_a_rule_is_ratcheted_to_a_warning() -> None:
    # validation_test.go (ratcheting): foo: baz -> baz with rule self == "bar" warns
    # `root.foo: Invalid value: "baz": gotta be bar` instead of failing.
    schema = {
        "type": "object",
        "properties": {
            "foo": {
                "type": "string",
                "x-kubernetes-validations": [{"rule": 'self == "bar"', "message": "gotta be bar"}],
            },
            "other": {"type": "string"},
        },
    }
    rules = compile_schema_rules(schema)
    warnings: list[str] = []
    old = {"foo": "baz", "other": "a"}
    assert rules.validate({"foo": "baz", "other": "b"}, old, warnings=warnings) == []
    assert warnings == ['foo: Invalid value: "baz": gotta be bar']
    [cause] = rules.validate({"foo": "qux", "other": "a"}, old)
    assert cause.render() == 'foo: Invalid value: "qux": gotta be bar'
    [created] = rules.validate({"foo": "baz"})
    assert created.message == 'Invalid value: "baz": gotta be bar'


def _list_of_bars(list_type: str | None) -> dict[str, Any]:
    items: dict[str, Any] = {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "bar": {
                    "type": "string",
                    "x-kubernetes-validations": [
                        {"rule": 'self == "baz"', "message": "gotta be baz"}
                    ],
                }
            },
        },
    }
    if list_type is not None:
        items["x-kubernetes-list-type"] = list_type
    return {"type": "object", "properties": {"items": items, "other": {"type": "string"}}}


def test_ratcheting_inside_an_atomic_list_follows_the_unchanged_list() -> None:
    rules = compile_schema_rules(_list_of_bars("atomic"))
    old = {"items": [{"bar": "bar"}], "other": "a"}
    assert rules.validate({"items": [{"bar": "bar"}], "other": "b"}, old) == []
    changed = rules.validate({"items": [{"bar": "bar"}, {"bar": "x"}]}, old)
    assert [c.field for c in changed] == ["items[0].bar", "items[1].bar"]


def test_ratcheting_correlates_items_of_a_list_without_list_type_by_index() -> None:
    # CorrelatedObject.Index: an unset x-kubernetes-list-type correlates by index.
    rules = compile_schema_rules(_list_of_bars(None))
    old = {"items": [{"bar": "bar"}], "other": "a"}
    warnings: list[str] = []
    changed = rules.validate({"items": [{"bar": "bar"}, {"bar": "x"}]}, old, warnings=warnings)
    assert [c.field for c in changed] == ["items[1].bar"]
    assert warnings == ['items[0].bar: Invalid value: "bar": gotta be baz']


def test_self_is_typed_on_scalar_and_list_nodes() -> None:
    # cel-go checks self against the declared type: a string compared with an int is an error.
    schema = spec_schema(
        [],
        label={
            "type": "string",
            "maxLength": 10,
            "x-kubernetes-validations": [{"rule": "self == 5"}],
        },
        ports={
            "type": "array",
            "maxItems": 4,
            "items": {"type": "integer"},
            "x-kubernetes-validations": [{"rule": "self.all(p, p.startsWith('a'))"}],
        },
        when={
            "type": "string",
            "format": "date-time",
            "x-kubernetes-validations": [{"rule": "self > timestamp('2020-01-01T00:00:00Z')"}],
        },
    )
    messages = [c.message for c in compile_schema_rules(schema).errors]
    assert len(messages) == 2
    assert "found no matching overload for '_==_' applied to '(string, int)'" in messages[0]
    assert "found no matching overload for 'startsWith' applied to '(int, string)'" in messages[1]
