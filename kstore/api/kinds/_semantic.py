"""Kubernetes' ``apiequality.Semantic.DeepEqual`` on the dict form of a message.

Kubernetes compares typed Go values, so two dicts that differ only in how they write a zero
value are equal: a non-pointer field that is absent, ``null`` or holds its zero value (``""``,
``0``, ``false``, ``{}``) is one value; nil and empty lists and maps are equal
(apimachinery's forked ``reflect.DeepEqual``); quantities compare by amount (``1Gi`` equals
``1024Mi``). A pointer field (``nullable`` in the descriptors) that is unset differs from one set
to its zero value. Keys the message does not know (``apiVersion`` and ``kind`` of embedded
objects) compare as plain JSON.

Immutability rules use it where Kubernetes compares a whole spec ("updates to statefulset spec
for fields other than ... are forbidden", a claim's "spec is immutable after creation").
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor

from kstore.api.proto_schema import JsonKind, field_inline, field_nullable, json_kind
from kstore.api.quantity import parse_quantity

__all__ = ["semantic_equal"]

_STRINGS = frozenset((FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES))
_ZERO_QUANTITY = parse_quantity("0")


def semantic_equal(desc: Descriptor, a: Any, b: Any) -> bool:
    """Whether two dict forms of the message ``desc`` hold semantically equal Go values."""
    return _message_equal(desc, a, b)


@cache
def _fields(desc: Descriptor) -> Mapping[str, FieldDescriptor]:
    """JSON name -> field, with inline messages' fields spread into their parent's."""
    out: dict[str, FieldDescriptor] = {}
    for fd in desc.fields:
        if fd.message_type is not None and field_inline(fd):
            out.update(_fields(fd.message_type))
        else:
            out[fd.name] = fd
    return out


def _message_equal(desc: Descriptor, a: Any, b: Any) -> bool:
    a = a if isinstance(a, Mapping) else {} if a is None else a
    b = b if isinstance(b, Mapping) else {} if b is None else b
    if not isinstance(a, Mapping) or not isinstance(b, Mapping):
        return bool(a == b)
    fields = _fields(desc)
    for name in a.keys() | b.keys():
        fd = fields.get(name)
        x, y = a.get(name), b.get(name)
        if fd is None:
            if x != y:
                return False
        elif not _field_equal(fd, x, y):
            return False
    return True


def _field_equal(fd: FieldDescriptor, x: Any, y: Any) -> bool:
    message = fd.message_type
    if message is not None and message.GetOptions().map_entry:
        x, y = x or {}, y or {}
        if not isinstance(x, Mapping) or not isinstance(y, Mapping) or x.keys() != y.keys():
            return bool(x == y)
        value_fd = message.fields_by_name["value"]
        return all(_value_equal(value_fd, x[k], y[k]) for k in x)
    if fd.is_repeated:
        x, y = x or [], y or []
        if not isinstance(x, list) or not isinstance(y, list) or len(x) != len(y):
            return bool(x == y)
        return all(_value_equal(fd, i, j) for i, j in zip(x, y, strict=True))
    if field_nullable(fd) and (x is None or y is None):
        return x is None and y is None
    return _value_equal(fd, x, y)


def _value_equal(fd: FieldDescriptor, x: Any, y: Any) -> bool:
    """One value of the field (an element, for lists and maps); ``None`` is the zero value."""
    message = fd.message_type
    if message is None:
        zero = "" if fd.type in _STRINGS else False if fd.type == fd.TYPE_BOOL else 0
        return bool((zero if x is None else x) == (zero if y is None else y))
    form = json_kind(message)
    if form == JsonKind.OBJECT:
        return _message_equal(message, x, y)
    if form == JsonKind.QUANTITY:
        qx = _ZERO_QUANTITY if x is None else parse_quantity(x)
        qy = _ZERO_QUANTITY if y is None else parse_quantity(y)
        return qx == qy if qx is not None and qy is not None else bool(x == y)
    if form in (JsonKind.TIME, JsonKind.MICRO_TIME, JsonKind.DURATION):
        return (x or "") == (y or "")
    if form == JsonKind.INT_OR_STRING:
        return bool((0 if x is None else x) == (0 if y is None else y))
    return bool(x == y)
