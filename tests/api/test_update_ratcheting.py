"""Ratcheting on update, as Kubernetes v1.36 does it (CRDValidationRatcheting, GA):

- a CRD update is not refused for breaking a schema rule the stored CRD already broke;
- a custom object's update is not refused for OpenAPI errors of values equal to their
  correlated old values (by property, by key in ``map`` lists, by index in untyped lists; never
  by item in ``set`` and ``atomic`` lists), nor for list-type errors the old object already had;
  CEL failures of unchanged values become warnings; a create is never ratcheted;
- a CRD's defaults must pass the CEL rules of their node too.
"""

from __future__ import annotations

import copy
from typing import Any

from kstore.api.cel import compile_schema_rules
from kstore.api.custom_schema import VersionSchema
from kstore.api.kinds._crd_validation import (
    validate_custom_resource_definition,
    validate_custom_resource_definition_update,
)
from kstore.api.openapi_validation import compile_validator
from tests.api.test_apiextensions_crd import _crd, _rendered, _version

# ------------------------------------------------------------------------ CRD updates


def _with_spec_property(crd: dict[str, Any], name: str, schema: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(crd)
    spec = out["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["properties"][name] = schema
    return out


GRANULAR_SET = {
    "type": "array",
    "x-kubernetes-list-type": "set",
    "items": {"type": "object", "properties": {"a": {"type": "string"}}},
}
SET_ERROR = (
    "spec.validation.openAPIV3Schema.properties[spec].properties[tags].items."
    "x-kubernetes-map-type: Invalid value: null: must be atomic as item of a list with "
    "x-kubernetes-list-type=set"
)


def test_a_crd_breaking_a_rule_may_be_updated_while_it_keeps_breaking_it() -> None:
    stored = _with_spec_property(_crd(), "tags", GRANULAR_SET)
    assert _rendered(validate_custom_resource_definition(stored)) == [SET_ERROR]
    updated = _with_spec_property(stored, "count", {"type": "integer"})
    assert validate_custom_resource_definition_update(updated, stored) == []


def test_a_crd_may_not_start_breaking_a_rule_on_update() -> None:
    stored = _crd()
    updated = _with_spec_property(stored, "tags", GRANULAR_SET)
    assert _rendered(validate_custom_resource_definition_update(updated, stored)) == [SET_ERROR]


def test_only_the_rules_the_old_crd_broke_are_relaxed() -> None:
    stored = _with_spec_property(_crd(), "tags", GRANULAR_SET)
    updated = _with_spec_property(stored, "bad", {"type": "strin"})
    assert _rendered(validate_custom_resource_definition_update(updated, stored)) == [
        "spec.validation.openAPIV3Schema.properties[spec].properties[bad].type: "
        'Unsupported value: "strin": supported values: "array", "boolean", "integer", '
        '"number", "object", "string"'
    ]
    stored_bad_type = _with_spec_property(stored, "bad", {"type": "strin"})
    assert validate_custom_resource_definition_update(updated, stored_bad_type) == []


# ------------------------------------------------------------------------ CR OpenAPI

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["must"],
            "properties": {
                "must": {"type": "string"},
                "name": {"type": "string", "maxLength": 3},
                "mode": {"type": "string", "enum": ["a", "b"]},
                "count": {"type": "integer"},
                "ports": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {
                        "type": "object",
                        "required": ["name"],
                        "properties": {
                            "name": {"type": "string"},
                            "port": {"type": "integer", "maximum": 10},
                        },
                    },
                },
                "words": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}},
                "tags": {
                    "type": "array",
                    "x-kubernetes-list-type": "set",
                    "items": {"type": "string", "maxLength": 2},
                },
                "labels": {
                    "type": "object",
                    "additionalProperties": {"type": "string", "maxLength": 2},
                },
                "code": {
                    "type": "string",
                    "x-kubernetes-validations": [
                        {"rule": "self.startsWith('x')", "message": "must start with x"}
                    ],
                },
                "frozen": {
                    "type": "string",
                    "x-kubernetes-validations": [
                        {"rule": "self == oldSelf", "message": "frozen is immutable"}
                    ],
                },
            },
        },
        "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
    },
}


def _stored() -> dict[str, Any]:
    """An object written before the schema was tightened: it breaks many rules now."""
    return {
        "apiVersion": "example.com/v1",
        "kind": "Foo",
        "metadata": {"name": "f", "namespace": "default"},
        "spec": {
            "must": "m",
            "name": "toolong",
            "mode": "zz",
            "count": 1,
            "ports": [{"name": "a", "port": 50}, {"name": "b", "port": 1}],
            "words": ["UPPER", "ok"],
            "tags": ["abc"],
            "labels": {"x": "long"},
            "code": "yy",
            "frozen": "f",
        },
    }


RULES = VersionSchema(SCHEMA)
UNCHECKED = (
    "<nil>: Invalid value: null: some validation rules were not checked because the object "
    "was invalid; correct the existing errors to complete validation"
)


