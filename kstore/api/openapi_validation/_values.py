"""How Go sees a decoded JSON value: its kind, number conversions, equality and ``%v`` text.

kube-apiserver decodes a custom resource into Go ``interface{}`` values: ``map[string]interface{}``,
``[]interface{}``, ``string``, ``bool``, ``int64`` (a JSON number that parses as one) or
``float64`` (any other number, including ``1.0`` and integers beyond int64), and ``nil``. The
validator works on the same values held as Python ``dict``/``list``/``str``/``bool``/``int``/
``float``/``None``; this module holds the Go behaviours that differ from Python's:

- ``True == 1`` and ``1 == 1.0`` in Python, never in Go's ``reflect.DeepEqual``
  (:func:`deep_equal` compares kinds first);
- a float converted to int64 truncates toward zero; out of range it is what amd64 produces,
  ``-2**63`` (:func:`float_to_int64`);
- ``%v`` of values inside messages (:func:`go_v`).
"""

from __future__ import annotations

import math
import struct
from decimal import Decimal
from typing import Any, Final

from kstore.api.validation._render import render_value

__all__ = [
    "ARRAY",
    "BOOLEAN",
    "INTEGER",
    "NULL",
    "NUMBER",
    "OBJECT",
    "STRING",
    "deep_equal",
    "float_to_int64",
    "format_f",
    "go_v",
    "int_to_go_string",
    "is_json_integer",
    "kind_of",
    "overflows_float32",
]

OBJECT: Final = "object"
ARRAY: Final = "array"
STRING: Final = "string"
INTEGER: Final = "integer"
NUMBER: Final = "number"
BOOLEAN: Final = "boolean"
NULL: Final = "null"

MIN_INT64: Final = -(1 << 63)
MAX_INT64: Final = (1 << 63) - 1

_KINDS: Final[dict[type, str]] = {
    dict: OBJECT,
    list: ARRAY,
    tuple: ARRAY,
    str: STRING,
    bool: BOOLEAN,
    float: NUMBER,
}


def kind_of(value: Any) -> str:
    """The JSON type kube-openapi infers for a value (an ``int`` beyond int64 is a ``number``)."""
    kind = _KINDS.get(type(value))
    if kind is not None:
        return kind
    if type(value) is int:
        return INTEGER if MIN_INT64 <= value <= MAX_INT64 else NUMBER
    if value is None:
        return NULL
    if isinstance(value, bool):
        return BOOLEAN
    if isinstance(value, int):
        return INTEGER if MIN_INT64 <= value <= MAX_INT64 else NUMBER
    if isinstance(value, float):
        return NUMBER
    if isinstance(value, str):
        return STRING
    if isinstance(value, dict):
        return OBJECT
    if isinstance(value, (list, tuple)):
        return ARRAY
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def float_to_int64(f: float) -> int:
    """Go's ``int64(f)`` on amd64: truncation, and ``-2**63`` when out of range."""
    if math.isnan(f) or not -9.223372036854775808e18 <= f < 9.223372036854775808e18:
        return MIN_INT64
    return int(f)


def is_json_integer(f: float) -> bool:
    """go-openapi's ``IsFloat64AJSONInteger``: within ±(2**53-1) and within 1e-9 (relative) of
    an integer."""
    if math.isnan(f) or math.isinf(f) or abs(f) > 9007199254740991.0:
        return False
    rounded = float(math.trunc(f))
    if abs(f - rounded) >= 0.5:
        rounded += math.copysign(1.0, f)
    if f == rounded:
        return True
    if rounded == 0:
        return False
    return abs(f - rounded) < 1e-9 * abs(rounded)


def format_f(value: int | float) -> str:
    """``strconv.FormatFloat(f, 'f', -1, 64)`` for a float, ``FormatInt`` for an int."""
    if isinstance(value, int):
        return str(value)
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    text = format(Decimal(repr(value)), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def overflows_float32(value: int | float) -> bool:
    """Whether ``strconv.ParseFloat(s, 32)`` reports a range error for this number."""
    try:
        struct.pack("<f", float(value))
    except OverflowError:
        return True
    return False


def int_to_go_string(i: int) -> str:
    """Go's ``string(rune(i))`` conversion of an integer: invalid code points become U+FFFD."""
    if 0 <= i <= 0x10FFFF and not 0xD800 <= i <= 0xDFFF:
        return chr(i)
    return "\ufffd"


def deep_equal(a: Any, b: Any) -> bool:
    """``reflect.DeepEqual`` of two decoded JSON values: kinds must match, then values."""
    ka = kind_of(a)
    if ka != kind_of(b):
        return False
    if ka == OBJECT:
        if len(a) != len(b):
            return False
        return all(key in b and deep_equal(value, b[key]) for key, value in a.items())
    if ka == ARRAY:
        return len(a) == len(b) and all(deep_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def go_v(value: Any) -> str:
    """Go's ``%v`` of a decoded JSON value (maps print sorted, as ``fmt`` prints them)."""
    if value is None:
        return "<nil>"
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        items = " ".join(f"{k}:{go_v(value[k])}" for k in sorted(value))
        return f"map[{items}]"
    if isinstance(value, (list, tuple)):
        return "[" + " ".join(go_v(v) for v in value) + "]"
    return render_value(value)
