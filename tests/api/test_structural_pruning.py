"""Pruning, against the cases of Kubernetes v1.36's pruning/algorithm_test.go.

Those cases give a JSON object, a structural schema, the pruned object and the sorted list of
pruned paths; the schemas are written here as JSONSchemaProps mappings. Kubernetes' pruning
alone leaves ``metadata`` untouched (``object_meta=False``); the ObjectMeta pruning that its
decoding adds is tested separately.
"""

from __future__ import annotations

import json
from typing import Any

from kstore.api.structural import build_structural, prune

OBJ = {"type": "object"}


def run(
    doc: str, schema: dict[str, Any] | None, root: bool = False, **kw: Any
) -> tuple[Any, list[str]]:
    obj = json.loads(doc)
    tree = build_structural(schema) if schema is not None else None
    pruned = prune(obj, tree, root, **kw)
    return obj, pruned


def test_object_array_prunes_undeclared_item_fields() -> None:
    schema = {"type": "array", "items": {"type": "object", "properties": {"a": {}, "c": {}}}}
    obj, pruned = run('[{"a":1},{"b":1},{"a":1,"b":2,"c":3}]', schema, object_meta=False)
    assert obj == json.loads('[{"a":1},{},{"a":1,"c":3}]')
    assert pruned == ["[1].b", "[2].b"]


def test_without_schema_every_field_is_pruned() -> None:
    obj, pruned = run('[{"a":1},{"b":1},{"a":1,"b":2,"c":3}]', None, object_meta=False)
    assert obj == [{}, {}, {}]
    assert pruned == ["[0].a", "[1].b", "[2].a", "[2].b", "[2].c"]


def test_object_array_object() -> None:
    schema = {
        "type": "object",
        "properties": {
            "array": {
                "type": "array",
                "items": {"type": "object", "properties": {"a": {}, "c": {}}},
            },
            "specified": {"type": "object", "properties": {"a": {}, "c": {}}},
        },
    }
    obj, pruned = run(
        '{"array":[{"a":1},{"b":1},{"a":1,"b":2,"c":3}],"unspecified":{"a":1},'
        '"specified":{"a":1,"b":2,"c":3}}',
        schema,
        object_meta=False,
    )
    assert obj == json.loads('{"array":[{"a":1},{},{"a":1,"c":3}],"specified":{"a":1,"c":3}}')
    assert pruned == ["array[1].b", "array[2].b", "specified.b", "unspecified"]