def _update(change: Any) -> tuple[list[str], list[str]]:
    old = _stored()
    new = copy.deepcopy(old)
    change(new)
    warnings: list[str] = []
    return _rendered(RULES.validate_update(new, old, warnings)), warnings


def test_a_create_is_never_ratcheted() -> None:
    assert _rendered(RULES.validate(_stored())) == [
        "spec.labels.x: Too long: may not be more than 2 bytes",
        'spec.mode: Unsupported value: "zz": supported values: "a", "b"',
        "spec.name: Too long: may not be more than 3 bytes",
        "spec.ports[0].port: Invalid value: 50: spec.ports[0].port in body should be less than "
        "or equal to 10",
        "spec.tags[0]: Too long: may not be more than 2 bytes",
        "spec.words[0]: Invalid value: \"UPPER\": spec.words[0] in body should match '^[a-z]+$'",
        UNCHECKED,
    ]


def test_unchanged_invalid_values_do_not_fail_an_update_of_other_fields() -> None:
    def change(obj: dict[str, Any]) -> None:
        obj["spec"]["count"] = 2
        obj["status"] = {"phase": "Ready"}
        obj["metadata"]["labels"] = {"l": "v"}

    causes, warnings = _update(change)
    assert causes == []
    # The CEL rule still fails on the unchanged value: a warning, as kube-apiserver sends it.
    assert warnings == ['spec.code: Invalid value: "yy": must start with x']


def test_a_changed_value_is_validated() -> None:
    def change(obj: dict[str, Any]) -> None:
        obj["spec"]["name"] = "longer"

    causes, _ = _update(change)
    assert causes == ["spec.name: Too long: may not be more than 3 bytes", UNCHECKED]


def test_map_list_items_correlate_by_key_in_any_order() -> None:
    def reorder(obj: dict[str, Any]) -> None:
        obj["spec"]["ports"].reverse()
        obj["spec"]["ports"][0]["port"] = 2  # "b", still valid

    assert _update(reorder)[0] == []

    def break_it(obj: dict[str, Any]) -> None:
        obj["spec"]["ports"][0]["port"] = 60

    assert _update(break_it)[0] == [
        "spec.ports[0].port: Invalid value: 60: spec.ports[0].port in body should be less than "
        "or equal to 10"
    ]

    def new_key(obj: dict[str, Any]) -> None:
        obj["spec"]["ports"][0]["name"] = "c"  # no old item with that key: not correlated

    assert _update(new_key)[0] == [
        "spec.ports[0].port: Invalid value: 50: spec.ports[0].port in body should be less than "
        "or equal to 10"
    ]


def test_untyped_lists_correlate_by_index() -> None:
    def append(obj: dict[str, Any]) -> None:
        obj["spec"]["words"].append("fine")

    assert _update(append)[0] == []

    def shift(obj: dict[str, Any]) -> None:
        obj["spec"]["words"].insert(0, "fine")

    assert _update(shift)[0] == [
        "spec.words[1]: Invalid value: \"UPPER\": spec.words[1] in body should match '^[a-z]+$'"
    ]


def test_set_items_do_not_correlate() -> None:
    def add(obj: dict[str, Any]) -> None:
        obj["spec"]["tags"].append("d")

    assert _update(add)[0] == ["spec.tags[0]: Too long: may not be more than 2 bytes", UNCHECKED]


def test_map_keys_correlate_by_key() -> None:
    def add(obj: dict[str, Any]) -> None:
        obj["spec"]["labels"]["y"] = "ok"

    assert _update(add)[0] == []

    def rename(obj: dict[str, Any]) -> None:
        obj["spec"]["labels"] = {"z": "long"}

    assert _update(rename)[0] == [
        "spec.labels.z: Too long: may not be more than 2 bytes",
        UNCHECKED,
    ]


def test_an_error_of_a_changed_object_is_reported_even_for_a_property_it_did_not_change() -> None:
    """``required`` belongs to the object that lacks the property: ratcheted only while that
    object is unchanged."""
    old = _stored()
    del old["spec"]["must"]
    same = copy.deepcopy(old)
    same["status"] = {"phase": "Ready"}
    assert RULES.validate_update(same, old) == []
    changed = copy.deepcopy(old)
    changed["spec"]["count"] = 3
    assert _rendered(RULES.validate_update(changed, old)) == [
        "spec.must: Required value",
        UNCHECKED,
    ]


def test_type_changes_are_never_equal() -> None:
    validator = compile_validator({"type": "object", "properties": {"n": {"maximum": 1}}})
    assert validator.validate_update({"n": 2}, {"n": 2}) == []
    assert _rendered(validator.validate_update({"n": 2.0}, {"n": 2})) == [
        "n: Invalid value: 2: n in body should be less than or equal to 1"
    ]


def test_transition_rules_are_not_ratcheted() -> None:
    def change(obj: dict[str, Any]) -> None:
        obj["spec"]["frozen"] = "g"

    causes, warnings = _update(change)
    assert causes == ['spec.frozen: Invalid value: "g": frozen is immutable']
    assert warnings == ['spec.code: Invalid value: "yy": must start with x']


