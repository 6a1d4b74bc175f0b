"""CEL's standard functions: operators, equality and ordering, conversions, ``size``,
``contains``/``startsWith``/``endsWith``/``matches``, durations and timestamps.

Each entry of :data:`FUNCTIONS` takes the call's arguments (the receiver first for a member
call) and returns the value or raises :class:`~kstore.api.cel._values.EvalError` with cel-go's
message. Overloads are picked by the Python types of the arguments at run time; the checker
has already rejected what it could prove wrong, so a mismatch here is ``no such overload``.

Semantics kept from CEL (and differing from Python): ``int`` is 64-bit and overflow is an
error; ``/`` and ``%`` truncate toward zero; ``bool`` is not a number; equality across
``int``/``uint``/``double`` compares values, across other types is false; ``size`` of a string
counts code points; double division by zero is an infinity, not an error.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any, Final

import re2

from kstore.api.cel._values import (
    INT_MAX,
    INT_MIN,
    LIST_TYPES,
    NONE,
    SIZED_TYPES,
    UINT_MAX,
    CelType,
    EvalError,
    MapList,
    NoOverload,
    Optional,
    SetList,
    UInt,
    type_of,
)

__all__ = [
    "FUNCTIONS",
    "MISSING",
    "NUMERIC",
    "cel_add",
    "cel_equal",
    "cel_in",
    "compare",
    "regex",
    "require_strings",
    "to_string",
]

NUMERIC: Final = (int, UInt, float)
MISSING: Final = object()


def _int(v: int) -> int:
    if v > INT_MAX or v < INT_MIN:
        raise EvalError("integer overflow")
    return v


def _uint(v: int) -> UInt:
    if v > UINT_MAX or v < 0:
        raise EvalError("unsigned integer overflow")
    return UInt(v)


def cel_equal(a: Any, b: Any) -> bool:
    ta, tb = type(a), type(b)
    if ta is tb and (ta is str or ta is int or ta is float or ta is bool):
        return bool(a == b)
    if ta in NUMERIC and tb in NUMERIC:
        return bool(a == b)
    if ta is bool or tb is bool:
        return False
    if ta in LIST_TYPES and tb in LIST_TYPES:
        if len(a) != len(b):
            return False
        if ta is SetList or tb is SetList:
            return all(any(cel_equal(x, y) for y in a) for x in b)
        if ta is MapList or tb is MapList:
            keyed, other = (a, b) if ta is MapList else (b, a)
            return all(cel_equal(x, _find_by_key(keyed, x)) for x in other)
        return all(cel_equal(x, y) for x, y in zip(a, b, strict=True))
    if ta is dict and tb is dict:
        if len(a) != len(b):
            return False
        return all(k in b and cel_equal(v, b[k]) for k, v in a.items())
    if ta is not tb:
        return False
    return bool(a == b)


def _find_by_key(items: MapList, item: Any) -> Any:
    key = items.key_of(item)
    for candidate in items:
        if key is not None and items.key_of(candidate) == key:
            return candidate
    return MISSING


def _concat(a: Any, b: Any) -> list[Any]:
    # The left operand's list type decides, as in Kubernetes' list values.
    if type(a) is SetList:
        out = SetList(a)
        for x in b:
            if not any(cel_equal(x, y) for y in out):
                out.append(x)
        return out
    if type(a) is MapList:
        merged = MapList(a, a.keys)
        positions = {merged.key_of(x): i for i, x in enumerate(merged)}
        for x in b:
            key = merged.key_of(x)
            if key is not None and key in positions:
                merged[positions[key]] = x
            else:
                positions[key] = len(merged)
                merged.append(x)
        return merged
    return [*a, *b]


def compare(a: Any, b: Any) -> int:
    ta, tb = type(a), type(b)
    if ta in NUMERIC and tb in NUMERIC:
        if (isinstance(a, float) and math.isnan(a)) or (isinstance(b, float) and math.isnan(b)):
            raise EvalError("NaN values cannot be ordered")
        return int(a > b) - int(a < b)
    if ta is tb and ta in (str, bytes, bool, datetime.timedelta, datetime.datetime):
        return int(a > b) - int(a < b)
    if ta is tb and hasattr(a, "compare_to"):
        return int(a.compare_to(b))
    raise NoOverload()


def cel_add(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        return _int(a + b)
    if ta is float and tb is float:
        return a + b
    if ta is str and tb is str:
        return a + b
    if ta in LIST_TYPES and tb in LIST_TYPES:
        return _concat(a, b)
    if ta is UInt and tb is UInt:
        return _uint(a + b)
    if ta is bytes and tb is bytes:
        return a + b
    if ta is datetime.timedelta and tb is datetime.timedelta:
        return a + b
    if ta is datetime.datetime and tb is datetime.timedelta:
        return a + b
    if ta is datetime.timedelta and tb is datetime.datetime:
        return b + a
    raise NoOverload()


def _sub(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        return _int(a - b)
    if ta is float and tb is float:
        return a - b
    if ta is UInt and tb is UInt:
        return _uint(a - b)
    if ta is datetime.timedelta and tb is datetime.timedelta:
        return a - b
    if ta is datetime.datetime and tb in (datetime.timedelta, datetime.datetime):
        return a - b
    raise NoOverload()


def _mul(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        return _int(a * b)
    if ta is float and tb is float:
        return a * b
    if ta is UInt and tb is UInt:
        return _uint(a * b)
    raise NoOverload()


def _div(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is float and tb is float:
        if b == 0.0:
            if a == 0.0 or math.isnan(a):
                return math.nan
            return math.copysign(math.inf, a) * math.copysign(1.0, b)
        return a / b
    if (ta is int and tb is int) or (ta is UInt and tb is UInt):
        if b == 0:
            raise EvalError("division by zero")
        q = abs(a) // abs(b)
        q = q if (a >= 0) == (b >= 0) else -q
        return _int(q) if ta is int else UInt(q)
    raise NoOverload()


def _mod(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if (ta is int and tb is int) or (ta is UInt and tb is UInt):
        if b == 0:
            raise EvalError("modulus by zero")
        r = abs(a) % abs(b)
        r = r if a >= 0 else -r
        return r if ta is int else UInt(r)
    raise NoOverload()


def _neg(a: Any) -> Any:
    if type(a) is int:
        return _int(-a)
    if type(a) is float:
        return -a
    if type(a) is datetime.timedelta:
        return -a
    raise NoOverload()


def _not(a: Any) -> bool:
    if type(a) is bool:
        return not a
    raise NoOverload()


def _index(container: Any, key: Any) -> Any:
    t = type(container)
    if t in LIST_TYPES:
        tk = type(key)
        if tk is float:
            if key != int(key):
                raise EvalError("unsupported index value")
            key = int(key)
        elif tk is not int and tk is not UInt:
            raise NoOverload()
        if key < 0 or key >= len(container):
            raise EvalError(f"index out of bounds: {key}")
        return container[key]
    if t is dict:
        try:
            return container[key]
        except (KeyError, TypeError):
            pass
        for k, v in container.items():
            if cel_equal(k, key):
                return v
        raise EvalError(f"no such key: {to_string(key)}")
    if hasattr(container, "cel_index"):
        return container.cel_index(key)
    raise NoOverload()


def _opt_index(container: Any, key: Any) -> Optional:
    if type(container) is Optional:
        if not container.has_value():
            return NONE
        container = container.value
    try:
        return Optional(_index(container, key))
    except EvalError as err:
        if isinstance(err, NoOverload):
            raise
        return NONE


def _opt_select(operand: Any, name: str) -> Optional:
    if type(operand) is Optional:
        if not operand.has_value():
            return NONE
        operand = operand.value
    if type(operand) is dict:
        # A null field is an absent field (Kubernetes' object fields).
        found = operand.get(name)
        return NONE if found is None else Optional(found)
    raise NoOverload()


def cel_in(elem: Any, container: Any) -> bool:
    t = type(container)
    if t in LIST_TYPES:
        return any(cel_equal(elem, x) for x in container)
    if t is dict:
        if type(elem) in (str, int) and elem in container:
            return True
        return any(cel_equal(elem, k) for k in container)
    raise NoOverload()


def _size(v: Any) -> int:
    t = type(v)
    if t in SIZED_TYPES:
        return len(v)
    raise NoOverload()


_REGEX_CACHE: dict[str, Any] = {}
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False


def regex(pattern: str) -> Any:
    """A compiled RE2 pattern (cel-go's dialect; its ``search``/``finditer`` are ``re``'s), so
    that no rule's regular expression can take more than linear time on a crafted value."""
    found = _REGEX_CACHE.get(pattern)
    if found is None:
        try:
            found = re2.compile(pattern, _RE2_OPTIONS)
        except re2.error as exc:
            raise EvalError(f"invalid regex string: {pattern}") from exc
        if len(_REGEX_CACHE) < 4096:
            _REGEX_CACHE[pattern] = found
    return found


