"""List-type uniqueness, as Kubernetes v1.36's listtype/validation.go reports it.

Paths and which duplicates are reported come from listtype/validation_test.go (for
``["a","a","b","c","d","c"]`` only indexes 1 and 5); the message bodies are field.Duplicate's,
as real API servers print them, e.g. ``spec.ports[2]: Duplicate value: {"key":"value"}``.
"""

from __future__ import annotations

from typing import Any

from kstore.api.structural import build_structural, validate_list_types
from kstore.api.validation.field import Path


def schema(**props: Any) -> Any:
    return build_structural({"type": "object", "properties": props})


SET = {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}


def rendered(obj: Any, tree: Any, path: Path | None = None) -> list[str]:
    return [f"{c.field}: {c.message}" for c in validate_list_types(obj, tree, path)]


def test_set_reports_each_value_once_at_its_second_occurrence() -> None:
    tree = schema(array=SET)
    assert rendered({"array": ["a", "a", "b", "c", "d", "c"]}, tree) == [
        'array[1]: Duplicate value: "a"',
        'array[5]: Duplicate value: "c"',
    ]
    assert rendered({"array": ["a", "a", "a"]}, tree) == ['array[1]: Duplicate value: "a"']
    assert rendered({"array": ["a", "b"]}, tree) == []


def test_set_compares_numbers_as_decoded_go_values() -> None:
    tree = schema(array={"type": "array", "x-kubernetes-list-type": "set", "items": {}})
    # int64 1, float64 1.0 and bool true are different values to Go.
    assert rendered({"array": [1, 1.0, True, 1]}, tree) == ["array[3]: Duplicate value: 1"]


def test_set_of_objects_compares_whole_items() -> None:
    tree = schema(
        array={
            "type": "array",
            "x-kubernetes-list-type": "set",
            "items": {"type": "object", "x-kubernetes-map-type": "atomic"},
        }
    )
    assert rendered({"array": [{"a": 1, "b": 2}, {"b": 2, "a": 1}]}, tree) == [
        'array[1]: Duplicate value: {"a":1,"b":2}'
    ]


def map_list(*keys: str) -> dict[str, Any]:
    return {
        "type": "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": list(keys),
        "items": {
            "type": "object",
            "properties": {"key": {"type": "string"}, "port": {"type": "integer"}},
        },
    }


def test_map_list_duplicate_shows_only_the_key() -> None:
    tree = schema(spec={"type": "object", "properties": {"ports": map_list("key")}})
    obj = {"spec": {"ports": [{"key": "value"}, {"key": "other"}, {"key": "value", "port": 1}]}}
    causes = validate_list_types(obj, tree)
    assert [(c.type, c.field, c.message) for c in causes] == [
        ("FieldValueDuplicate", "spec.ports[2]", 'Duplicate value: {"key":"value"}')
    ]


def test_map_list_items_without_key_collide_as_empty_keys() -> None:
    tree = schema(ports=map_list("key"))
    assert rendered({"ports": [{"port": 1}, None, {"port": 2}]}, tree) == [
        "ports[1]: Duplicate value: {}"
    ]


def test_map_list_with_several_keys() -> None:
    tree = schema(ports=map_list("key", "port"))
    obj = {"ports": [{"key": "a", "port": 1}, {"key": "a", "port": 2}, {"port": 1, "key": "a"}]}
    assert rendered(obj, tree) == ['ports[2]: Duplicate value: {"key":"a","port":1}']


def test_map_list_items_must_be_objects() -> None:
    tree = schema(ports=map_list("key"))
    assert rendered({"ports": [{"key": "a"}, "x", 3]}, tree) == [
        'ports[1]: Invalid value: "x": must be an object for an array of list-type map'
    ]


def test_lists_are_found_under_additional_properties_and_items() -> None:
    tree = schema(
        m={"type": "object", "additionalProperties": SET},
        nested={"type": "array", "items": SET},
    )
    obj = {"m": {"k": ["x", "x"]}, "nested": [["a"], ["b", "b"]]}
    assert rendered(obj, tree, Path("spec")) == [
        'spec.m[k][1]: Duplicate value: "x"',
        'spec.nested[1][1]: Duplicate value: "b"',
    ]


def test_atomic_lists_may_repeat() -> None:
    tree = schema(a={"type": "array", "items": {"type": "string"}})
    assert rendered({"a": ["x", "x"]}, tree) == []
