"""``<string>.format(<list>)``: cel-go's strings extension (version 2) formatting clauses.

``%s`` any value (lists and maps as CEL literals, map entries sorted by key, strings inside
them quoted), ``%d`` integers, ``%f`` / ``%e`` doubles with an optional ``.N`` precision
(default 6; printed through an en-US locale printer, so ``%f`` groups thousands with commas
and ``%e`` writes a times sign and a superscript exponent), ``%b`` integers and bools,
``%x`` / ``%X`` integers, strings and bytes, ``%o`` integers, ``%%`` a percent sign. Errors
carry cel-go's texts (``error during formatting: decimal clause can only be used on integers,
was given string``).
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Callable
from typing import Any, Final

from kstore.api.cel._stdlib import to_string
from kstore.api.cel._values import LIST_TYPES, CelType, EvalError, NoOverload, UInt, type_of

__all__ = ["format_string"]

_SUPERSCRIPT: Final = str.maketrans("0123456789-+", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺")


class _FormatError(Exception):
    pass


def _type_name(v: Any) -> str:
    return type_of(v).name


def _is_int(v: Any) -> bool:
    return type(v) is int or type(v) is UInt


def _quote(v: Any, text: str) -> str:
    if type(v) is str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if type(v) is bytes:
        return 'b"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if type(v) is float and (math.isinf(v) or math.isnan(v)):
        return f'"{text}"'
    return text


def _member(v: Any) -> str:
    if _is_int(v):
        return str(int(v))
    if type(v) is float:
        return f"{v:.6f}"
    if type(v) in (datetime.datetime, datetime.timedelta):
        kind = "timestamp" if type(v) is datetime.datetime else "duration"
        return f'{kind}("{to_string(v)}")'
    if type(v) is CelType:
        return f"type({v.name})"
    return _string(v)


def _string(v: Any) -> str:
    t = type(v)
    if t in LIST_TYPES:
        return "[" + ", ".join(_quote(x, _member(x)) for x in v) + "]"
    if t is dict:
        pairs = []
        for k, x in v.items():
            if type(k) not in (str, bool, int, UInt):
                raise _FormatError(f"no formatting function for map key of type {_type_name(k)}")
            key = _quote(k, str(int(k)) if _is_int(k) else to_string(k))
            pairs.append((key, _quote(x, _member(x))))
        pairs.sort(key=lambda p: p[0])
        return "{" + ", ".join(f"{k}:{x}" for k, x in pairs) + "}"
    if v is None:
        return "null"
    if t is CelType:
        return str(v.name)
    if t is bytes:
        return bytes(v).decode("utf-8", errors="replace")
    try:
        return to_string(v)
    except EvalError as exc:
        raise _FormatError(
            "string clause can only be used on strings, bools, bytes, ints, doubles, maps, "
            f"lists, types, durations, and timestamps, was given {_type_name(v)}"
        ) from exc


def _decimal(v: Any) -> str:
    if not _is_int(v):
        raise _FormatError(
            f"decimal clause can only be used on integers, was given {_type_name(v)}"
        )
    return str(int(v))


def _as_double(v: Any, clause: str) -> float:
    if type(v) is float:
        return float(v)
    if type(v) is str and v in ("Infinity", "-Infinity", "NaN"):
        return float(v.replace("Infinity", "inf"))
    raise _FormatError(f"{clause} clause can only be used on doubles, was given {_type_name(v)}")


def _fixed(precision: int | None) -> Callable[[Any], str]:
    def fixed(v: Any) -> str:
        f = _as_double(v, "fixed-point")
        if math.isnan(f):
            return "NaN"
        if math.isinf(f):
            return "∞" if f > 0 else "-∞"
        return f"{f:,.{6 if precision is None else precision}f}"

    return fixed


def _scientific(precision: int | None) -> Callable[[Any], str]:
    def scientific(v: Any) -> str:
        f = _as_double(v, "scientific")
        if math.isnan(f):
            return "NaN"
        if math.isinf(f):
            return "∞" if f > 0 else "-∞"
        mantissa, _, exponent = f"{f:.{6 if precision is None else precision}e}".partition("e")
        sign = "-" if exponent.startswith("-") else ""
        digits = exponent.lstrip("+-").rjust(2, "0")
        return f"{mantissa}\u00d710{(sign + digits).translate(_SUPERSCRIPT)}"

    return scientific


def _binary(v: Any) -> str:
    if type(v) is bool:
        return "1" if v else "0"
    if _is_int(v):
        return format(int(v), "b")
    raise _FormatError(
        f"only integers and bools can be formatted as binary, was given {_type_name(v)}"
    )


def _hex(upper: bool) -> Callable[[Any], str]:
    def hexadecimal(v: Any) -> str:
        if _is_int(v):
            text = format(int(v), "x")
        elif type(v) is str:
            text = str(v).encode().hex()
        elif type(v) is bytes:
            text = bytes(v).hex()
        else:
            raise _FormatError(
                "only integers, byte buffers, and strings can be formatted as hex, was given "
                + _type_name(v)
            )
        return text.upper() if upper else text

    return hexadecimal


def _octal(v: Any) -> str:
    if not _is_int(v):
        raise _FormatError(f"octal clause can only be used on integers, was given {_type_name(v)}")
    return format(int(v), "o")


def format_string(template: Any, args: Any) -> str:
    if type(template) is not str or type(args) not in LIST_TYPES:
        raise NoOverload()
    out: list[str] = []
    i, index = 0, 0
    while i < len(template):
        ch = template[i]
        if ch != "%":
            out.append(ch)
            i += 1
            continue
        if template.startswith("%%", i):
            out.append("%")
            i += 2
            continue
        if index >= len(args):
            raise EvalError(f"index {index} out of range")
        if i + 1 >= len(template):
            raise EvalError("unexpected end of string")
        i += 1
        precision: int | None = None
        if template[i] == ".":
            j = i + 1
            while j < len(template) and template[j].isdigit():
                j += 1
            if j >= len(template):
                raise EvalError(
                    "could not parse formatting clause: error while parsing precision: "
                    "could not find end of precision specifier"
                )
            precision = int(template[i + 1 : j] or "0")
            i = j
        verb = template[i]
        i += 1
        clauses: dict[str, Callable[[Any], str]] = {
            "s": _string,
            "d": _decimal,
            "f": _fixed(precision),
            "e": _scientific(precision),
            "b": _binary,
            "x": _hex(False),
            "X": _hex(True),
            "o": _octal,
        }
        clause = clauses.get(verb)
        if clause is None:
            raise EvalError(
                f'could not parse formatting clause: unrecognized formatting clause "{verb}"'
            )
        try:
            out.append(clause(args[index]))
        except _FormatError as exc:
            raise EvalError(f"error during formatting: {exc}") from None
        index += 1
    return "".join(out)
