"""The per-node rules of a CRD schema (``ValidateCustomResourceDefinitionOpenAPISchema``).

The CRD validation walks the raw ``openAPIV3Schema`` (every node: properties,
``additionalProperties``, ``items``, ``not``/``allOf``/``oneOf``/``anyOf``) and checks, per
node and in this order, with Kubernetes' messages:

- the standard validator: ``type`` one of the OpenAPI v3 types (``Unsupported value``), no
  ``default`` where defaults are forbidden (anywhere under the root's ``metadata``,
  ``apiVersion`` or ``kind``: ``must not be set in top-level metadata``; inside
  ``additionalProperties`` of a resource's meta fields: ``must not be set inside
  additionalProperties applying to object metadata``), no ``id``, ``additionalItems``,
  ``patternProperties``, ``definitions``, ``dependencies``, ``$ref`` (``... is not
  supported``), no ``type: null``, ``items`` not an array, no embedded resource inside resource
  meta;
- ``uniqueItems`` is never true; ``additionalProperties`` (other than ``true``) excludes
  ``properties``;
- after the children: ``x-kubernetes-preserve-unknown-fields`` is true or absent; the
  ``x-kubernetes-map-type`` and ``x-kubernetes-list-type`` declarations (right type, known
  values, set items atomic, map lists with object items, scalar, unique, declared keys that
  are required or defaulted and not nullable, items of set and map lists not nullable).

A key whose value is JSON ``null`` counts as absent, as it does when Kubernetes decodes the CRD
into its Go types (a nil pointer, map or slice).

The options are the CRD-create defaults of v1.36; an update keeps an option off when the old
CRD already broke that rule (Kubernetes' ratcheting), which the caller decides.

Known gap: the ``x-kubernetes-validations`` entries (rule, message, reason, fieldPath) are left
to the CEL package, which compiles them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from kstore.api.validation.field import (
    JSONValue,
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
)
from kstore.errors import Cause

__all__ = ["SchemaRuleOptions", "map_list_keys_map_set_errors", "validate_schema_rules"]

_OPENAPI_TYPES: Final = ("array", "boolean", "integer", "number", "object", "string")
_META_FIELDS: Final = frozenset({"metadata", "kind", "apiVersion"})
_UNSUPPORTED: Final = (
    ("id", "id is not supported"),
    ("additionalItems", "additionalItems is not supported"),
    ("patternProperties", "patternProperties is not supported"),
    ("definitions", "definitions is not supported"),
    ("dependencies", "dependencies is not supported"),
    ("$ref", "$ref is not supported"),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class SchemaRuleOptions:
    """Which of Kubernetes' ratcheted rules apply (all do when a CRD is created)."""

    allow_defaults: bool = True
    require_valid_property_type: bool = True
    require_atomic_set_type: bool = True
    require_map_list_keys_map_set: bool = True


@dataclass(frozen=True, slots=True)
class _Context:
    no_default: str | None  # None: defaults allowed; else the reason they are not ("" for none)
    inside_meta: bool


def validate_schema_rules(
    schema: Mapping[str, Any], path: Path, options: SchemaRuleOptions | None = None
) -> list[Cause]:
    """Every per-node rule broken in ``schema`` (an ``openAPIV3Schema`` at ``path``)."""
    opts = options or SchemaRuleOptions()
    out: list[Cause] = []
    start = _Context(None if opts.allow_defaults else "", False)
    _walk(schema, path, start, True, opts, out)
    return out


def _standard(
    s: Mapping[str, Any], path: Path, ctx: _Context, opts: SchemaRuleOptions
) -> list[Cause]:
    out: list[Cause] = []
    type_ = s.get("type")
    if opts.require_valid_property_type and type_ and type_ not in _OPENAPI_TYPES:
        out.append(not_supported(path.child("type"), type_, _OPENAPI_TYPES))
    # A JSON null decodes as an absent default (a nil pointer), here as everywhere.
    if s.get("default") is not None and ctx.no_default is not None:
        detail = "must not be set"
        if ctx.no_default:
            detail += " " + ctx.no_default
        out.append(forbidden(path.child("default"), detail))
    for key, message in _UNSUPPORTED:
        value = s.get(key)
        present = (
            value is not None if key in ("additionalItems", "$ref", "dependencies") else bool(value)
        )
        if present:
            out.append(forbidden(path.child(key), message))
    if type_ == "null":
        out.append(
            forbidden(
                path.child("type"), "type cannot be set to null, use nullable as an alternative"
            )
        )
    items = s.get("items")
    if isinstance(items, list) and items:
        out.append(forbidden(path.child("items"), "items must be a schema object and not an array"))
    if ctx.inside_meta and s.get("x-kubernetes-embedded-resource") is True:
        out.append(
            forbidden(
                path.child("x-kubernetes-embedded-resource"),
                "must not be used inside of resource meta",
            )
        )
    return out


