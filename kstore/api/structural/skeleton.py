"""Derived trees: unfolded extensions, skeletons without value validations, OpenAPI form.

Kubernetes derives these from a structural schema when it publishes a CRD's OpenAPI and when it
builds validators (unfold.go, skeleton.go, kubeopenapi.go); each function returns a new tree
and leaves its argument alone (trees are shared):

- :func:`unfold`: every ``x-kubernetes-int-or-string`` node gets the ``anyOf`` of ``integer``
  and ``string`` it stands for: as its ``anyOf`` when it has none, else prepended to its
  ``allOf`` as ``{anyOf: [...]}``; nodes already spelling that pattern are left as they are;
- :func:`strip_value_validations` and :func:`strip_nullable`: the tree without value
  validations, or with ``nullable`` false everywhere;
- :func:`to_openapi`: the tree back as a JSONSchemaProps mapping (``ToKubeOpenAPI``): faithful
  for everything the tree keeps, so ``build_structural(to_openapi(t))`` equals ``t``.

A derived node keeps the ``raw`` mapping of the node it was derived from.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any, Final

from kstore.api.structural.model import Structural

__all__ = ["strip_nullable", "strip_value_validations", "to_openapi", "unfold"]

_INT_OR_STRING: Final = ({"type": "integer"}, {"type": "string"})


def _map(tree: Structural, node_fn: Callable[[Structural], Structural]) -> Structural:
    """Apply ``node_fn`` to every node, children first; unchanged subtrees stay shared."""
    props = {k: _map(v, node_fn) for k, v in tree.properties.items()}
    items = _map(tree.items, node_fn) if tree.items is not None else None
    ap = tree.additional_properties
    new_ap = _map(ap, node_fn) if isinstance(ap, Structural) else ap
    same = (
        items is tree.items
        and new_ap is ap
        and all(props[k] is v for k, v in tree.properties.items())
    )
    node = tree
    if not same:
        node = replace(
            tree,
            properties=MappingProxyType(props) if props else tree.properties,
            items=items,
            additional_properties=new_ap,
        )
    return node_fn(node)


def _is_int_or_string_pattern(clauses: Any) -> bool:
    return (
        isinstance(clauses, list)
        and len(clauses) == 2
        and [dict(c) if isinstance(c, Mapping) else c for c in clauses] == list(_INT_OR_STRING)
    )


def _unfold_node(node: Structural) -> Structural:
    if not node.int_or_string:
        return node
    v = node.validations
    all_of = v.get("allOf")
    first_any_of = (
        all_of[0].get("anyOf")
        if isinstance(all_of, list) and all_of and isinstance(all_of[0], Mapping)
        else None
    )
    if _is_int_or_string_pattern(v.get("anyOf")) or _is_int_or_string_pattern(first_any_of):
        return node
    new = dict(v)
    pattern = [dict(c) for c in _INT_OR_STRING]
    if not v.get("anyOf"):  # Go appends clauses, so an empty anyOf is none
        new["anyOf"] = pattern
    else:
        new["allOf"] = [{"anyOf": pattern}, *(all_of or [])]
    return replace(node, validations=MappingProxyType(new))


def unfold(tree: Structural) -> Structural:
    """The tree with ``x-kubernetes-int-or-string`` spelled out as Kubernetes' Unfold does."""
    return _map(tree, _unfold_node)


def strip_value_validations(tree: Structural) -> Structural:
    return _map(
        tree, lambda n: replace(n, validations=MappingProxyType({})) if n.validations else n
    )


def strip_nullable(tree: Structural) -> Structural:
    return _map(tree, lambda n: replace(n, nullable=False) if n.nullable else n)


def to_openapi(tree: Structural) -> dict[str, Any]:
    """The JSONSchemaProps mapping of ``tree`` (``ToKubeOpenAPI``)."""
    out: dict[str, Any] = {}
    if tree.type:
        out["type"] = tree.type
    if tree.nullable:
        out["nullable"] = True
    if tree.description:
        out["description"] = tree.description
    if tree.title:
        out["title"] = tree.title
    if tree.default is not None:
        out["default"] = tree.default
    for key in ("externalDocs", "example"):
        if tree.raw.get(key) is not None:
            out[key] = tree.raw[key]
    if tree.items is not None:
        out["items"] = to_openapi(tree.items)
    if tree.properties:
        out["properties"] = {k: to_openapi(v) for k, v in tree.properties.items()}
    ap = tree.additional_properties
    if ap is not None:
        out["additionalProperties"] = to_openapi(ap) if isinstance(ap, Structural) else ap
    if tree.preserve_unknown_fields:
        out["x-kubernetes-preserve-unknown-fields"] = True
    if tree.embedded_resource:
        out["x-kubernetes-embedded-resource"] = True
    if tree.int_or_string:
        out["x-kubernetes-int-or-string"] = True
    if tree.list_map_keys:
        out["x-kubernetes-list-map-keys"] = list(tree.list_map_keys)
    if tree.list_type is not None:
        out["x-kubernetes-list-type"] = tree.list_type
    if tree.map_type is not None:
        out["x-kubernetes-map-type"] = tree.map_type
    out.update(tree.validations)
    if tree.x_validations:
        out["x-kubernetes-validations"] = [dict(r) for r in tree.x_validations]
    return out
