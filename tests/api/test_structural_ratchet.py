"""Ratcheting on CRD update: a rule the old CRD already broke is not enforced (validation.go)."""

from __future__ import annotations

from typing import Any

from kstore.api.structural import (
    SchemaRuleOptions,
    UpdateRequirements,
    schema_has,
    update_requirements,
    validate_crd_schema,
)
from kstore.api.validation.field import Path

ROOT = Path("spec", "versions").index(0).child("schema", "openAPIV3Schema")
GOOD: dict[str, Any] = {"type": "object", "properties": {"a": {"type": "string"}}}


def test_a_clean_old_crd_requires_everything() -> None:
    assert update_requirements([GOOD, None]) == UpdateRequirements()


def test_each_rule_broken_before_is_relaxed_alone() -> None:
    non_structural = {"type": "object", "properties": {"a": {}}}
    unpruned = {
        "type": "object",
        "properties": {"a": {"type": "object", "default": {"x": 1}, "properties": {}}},
    }
    bad_type = {"type": "object", "properties": {"a": {"type": "str"}}}
    granular_set = {
        "type": "object",
        "properties": {
            "a": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "object"}}
        },
    }
    nullable_key = {
        "type": "object",
        "properties": {
            "a": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["k"],
                "items": {"type": "object", "properties": {"k": {"type": "string"}}},
            }
        },
    }
    assert update_requirements([GOOD, non_structural]) == UpdateRequirements(
        require_structural=False
    )
    assert update_requirements([unpruned]) == UpdateRequirements(require_pruned_defaults=False)
    assert update_requirements([bad_type]).rule_options == SchemaRuleOptions(
        require_valid_property_type=False
    )
    assert update_requirements([granular_set]).rule_options == SchemaRuleOptions(
        require_atomic_set_type=False
    )
    assert update_requirements([nullable_key]).rule_options == SchemaRuleOptions(
        require_map_list_keys_map_set=False
    )


def test_relaxed_rules_are_not_reported() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "str"}, "b": {}}}
    strict = [c.field for c in validate_crd_schema(schema, ROOT)]
    assert strict == [
        f"{ROOT}.properties[b].type",
        f"{ROOT}.properties[a].type",
    ]
    relaxed = update_requirements([schema])
    assert (
        validate_crd_schema(
            schema,
            ROOT,
            require_structural=relaxed.require_structural,
            rule_options=relaxed.rule_options,
        )
        == []
    )


def test_schema_has_looks_into_every_kind_of_child() -> None:
    def marked(s: Any) -> bool:
        return s.get("title") == "here"

    for where in (
        {"items": {"title": "here"}},
        {"items": [{"title": "here"}]},
        {"not": {"title": "here"}},
        {"anyOf": [{"title": "here"}]},
        {"additionalProperties": {"title": "here"}},
        {"definitions": {"d": {"title": "here"}}},
        {"dependencies": {"d": {"title": "here"}}},
    ):
        assert schema_has({"type": "object", **where}, marked), where
    assert not schema_has(GOOD, marked)
