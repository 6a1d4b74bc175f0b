"""Structural schemas: which fields an object of one kind and version may carry.

A schema only knows shape (object with named fields, list, map, scalar, or anything). It is what
strict decoding (``fieldValidation=Strict|Warn``) walks to report unknown fields by JSON path.
Built-in kinds take theirs from the protobuf descriptors (one source of truth for the shape);
embedders may give one per version or none, in which case unknown fields are kept as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum

__all__ = ["ANY", "SCALAR", "FieldSchema", "SchemaType"]


class SchemaType(Enum):
    SCALAR = "scalar"
    OBJECT = "object"
    LIST = "list"
    MAP = "map"
    ANY = "any"


@dataclass(frozen=True, slots=True, eq=False)
class FieldSchema:
    """One node of a structural schema.

    ``OBJECT`` nodes list their ``fields`` (a mapping filled once, possibly after construction for
    recursive types); ``LIST`` and ``MAP`` nodes describe their elements in ``items``; ``ANY``
    accepts any JSON value (``RawExtension``, ``FieldsV1``, or a kind with no schema).
    """

    type: SchemaType
    fields: Mapping[str, FieldSchema] = field(default_factory=dict)
    items: FieldSchema | None = None

    @staticmethod
    def object(fields: Mapping[str, FieldSchema]) -> FieldSchema:
        return FieldSchema(SchemaType.OBJECT, fields=fields)

    @staticmethod
    def list_of(items: FieldSchema) -> FieldSchema:
        return FieldSchema(SchemaType.LIST, items=items)

    @staticmethod
    def map_of(items: FieldSchema) -> FieldSchema:
        return FieldSchema(SchemaType.MAP, items=items)


SCALAR = FieldSchema(SchemaType.SCALAR)
ANY = FieldSchema(SchemaType.ANY)
