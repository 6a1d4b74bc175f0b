"""The per-node schema rules of Kubernetes v1.36's CRD validation.

Messages are those of pkg/apis/apiextensions/validation/validation.go
(ValidateCustomResourceDefinitionOpenAPISchema, specStandardValidatorV3.validate,
validateMapListKeysMapSet); the cases follow validation_test.go's list-type and unsupported-field
cases, which match on the cause type and path.
"""

from __future__ import annotations

from typing import Any

import pytest

from kstore.api.structural import SchemaRuleOptions, validate_schema_rules
from kstore.api.validation.field import Path

ROOT = Path("spec", "versions").index(0).child("schema", "openAPIV3Schema")
P = str(ROOT)


def rules(schema: dict[str, Any], **options: bool) -> list[str]:
    opts = SchemaRuleOptions(**options) if options else None
    return [c.render() for c in validate_schema_rules(schema, ROOT, opts)]


def obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


def test_unknown_type_is_unsupported_with_the_sorted_types() -> None:
    assert rules(obj(a={"type": "str"})) == [
        f'{P}.properties[a].type: Unsupported value: "str": supported values: "array", '
        '"boolean", "integer", "number", "object", "string"'
    ]
    assert rules(obj(a={"type": "str"}), require_valid_property_type=False) == []


def test_null_type_points_to_nullable() -> None:
    assert rules(obj(a={"type": "null"}), require_valid_property_type=False) == [
        f"{P}.properties[a].type: Forbidden: type cannot be set to null, use nullable as an "
        "alternative"
    ]


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("id", "x"),
        ("additionalItems", False),
        ("patternProperties", {"^a": {"type": "string"}}),
        ("definitions", {"d": {"type": "string"}}),
        ("dependencies", {}),
        ("$ref", ""),
    ],
)
def test_unsupported_json_schema_features(key: str, value: Any) -> None:
    assert rules({"type": "object", key: value}) == [
        f"{P}.{key}: Forbidden: {key} is not supported"
    ]


def test_items_must_be_one_schema_and_unique_items_is_forbidden() -> None:
    assert rules(obj(a={"type": "array", "uniqueItems": True, "items": [{"type": "string"}]})) == [
        f"{P}.properties[a].items: Forbidden: items must be a schema object and not an array",
        f"{P}.properties[a].uniqueItems: Forbidden: uniqueItems cannot be set to true since the "
        "runtime complexity becomes quadratic",
    ]


@pytest.mark.parametrize(("additional", "allowed"), [(True, True), (False, False), ({}, False)])
def test_additional_properties_and_properties_exclude_each_other(
    additional: Any, allowed: bool
) -> None:
    got = rules(
        obj(a={"type": "object", "properties": {"b": {}}, "additionalProperties": additional})
    )
    expected = [
        f"{P}.properties[a].additionalProperties: Forbidden: additionalProperties and "
        "properties are mutual exclusive"
    ]
    assert got == ([] if allowed else expected)


def test_preserve_unknown_fields_false_is_invalid() -> None:
    assert rules(obj(a={"type": "object", "x-kubernetes-preserve-unknown-fields": False})) == [
        f"{P}.properties[a].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be "
        "true or undefined"
    ]


def test_map_type_rules() -> None:
    got = rules(
        obj(
            a={"type": "string", "x-kubernetes-map-type": "atomic"},
            b={"x-kubernetes-map-type": "granular"},
            c={"type": "object", "x-kubernetes-map-type": "other"},
        )
    )
    assert got == [
        f'{P}.properties[a].type: Invalid value: "string": must be object if '
        "x-kubernetes-map-type is specified",
        f"{P}.properties[b].type: Required value: must be object if x-kubernetes-map-type is "
        "specified",
        f'{P}.properties[c].x-kubernetes-map-type: Unsupported value: "other": supported values: '
        '"atomic", "granular"',
    ]


def test_list_type_rules() -> None:
    strings = {"type": "array", "items": {"type": "string"}}
    got = rules(
        obj(
            a={"type": "string", "x-kubernetes-list-type": "set"},
            b={**strings, "x-kubernetes-list-type": "bag"},
            c={**strings, "x-kubernetes-list-map-keys": ["k"]},
            d={**strings, "x-kubernetes-list-type": "set", "x-kubernetes-list-map-keys": ["k"]},
        )
    )
    assert got == [
        f'{P}.properties[a].type: Invalid value: "string": must be array if '
        "x-kubernetes-list-type is specified",
        f'{P}.properties[b].x-kubernetes-list-type: Unsupported value: "bag": supported values: '
        '"atomic", "set", "map"',
        f"{P}.properties[c].x-kubernetes-list-type: Required value: must be map if "
        "x-kubernetes-list-map-keys is non-empty",
        f'{P}.properties[d].x-kubernetes-list-type: Invalid value: "set": must be map if '
        "x-kubernetes-list-map-keys is non-empty",
    ]


