"""Object helpers every strategy uses: a cheap deep copy of a JSON value, and metadata access."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

import orjson

from kstore.api.gvk import Object
from kstore.codec.json import dumps as json_dumps
from kstore.codec.json import loads as json_loads

__all__ = ["copy_value", "meta", "read_meta"]

_T = TypeVar("_T")


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def copy_value(value: _T) -> _T:
    """A copy of a JSON value that shares nothing mutable with it.

    An orjson round trip is ~3x faster than walking the value in Python (5 us against 14 us
    for a 600-byte pod) and far cheaper than ``copy.deepcopy``; values orjson cannot encode
    (integers beyond 64 bits, non-string keys) are copied by the walk."""
    try:
        return cast(_T, json_loads(json_dumps(value), max_depth=None))
    except (TypeError, orjson.JSONEncodeError):
        return cast(_T, _copy(value))


def meta(obj: Object) -> dict[str, Any]:
    """``obj["metadata"]`` as a dict the caller may change (created when missing)."""
    value = obj.get("metadata")
    if not isinstance(value, dict):
        value = {}
        obj["metadata"] = value
    return value


def read_meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    value = obj.get("metadata")
    return value if isinstance(value, Mapping) else {}
