"""JSON values as the CEL values Kubernetes' schema declares them.

``UnstructuredToVal`` gives a ``number`` field a double even when the JSON holds ``1``, a
string with ``format: byte | duration | date | date-time`` bytes, a duration or a timestamp,
and ``x-kubernetes-list-type: set | map`` lists their order-free equality and merging ``+``
(:class:`~kstore.api.cel._values.SetList`, :class:`~kstore.api.cel._values.MapList`).
:func:`converter` compiles, once per schema node, a function doing that for a value and all
it contains; it is None when nothing below the node needs converting, the common case, so
most rules see the stored dict itself at no cost. A string that does not parse is left as it
is (schema validation reports it).
"""

from __future__ import annotations

import base64
import binascii
import datetime
from collections.abc import Callable, Mapping
from typing import Any

from kstore.api.cel._stdlib import FUNCTIONS
from kstore.api.cel._values import EvalError, MapList, SetList

__all__ = ["Converter", "converter"]

Converter = Callable[[Any], Any]


def _same(v: Any) -> Any:
    return v


def _number(v: Any) -> Any:
    return float(v) if type(v) is int else v


def _bytes(v: Any) -> Any:
    if type(v) is not str:
        return v
    try:
        return base64.b64decode(v, validate=True)
    except (binascii.Error, ValueError):
        return v


def _duration(v: Any) -> Any:
    try:
        return FUNCTIONS["duration"](v) if type(v) is str else v
    except EvalError:
        return v


def _date(v: Any) -> Any:
    if type(v) is not str:
        return v
    try:
        day = datetime.date.fromisoformat(v)
    except ValueError:
        return v
    return datetime.datetime(day.year, day.month, day.day, tzinfo=datetime.UTC)


def _date_time(v: Any) -> Any:
    try:
        return FUNCTIONS["timestamp"](v) if type(v) is str else v
    except EvalError:
        return v


_STRING_FORMATS = {"byte": _bytes, "duration": _duration, "date": _date, "date-time": _date_time}


def converter(schema: Mapping[str, Any] | None) -> Converter | None:
    if schema is None or schema.get("x-kubernetes-int-or-string"):
        return None
    kind = schema.get("type")
    if kind == "number":
        return _number
    if kind == "string":
        return _STRING_FORMATS.get(str(schema.get("format", "")))
    if kind == "array":
        items = schema.get("items")
        inner = converter(items) if isinstance(items, Mapping) else None
        list_type = schema.get("x-kubernetes-list-type")
        keys = tuple(schema.get("x-kubernetes-list-map-keys") or ())
        if inner is None and list_type not in ("set", "map"):
            return None
        item_converter = inner if inner is not None else _same

        def convert_list(v: Any) -> Any:
            if type(v) is not list:
                return v
            items = [item_converter(x) for x in v]
            if list_type == "set":
                return SetList(items)
            if list_type == "map":
                return MapList(items, keys)
            return items

        return convert_list
    if kind == "object":
        additional = schema.get("additionalProperties")
        if isinstance(additional, Mapping):
            values = converter(additional)
            if values is None:
                return None
            value_converter = values

            def convert_map(v: Any) -> Any:
                if type(v) is not dict:
                    return v
                return {k: value_converter(x) for k, x in v.items()}

            return convert_map
        fields: dict[str, Converter] = {}
        for name, prop in (schema.get("properties") or {}).items():
            found = converter(prop)
            if found is not None:
                fields[name] = found
        if not fields:
            return None

        def convert_object(v: Any) -> Any:
            if type(v) is not dict:
                return v
            out = dict(v)
            for name, convert in fields.items():
                if name in out and out[name] is not None:
                    out[name] = convert(out[name])
            return out

        return convert_object
    return None