def test_list_type_errors_count_only_when_the_old_object_had_none() -> None:
    rules = VersionSchema(
        {
            "type": "object",
            "properties": {
                "s": {
                    "type": "array",
                    "x-kubernetes-list-type": "set",
                    "items": {"type": "string"},
                },
                "n": {"type": "integer"},
            },
        }
    )
    old = {"apiVersion": "example.com/v1", "kind": "Foo", "s": ["a", "a"], "n": 1}
    new = {**old, "n": 2}
    duplicate = ['s[1]: Duplicate value: "a"']
    assert _rendered(rules.validate(new)) == duplicate
    assert rules.validate_update(new, old) == []
    clean = {**old, "s": ["a"]}
    assert _rendered(rules.validate_update(new, clean)) == duplicate


# ------------------------------------------------------------------------ CEL on defaults

DEFAULT_ROOT = "spec.validation.openAPIV3Schema.properties[spec].properties"


def _crd_with(**props: dict[str, Any]) -> list[str]:
    version = _version()
    spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["properties"].update(props)
    return _rendered(validate_custom_resource_definition(_crd(version)))


def test_defaults_must_pass_the_cel_rules_of_their_node() -> None:
    starts_with_x = [{"rule": "self.startsWith('x')", "message": "must start with x"}]
    assert _crd_with(
        good={"type": "string", "default": "xy", "x-kubernetes-validations": starts_with_x},
        bad={"type": "string", "default": "yy", "x-kubernetes-validations": starts_with_x},
    ) == [f'{DEFAULT_ROOT}[bad].default: Invalid value: "yy": must start with x']


def test_defaults_are_checked_against_the_rules_below_them() -> None:
    nested = {
        "type": "object",
        "default": {"a": "q"},
        "properties": {
            "a": {"type": "string", "x-kubernetes-validations": [{"rule": "self == 'p'"}]}
        },
    }
    assert _crd_with(obj=nested) == [
        f"{DEFAULT_ROOT}[obj].default.a: Invalid value: \"q\": failed rule: self == 'p'"
    ]


def test_defaults_meet_transition_rules_with_themselves_and_optional_old_self_without() -> None:
    immutable = [{"rule": "self == oldSelf", "message": "immutable"}]
    needs_old = [{"rule": "oldSelf.hasValue()", "optionalOldSelf": True, "message": "needs old"}]
    assert _crd_with(
        frozen={"type": "string", "default": "v", "x-kubernetes-validations": immutable},
        opt={"type": "string", "default": "v", "x-kubernetes-validations": needs_old},
    ) == [f'{DEFAULT_ROOT}[opt].default: Invalid value: "v": needs old']


def test_a_default_failing_its_openapi_schema_is_not_checked_by_cel() -> None:
    rules = [{"rule": "self.startsWith('x')", "message": "must start with x"}]
    assert _crd_with(
        s={"type": "string", "maxLength": 2, "default": "yyy", "x-kubernetes-validations": rules}
    ) == [
        f"{DEFAULT_ROOT}[s].default: Too long: may not be more than 2 bytes",
    ]


def test_values_correlate_inside_all_of_branches_too() -> None:
    validator = compile_validator(
        {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "allOf": [{"properties": {"a": {"maxLength": 1}}}],
        }
    )
    assert validator.validate_update({"a": "xx", "b": "2"}, {"a": "xx", "b": "1"}) == []
    assert _rendered(validator.validate_update({"a": "yy", "b": "1"}, {"a": "xx", "b": "1"})) == [
        "a: Too long: may not be more than 1 byte",
        '<nil>: Invalid value: "": "" must validate all the schemas (allOf). None validated',
    ]


def test_cel_ratcheting_correlates_inside_atomic_maps_without_giving_them_old_self() -> None:
    rules = compile_schema_rules(
        {
            "type": "object",
            "properties": {
                "m": {
                    "type": "object",
                    "x-kubernetes-map-type": "atomic",
                    "properties": {
                        "a": {
                            "type": "string",
                            "x-kubernetes-validations": [{"rule": "self == 'ok'", "message": "no"}],
                        },
                        "b": {"type": "string"},
                    },
                },
            },
        }
    )
    warnings: list[str] = []
    old = {"m": {"a": "bad", "b": "1"}}
    assert rules.validate({"m": {"a": "bad", "b": "2"}}, old, warnings=warnings) == []
    assert warnings == ['m.a: Invalid value: "bad": no']


def test_cel_failures_of_the_root_api_version_and_kind_are_never_ratcheted() -> None:
    rules = compile_schema_rules(
        {
            "type": "object",
            "properties": {
                "kind": {
                    "type": "string",
                    "x-kubernetes-validations": [{"rule": "self == 'Pod'"}],
                },
                "n": {"type": "integer"},
            },
        }
    )
    old = {"kind": "Baz", "n": 1}
    assert _rendered(rules.validate({"kind": "Baz", "n": 2}, old)) == [
        "kind: Invalid value: \"Baz\": failed rule: self == 'Pod'"
    ]