def require_strings(*args: Any) -> None:
    for a in args:
        if type(a) is not str:
            raise NoOverload()


_UNANCHORED: Final = re2._Anchor.UNANCHORED


def _matches(s: Any, pattern: Any) -> bool:
    require_strings(s, pattern)
    compiled = regex(pattern)
    # Only whether it matches: RE2's own match over the UTF-8 bytes, without the wrapper's
    # translation of every byte offset back to a str offset (a fifth of the cost).
    engine = getattr(compiled, "_regexp", None)
    if engine is None:
        return compiled.search(s) is not None
    text = s.encode()
    return bool(engine.Match(_UNANCHORED, text, 0, len(text))[0][0] != -1)


def _contains(s: Any, sub: Any) -> bool:
    require_strings(s, sub)
    return bool(sub in s)


def _starts(s: Any, p: Any) -> bool:
    require_strings(s, p)
    return bool(s.startswith(p))


def _ends(s: Any, p: Any) -> bool:
    require_strings(s, p)
    return bool(s.endswith(p))


def _go_float(f: float) -> str:
    """Go's ``strconv.FormatFloat(f, 'g', -1, 64)``, which cel-go's ``string(double)`` uses."""
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "+Inf" if f > 0 else "-Inf"
    if f == 0:
        return "-0" if math.copysign(1.0, f) < 0 else "0"
    # repr() gives the shortest digits that round-trip, as Go's shortest formatting does.
    _, digit_tuple, exponent = Decimal(repr(abs(f))).normalize().as_tuple()
    digits = "".join(map(str, digit_tuple))
    point = len(digits) + int(exponent)  # digits before the decimal point
    sign = "-" if f < 0 else ""
    # Go uses %e when the exponent is < -4 or >= the precision (6 for the shortest form,
    # or the digit count when all digits sit before the point).
    eprec = len(digits) if 6 > len(digits) >= point else 6
    exp = point - 1
    if exp < -4 or exp >= eprec:
        body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{body}e{'+' if exp >= 0 else '-'}{abs(exp):02d}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"


