"""The CEL type Kubernetes declares for a schema node, with the size bounds cost estimation uses.

Mirrors ``SchemaDeclType`` (k8s.io/apiserver/pkg/cel/common/schemas.go): arrays are lists,
objects with ``additionalProperties`` maps, other objects carry their properties as fields
(escaped names), strings with ``format: byte|duration|date|date-time`` are bytes, durations
and timestamps, ``x-kubernetes-int-or-string`` is ``dyn``. ``max_elements`` bounds a value's
``size()``: ``maxLength`` (times 4, a code point may take 4 bytes), ``maxItems``,
``maxProperties``, the longest ``enum`` value, or else what fits in one 3 MiB request given
the element's smallest serialized size. Scalars have ``max_elements`` 0, as in Kubernetes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from kstore.api.cel._interpreter import escape

__all__ = ["MAX_REQUEST_SIZE", "Decl", "decl_of", "max_cardinality", "type_key"]

# k8s.io/apiserver/pkg/apis/cel: MaxRequestSizeBytes.
MAX_REQUEST_SIZE: Final = 3 * 1024 * 1024
_MIN_STRING: Final = 2
_MIN_BOOL: Final = 4
_MIN_NUMBER: Final = 1
_MAX_DURATION_JSON: Final = 32
_MIN_DURATION_JSON: Final = 3
_JSON_DATE: Final = 12
_MIN_DATETIME_JSON: Final = 21
_MAX_DATETIME_JSON: Final = 32


@dataclass(slots=True)
class Decl:
    kind: str  # object, map, list, string, bytes, duration, timestamp, int, double, bool, dyn
    max_elements: int = 0
    min_size: int = 0
    fields: dict[str, Decl] = field(default_factory=dict)
    elem: Decl | None = None


def max_cardinality(min_size: int) -> int:
    """How many values of this smallest size fit in one request (one comma each)."""
    return MAX_REQUEST_SIZE // (min_size + 1)


def _nonneg(v: Any) -> int:
    return max(int(v), 0)


def _string_bound(schema: Mapping[str, Any]) -> int:
    fmt = schema.get("format")
    if schema.get("x-kubernetes-int-or-string"):
        return MAX_REQUEST_SIZE - 2
    if fmt == "duration":
        return _MAX_DURATION_JSON
    if fmt == "date":
        return _JSON_DATE
    if fmt == "date-time":
        return _MAX_DATETIME_JSON
    return MAX_REQUEST_SIZE - 2


def _with_type_and_meta(schema: Mapping[str, Any]) -> dict[str, Any]:
    props = dict(schema.get("properties") or {})
    props["kind"] = {"type": "string"}
    props["apiVersion"] = {"type": "string"}
    props["metadata"] = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "generateName": {"type": "string"}},
    }
    return {**schema, "properties": props}


def decl_of(schema: Mapping[str, Any] | None, is_resource_root: bool = False) -> Decl | None:
    if schema is None:
        return None
    if schema.get("x-kubernetes-int-or-string"):
        if schema.get("maxLength") is not None:
            bound = _nonneg(schema["maxLength"]) * 4
        else:
            bound = _string_bound(schema)
        return Decl("dyn", bound, 1)
    if is_resource_root:
        schema = _with_type_and_meta(schema)
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items")
        if not isinstance(items, Mapping):
            return None
        elem = decl_of(items, bool(items.get("x-kubernetes-embedded-resource")))
        if elem is None:
            return None
        if schema.get("maxItems") is not None:
            bound = _nonneg(schema["maxItems"])
        else:
            bound = (MAX_REQUEST_SIZE - 2) // (elem.min_size + 1)
        return Decl("list", bound, 2, elem=elem)
    if kind == "object":
        additional = schema.get("additionalProperties")
        if isinstance(additional, Mapping):
            elem = decl_of(additional, bool(additional.get("x-kubernetes-embedded-resource")))
            if elem is None:
                return None
            if schema.get("maxProperties") is not None:
                bound = _nonneg(schema["maxProperties"])
            else:
                bound = (MAX_REQUEST_SIZE - 2) // (elem.min_size + 6)
            return Decl("map", bound, 2, elem=elem)
        required = set(schema.get("required") or ())
        fields: dict[str, Decl] = {}
        min_size = 2
        for name, prop in (schema.get("properties") or {}).items():
            sub = decl_of(prop, bool(prop.get("x-kubernetes-embedded-resource")))
            if sub is None:
                continue
            escaped = escape(name)
            if escaped is not None:
                fields[escaped] = sub
            if name in required and "default" not in prop:
                min_size += len(name) + sub.min_size + 4
        return Decl("object", 0, min_size, fields)
    if kind == "string":
        fmt = schema.get("format")
        if fmt == "byte":
            if schema.get("maxLength") is not None:
                return Decl("bytes", _nonneg(schema["maxLength"]), _MIN_STRING)
            return Decl("bytes", _string_bound(schema), _MIN_STRING)
        if fmt == "duration":
            return Decl("duration", _string_bound(schema), _MIN_DURATION_JSON)
        if fmt == "date":
            return Decl("timestamp", _string_bound(schema), _JSON_DATE)
        if fmt == "date-time":
            return Decl("timestamp", _string_bound(schema), _MIN_DATETIME_JSON)
        if schema.get("maxLength") is not None:
            bound = _nonneg(schema["maxLength"]) * 4
        elif schema.get("enum"):
            bound = max((len(v) for v in schema["enum"] if isinstance(v, str)), default=0)
        else:
            bound = _string_bound(schema)
        return Decl("string", bound, _MIN_STRING)
    if kind == "boolean":
        return Decl("bool", 0, _MIN_BOOL)
    if kind == "number":
        return Decl("double", 0, _MIN_NUMBER)
    if kind == "integer":
        return Decl("int", 0, _MIN_NUMBER)
    return None


_KEYS: Final = {
    "bool": "bool",
    "int": "int",
    "double": "double",
    "string": "string",
    "bytes": "bytes",
    "duration": "google.protobuf.Duration",
    "timestamp": "google.protobuf.Timestamp",
}


def type_key(decl: Decl | None) -> str:
    """The CEL type of a value of this declaration as a key (``list(int)``); ``dyn`` for
    objects and anything without a nameable type."""
    if decl is None:
        return "dyn"
    if decl.kind == "list":
        return f"list({type_key(decl.elem)})"
    if decl.kind == "map":
        return f"map(string, {type_key(decl.elem)})"
    return _KEYS.get(decl.kind, "dyn")
