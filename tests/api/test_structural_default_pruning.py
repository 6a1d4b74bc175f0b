"""Pruning defaults (Kubernetes v1.36's defaulting.PruneDefaults) and the update ratchet.

Cases follow defaulting/prune_test.go's shape: defaults placed in the surrounding resource are
pruned with the whole schema, so fields the schema does not declare disappear from them, and
``schemaHasUnprunedDefaults`` (validation.go) tells whether an old CRD had such defaults.
"""

from __future__ import annotations

from typing import Any

import pytest

from kstore.api.structural import (
    DefaultPruningError,
    build_structural,
    prune_defaults,
    schema_has_unpruned_defaults,
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "a": {
            "type": "object",
            "default": {"x": 1, "unknown": 2},
            "properties": {"x": {"type": "integer"}},
        },
        "m": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "default": {"k": "v", "dropped": True},
                "properties": {"k": {"type": "string"}},
            },
        },
        "l": {
            "type": "array",
            "items": {
                "type": "object",
                "default": {"name": "n", "extra": 0},
                "properties": {"name": {"type": "string"}},
            },
        },
        "e": {
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "properties": {"spec": {"type": "object"}},
            "default": {
                "apiVersion": "v1",
                "kind": 5,
                "metadata": {"name": "n", "labels": {}, "unknown": 1, "namespace": 3},
                "spec": {},
                "status": {},
            },
        },
        "ok": {"type": "string", "default": "fine"},
    },
}


def test_defaults_are_pruned_in_their_surrounding_object() -> None:
    tree = build_structural(SCHEMA)
    pruned = prune_defaults(tree)
    props = pruned.properties
    assert props["a"].default == {"x": 1}
    assert props["m"].additional_properties_schema is not None
    assert props["m"].additional_properties_schema.default == {"k": "v"}
    assert props["l"].items is not None and props["l"].items.default == {"name": "n"}
    # Embedded resource: malformed kind and metadata fields dropped, empty ones omitted.
    assert props["e"].default == {"apiVersion": "v1", "metadata": {"name": "n"}, "spec": {}}
    # Unchanged subtrees are shared; the original is left alone.
    assert props["ok"] is tree.properties["ok"]
    assert tree.properties["a"].default == {"x": 1, "unknown": 2}


def test_pruned_defaults_stay_the_same_tree() -> None:
    tree = build_structural(
        {"type": "object", "properties": {"a": {"type": "string", "default": "x"}}}
    )
    assert prune_defaults(tree) is tree


def test_a_root_default_must_be_an_object() -> None:
    with pytest.raises(
        DefaultPruningError, match="object root default value must be of object type"
    ):
        prune_defaults(build_structural({"type": "object", "default": 1}))


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        (SCHEMA, True),
        ({"type": "object", "properties": {"a": {"type": "string", "default": "x"}}}, False),
        ({"type": "object", "properties": {"a": {"type": "string"}}}, False),
        # Not structural: Kubernetes cannot tell, so it does not relax the rule.
        ({"type": "object", "properties": {"a": {"default": {"b": 1}}}}, False),
    ],
)
def test_schema_has_unpruned_defaults(schema: dict[str, Any], expected: bool) -> None:
    assert schema_has_unpruned_defaults(schema) is expected