def to_string(v: Any) -> str:
    t = type(v)
    if t is str:
        return str(v)
    if t is bool:
        return "true" if v else "false"
    if t is int or t is UInt:
        return str(int(v))
    if t is float:
        return _go_float(v)
    if t is bytes:
        try:
            return bytes(v).decode()
        except UnicodeDecodeError as exc:
            raise EvalError("invalid UTF-8 in bytes, cannot convert to string") from exc
    if t is datetime.timedelta:
        return _format_duration(v)
    if t is datetime.datetime:
        return _format_timestamp(v)
    if hasattr(v, "cel_string"):
        return str(v.cel_string())
    raise NoOverload()


def _to_int(v: Any) -> int:
    t = type(v)
    if t is int:
        return int(v)
    if t is UInt:
        return _int(int(v))
    if t is float:
        if math.isnan(v) or math.isinf(v) or not (INT_MIN <= v < 2.0**63):
            raise EvalError("integer overflow")
        return int(v)
    if t is str:
        try:
            return _int(int(v, 10))
        except ValueError as exc:
            raise EvalError(f"cannot convert {v!r} to int") from exc
    if t is datetime.datetime:
        return int(v.timestamp())
    raise NoOverload()


def _to_uint(v: Any) -> UInt:
    t = type(v)
    if t is int or t is UInt:
        return _uint(int(v))
    if t is float:
        if math.isnan(v) or not (0 <= v < 2.0**64):
            raise EvalError("unsigned integer overflow")
        return UInt(int(v))
    if t is str:
        try:
            return _uint(int(v, 10))
        except ValueError as exc:
            raise EvalError(f"cannot convert {v!r} to uint") from exc
    raise NoOverload()


