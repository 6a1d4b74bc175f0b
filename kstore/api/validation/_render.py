"""How Kubernetes prints a bad value inside a field error, reproduced for Python values.

Kubernetes (``field.Error.ErrorBody``) prints a value by its Go type: ``bool``, ``int32``,
``int64`` and ``float64`` with ``%v``, a plain ``string`` with ``%q``, and anything else (named
string types such as ``RestartPolicy``, pointers, structs, maps, slices) with ``json.Marshal``.
A Python value carries no Go type, so the caller says which rendering applies:

- ``str`` renders as Go's ``%q`` (:func:`go_quote`);
- ``bool``/``int``/``float`` render as ``%v``;
- :class:`JSONValue` wraps anything that Kubernetes renders with ``json.Marshal``;
- ``dict``/``list``/``None`` always render as JSON (Go maps sort their keys; a :class:`GoStruct`
  keeps its field order, as Go structs do).

Invariant: the output is byte-for-byte what Go prints for the equivalent Go value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = ["GoStruct", "JSONValue", "go_json", "go_quote", "render_value"]

_SHORT_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}


class GoStruct(dict[str, Any]):
    """A dict standing for a Go struct: JSON keeps its insertion (field) order."""


@dataclass(frozen=True, slots=True)
class JSONValue:
    """A value Kubernetes renders with ``json.Marshal`` (its Go type is not a plain scalar)."""

    value: Any


def go_quote(s: str) -> str:
    """Go's ``strconv.Quote``: double quotes, printable runes kept, the rest escaped."""
    if s.isascii() and s.isprintable() and '"' not in s and "\\" not in s:
        return f'"{s}"'
    out = ['"']
    for ch in s:
        esc = _SHORT_ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
            continue
        code = ord(ch)
        # Python's isprintable() and Go's unicode.IsPrint agree: categories L, M, N, P, S and
        # the ASCII space are printable; C* and Z* (other than U+0020) are not.
        if ch.isprintable() and not 0xD800 <= code <= 0xDFFF:
            out.append(ch)
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif 0xD800 <= code <= 0xDFFF:
            # A lone surrogate is invalid UTF-8 to Go: it prints the replacement character.
            out.append("\ufffd")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def _json_string(s: str) -> str:
    out = ['"']
    for ch in s:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch in "\b\f\n\r\t":
            out.append(_SHORT_ESCAPES[ch])
        elif code < 0x20:
            out.append(f"\\u{code:04x}")
        elif ch in "<>&" or code in (0x2028, 0x2029):
            # encoding/json escapes HTML-significant characters and JS line separators.
            out.append(f"\\u{code:04x}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append("\ufffd")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _shortest_digits(f: float) -> tuple[str, int]:
    """Shortest round-trip decimal digits of ``abs(f)`` and the decimal point position."""
    mantissa, _, exp = repr(abs(f)).partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    point = len(whole) + (int(exp) if exp else 0)
    if not digits:
        return "0", 1
    # Leading zeros stripped from "0.00123" move the point left.
    point -= len(whole + frac) - len((whole + frac).lstrip("0"))
    return digits.rstrip("0") or "0", point


def _go_float_v(f: float) -> str:
    """Go's ``%v`` for a float64 (``strconv.FormatFloat(f, 'g', -1, 64)``)."""
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "+Inf" if f > 0 else "-Inf"
    if f == 0:
        return "-0" if math.copysign(1.0, f) < 0 else "0"
    digits, point = _shortest_digits(f)
    sign = "-" if f < 0 else ""
    exp = point - 1
    # 'g' with the shortest digits uses %e when the exponent is < -4 or >= 6 (so 1e6 prints
    # as 1e+06, the familiar Go output).
    if exp < -4 or exp >= 6:
        return sign + _e_form(digits, exp)
    return sign + _f_form(digits, point)


def _go_float_json(f: float) -> str:
    """``encoding/json``'s float64: 'f' form in [1e-6, 1e21), else 'e' with a short exponent."""
    if math.isnan(f) or math.isinf(f):
        raise ValueError(f"json: unsupported value: {f}")
    if f == 0:
        return "-0" if math.copysign(1.0, f) < 0 else "0"
    digits, point = _shortest_digits(f)
    sign = "-" if f < 0 else ""
    a = abs(f)
    if a < 1e-6 or a >= 1e21:
        text = _e_form(digits, point - 1)
        # encoding/json writes e-7 where strconv writes e-07.
        mant, _, exp = text.partition("e")
        if exp.startswith("-0"):
            exp = "-" + exp[2:]
        return sign + mant + "e" + exp
    return sign + _f_form(digits, point)


def _e_form(digits: str, exp: int) -> str:
    mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    sign = "-" if exp < 0 else "+"
    return f"{mant}e{sign}{abs(exp):02d}"


def _f_form(digits: str, point: int) -> str:
    if point <= 0:
        return "0." + "0" * (-point) + digits
    if point >= len(digits):
        return digits + "0" * (point - len(digits))
    return digits[:point] + "." + digits[point:]


def go_json(value: Any) -> str:
    """``json.Marshal`` of the Go value this Python value stands for (compact, HTML-escaped)."""
    if isinstance(value, JSONValue):
        value = value.value
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_float_json(value)
    if isinstance(value, str):
        return _json_string(value)
    if isinstance(value, GoStruct):
        items = list(value.items())
        return "{" + ",".join(f"{_json_string(k)}:{go_json(v)}" for k, v in items) + "}"
    if isinstance(value, dict):
        keys = sorted(value, key=str)
        return "{" + ",".join(f"{_json_string(str(k))}:{go_json(value[k])}" for k in keys) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(go_json(v) for v in value) + "]"
    raise TypeError(f"cannot render {type(value).__name__} as JSON")


def render_value(value: Any) -> str:
    """The value as ``field.Error`` prints it after ``Invalid value: `` and friends."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_float_v(value)
    if isinstance(value, str):
        return go_quote(value)
    return go_json(value)
