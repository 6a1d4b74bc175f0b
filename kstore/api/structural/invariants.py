"""The "must be structural" rules: Kubernetes' ``ValidateStructural`` (validation.go).

A schema is structural when every node says its ``type`` (unless it is int-or-string or preserves
unknown fields), arrays say their ``items``, the root is an object without
``additionalProperties``, ``metadata`` at the root may only constrain ``name`` and
``generateName``, embedded resources are objects, and the value-validation clauses (``allOf``,
``anyOf``, ``oneOf``, ``not``) only constrain values, never say what exists: no ``type``,
``default``, ``description``, ``nullable``, ``additionalProperties``, ``x-kubernetes-*``, and
no property that the structural part does not declare (:mod:`.completeness`).

Messages, field paths and the final ordering (sorted by the rendered ``field: message`` text,
as Kubernetes sorts by ``Error()``) are Kubernetes' own. The value-validation clauses are read
from the raw schema kept in :attr:`Structural.validations`.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Any, Final

from kstore.api.structural._go_regexp import regexp_compile_error
from kstore.api.structural.builder import new_structural
from kstore.api.structural.completeness import validate_completeness
from kstore.api.structural.model import Structural
from kstore.api.validation.field import Path, forbidden, invalid, required
from kstore.errors import Cause

__all__ = ["validate_structural", "validate_structural_tree"]


class _Level(Enum):
    ROOT = "root"
    ITEM = "item"
    FIELD = "field"


_EMPTY_TYPE: Final = {
    _Level.ROOT: "must not be empty at the root",
    _Level.ITEM: "must not be empty for specified array items",
    _Level.FIELD: "must not be empty for specified object fields",
}

# JSONSchemaProps keys; any other key in a raw mapping is not part of the schema.
_SCHEMA_KEYS: Final = frozenset(
    {
        "id", "$schema", "$ref", "description", "type", "format", "title", "default",
        "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength", "minLength",
        "pattern", "maxItems", "minItems", "uniqueItems", "multipleOf", "enum",
        "maxProperties", "minProperties", "required", "items", "allOf", "oneOf", "anyOf",
        "not", "properties", "additionalProperties", "patternProperties", "dependencies",
        "additionalItems", "definitions", "externalDocs", "example", "nullable",
        "x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource",
        "x-kubernetes-int-or-string", "x-kubernetes-list-map-keys", "x-kubernetes-list-type",
        "x-kubernetes-map-type", "x-kubernetes-validations",
    }
)  # fmt: skip
# Go builds these lists by appending, so an empty list is the same as none.
_APPENDED_LISTS: Final = frozenset({"enum", "allOf", "anyOf", "oneOf"})


def validate_structural(schema: Mapping[str, Any] | None, path: Path) -> list[Cause]:
    """Every reason ``schema`` (an ``openAPIV3Schema``) is not structural, Kubernetes' words.

    A schema that cannot even be built gives the one build cause (see :mod:`.builder`).
    """
    tree, causes = new_structural(schema, path)
    if causes or tree is None:
        return causes
    return validate_structural_tree(tree, path)


def validate_structural_tree(tree: Structural, path: Path) -> list[Cause]:
    """``ValidateStructural`` of a built tree: invariants and completeness, sorted."""
    causes = _invariants(tree, _Level.ROOT, path)
    causes.extend(validate_completeness(tree, path))
    causes.sort(key=lambda c: f"{c.field}: {c.message}")
    return causes


def _invariants(s: Structural, lvl: _Level, path: Path) -> list[Cause]:
    out: list[Cause] = []
    if s.type == "array" and s.items is None:
        out.append(required(path.child("items"), "must be specified"))
    if s.items is not None:
        out.extend(_invariants(s.items, _Level.ITEM, path.child("items")))
    if s.properties:
        props = path.child("properties")
        for name, prop in s.properties.items():
            out.extend(_invariants(prop, _Level.FIELD, props.key(name)))
    if s.additional_properties is not None:
        if lvl is _Level.ROOT:
            out.append(
                forbidden(path.child("additionalProperties"), "must not be used at the root")
            )
        ap = s.additional_properties_schema
        if ap is not None:
            out.extend(_invariants(ap, _Level.FIELD, path.child("additionalProperties")))

    if s.int_or_string and s.preserve_unknown_fields:
        out.append(
            invalid(
                path.child("x-kubernetes-preserve-unknown-fields"),
                True,
                "must be false if x-kubernetes-int-or-string is true",
            )
        )
    if s.int_or_string and s.embedded_resource:
        out.append(
            invalid(
                path.child("x-kubernetes-embedded-resource"),
                True,
                "must be false if x-kubernetes-int-or-string is true",
            )
        )

    out.extend(
        _value_validation(
            s.validations,
            skip_any_of=_is_int_or_string_any_of(s.validations.get("anyOf")),
            skip_first_all_of_any_of=_is_int_or_string_all_of(s.validations.get("allOf")),
            path=path,
        )
    )

    check_metadata = lvl is _Level.ROOT or s.embedded_resource
    if s.embedded_resource and s.type != "object":
        detail = "must be object if x-kubernetes-embedded-resource is true"
        if not s.type:
            out.append(required(path.child("type"), detail))
        else:
            out.append(invalid(path.child("type"), s.type, detail))
    elif not s.type and not s.int_or_string and not s.preserve_unknown_fields:
        out.append(required(path.child("type"), _EMPTY_TYPE[lvl]))
    if s.embedded_resource and s.additional_properties is not None:
        out.append(
            forbidden(
                path.child("additionalProperties"),
                "must not be used if x-kubernetes-embedded-resource is set",
            )
        )
    if lvl is _Level.ROOT and s.type and s.type != "object":
        out.append(invalid(path.child("type"), s.type, "must be object at the root"))

    if check_metadata:
        for name in ("kind", "apiVersion"):
            meta_prop = s.properties.get(name)
            if meta_prop is not None and meta_prop.type != "string":
                where = path.child("properties").key(name).child("type")
                out.append(invalid(where, meta_prop.type, "must be string"))
    metadata = s.properties.get("metadata")
    if metadata is not None:
        where = path.child("properties").key("metadata")
        out.extend(_metadata_invariants(metadata, check_metadata, lvl, where))

    if s.embedded_resource and not s.preserve_unknown_fields and not s.properties:
        out.append(
            required(
                path.child("properties"),
                "must not be empty if x-kubernetes-embedded-resource is true without "
                "x-kubernetes-preserve-unknown-fields",
            )
        )
    return out


def _metadata_invariants(
    s: Structural, check_metadata: bool, lvl: _Level, path: Path
) -> list[Cause]:
    out: list[Cause] = []
    if check_metadata and s.type != "object":
        out.append(invalid(path.child("type"), s.type, "must be object"))
    if lvl is _Level.ROOT and not _only_names(s.raw):
        out.append(
            forbidden(
                path,
                "must not specify anything other than name and generateName, but metadata is "
                "implicitly specified",
            )
        )
    return out


def _only_names(raw: Mapping[str, Any]) -> bool:
    """Root ``metadata`` says nothing beyond its type, a default and name/generateName."""
    for key, value in raw.items():
        if key in ("type", "default") or key not in _SCHEMA_KEYS:
            continue
        if key == "properties":
            names = set(value or ())
            # Kubernetes clears exactly {name}, {generateName} or {name, generateName}.
            if names and not names <= {"name", "generateName"}:
                return False
            continue
        if key == "items" and value == []:
            continue
        if not _is_zero(key, value):
            return False
    return True


def _is_zero(key: str, value: Any) -> bool:
    """Whether Go holds this schema value as its zero value (so DeepEqual ignores it)."""
    if value is None or value is False or value == "":
        return True
    return key in _APPENDED_LISTS and value == []


def _is_only_type(clause: Any, type_: str) -> bool:
    if not isinstance(clause, Mapping) or clause.get("type") != type_:
        return False
    return all(_is_zero(k, v) for k, v in clause.items() if k != "type" and k in _SCHEMA_KEYS)


def _is_int_or_string_any_of(any_of: Any) -> bool:
    return (
        isinstance(any_of, list)
        and len(any_of) == 2
        and _is_only_type(any_of[0], "integer")
        and _is_only_type(any_of[1], "string")
    )


def _is_int_or_string_all_of(all_of: Any) -> bool:
    return (
        isinstance(all_of, list)
        and len(all_of) >= 1
        and isinstance(all_of[0], Mapping)
        and _is_int_or_string_any_of(all_of[0].get("anyOf"))
    )


def _value_validation(
    v: Mapping[str, Any], *, skip_any_of: bool, skip_first_all_of_any_of: bool, path: Path
) -> list[Cause]:
    out: list[Cause] = []
    if not skip_any_of:
        for i, clause in enumerate(v.get("anyOf") or ()):
            out.extend(_nested(clause, False, False, path.child("anyOf").index(i)))
    for i, clause in enumerate(v.get("allOf") or ()):
        skip = skip_first_all_of_any_of and i == 0
        out.extend(_nested(clause, skip, False, path.child("allOf").index(i)))
    for i, clause in enumerate(v.get("oneOf") or ()):
        out.extend(_nested(clause, False, False, path.child("oneOf").index(i)))
    not_clause = v.get("not")
    if not_clause is not None:
        out.extend(_nested(not_clause, False, False, path.child("not")))
    pattern = v.get("pattern")
    if isinstance(pattern, str) and pattern:
        error = regexp_compile_error(pattern)
        if error is not None:
            out.append(
                invalid(
                    path.child("pattern"),
                    pattern,
                    f"must be a valid regular expression, but isn't: {error}",
                )
            )
    return out


# Nested clauses may not carry these; (key, how Go tells it is set, detail).
_FORBIDDEN_IN_CLAUSES: Final = (
    ("default", "undefined"),
    ("title", "empty"),
    ("description", "empty"),
    ("nullable", "false"),
    ("x-kubernetes-preserve-unknown-fields", "false"),
    ("x-kubernetes-embedded-resource", "false"),
    ("x-kubernetes-int-or-string", "false"),
    ("x-kubernetes-list-map-keys", "empty"),
    ("x-kubernetes-list-type", "undefined"),
    ("x-kubernetes-map-type", "undefined"),
    ("x-kubernetes-validations", "empty"),
)


def _is_set(key: str, value: Any) -> bool:
    if key in ("x-kubernetes-list-type", "x-kubernetes-map-type", "default"):
        # Pointers in Go (a default of null is no default): any non-null value is set.
        return value is not None
    if key in ("x-kubernetes-list-map-keys", "x-kubernetes-validations"):
        return bool(value)
    return value is True or (isinstance(value, str) and value != "")


def _nested(v: Any, skip_any_of: bool, skip_all_of_any_of: bool, path: Path) -> list[Cause]:
    if not isinstance(v, Mapping):
        return []
    out = _value_validation(
        v, skip_any_of=skip_any_of, skip_first_all_of_any_of=skip_all_of_any_of, path=path
    )
    items = v.get("items")
    if isinstance(items, Mapping):
        out.extend(_nested(items, False, False, path.child("items")))
    props = v.get("properties")
    if isinstance(props, Mapping):
        for name, prop in props.items():
            out.extend(_nested(prop, False, False, path.child("properties").key(name)))
    if v.get("type"):
        out.append(forbidden(path.child("type"), "must be empty to be structural"))
    additional = v.get("additionalProperties")
    if isinstance(additional, Mapping) or additional is True:
        out.append(
            forbidden(path.child("additionalProperties"), "must be undefined to be structural")
        )
    for key, word in _FORBIDDEN_IN_CLAUSES:
        if _is_set(key, v.get(key)):
            out.append(forbidden(path.child(key), f"must be {word} to be structural"))
    if isinstance(props, Mapping) and "metadata" in props:
        out.append(
            forbidden(
                path.child("properties").key("metadata"),
                "must not be specified in a nested context",
            )
        )
    return out
