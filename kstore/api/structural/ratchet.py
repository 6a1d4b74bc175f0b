"""Which schema rules an update of a CRD must meet, given the schemas it had before.

Kubernetes v1.36 never rejects an update for breaking a rule the stored CRD already broke
(its CRD update validation "ratchets" them), deciding per rule from the old CRD's schemas:

- structural schemas are required unless an old schema was not structural;
- pruned defaults are required unless an old schema had unpruned defaults
  (:func:`~.default_pruning.schema_has_unpruned_defaults`);
- valid property types unless an old schema had an unknown ``type``;
- atomic set items unless an old schema had a ``set`` list of non-atomic items;
- the map-list key and set/map item nullability rules unless an old schema broke them.

``schema_has`` walks every node the way Kubernetes' ``SchemaHas`` does: properties, items
(schema or array), ``allOf``/``anyOf``/``oneOf``/``not``, ``additionalProperties``,
``patternProperties``, ``additionalItems``, ``definitions`` and ``dependencies``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from kstore.api.structural.builder import StructuralBuildError, build_structural
from kstore.api.structural.default_pruning import schema_has_unpruned_defaults
from kstore.api.structural.invariants import validate_structural_tree
from kstore.api.structural.schema_rules import SchemaRuleOptions, map_list_keys_map_set_errors
from kstore.api.validation.field import Path

__all__ = [
    "UpdateRequirements",
    "schema_has",
    "schema_is_non_structural",
    "update_requirements",
]

_OPENAPI_TYPES: Final = frozenset({"array", "boolean", "integer", "number", "object", "string"})

Predicate = Callable[[Mapping[str, Any]], bool]


def schema_has(schema: Any, pred: Predicate) -> bool:
    """Whether ``pred`` holds for some node of ``schema``."""
    if not isinstance(schema, Mapping):
        return False
    if pred(schema):
        return True
    children: list[Any] = [schema.get("not")]
    items = schema.get("items")
    children.extend(items if isinstance(items, list) else [items])
    for key in ("allOf", "anyOf", "oneOf"):
        children.extend(schema.get(key) or ())
    for key in ("properties", "patternProperties", "definitions"):
        value = schema.get(key)
        if isinstance(value, Mapping):
            children.extend(value.values())
    for key in ("additionalProperties", "additionalItems"):
        value = schema.get(key)
        if isinstance(value, Mapping):
            children.append(value)
    dependencies = schema.get("dependencies")
    if isinstance(dependencies, Mapping):
        children.extend(d for d in dependencies.values() if isinstance(d, Mapping))
    return any(schema_has(child, pred) for child in children)


def schema_is_non_structural(schema: Mapping[str, Any] | None) -> bool:
    if schema is None:
        return False
    try:
        tree = build_structural(schema)
    except StructuralBuildError:
        return True
    return bool(validate_structural_tree(tree, Path("")))


def _non_atomic_set(s: Mapping[str, Any]) -> bool:
    items = s.get("items")
    if s.get("x-kubernetes-list-type") != "set" or not isinstance(items, Mapping):
        return False
    if items.get("type") == "array":
        nested = items.get("x-kubernetes-list-type")
        return nested is not None and nested != "atomic"
    if items.get("type") == "object":
        return items.get("x-kubernetes-map-type") != "atomic"
    return False


def _invalid_type(s: Mapping[str, Any]) -> bool:
    type_ = s.get("type")
    return bool(type_) and type_ not in _OPENAPI_TYPES


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateRequirements:
    """What an update must meet, from the old CRD's schemas (all true for a create)."""

    require_structural: bool = True
    require_pruned_defaults: bool = True
    rule_options: SchemaRuleOptions = field(default_factory=SchemaRuleOptions)


def update_requirements(old_schemas: Iterable[Mapping[str, Any] | None]) -> UpdateRequirements:
    """The ratcheted requirements for updating a CRD whose versions had ``old_schemas``."""
    schemas = [s for s in old_schemas if s is not None]
    return UpdateRequirements(
        require_structural=not any(schema_is_non_structural(s) for s in schemas),
        require_pruned_defaults=not any(schema_has_unpruned_defaults(s) for s in schemas),
        rule_options=SchemaRuleOptions(
            require_valid_property_type=not any(schema_has(s, _invalid_type) for s in schemas),
            require_atomic_set_type=not any(schema_has(s, _non_atomic_set) for s in schemas),
            require_map_list_keys_map_set=not any(
                schema_has(s, map_list_keys_map_set_errors) for s in schemas
            ),
        ),
    )