def _walk(
    s: Any, path: Path, ctx: _Context, is_root: bool, opts: SchemaRuleOptions, out: list[Cause]
) -> None:
    if not isinstance(s, Mapping):
        return
    out.extend(_standard(s, path, ctx, opts))
    if s.get("uniqueItems") is True:
        out.append(
            forbidden(
                path.child("uniqueItems"),
                "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            )
        )
    props = s.get("properties")
    props = props if isinstance(props, Mapping) else {}
    additional = s.get("additionalProperties")
    if additional is not None:
        if props and additional is not True:
            out.append(
                forbidden(
                    path.child("additionalProperties"),
                    "additionalProperties and properties are mutual exclusive",
                )
            )
        sub = ctx
        if ctx.inside_meta:
            # Pruning cannot tell which keys a default under a map of meta would fill.
            sub = _Context("inside additionalProperties applying to object metadata", True)
        _walk(additional, path.child("additionalProperties"), sub, False, opts, out)
    embedded = s.get("x-kubernetes-embedded-resource") is True
    for name, prop in props.items():
        sub = ctx
        if (is_root or embedded) and name in _META_FIELDS:
            sub = _Context(f"in top-level {name}" if is_root else ctx.no_default, True)
        _walk(prop, path.child("properties").key(name), sub, False, opts, out)
    _walk(s.get("not"), path.child("not"), ctx, False, opts, out)
    for clause in ("allOf", "oneOf", "anyOf"):
        for i, sub_schema in enumerate(s.get(clause) or ()):
            _walk(sub_schema, path.child(clause).index(i), ctx, False, opts, out)
    items = s.get("items")
    if isinstance(items, Mapping):
        _walk(items, path.child("items"), ctx, False, opts, out)
    elif isinstance(items, list):
        for i, item in enumerate(items):
            _walk(item, path.child("items").index(i), ctx, False, opts, out)
    out.extend(_extension_rules(s, path, opts))


def _extension_rules(s: Mapping[str, Any], path: Path, opts: SchemaRuleOptions) -> list[Cause]:
    out: list[Cause] = []
    type_ = s.get("type") or ""
    if s.get("x-kubernetes-preserve-unknown-fields") is False:
        out.append(
            invalid(
                path.child("x-kubernetes-preserve-unknown-fields"),
                False,
                "must be true or undefined",
            )
        )
    map_type = s.get("x-kubernetes-map-type")
    if map_type is not None and type_ != "object":
        detail = "must be object if x-kubernetes-map-type is specified"
        out.append(
            invalid(path.child("type"), type_, detail)
            if type_
            else required(path.child("type"), detail)
        )
    if map_type is not None and map_type not in ("atomic", "granular"):
        out.append(
            not_supported(path.child("x-kubernetes-map-type"), map_type, ["atomic", "granular"])
        )

    list_type = s.get("x-kubernetes-list-type")
    items = s.get("items")
    item_schema = items if isinstance(items, Mapping) else None
    if list_type is not None and type_ != "array":
        detail = "must be array if x-kubernetes-list-type is specified"
        out.append(
            invalid(path.child("type"), type_, detail)
            if type_
            else required(path.child("type"), detail)
        )
    elif opts.require_atomic_set_type and list_type == "set" and item_schema is not None:
        out.extend(_atomic_set_items(item_schema, path))
    if list_type is not None and list_type not in ("atomic", "set", "map"):
        out.append(
            not_supported(path.child("x-kubernetes-list-type"), list_type, ["atomic", "set", "map"])
        )
    keys = s.get("x-kubernetes-list-map-keys") or []
    if keys:
        detail = "must be map if x-kubernetes-list-map-keys is non-empty"
        where = path.child("x-kubernetes-list-type")
        if list_type is None:
            out.append(required(where, detail))
        elif list_type != "map":
            out.append(invalid(where, list_type, detail))
    if list_type == "map":
        out.extend(_map_list(s, keys, items, item_schema, path))
    if opts.require_map_list_keys_map_set:
        out.extend(_map_list_keys_map_set(s, path))
    return out


def _atomic_set_items(item_schema: Mapping[str, Any], path: Path) -> list[Cause]:
    item_type = item_schema.get("type")
    detail = "must be atomic as item of a list with x-kubernetes-list-type=set"
    if item_type == "array":
        nested = item_schema.get("x-kubernetes-list-type")
        if nested is not None and nested != "atomic":
            return [invalid(path.child("items", "x-kubernetes-list-type"), nested, detail)]
    elif item_type == "object" and item_schema.get("x-kubernetes-map-type") != "atomic":
        # Kubernetes shows the items' list type here (usually unset: null), not the map type.
        shown = item_schema.get("x-kubernetes-list-type")
        return [invalid(path.child("items", "x-kubernetes-map-type"), JSONValue(shown), detail)]
    return []


def _map_list(
    s: Mapping[str, Any],
    keys: list[Any],
    items: Any,
    item_schema: Mapping[str, Any] | None,
    path: Path,
) -> list[Cause]:
    out: list[Cause] = []
    if not keys:
        out.append(
            required(
                path.child("x-kubernetes-list-map-keys"),
                "must not be empty if x-kubernetes-list-type is map",
            )
        )
    if items is None:
        out.append(
            required(path.child("items"), "must have a schema if x-kubernetes-list-type is map")
        )
    elif item_schema is None:
        out.append(
            invalid(
                path.child("items"),
                JSONValue(items),
                "must only have a single schema if x-kubernetes-list-type is map",
            )
        )
    if item_schema is None:
        return out
    item_type = item_schema.get("type") or ""
    if item_type != "object":
        out.append(
            invalid(
                path.child("items", "type"),
                item_type,
                "must be object if parent array's x-kubernetes-list-type is map",
            )
        )
        return out
    props = item_schema.get("properties")
    props = props if isinstance(props, Mapping) else {}
    seen: set[Any] = set()
    for key in keys:
        prop = props.get(key)
        if isinstance(prop, Mapping):
            if prop.get("type") in ("array", "object"):
                # Kubernetes shows the items' type ("object") here, not the key's.
                out.append(
                    invalid(
                        path.child("items", "properties").key(key).child("type"),
                        item_type,
                        "must be a scalar type if parent array's x-kubernetes-list-type is map",
                    )
                )
        else:
            out.append(
                invalid(
                    path.child("x-kubernetes-list-map-keys"),
                    list(keys),
                    "entries must all be names of item properties",
                )
            )
        if key in seen:
            out.append(
                invalid(
                    path.child("x-kubernetes-list-map-keys"),
                    list(keys),
                    "must not contain duplicate entries",
                )
            )
        seen.add(key)
    return out


def map_list_keys_map_set_errors(s: Mapping[str, Any]) -> bool:
    """Whether this node breaks the map-list key or set/map item nullability rules."""
    return bool(_map_list_keys_map_set(s, Path("")))


def _map_list_keys_map_set(s: Mapping[str, Any], path: Path) -> list[Cause]:
    list_type = s.get("x-kubernetes-list-type")
    item_schema = s.get("items")
    if list_type not in ("set", "map") or not isinstance(item_schema, Mapping):
        return []
    keys = s.get("x-kubernetes-list-map-keys") or []
    out: list[Cause] = []
    if item_schema.get("nullable") is True:
        out.append(
            forbidden(
                path.child("items", "nullable"),
                f"cannot be nullable when x-kubernetes-list-type is {list_type}",
            )
        )
    if list_type != "map":
        return out
    required_names = set(item_schema.get("required") or ())
    props = item_schema.get("properties")
    props = props if isinstance(props, Mapping) else {}
    for key in keys:
        prop = props.get(key)
        if not isinstance(prop, Mapping):
            continue  # reported as not an item property
        where = path.child("items", "properties").key(key)
        if key not in required_names and "default" not in prop:
            out.append(
                required(
                    where.child("default"),
                    "this property is in x-kubernetes-list-map-keys, so it must have a default or "
                    "be a required property",
                )
            )
        if prop.get("nullable") is True:
            out.append(
                forbidden(
                    where.child("nullable"),
                    "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
                )
            )
    return out