def _to_double(v: Any) -> float:
    t = type(v)
    if t in NUMERIC:
        return float(v)
    if t is str:
        try:
            return float(v)
        except ValueError as exc:
            raise EvalError(f"cannot convert {v!r} to double") from exc
    raise NoOverload()


def _to_bool(v: Any) -> bool:
    if type(v) is bool:
        return bool(v)
    if type(v) is str:
        if v in ("1", "t", "T", "true", "TRUE", "True"):
            return True
        if v in ("0", "f", "F", "false", "FALSE", "False"):
            return False
        raise EvalError("type conversion error from 'string' to 'bool'")
    raise NoOverload()


def _to_bytes(v: Any) -> bytes:
    if type(v) is bytes:
        return bytes(v)
    if type(v) is str:
        return str(v).encode()
    raise NoOverload()


_DURATION_RE: Final = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|ms|s|m|h)")
_UNIT_NS: Final = {"ns": 1, "us": 10**3, "µs": 10**3, "ms": 10**6, "s": 10**9, "m": 60 * 10**9}
_UNIT_NS["h"] = 3600 * 10**9


def _duration(v: Any) -> datetime.timedelta:
    if type(v) is datetime.timedelta:
        return v
    if type(v) is not str:
        raise NoOverload()
    text = str(v)
    sign = 1
    if text[:1] in "+-" and text:
        sign = -1 if text[0] == "-" else 1
        text = text[1:]
    if text == "0":
        return datetime.timedelta(0)
    pos, total = 0, 0.0
    while pos < len(text):
        m = _DURATION_RE.match(text, pos)
        if m is None or m.group(1) in ("", "."):
            raise EvalError(f'time: invalid duration "{v}"')
        total += float(m.group(1)) * _UNIT_NS[m.group(2)]
        pos = m.end()
    if not text:
        raise EvalError(f'time: invalid duration "{v}"')
    return datetime.timedelta(microseconds=sign * total / 1000)


def _format_duration(d: datetime.timedelta) -> str:
    seconds = d.total_seconds()
    text = f"{seconds:.9f}".rstrip("0").rstrip(".")
    return f"{text}s"


def _timestamp(v: Any) -> datetime.datetime:
    if type(v) is datetime.datetime:
        return v
    if type(v) is int:
        return datetime.datetime.fromtimestamp(v, tz=datetime.UTC)
    if type(v) is not str:
        raise NoOverload()
    text = str(v)
    try:
        parsed = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise EvalError(f'parsing time "{text}" as "2006-01-02T15:04:05Z07:00"') from exc
    if parsed.tzinfo is None or "T" not in text:
        raise EvalError(f'parsing time "{text}" as "2006-01-02T15:04:05Z07:00"')
    return parsed.astimezone(datetime.UTC)


def _format_timestamp(t: datetime.datetime) -> str:
    text = t.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S")
    if t.microsecond:
        text += f".{t.microsecond:06d}".rstrip("0")
    return text + "Z"


def _type(v: Any) -> CelType:
    return type_of(v)


FUNCTIONS: Final[dict[str, Callable[..., Any]]] = {
    "_+_": cel_add,
    "_-_": _sub,
    "_*_": _mul,
    "_/_": _div,
    "_%_": _mod,
    "-_": _neg,
    "!_": _not,
    "_==_": cel_equal,
    "_!=_": lambda a, b: not cel_equal(a, b),
    "_<_": lambda a, b: compare(a, b) < 0,
    "_<=_": lambda a, b: compare(a, b) <= 0,
    "_>_": lambda a, b: compare(a, b) > 0,
    "_>=_": lambda a, b: compare(a, b) >= 0,
    "_[_]": _index,
    "_[?_]": _opt_index,
    "_?._": _opt_select,
    "@in": cel_in,
    "size": _size,
    "contains": _contains,
    "startsWith": _starts,
    "endsWith": _ends,
    "matches": _matches,
    "int": _to_int,
    "uint": _to_uint,
    "double": _to_double,
    "string": to_string,
    "bool": _to_bool,
    "bytes": _to_bytes,
    "duration": _duration,
    "timestamp": _timestamp,
    "type": _type,
    "dyn": lambda v: v,
}
