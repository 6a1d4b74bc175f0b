"""Defaulting and null dropping, against Kubernetes v1.36's defaulting/algorithm_test.go.

The cases (object in, schema, object out) are Kubernetes' own; their schemas are written here
as JSONSchemaProps mappings.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kstore.api.structural import build_structural, default, drop_nulls


def defaulted(doc: str, schema: dict[str, Any] | None) -> Any:
    obj = json.loads(doc)
    default(obj, build_structural(schema) if schema is not None else None)
    return obj


def prop_defaults(**values: Any) -> dict[str, Any]:
    return {"properties": {k: {"default": v} for k, v in values.items()}}


@pytest.mark.parametrize(
    ("doc", "schema", "expected"),
    [
        ("null", None, "null"),
        ("4", {"default": "foo"}, "4"),
        ("[1,2]", {"items": {"default": "foo"}}, "[1,2]"),
        (
            '[{"a":1},{"b":1},{"c":1}]',
            {"items": prop_defaults(a="A", b="B", c="C")},
            '[{"a":1,"b":"B","c":"C"},{"a":"A","b":1,"c":"C"},{"a":"A","b":"B","c":1}]',
        ),
        (
            '{"array":[{"a":1},{"b":2}],"object":{"a":1},'
            '"additionalProperties":{"x":{"a":1},"y":{"b":2}}}',
            {
                "properties": {
                    "array": {"items": prop_defaults(a="A", b="B")},
                    "object": prop_defaults(a="N", b="O"),
                    "additionalProperties": {
                        "additionalProperties": prop_defaults(a="alpha", b="beta")
                    },
                    "foo": {"default": "bar"},
                }
            },
            '{"array":[{"a":1,"b":"B"},{"a":"A","b":2}],"object":{"a":1,"b":"O"},'
            '"additionalProperties":{"x":{"a":1,"b":"beta"},"y":{"a":"alpha","b":2}},"foo":"bar"}',
        ),
        (
            '[{},{"a":1},{"a":0},{"a":0.0},{"a":""},{"a":null},{"a":[]},{"a":{}}]',
            {"items": prop_defaults(a="A")},
            '[{"a":"A"},{"a":1},{"a":0},{"a":0.0},{"a":""},{"a":"A"},{"a":[]},{"a":{}}]',
        ),
        ("[null]", {"nullable": True, "items": prop_defaults(a="A")}, "[null]"),
        ("[null]", {"items": {"default": "A"}}, '["A"]'),
        ('{"a": null}', {"properties": {"a": {"nullable": True, "default": "A"}}}, '{"a": null}'),
        ('{"a": null}', {"properties": {"a": {"default": "A"}}}, '{"a": "A"}'),
        (
            '{"a": null}',
            {"additionalProperties": {"nullable": True, "default": "A"}},
            '{"a": null}',
        ),
        ('{"a": null}', {"additionalProperties": {"default": "A"}}, '{"a": "A"}'),
        ('{"a": null}', {"additionalProperties": True}, '{"a": null}'),
    ],
)
def test_defaulting_matches_kubernetes(doc: str, schema: Any, expected: str) -> None:
    assert defaulted(doc, schema) == json.loads(expected)


def test_defaults_go_only_where_the_parent_exists() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {"replicas": {"type": "integer", "default": 1}},
            }
        },
    }
    assert defaulted("{}", schema) == {}
    assert defaulted('{"spec": {}}', schema) == {"spec": {"replicas": 1}}


def test_a_defaulted_object_is_defaulted_inside() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "default": {},
                "properties": {"replicas": {"type": "integer", "default": 1}},
            }
        },
    }
    assert defaulted("{}", schema) == {"spec": {"replicas": 1}}


def test_defaults_are_deep_copies() -> None:
    tree = build_structural(
        {"type": "object", "properties": {"m": {"type": "object", "default": {"k": ["v"]}}}}
    )
    first: dict[str, Any] = {}
    second: dict[str, Any] = {}
    default(first, tree)
    default(second, tree)
    first["m"]["k"].append("changed")
    assert second == {"m": {"k": ["v"]}}
    assert tree.properties["m"].default == {"k": ["v"]}


def test_default_null_is_no_default() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "default": None}}}
    assert defaulted("{}", schema) == {}


def test_drop_nulls_removes_non_nullable_nulls_without_default() -> None:
    tree = build_structural(
        {
            "type": "object",
            "properties": {
                "plain": {"type": "string"},
                "nullable": {"type": "string", "nullable": True},
                "defaulted": {"type": "string", "default": "d"},
                "list": {"type": "array", "items": {"type": "object", "properties": {"x": {}}}},
                "map": {"type": "object", "additionalProperties": {"type": "string"}},
            },
        }
    )
    obj: dict[str, Any] = {
        "plain": None,
        "nullable": None,
        "defaulted": None,
        "unknown": None,
        "list": [{"x": None}, None],
        "map": {"k": None},
    }
    drop_nulls(obj, tree)
    # Unknown fields have no schema (pruning removes them); list items are never removed.
    assert obj == {
        "nullable": None,
        "defaulted": None,
        "unknown": None,
        "list": [{}, None],
        "map": {},
    }
    default(obj, tree)
    assert obj["defaulted"] == "d"
