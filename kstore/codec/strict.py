"""Unknown-field detection and pruning against a structural schema (``fieldValidation``).

Kubernetes decodes built-in kinds into typed structs, so fields the schema does not know are
dropped (Ignore), reported as warnings (Warn) or fail the request (Strict). Objects here are
dicts, so the same effect needs a walk: :func:`unknown_fields` reports paths such as
``spec.containers[0].foo`` and, with ``prune``, deletes those fields from the object (which the
caller owns).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Final

from kstore.api.schema import FieldSchema, SchemaType
from kstore.errors import BadRequest

__all__ = ["FieldValidation", "unknown_fields"]


class FieldValidation(StrEnum):
    """The ``fieldValidation`` query parameter; Kubernetes' default for requests is Warn."""

    IGNORE = "Ignore"
    WARN = "Warn"
    STRICT = "Strict"

    @classmethod
    def parse(cls, value: str | None) -> FieldValidation:
        if not value:
            return cls.WARN
        try:
            return cls(value)
        except ValueError:
            raise BadRequest(
                f"fieldValidation must be one of Ignore, Warn or Strict, not {value!r}"
            ) from None


def unknown_fields(obj: dict[str, Any], schema: FieldSchema, *, prune: bool) -> list[str]:
    """Paths of every field of ``obj`` that ``schema`` does not define (parents first).

    With ``prune`` the unknown fields are removed from ``obj`` in place.
    """
    found: list[str] = []
    stack: list[tuple[Any, FieldSchema, str]] = [(obj, schema, "")]
    plans = _PLANS
    while stack:
        node, node_schema, path = stack.pop()
        kind = node_schema.type
        if kind is SchemaType.OBJECT and isinstance(node, dict):
            entry = plans.get(node_schema)
            if entry is None or entry[0] != len(node_schema.fields):
                entry = _plan(node_schema)
            _, known, nested = entry
            if not known.issuperset(node):
                unknown = [key for key in node if key not in known]
                found.extend(f"{path}.{key}" if path else key for key in unknown)
                if prune:
                    for key in unknown:
                        del node[key]
            if nested:
                # Paths are built only for the fields that lead somewhere (most are scalars).
                children = [
                    (value, nested[key], f"{path}.{key}" if path else key)
                    for key, value in node.items()
                    if key in nested
                ]
                stack.extend(reversed(children))
        elif kind is SchemaType.LIST and isinstance(node, list) and node_schema.items is not None:
            item = node_schema.items
            if item.type is not SchemaType.SCALAR and item.type is not SchemaType.ANY:
                stack.extend((v, item, f"{path}[{i}]") for i, v in reversed(list(enumerate(node))))
        elif kind is SchemaType.MAP and isinstance(node, dict) and node_schema.items is not None:
            item = node_schema.items
            if item.type is not SchemaType.SCALAR and item.type is not SchemaType.ANY:
                stack.extend((v, item, f"{path}[{k}]") for k, v in reversed(list(node.items())))
    return found


# Object schema -> (its field count, its field names, the fields worth descending into).
# Schemas are shared and live as long as their scheme; bounded for embedders that build
# schemas on the fly. A schema's fields are filled once, possibly after it is built (recursive
# types): a plan made before that is stale, which the field count tells.
_Plan = tuple[int, frozenset[str], dict[str, FieldSchema]]
_PLANS: dict[FieldSchema, _Plan] = {}
_PLANS_SIZE: Final = 4096


def _plan(schema: FieldSchema) -> _Plan:
    fields = schema.fields
    plan = (
        len(fields),
        frozenset(fields),
        {
            name: child
            for name, child in fields.items()
            if child.type is not SchemaType.SCALAR and child.type is not SchemaType.ANY
        },
    )
    if len(_PLANS) < _PLANS_SIZE:
        _PLANS[schema] = plan
    return plan
