"""Pruning a schema's defaults, and whether an existing CRD has defaults that pruning changes.

Kubernetes (v1.36) only requires pruned defaults of a CRD update when the old CRD had none
unpruned (``requirePrunedDefaults``: a CRD stored before the rule existed can still be
updated). It decides with ``schemaHasUnprunedDefaults``: build the tree, require it to be
structural, prune every default (``defaulting.PruneDefaults``) and compare.

:func:`prune_defaults` places each default where it would land in a resource (the root object
around it, an ``additionalProperties`` value under the key ``*``, a list item as the only
item), coerces the embedded resources' type and object meta, dropping what is malformed,
prunes that resource with the whole schema, and reads the default back from where it was put
(gone entirely when pruned away). A default at the root that is not an object fails:
``failed to prune default value: object root default value must be of object type``.

Known difference: ObjectMeta is normalised as decoding and re-encoding it does for the cases
that matter to defaults (unknown and malformed fields dropped, empty values omitted); time
values are not re-formatted.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any, Final

from kstore.api.structural.builder import StructuralBuildError, build_structural
from kstore.api.structural.embedded import meta_field_error
from kstore.api.structural.invariants import validate_structural_tree
from kstore.api.structural.model import EMPTY, Structural
from kstore.api.structural.object_meta import prune_object_meta
from kstore.api.structural.pruning import prune
from kstore.api.validation.field import Path

__all__ = ["DefaultPruningError", "prune_defaults", "schema_has_unpruned_defaults"]

# A step from the root to a default: a property name, "*" for additionalProperties, or None
# for a list item.
_Step = str | None
_MISSING: Final = object()
# ObjectMeta fields Go writes even when empty (pointers): kept unless null.
_POINTER_FIELDS: Final = frozenset({"deletionGracePeriodSeconds", "deletionTimestamp"})


class DefaultPruningError(ValueError):
    """A default cannot be placed in an object; ``str(error)`` is Kubernetes' message."""


def prune_defaults(tree: Structural) -> Structural:
    """The tree with every default pruned as Kubernetes' PruneDefaults prunes it."""
    return _Pruner(tree).prune(tree, ())


def schema_has_unpruned_defaults(schema: Mapping[str, Any] | None) -> bool:
    """Whether pruning changes a default of this (old) schema; False when it cannot tell."""
    if schema is None or not _has_defaults(schema):
        return False
    try:
        tree = build_structural(schema)
    except StructuralBuildError:
        return False
    if validate_structural_tree(tree, Path("")):
        return False
    try:
        pruned = prune_defaults(tree)
    except DefaultPruningError:
        return False
    return pruned is not tree


def _has_defaults(s: Any) -> bool:
    if not isinstance(s, Mapping):
        return False
    if s.get("default") is not None:
        return True
    children: list[Any] = [s.get("items"), s.get("additionalProperties"), s.get("not")]
    for key in ("properties", "patternProperties", "definitions"):
        value = s.get(key)
        if isinstance(value, Mapping):
            children.extend(value.values())
    for key in ("allOf", "anyOf", "oneOf"):
        children.extend(s.get(key) or ())
    items = s.get("items")
    if isinstance(items, list):
        children.extend(items)
    return any(_has_defaults(c) for c in children)


class _Pruner:
    __slots__ = ("root",)

    def __init__(self, root: Structural) -> None:
        self.root = root

    def prune(self, s: Structural, steps: tuple[_Step, ...]) -> Structural:
        """``s`` with its defaults pruned; ``s`` itself when nothing changed."""
        changes: dict[str, Any] = {}
        if s.default is not None:
            value = self._pruned_default(s.default, steps)
            if value != s.default or type(value) is not type(s.default):
                changes["default"] = value
        ap = s.additional_properties_schema
        if ap is not None:
            new_ap = self.prune(ap, (*steps, "*"))
            if new_ap is not ap:
                changes["additional_properties"] = new_ap
        if s.items is not None:
            new_items = self.prune(s.items, (*steps, None))
            if new_items is not s.items:
                changes["items"] = new_items
        props = {k: self.prune(v, (*steps, k)) for k, v in s.properties.items()}
        if any(props[k] is not v for k, v in s.properties.items()):
            changes["properties"] = MappingProxyType(props)
        return replace(s, **changes) if changes else s

    def _pruned_default(self, value: Any, steps: tuple[_Step, ...]) -> Any:
        obj: Any = copy.deepcopy(value)
        for step in reversed(steps):
            obj = [obj] if step is None else {step: obj}
        if not isinstance(obj, dict):
            raise DefaultPruningError(
                "failed to prune default value: object root default value must be of object type"
            )
        root = self.root.with_embedded_resource()
        _coerce_dropping(obj, root)
        prune(obj, root, True, object_meta=False)
        found: Any = obj
        for step in steps:
            if step is None:
                if not isinstance(found, list):
                    raise DefaultPruningError(
                        "failed to prune default value: [] must be of array type"
                    )
                found = found[0] if found else _MISSING
            else:
                if not isinstance(found, dict):
                    raise DefaultPruningError(
                        f"failed to prune default value: .{step} must be of object type"
                    )
                found = found.get(step, _MISSING)
            if found is _MISSING:
                return None
        return found


def _coerce_dropping(x: Any, s: Structural | None) -> None:
    """Kubernetes' Coerce with DropInvalidFields: malformed type and object meta go away."""
    if s is None:
        return
    if isinstance(x, dict):
        if s.embedded_resource:
            for key in ("apiVersion", "kind"):
                if key in x and not isinstance(x[key], str):
                    del x[key]
            meta = x.get("metadata")
            if isinstance(meta, dict):
                _normalise_meta(meta)
        for k, v in list(x.items()):
            prop = s.properties.get(k)
            if prop is not None:
                _coerce_dropping(v, prop)
            elif s.additional_properties is not None:
                _coerce_dropping(v, s.additional_properties_schema or EMPTY)
    elif isinstance(x, list):
        for v in x:
            _coerce_dropping(v, s.items)


def _normalise_meta(meta: dict[str, Any]) -> None:
    prune_object_meta(meta, "metadata")
    for key in list(meta):
        if _dropped_by_decoding(key, meta[key]):
            del meta[key]


def _dropped_by_decoding(key: str, value: Any) -> bool:
    """Malformed (dropped field by field) or empty (omitted when ObjectMeta is re-encoded)."""
    if meta_field_error(key, value) is not None or value is None:
        return True
    return key not in _POINTER_FIELDS and value in ("", 0, {}, [])
