"""Building a :class:`~kstore.api.structural.model.Structural` from a JSONSchemaProps mapping.

Follows Kubernetes' ``schema.NewStructural`` (convert.go): the first schema feature a structural
schema cannot carry stops the build, and the CRD validation reports it on the
``openAPIV3Schema`` path as ``Invalid value: "": <message>``, with Kubernetes' messages:

- ``OpenAPIV3Schema 'id' is not supported`` (likewise ``'schema'`` for ``$schema``, ``'$ref'``,
  ``'patternProperties'``, ``'dependencies'``, ``'additionalItems'``, ``'definitions'``);
- ``OpenAPIV3Schema 'items' must be a schema, but is an array``;
- ``internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined``.

The checks run in Kubernetes' order: a node's unsupported fields, then its value validations
(``not``, ``allOf``, ``anyOf``, ``oneOf``, each checked like a node), then its extensions, then
``items``, ``properties`` (in mapping order, where Go's order is random) and
``additionalProperties``.

A schema whose shape is not JSONSchemaProps at all (a property that is not an object, say) is
rejected by Kubernetes while decoding the CRD, before any of this; here it is reported on the
same path with a message of kstore's own, naming the offending node.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from kstore.api.structural.model import VALUE_VALIDATION_KEYS, Structural
from kstore.api.validation.field import Path, invalid
from kstore.errors import Cause

__all__ = ["StructuralBuildError", "build_structural", "new_structural"]

# Schema features NewStructural refuses, in the order it checks them, with the name it uses.
_UNSUPPORTED: Final = (
    ("id", "id"),
    ("$schema", "schema"),
    ("$ref", "$ref"),
    ("patternProperties", "patternProperties"),
    ("dependencies", "dependencies"),
)
_NESTED_CLAUSES: Final = ("allOf", "anyOf", "oneOf")


class StructuralBuildError(ValueError):
    """The schema cannot be represented structurally; ``str(error)`` is Kubernetes' message."""


def new_structural(
    schema: Mapping[str, Any] | None, path: Path
) -> tuple[Structural | None, list[Cause]]:
    """The structural tree of ``schema`` (an ``openAPIV3Schema``), or the cause that stops it.

    ``path`` is the ``openAPIV3Schema`` field path the cause is reported on. A missing schema
    gives ``(None, [])``, as ``NewStructural(nil)`` does.
    """
    if schema is None:
        return None, []
    try:
        return build_structural(schema), []
    except StructuralBuildError as exc:
        return None, [invalid(path, "", str(exc))]


def build_structural(schema: Mapping[str, Any]) -> Structural:
    """The structural tree of ``schema``; raises :class:`StructuralBuildError`."""
    return _build(_node(schema, "openAPIV3Schema"))


def _node(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise StructuralBuildError(f"{where} must be a schema object")
    return value


def _check_unsupported(node: Mapping[str, Any]) -> None:
    for key, name in _UNSUPPORTED:
        if node.get(key):
            raise StructuralBuildError(f"OpenAPIV3Schema '{name}' is not supported")
    if node.get("additionalItems") is not None:
        raise StructuralBuildError("OpenAPIV3Schema 'additionalItems' is not supported")
    if node.get("definitions"):
        raise StructuralBuildError("OpenAPIV3Schema 'definitions' is not supported")


def _check_value_validation(node: Mapping[str, Any]) -> None:
    if "not" in node and node["not"] is not None:
        _check_nested(_node(node["not"], "not"))
    for clause in _NESTED_CLAUSES:
        for sub in node.get(clause) or ():
            _check_nested(_node(sub, clause))


def _check_extensions(node: Mapping[str, Any]) -> None:
    if node.get("x-kubernetes-preserve-unknown-fields") is False:
        raise StructuralBuildError(
            "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined"
        )


def _items_schema(node: Mapping[str, Any]) -> Mapping[str, Any] | None:
    items = node.get("items")
    if items is None:
        return None
    if isinstance(items, list):
        if items:
            raise StructuralBuildError("OpenAPIV3Schema 'items' must be a schema, but is an array")
        return None
    return _node(items, "items")


def _properties(node: Mapping[str, Any]) -> Mapping[str, Any]:
    props = node.get("properties")
    if props is None:
        return {}
    if not isinstance(props, Mapping):
        raise StructuralBuildError("properties must be an object")
    return props


def _check_nested(node: Mapping[str, Any]) -> None:
    """A value-validation clause: checked like a node, never part of the tree."""
    _check_unsupported(node)
    _check_value_validation(node)
    _check_extensions(node)
    items = _items_schema(node)
    if items is not None:
        _check_nested(items)
    for name, sub in _properties(node).items():
        _check_nested(_node(sub, f"properties[{name}]"))
    additional = node.get("additionalProperties")
    if isinstance(additional, Mapping):
        _check_nested(additional)


def _build(node: Mapping[str, Any]) -> Structural:
    _check_unsupported(node)
    _check_value_validation(node)
    _check_extensions(node)

    items_node = _items_schema(node)
    items = _build(items_node) if items_node is not None else None

    props_node = _properties(node)
    properties: Mapping[str, Structural] = (
        MappingProxyType(
            {name: _build(_node(sub, f"properties[{name}]")) for name, sub in props_node.items()}
        )
        if props_node
        else MappingProxyType({})
    )

    additional: Structural | bool | None = None
    raw_additional = node.get("additionalProperties")
    if isinstance(raw_additional, Mapping):
        additional = _build(raw_additional)
    elif isinstance(raw_additional, bool):
        additional = raw_additional
    elif raw_additional is not None:
        raise StructuralBuildError("additionalProperties must be a schema object or a boolean")

    list_type = node.get("x-kubernetes-list-type")
    map_type = node.get("x-kubernetes-map-type")
    embedded = node.get("x-kubernetes-embedded-resource") is True
    below = [*properties.values(), items, additional]
    has_embedded = embedded or any(
        isinstance(child, Structural) and child.has_embedded_resources for child in below
    )
    keyed = list_type in ("set", "map") or any(
        isinstance(child, Structural) and child.has_keyed_lists for child in below
    )
    defaulted = node.get("default") is not None or any(
        isinstance(child, Structural) and child.has_defaults for child in below
    )
    return Structural(
        type=_str(node, "type"),
        properties=properties,
        items=items,
        additional_properties=additional,
        default=node.get("default"),
        nullable=node.get("nullable") is True,
        description=_str(node, "description"),
        title=_str(node, "title"),
        preserve_unknown_fields=node.get("x-kubernetes-preserve-unknown-fields") is True,
        embedded_resource=embedded,
        int_or_string=node.get("x-kubernetes-int-or-string") is True,
        list_type=list_type if isinstance(list_type, str) else None,
        list_map_keys=tuple(node.get("x-kubernetes-list-map-keys") or ()),
        map_type=map_type if isinstance(map_type, str) else None,
        x_validations=tuple(node.get("x-kubernetes-validations") or ()),
        has_embedded_resources=has_embedded,
        has_keyed_lists=keyed,
        has_defaults=defaulted,
        validations=MappingProxyType({k: v for k, v in node.items() if k in VALUE_VALIDATION_KEYS}),
        raw=MappingProxyType(dict(node)),
    )


def _str(node: Mapping[str, Any], key: str) -> str:
    value = node.get(key, "")
    if not isinstance(value, str):
        raise StructuralBuildError(f"{key} must be a string")
    return value
