"""The part of Kubernetes' CEL type check that depends on the schema: field names.

cel-cpp checks ``self`` as ``dyn``, so it cannot know that ``self.nosuchfield`` names no
property. This walk does that one check the way cel-go does with Kubernetes' declared object
types: a field selected (or tested with ``has``) on ``self``/``oldSelf``, on a chain of
properties below them, or on a comprehension variable ranging over a typed list, must be a
declared property (spelled escaped: ``x-y`` is ``x__dash__y``). Objects that keep unknown
fields or are really maps (``additionalProperties``) accept any name.

At a resource root Kubernetes declares ``apiVersion``, ``kind`` and a ``metadata`` that
exposes only ``name`` and ``generateName``; :func:`root_view` builds that schema.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kstore.api.cel._ast import (
    Call,
    CheckedAst,
    Comprehension,
    CreateList,
    CreateMap,
    Expr,
    Ident,
    Select,
)
from kstore.api.cel._decl import decl_of
from kstore.api.cel._interpreter import escape

__all__ = ["check_fields", "error_at", "map_selects", "root_view", "static_type"]

Schema = Mapping[str, Any]


def root_view(schema: Schema) -> dict[str, Any]:
    props = dict(schema.get("properties") or {})
    props["apiVersion"] = {"type": "string"}
    props["kind"] = {"type": "string"}
    props["metadata"] = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "generateName": {"type": "string"}},
    }
    return {**schema, "type": "object", "properties": props}


def _is_closed_object(schema: Schema | None) -> bool:
    # Unknown fields kept by x-kubernetes-preserve-unknown-fields are not declared to CEL
    # either: only the schema's properties can be selected.
    return (
        schema is not None
        and schema.get("type") == "object"
        and not isinstance(schema.get("additionalProperties"), Mapping)
    )


def _field_schema(schema: Schema, name: str) -> tuple[bool, Schema | None]:
    """(declared, its schema) for a CEL field name on a closed object. A property whose
    schema has no CEL type (no ``type``, not int-or-string) is not declared."""
    if schema.get("x-kubernetes-embedded-resource") and name in ("apiVersion", "kind", "metadata"):
        return True, root_view(schema)["properties"][name]
    for prop, sub in (schema.get("properties") or {}).items():
        if escape(prop) == name:
            if decl_of(sub) is None:
                return False, None
            if sub.get("x-kubernetes-embedded-resource"):
                return True, root_view(sub)
            return True, sub
    return False, None


def _walk_selects(
    expr: Expr,
    scope: dict[str, Schema | None],
    on_select: Callable[[Select, Schema | None], bool],
) -> bool:
    """Visit every field selection of ``expr`` with the schema of what it selects from (None
    where no schema is known), each comprehension's variables typed by its range; stop, and
    return False, as soon as ``on_select`` returns False."""
    if isinstance(expr, Select):
        if not on_select(expr, _typed(expr.operand, scope)):
            return False
        return _walk_selects(expr.operand, scope, on_select)
    if isinstance(expr, Call):
        parts = ([expr.target] if expr.target is not None else []) + list(expr.args)
        return all(_walk_selects(a, scope, on_select) for a in parts)
    if isinstance(expr, CreateList):
        return all(_walk_selects(x, scope, on_select) for x in expr.elements)
    if isinstance(expr, CreateMap):
        return all(
            _walk_selects(k, scope, on_select) and _walk_selects(v, scope, on_select)
            for k, v, _ in expr.entries
        )
    if isinstance(expr, Comprehension):
        if not _walk_selects(expr.iter_range, scope, on_select):
            return False
        rng = _typed(expr.iter_range, scope)
        inner = dict(scope)
        inner[expr.iter_var] = None
        if rng is not None and rng.get("type") == "array" and not expr.iter_var2:
            inner[expr.iter_var] = rng.get("items")
        if expr.iter_var2:
            inner[expr.iter_var2] = None
        inner[expr.accu_var] = None
        steps = (expr.accu_init, expr.loop_condition, expr.loop_step, expr.result)
        return all(_walk_selects(step, inner, on_select) for step in steps)
    return True


def check_fields(ast: CheckedAst, source: str, schema: Schema, optional_old_self: bool) -> str:
    """The first undefined-field error in cel-go's words, or "" when every field exists."""
    variables: dict[str, Schema | None] = {"self": schema}
    if not optional_old_self:
        variables["oldSelf"] = schema
    found: list[str] = []

    def declared(e: Select, parent: Schema | None) -> bool:
        undeclared = (
            parent is not None
            and _is_closed_object(parent)
            and not _field_schema(parent, e.field)[0]
        )
        if undeclared:
            position = ast.positions.get(e.id, 0)
            found.append(error_at(source, position, f"undefined field '{e.field}'"))
        return not undeclared

    _walk_selects(ast.expr, variables, declared)
    return found[0] if found else ""


def _typed(e: Expr, scope: Mapping[str, Schema | None]) -> Schema | None:
    """The schema of a variable or of a chain of declared fields below one; else None."""
    if isinstance(e, Ident):
        return scope.get(e.name)
    if isinstance(e, Select) and not e.test_only:
        parent = _typed(e.operand, scope)
        if _is_closed_object(parent):
            assert parent is not None
            return _field_schema(parent, e.field)[1]
        if parent is not None and isinstance(parent.get("additionalProperties"), Mapping):
            return parent["additionalProperties"]  # type: ignore[no-any-return]
    return None


# Schema types whose CEL type is known (int-or-string and unknown fields are dyn).
_CEL_TYPES = {"string": "string", "integer": "int", "number": "double", "array": "list"}
_STRING_FORMATS = {
    "byte": "bytes",
    "duration": "google.protobuf.Duration",
    "date": "google.protobuf.Timestamp",
    "date-time": "google.protobuf.Timestamp",
}


def static_type(ast: CheckedAst, schema: Schema) -> str:
    """The CEL type of a rule that is just ``self`` or a field chain; "" when not known.

    cel-go knows it from the declared types and rejects such a rule unless it is a bool.
    """
    found = _typed(ast.expr, {"self": schema, "oldSelf": schema})
    if found is None or found.get("x-kubernetes-int-or-string"):
        return ""
    kind = str(found.get("type", ""))
    if kind == "string" and found.get("format") in _STRING_FORMATS:
        return _STRING_FORMATS[str(found["format"])]
    if kind == "object":
        return "" if found.get("x-kubernetes-preserve-unknown-fields") else "map"
    return _CEL_TYPES.get(kind, "")


def map_selects(ast: CheckedAst, schema: Schema) -> frozenset[int]:
    """Ids of field selections known to read a map (``additionalProperties``), where a null
    value is a value. Everywhere else a null field is an absent field, as Kubernetes
    treats object fields."""
    found: set[int] = set()

    def note(e: Select, parent: Schema | None) -> bool:
        if parent is not None and isinstance(parent.get("additionalProperties"), Mapping):
            found.add(e.id)
        return True

    _walk_selects(ast.expr, {"self": schema, "oldSelf": schema}, note)
    return frozenset(found)


def error_at(source: str, offset: int, message: str) -> str:
    """``ERROR: <input>:L:C: message`` with the source line and caret, as cel-go prints it."""
    line_start = source.rfind("\n", 0, offset) + 1
    line_no = source.count("\n", 0, offset) + 1
    column = offset - line_start
    line_end = source.find("\n", offset)
    text = source[line_start : line_end if line_end >= 0 else len(source)]
    return f"ERROR: <input>:{line_no}:{column + 1}: {message}\n | {text}\n | {'.' * column}^"
