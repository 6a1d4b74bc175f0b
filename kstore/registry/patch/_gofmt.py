"""Go's renderings of JSON values, for error messages and field-set keys that must read exactly
as Kubernetes writes them.

- :func:`go_v` is ``fmt.Sprintf("%v", x)`` of a decoded JSON value (``map[a:1 b:[x y]]``,
  ``<nil>``), which Kubernetes' patch errors embed;
- :func:`go_q` is ``%q`` of a string (Go escapes, double quotes);
- :func:`go_json` is ``encoding/json``'s compact output: sorted object keys, ``<``, ``>``,
  ``&``, U+2028 and U+2029 escaped, floats in Go's shortest form (``1`` not ``1.0``);
- :func:`smd_string` is structured-merge-diff's ``value.ToString`` (conflict paths).
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

__all__ = ["go_float", "go_json", "go_q", "go_v", "smd_string"]


def _shortest(f: float) -> tuple[str, int]:
    """The shortest decimal digits of ``f`` (no sign) and the exponent of the first one."""
    _, digits, exponent = Decimal(repr(abs(f))).normalize().as_tuple()
    text = "".join(map(str, digits)) or "0"
    assert isinstance(exponent, int)
    return text, exponent + len(text) - 1


def _e_form(digits: str, exp: int) -> str:
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"


def _f_form(digits: str, exp: int) -> str:
    if exp < 0:
        return "0." + "0" * (-exp - 1) + digits
    if len(digits) <= exp + 1:
        return digits + "0" * (exp + 1 - len(digits))
    return digits[: exp + 1] + "." + digits[exp + 1 :]


def go_float(f: float, *, json_form: bool = False) -> str:
    """A float as Go prints it: ``%v`` (shortest ``%g``: exponent form when the exponent is
    below -4 or at least 6) or, with ``json_form``, as encoding/json writes it (exponent form
    below 1e-6 and from 1e21 on, without a leading zero in the exponent)."""
    if f == 0:
        return "0"
    sign = "-" if f < 0 else ""
    digits, exp = _shortest(f)
    if json_form:
        if abs(f) < 1e-6 or abs(f) >= 1e21:
            text = _e_form(digits, exp)
            return sign + text.replace("e-0", "e-").replace("e+0", "e+")
        return sign + _f_form(digits, exp)
    if exp < -4 or exp >= 6:
        return sign + _e_form(digits, exp)
    return sign + _f_form(digits, exp)


def go_v(value: Any) -> str:
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        inner = " ".join(f"{k}:{go_v(value[k])}" for k in sorted(value))
        return f"map[{inner}]"
    if isinstance(value, list):
        return "[" + " ".join(go_v(v) for v in value) + "]"
    return str(value)


def go_q(s: str) -> str:
    """Go's ``%q``: a double-quoted string with Go escapes (printable runes kept as is)."""
    out = ['"']
    for ch in s:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif not ch.isprintable() and code > 0x7F:
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


_HTML_ESCAPES = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("&", "\\u0026"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)


def _escape(text: str) -> str:
    for raw, escaped in _HTML_ESCAPES:
        if raw in text:
            text = text.replace(raw, escaped)
    return text


def go_json(value: Any) -> str:
    """Compact JSON as Go's encoding/json writes a decoded value."""
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return json.dumps(value)
    if isinstance(value, float):
        return go_float(value, json_form=True)
    if isinstance(value, str):
        return _escape(json.dumps(value, ensure_ascii=False))
    if isinstance(value, dict):
        parts = (f"{go_json(k)}:{go_json(value[k])}" for k in sorted(value))
        return "{" + ",".join(parts) + "}"
    if isinstance(value, list):
        return "[" + ",".join(go_json(v) for v in value) + "]"
    raise TypeError(f"not a JSON value: {value!r}")


def smd_string(value: Any) -> str:
    """structured-merge-diff's rendering of a value inside a field path."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, str):
        return go_q(value)
    if isinstance(value, list):
        return "[" + ",".join(smd_string(v) for v in value) + "]"
    if isinstance(value, dict):
        return "".join(f"{k}={smd_string(v)}" for k, v in value.items())
    return str(value)
