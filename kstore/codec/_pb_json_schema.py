"""apiextensions v1 ``JSONSchemaProps`` on Kubernetes' protobuf wire, and back to its JSON.

A CRD's schema is a JSON Schema, and its JSON is not what the generic converters derive from a
descriptor: member names differ from field names (``$ref``, ``$schema``, ``x-kubernetes-*``),
``default``/``enum``/``example`` are raw JSON documents, ``items`` is a schema or a list of
schemas, ``additionalProperties``/``additionalItems`` a schema or a boolean, ``dependencies``
values a schema or a list of property names, and three fields are doubles. So the message is
its own JSON form (``JSON_SCHEMA_PROPS``) converted here, field by field from one table.

What Kubernetes' generated Go code writes, and so what this writes:

- fields in number order; non-pointer strings and booleans always (``id``, ``$schema``,
  ``description``, ``type``, ``format``, ``title``, ``pattern``, the non-pointer flags),
  pointers (``$ref``, ``maximum``, ``maxLength``..., ``x-kubernetes-preserve-unknown-fields``,
  ``x-kubernetes-list-type``/``map-type``) and messages only when set;
- maps with sorted keys, every entry with its key and value;
- ``JSON``: its raw document in field 1 (compact JSON here); a JSON null is an unset pointer;
- ``JSONSchemaPropsOrBool``: ``allows`` always, ``schema`` when it is one (a schema allows);
  ``JSONSchemaPropsOrArray``: a list as ``jSONSchemas``, a schema as ``schema``;
  ``JSONSchemaPropsOrStringArray``: a list as ``property``, a schema as ``schema``;
- ``ValidationRule``: ``rule``, ``message``, ``messageExpression``, ``fieldPath`` always,
  ``reason`` and ``optionalOldSelf`` when set; ``ExternalDocumentation`` both strings always.

Reading back gives the JSON Go's ``json.Marshal`` writes: members with their zero value left
out (every JSON tag of the type has omitempty), a double with an integral value printed as an
integer (Go prints ``1``, not ``1.0``).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any, Final

from kstore.codec._pb_values import (
    Malformed,
    length_prefixed,
    read_int64,
    read_uvarint,
    skip_field,
    uvarint,
    varint_int,
)
from kstore.codec.json import dumps as json_dumps
from kstore.codec.json import loads as json_loads
from kstore.errors import BadRequest

__all__ = ["dec_json_schema_props", "enc_json_schema_props"]

# Value kinds of the table.
_STR, _OPT_STR, _BOOL, _OPT_BOOL, _INT, _DOUBLE = range(6)
_JSON, _JSON_LIST, _STR_LIST, _SCHEMA, _SCHEMA_LIST, _SCHEMA_MAP = range(6, 12)
_OR_ARRAY, _OR_BOOL, _DEPENDENCIES, _DOCS, _RULES = range(12, 17)

#: (field number, JSON member, value kind), in number order.
_FIELDS: Final = (
    (1, "id", _STR),
    (2, "$schema", _STR),
    (3, "$ref", _OPT_STR),
    (4, "description", _STR),
    (5, "type", _STR),
    (6, "format", _STR),
    (7, "title", _STR),
    (8, "default", _JSON),
    (9, "maximum", _DOUBLE),
    (10, "exclusiveMaximum", _BOOL),
    (11, "minimum", _DOUBLE),
    (12, "exclusiveMinimum", _BOOL),
    (13, "maxLength", _INT),
    (14, "minLength", _INT),
    (15, "pattern", _STR),
    (16, "maxItems", _INT),
    (17, "minItems", _INT),
    (18, "uniqueItems", _BOOL),
    (19, "multipleOf", _DOUBLE),
    (20, "enum", _JSON_LIST),
    (21, "maxProperties", _INT),
    (22, "minProperties", _INT),
    (23, "required", _STR_LIST),
    (24, "items", _OR_ARRAY),
    (25, "allOf", _SCHEMA_LIST),
    (26, "oneOf", _SCHEMA_LIST),
    (27, "anyOf", _SCHEMA_LIST),
    (28, "not", _SCHEMA),
    (29, "properties", _SCHEMA_MAP),
    (30, "additionalProperties", _OR_BOOL),
    (31, "patternProperties", _SCHEMA_MAP),
    (32, "dependencies", _DEPENDENCIES),
    (33, "additionalItems", _OR_BOOL),
    (34, "definitions", _SCHEMA_MAP),
    (35, "externalDocs", _DOCS),
    (36, "example", _JSON),
    (37, "nullable", _BOOL),
    (38, "x-kubernetes-preserve-unknown-fields", _OPT_BOOL),
    (39, "x-kubernetes-embedded-resource", _BOOL),
    (40, "x-kubernetes-int-or-string", _BOOL),
    (41, "x-kubernetes-list-map-keys", _STR_LIST),
    (42, "x-kubernetes-list-type", _OPT_STR),
    (43, "x-kubernetes-map-type", _OPT_STR),
    (44, "x-kubernetes-validations", _RULES),
)
_BY_NUMBER: Final = {number: (name, kind) for number, name, kind in _FIELDS}
#: ValidationRule: (number, JSON member, always written).
_RULE_FIELDS: Final = (
    (1, "rule", True),
    (2, "message", True),
    (3, "messageExpression", True),
    (4, "reason", False),
    (5, "fieldPath", True),
)
_WIRE_OF: Final = {_BOOL: 0, _OPT_BOOL: 0, _INT: 0, _DOUBLE: 1}


def _tag(number: int, wire: int) -> bytes:
    return uvarint(number << 3 | wire)


def _bad(name: str, value: Any, expected: str) -> BadRequest:
    return BadRequest(f'field "{name}": expected {expected}, got {type(value).__name__}')


# ---------------------------------------------------------------------------- encoding


def _put_str(w: bytearray, tag: bytes, name: str, value: Any) -> None:
    if not isinstance(value, str):
        raise _bad(name, value, "a string")
    raw = value.encode()
    w += tag + uvarint(len(raw)) + raw


def _put_message(w: bytearray, tag: bytes, body: bytes) -> None:
    w += tag + uvarint(len(body)) + body


def _json_body(value: Any) -> bytes:
    raw = json_dumps(value)
    return b"\x0a" + uvarint(len(raw)) + raw


def _schema_body(name: str, value: Any) -> bytes:
    if not isinstance(value, dict):
        raise _bad(name, value, "an object")
    w = bytearray()
    for number, member, kind in _FIELDS:
        _encode_field(w, number, member, kind, value.get(member))
    return bytes(w)


def _map_entry(key: str, value_body: bytes) -> bytes:
    raw = key.encode()
    return b"\x0a" + uvarint(len(raw)) + raw + b"\x12" + uvarint(len(value_body)) + value_body


def _or_bool_body(name: str, value: Any) -> bytes:
    if isinstance(value, bool):
        return b"\x08" + (b"\x01" if value else b"\x00")
    body = _schema_body(name, value)
    return b"\x08\x01\x12" + uvarint(len(body)) + body


def _or_array_body(name: str, value: Any) -> bytes:
    if isinstance(value, list):
        w = bytearray()
        for item in value:
            _put_message(w, b"\x12", _schema_body(name, item))
        return bytes(w)
    body = _schema_body(name, value)
    return b"\x0a" + uvarint(len(body)) + body


def _dependency_body(name: str, value: Any) -> bytes:
    if isinstance(value, list):
        w = bytearray()
        for item in value:
            _put_str(w, b"\x12", name, item)
        return bytes(w)
    body = _schema_body(name, value)
    return b"\x0a" + uvarint(len(body)) + body


def _rule_body(value: Any) -> bytes:
    if not isinstance(value, dict):
        raise _bad("x-kubernetes-validations", value, "an object")
    w = bytearray()
    for number, member, always in _RULE_FIELDS:
        text = value.get(member)
        if text is None and always:
            text = ""
        if text is not None:
            _put_str(w, _tag(number, 2), member, text)
    old_self = value.get("optionalOldSelf")
    if old_self is not None:
        w += b"\x30" + (b"\x01" if old_self is True else b"\x00")
    return bytes(w)


def _encode_field(w: bytearray, number: int, name: str, kind: int, value: Any) -> None:
    tag = _tag(number, _WIRE_OF.get(kind, 2))
    if kind == _STR:
        _put_str(w, tag, name, "" if value is None else value)
    elif kind == _BOOL:
        w += tag + (b"\x01" if value is True else b"\x00")
    elif value is None:
        return
    elif kind == _OPT_STR:
        _put_str(w, tag, name, value)
    elif kind == _OPT_BOOL:
        if not isinstance(value, bool):
            raise _bad(name, value, "a boolean")
        w += tag + (b"\x01" if value else b"\x00")
    elif kind == _INT:
        if not isinstance(value, int) or isinstance(value, bool):
            raise _bad(name, value, "an integer")
        w += tag + varint_int(value, 64)
    elif kind == _DOUBLE:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise _bad(name, value, "a number")
        w += tag + struct.pack("<d", float(value))
    elif kind == _JSON:
        _put_message(w, tag, _json_body(value))
    elif kind == _DOCS:
        if not isinstance(value, dict):
            raise _bad(name, value, "an object")
        docs = bytearray()
        _put_str(docs, b"\x0a", "description", value.get("description") or "")
        _put_str(docs, b"\x12", "url", value.get("url") or "")
        _put_message(w, tag, bytes(docs))
    elif kind == _SCHEMA:
        _put_message(w, tag, _schema_body(name, value))
    elif kind == _OR_ARRAY:
        _put_message(w, tag, _or_array_body(name, value))
    elif kind == _OR_BOOL:
        _put_message(w, tag, _or_bool_body(name, value))
    elif kind in (_SCHEMA_MAP, _DEPENDENCIES):
        if not isinstance(value, dict):
            raise _bad(name, value, "an object")
        body: Callable[[str, Any], bytes] = (
            _schema_body if kind == _SCHEMA_MAP else _dependency_body
        )
        for key in sorted(value):
            _put_message(w, tag, _map_entry(key, body(name, value[key])))
    else:
        if not isinstance(value, list):
            raise _bad(name, value, "an array")
        for item in value:
            if kind == _STR_LIST:
                _put_str(w, tag, name, item)
            elif kind == _JSON_LIST:
                _put_message(w, tag, b"" if item is None else _json_body(item))
            elif kind == _SCHEMA_LIST:
                _put_message(w, tag, _schema_body(name, item))
            else:
                _put_message(w, tag, _rule_body(item))


def enc_json_schema_props(value: Any) -> bytes:
    """The length-prefixed message of a JSONSchemaProps object."""
    return length_prefixed(_schema_body("openAPIV3Schema", value))


# ---------------------------------------------------------------------------- decoding


def _fields(b: bytes, p: int, q: int) -> list[tuple[int, int, Any]]:
    """The (number, wire type, value) of each field of ``b[p:q]``; a length-delimited value is
    its (start, end), a varint its integer, a fixed64 its 8 bytes."""
    out: list[tuple[int, int, Any]] = []
    while p < q:
        key = b[p]
        p += 1
        if key > 0x7F:
            key, p = read_uvarint(b, p, key)
        wire = key & 7
        if wire == 2:
            n = b[p]
            p += 1
            if n > 0x7F:
                n, p = read_uvarint(b, p, n)
            if p + n > q:
                raise Malformed("a length-delimited field runs past its message")
            out.append((key >> 3, 2, (p, p + n)))
            p += n
        elif wire == 0:
            first = b[p]
            p += 1
            value = first
            if first > 0x7F:
                value, p = read_int64(b, p, first)
            out.append((key >> 3, 0, value))
        elif wire == 1:
            if p + 8 > q:
                raise Malformed("a fixed64 field runs past its message")
            out.append((key >> 3, 1, b[p : p + 8]))
            p += 8
        else:
            p = skip_field(b, p, q, key)
    if p != q:
        raise Malformed("a field runs past its message")
    return out


def _text(b: bytes, span: Any) -> str:
    start, end = span
    return b[start:end].decode()


def _json(b: bytes, span: Any) -> Any:
    """A JSON message: its raw document, or null when it has none."""
    raw = None
    for number, wire, value in _fields(b, *span):
        if number == 1 and wire == 2:
            raw = b[value[0] : value[1]]
    return json_loads(raw) if raw else None


def _number(raw: bytes) -> int | float:
    value: float = struct.unpack("<d", raw)[0]
    # Go's json.Marshal prints an integral float64 without a fraction.
    return int(value) if value.is_integer() and abs(value) < 1e21 else value


def _or(b: bytes, span: Any, many: Callable[[bytes, Any], Any]) -> Any:
    schema: Any = None
    items: list[Any] = []
    for number, wire, value in _fields(b, *span):
        if number == 1 and wire == 2:
            schema = _schema(b, value)
        elif number == 2 and wire == 2:
            items.append(many(b, value))
    return items if items else schema


def _or_bool(b: bytes, span: Any) -> Any:
    allows, schema = False, None
    for number, wire, value in _fields(b, *span):
        if number == 1 and wire == 0:
            allows = value != 0
        elif number == 2 and wire == 2:
            schema = _schema(b, value)
    return schema if schema is not None else allows


def _map_entry_of(b: bytes, span: Any, read: Callable[[bytes, Any], Any]) -> tuple[str, Any]:
    key, found = "", None
    for number, wire, value in _fields(b, *span):
        if number == 1 and wire == 2:
            key = _text(b, value)
        elif number == 2 and wire == 2:
            found = value
    return key, read(b, found if found is not None else (0, 0))


def _rule(b: bytes, span: Any) -> dict[str, Any]:
    names = {number: member for number, member, _ in _RULE_FIELDS}
    rule: dict[str, Any] = {"rule": ""}
    for number, wire, value in _fields(b, *span):
        if number in names and wire == 2:
            text = _text(b, value)
            if text or number == 4:
                rule[names[number]] = text
        elif number == 6 and wire == 0:
            rule["optionalOldSelf"] = value != 0
    return rule


def _docs(b: bytes, span: Any) -> dict[str, Any]:
    docs: dict[str, Any] = {}
    for number, wire, value in _fields(b, *span):
        if wire == 2 and number in (1, 2):
            text = _text(b, value)
            if text:
                docs["description" if number == 1 else "url"] = text
    return docs


def _schema(b: bytes, span: Any) -> dict[str, Any]:
    members: dict[str, Any] = {}
    for number, wire, value in _fields(b, *span):
        field = _BY_NUMBER.get(number)
        if field is None:
            continue
        name, kind = field
        if wire != _WIRE_OF.get(kind, 2):
            raise Malformed(f"JSONSchemaProps field {number} has wire type {wire}")
        if kind in (_STR, _OPT_STR):
            members[name] = _text(b, value)
        elif kind in (_BOOL, _OPT_BOOL):
            members[name] = value != 0
        elif kind == _INT:
            members[name] = value
        elif kind == _DOUBLE:
            members[name] = _number(value)
        elif kind == _JSON:
            members[name] = _json(b, value)
        elif kind == _DOCS:
            members[name] = _docs(b, value)
        elif kind == _SCHEMA:
            members[name] = _schema(b, value)
        elif kind == _OR_ARRAY:
            members[name] = _or(b, value, _schema)
        elif kind == _OR_BOOL:
            members[name] = _or_bool(b, value)
        elif kind == _SCHEMA_MAP:
            key, item = _map_entry_of(b, value, _schema)
            members.setdefault(name, {})[key] = item
        elif kind == _DEPENDENCIES:
            key, item = _map_entry_of(b, value, lambda b, s: _or(b, s, _text))
            members.setdefault(name, {})[key] = item
        else:
            reader: Callable[[bytes, Any], Any] = {
                _STR_LIST: _text,
                _JSON_LIST: _json,
                _SCHEMA_LIST: _schema,
                _RULES: _rule,
            }[kind]
            members.setdefault(name, []).append(reader(b, value))
    # json.Marshal with omitempty: the zero values of the always-written fields are left out,
    # and members come out in the Go struct's order, which is the table's.
    out: dict[str, Any] = {}
    for _, name, kind in _FIELDS:
        if name not in members:
            continue
        value = members[name]
        if kind in (_STR, _BOOL) and not value:
            continue
        if kind == _JSON and value is None:
            continue
        out[name] = value
    return out


def dec_json_schema_props(b: bytes, p: int, q: int) -> dict[str, Any]:
    """The JSON of the JSONSchemaProps message ``b[p:q]``."""
    return _schema(b, (p, q))