def test_set_items_must_be_atomic() -> None:
    got = rules(
        obj(
            a={
                "type": "array",
                "x-kubernetes-list-type": "set",
                "items": {"type": "object", "properties": {"x": {"type": "string"}}},
            },
            b={
                "type": "array",
                "x-kubernetes-list-type": "set",
                "items": {
                    "type": "array",
                    "x-kubernetes-list-type": "set",
                    "items": {"type": "string"},
                },
            },
        )
    )
    detail = "must be atomic as item of a list with x-kubernetes-list-type=set"
    assert got == [
        # Kubernetes shows the items' x-kubernetes-list-type (unset: null) for the map type.
        f"{P}.properties[a].items.x-kubernetes-map-type: Invalid value: null: {detail}",
        f'{P}.properties[b].items.x-kubernetes-list-type: Invalid value: "set": {detail}',
    ]
    granular_set = {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "object"}}
    assert rules(obj(a=granular_set), require_atomic_set_type=False) == []


def map_list(keys: list[str], item: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": keys,
        "items": item,
    }


def test_map_list_keys_must_be_scalar_unique_item_properties() -> None:
    item = {
        "type": "object",
        "required": ["name", "sub"],
        "properties": {"name": {"type": "string"}, "sub": {"type": "object"}},
    }
    got = rules(obj(a=map_list(["name", "sub", "missing", "name"], item)))
    keys = '["name","sub","missing","name"]'
    assert got == [
        f'{P}.properties[a].items.properties[sub].type: Invalid value: "object": must be a '
        "scalar type if parent array's x-kubernetes-list-type is map",
        f"{P}.properties[a].x-kubernetes-list-map-keys: Invalid value: {keys}: entries must all "
        "be names of item properties",
        f"{P}.properties[a].x-kubernetes-list-map-keys: Invalid value: {keys}: must not contain "
        "duplicate entries",
    ]


def test_map_list_needs_keys_and_object_items() -> None:
    got = rules(
        obj(
            a={"type": "array", "x-kubernetes-list-type": "map", "items": {"type": "string"}},
            b={
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["k"],
            },
        )
    )
    assert got == [
        f"{P}.properties[a].x-kubernetes-list-map-keys: Required value: must not be empty if "
        "x-kubernetes-list-type is map",
        f'{P}.properties[a].items.type: Invalid value: "string": must be object if parent '
        "array's x-kubernetes-list-type is map",
        f"{P}.properties[b].items: Required value: must have a schema if x-kubernetes-list-type "
        "is map",
    ]


def test_map_list_keys_are_required_or_defaulted_and_not_nullable() -> None:
    item = {
        "type": "object",
        "nullable": True,
        "required": ["a"],
        "properties": {
            "a": {"type": "string"},
            "b": {"type": "string", "default": "x"},
            "c": {"type": "string", "nullable": True},
        },
    }
    got = rules(obj(l=map_list(["a", "b", "c"], item)))
    w = f"{P}.properties[l].items"
    assert got == [
        f"{w}.nullable: Forbidden: cannot be nullable when x-kubernetes-list-type is map",
        f"{w}.properties[c].default: Required value: this property is in "
        "x-kubernetes-list-map-keys, so it must have a default or be a required property",
        f"{w}.properties[c].nullable: Forbidden: this property is in x-kubernetes-list-map-keys, "
        "so it cannot be nullable",
    ]
    assert rules(obj(l=map_list(["a", "b", "c"], item)), require_map_list_keys_map_set=False) == []


def test_rules_apply_inside_every_kind_of_child() -> None:
    bad = {"type": "str"}
    got = rules(
        {
            "type": "object",
            "properties": {"m": {"type": "object", "additionalProperties": bad}},
            "not": bad,
            "allOf": [bad],
            "items": bad,
        },
        require_valid_property_type=True,
    )
    assert [g.split(":")[0] for g in got] == [
        f"{P}.properties[m].additionalProperties.type",
        f"{P}.not.type",
        f"{P}.allOf[0].type",
        f"{P}.items.type",
    ]