def test_nested_preserve_unknown_fields() -> None:
    preserving = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    ap_schema = {"type": "object", "properties": {"specified": {"type": "object"}}}
    schema = {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
        "properties": {
            "alpha": {"type": "string"},
            "beta": {"type": "number"},
            "pruning": {
                "type": "object",
                "properties": {"preserving": preserving, "pruning": {"type": "object"}},
            },
            "preserving": {
                "type": "object",
                "x-kubernetes-preserve-unknown-fields": True,
                "properties": {
                    "preserving": preserving,
                    "preservingUnknownType": {"x-kubernetes-preserve-unknown-fields": True},
                    "pruning": {"type": "object"},
                },
            },
            "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields": {
                "type": "object",
                "x-kubernetes-preserve-unknown-fields": True,
                "additionalProperties": ap_schema,
            },
            "preservingAdditionalPropertiesKeyPruneValues": {
                "type": "object",
                "additionalProperties": ap_schema,
            },
        },
    }
    doc = """{
      "unspecified":"bar", "alpha": "abc", "beta": 42.0,
      "unspecifiedObject": {"unspecified": "bar"},
      "pruning": {"unspecified": "bar", "unspecifiedObject": {"unspecified": "bar"},
                  "pruning": {"unspecified": "bar"}, "apiVersion": "unknown",
                  "preserving": {"unspecified": "bar"}},
      "preserving": {"unspecified": "bar", "unspecifiedObject": {"unspecified": "bar"},
                     "pruning": {"unspecified": "bar"}, "preserving": {"unspecified": "bar"},
                     "preservingUnknownType": [{"foo":true},{"bar":true}]},
      "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields":
          {"foo": {"specified": {"unspecified":"bar"}, "unspecified": "bar"}},
      "preservingAdditionalPropertiesKeyPruneValues":
          {"foo": {"specified": {"unspecified":"bar"}, "unspecified": "bar"}}
    }"""
    obj, pruned = run(doc, schema, object_meta=False)
    assert obj == json.loads(
        """{
      "unspecified":"bar", "alpha": "abc", "beta": 42.0,
      "unspecifiedObject": {"unspecified": "bar"},
      "pruning": {"pruning": {}, "preserving": {"unspecified": "bar"}},
      "preserving": {"unspecified": "bar", "unspecifiedObject": {"unspecified": "bar"},
                     "pruning": {}, "preserving": {"unspecified": "bar"},
                     "preservingUnknownType": [{"foo":true},{"bar":true}]},
      "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields":
          {"foo": {"specified": {}}},
      "preservingAdditionalPropertiesKeyPruneValues": {"foo": {"specified": {}}}
    }"""
    )
    assert pruned == [
        "preserving.pruning.unspecified",
        "preservingAdditionalPropertiesKeyPruneValues.foo.specified.unspecified",
        "preservingAdditionalPropertiesKeyPruneValues.foo.unspecified",
        "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields.foo.specified.unspecified",
        "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields.foo.unspecified",
        "pruning.apiVersion",
        "pruning.pruning.unspecified",
        "pruning.unspecified",
        "pruning.unspecifiedObject",
    ]


def test_additional_properties_schema_prunes_inside_values() -> None:
    schema = {"properties": {"a": {}, "c": {"additionalProperties": {"type": "integer"}}}}
    obj, pruned = run('{"a":1,"b":1,"c":{"a":1,"b":2,"c":{"a":1}}}', schema, object_meta=False)
    assert obj == json.loads('{"a":1,"c":{"a":1,"b":2,"c":{}}}')
    assert pruned == ["b", "c.c.a"]


def test_additional_properties_false_keeps_keys_but_empties_their_objects() -> None:
    schema = {"properties": {"a": {}, "c": {"additionalProperties": False}}}
    obj, pruned = run(
        '{"a":1,"b":1,"c":{"a":1,"b":2,"c":{"a":1, "apiVersion": "unknown"}}}',
        schema,
        object_meta=False,
    )
    assert obj == json.loads('{"a":1,"c":{"a":1,"b":2,"c":{}}}')
    assert pruned == ["b", "c.c.a", "c.c.apiVersion"]


EMBEDDED_DOC = """{
  "apiVersion": "foo/v1", "kind": "Foo",
  "metadata": {"name": "instance", "unspecified": "bar"},
  "unspecified":"bar",
  "pruned": {"apiVersion": "foo/v1", "kind": "Foo", "unspecified": "bar",
             "metadata": {"name": "instance", "unspecified": "bar"},
             "spec": {"unspecified": "bar"}},
  "preserving": {"apiVersion": "foo/v1", "kind": "Foo", "unspecified": "bar",
                 "metadata": {"name": "instance", "unspecified": "bar"},
                 "spec": {"unspecified": "bar"}},
  "nested": {"apiVersion": "foo/v1", "kind": "Foo", "unspecified": "bar",
             "metadata": {"name": "instance", "unspecified": "bar"},
             "spec": {"unspecified": "bar",
                      "embedded": {"apiVersion": "foo/v1", "kind": "Foo", "unspecified": "bar",
                                   "metadata": {"name": "instance", "unspecified": "bar"},
                                   "spec": {"unspecified": "bar"}}}}
}"""

EMBEDDED_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pruned": {
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "properties": {"spec": OBJ},
        },
        "preserving": {
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "x-kubernetes-preserve-unknown-fields": True,
        },
        "nested": {
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "properties": {
                "spec": {
                    "type": "object",
                    "properties": {
                        "embedded": {
                            "type": "object",
                            "x-kubernetes-embedded-resource": True,
                            "properties": {"spec": OBJ},
                        }
                    },
                }
            },
        },
    },
}

EMBEDDED_PRUNED = [
    "nested.spec.embedded.spec.unspecified",
    "nested.spec.embedded.unspecified",
    "nested.spec.unspecified",
    "nested.unspecified",
    "pruned.spec.unspecified",
    "pruned.unspecified",
    "unspecified",
]


def test_embedded_resources_keep_type_and_metadata() -> None:
    obj, pruned = run(EMBEDDED_DOC, EMBEDDED_SCHEMA, False, object_meta=False)
    meta = {"name": "instance", "unspecified": "bar"}
    # Not a resource root: the top-level apiVersion/kind/metadata go, without being reported.
    assert set(obj) == {"pruned", "preserving", "nested"}
    assert obj["pruned"] == {"apiVersion": "foo/v1", "kind": "Foo", "metadata": meta, "spec": {}}
    assert obj["preserving"]["unspecified"] == "bar"
    assert obj["nested"]["spec"]["embedded"]["spec"] == {}
    assert obj["nested"]["spec"]["embedded"]["metadata"] == meta
    assert pruned == EMBEDDED_PRUNED


def test_resource_root_keeps_type_and_metadata() -> None:
    obj, pruned = run(EMBEDDED_DOC, EMBEDDED_SCHEMA, True, object_meta=False)
    assert obj["apiVersion"] == "foo/v1"
    assert obj["kind"] == "Foo"
    assert obj["metadata"] == {"name": "instance", "unspecified": "bar"}
    assert pruned == EMBEDDED_PRUNED


def test_object_meta_pruning_reports_unknown_metadata_fields() -> None:
    obj, pruned = run(EMBEDDED_DOC, EMBEDDED_SCHEMA, True)
    assert obj["metadata"] == {"name": "instance"}
    assert obj["nested"]["spec"]["embedded"]["metadata"] == {"name": "instance"}
    # Kubernetes' order: the root's metadata (decoded first), then the pruned schema fields,
    # then the embedded resources' metadata (coerced last).
    assert pruned == [
        "metadata.unspecified",
        *EMBEDDED_PRUNED,
        "nested.metadata.unspecified",
        "nested.spec.embedded.metadata.unspecified",
        "preserving.metadata.unspecified",
        "pruned.metadata.unspecified",
    ]


def test_object_meta_pruning_looks_into_owner_references_and_managed_fields() -> None:
    obj: dict[str, Any] = {
        "apiVersion": "a/v1",
        "kind": "A",
        "metadata": {
            "name": "x",
            "Name": "case matters",
            "ownerReferences": [{"apiVersion": "v1", "kind": "K", "name": "n", "uid": "u", "x": 1}],
            "managedFields": [{"manager": "m", "fieldsV1": {"f:spec": {}}, "y": 2}],
        },
    }
    pruned = prune(obj, build_structural({"type": "object"}))
    assert pruned == [
        "metadata.Name",
        "metadata.managedFields[0].y",
        "metadata.ownerReferences[0].x",
    ]
    assert obj["metadata"]["managedFields"] == [{"manager": "m", "fieldsV1": {"f:spec": {}}}]


def test_status_is_pruned_when_the_schema_does_not_declare_it() -> None:
    schema = build_structural({"type": "object", "properties": {"spec": {"type": "object"}}})
    obj = {"apiVersion": "a/v1", "kind": "A", "metadata": {}, "spec": {"x": 1}, "status": {"y": 2}}
    assert prune(obj, schema) == ["spec.x", "status"]
    assert obj == {"apiVersion": "a/v1", "kind": "A", "metadata": {}, "spec": {}}


def test_scalars_and_null_are_left_alone() -> None:
    assert run("4", {}, object_meta=False) == (4, [])
    assert run("null", None, object_meta=False) == (None, [])
