"""CEL extensions Kubernetes 1.36 enables, beside the standard functions.

- cel-go's strings extension, version 2: ``charAt``, ``indexOf``, ``lastIndexOf``,
  ``lowerAscii``, ``upperAscii``, ``replace``, ``split``, ``substring``, ``trim``, ``join``,
  ``strings.quote`` (``format`` is :mod:`._format`);
- Kubernetes' lists library (``isSorted``, ``sum``, ``min``, ``max``, ``indexOf``,
  ``lastIndexOf``) and cel-go's lists extension, version 3 (``slice``, ``flatten``,
  ``distinct``, ``reverse``, ``sort``, ``lists.range``, ``sortBy`` via
  ``lists.@sortByAssociatedKeys``);
- the sets extension, optional values, two-variable comprehensions' ``cel.@mapInsert``;
- timestamp and duration accessors (``getHours()``...), with an optional time zone.
"""

from __future__ import annotations

import datetime
import functools
import zoneinfo
from collections.abc import Callable
from typing import Any, Final

from kstore.api.cel._stdlib import (
    MISSING,
    NUMERIC,
    cel_add,
    cel_equal,
    cel_in,
    compare,
    require_strings,
    to_string,
)
from kstore.api.cel._values import (
    LIST_TYPES,
    NONE,
    SIZED_TYPES,
    EvalError,
    NoOverload,
    Optional,
)

__all__ = ["EXTENSIONS"]


# --- timestamp and duration accessors ---------------------------------------------------------


def _zone(tz: Any) -> datetime.tzinfo:
    if type(tz) is not str:
        raise NoOverload()
    text = str(tz)
    if text and text[0] in "+-" and ":" in text:
        hours, _, minutes = text[1:].partition(":")
        offset = datetime.timedelta(hours=int(hours), minutes=int(minutes))
        return datetime.timezone(offset if text[0] == "+" else -offset)
    if text in ("UTC", "Z", ""):
        return datetime.UTC
    try:
        return zoneinfo.ZoneInfo(text)
    except (ValueError, zoneinfo.ZoneInfoNotFoundError) as exc:
        raise EvalError(f"unknown time zone {text}") from exc


def _time_part(part: Callable[[datetime.datetime], int]) -> Callable[..., int]:
    def accessor(t: Any, tz: Any = None) -> int:
        if type(t) is not datetime.datetime:
            raise NoOverload()
        local = t.astimezone(_zone(tz) if tz is not None else datetime.UTC)
        return part(local)

    return accessor


def _duration_part(part: Callable[[datetime.timedelta], int]) -> Callable[[Any], int]:
    def accessor(d: Any) -> int:
        if type(d) is not datetime.timedelta:
            raise NoOverload()
        return part(d)

    return accessor


def _truncate(x: float) -> int:
    return int(x)


_ACCESSORS: Final[dict[str, tuple[Callable[..., int], Callable[[Any], int] | None]]] = {
    "getFullYear": (_time_part(lambda t: t.year), None),
    "getMonth": (_time_part(lambda t: t.month - 1), None),
    "getDayOfYear": (_time_part(lambda t: t.timetuple().tm_yday - 1), None),
    "getDayOfMonth": (_time_part(lambda t: t.day - 1), None),
    "getDate": (_time_part(lambda t: t.day), None),
    "getDayOfWeek": (_time_part(lambda t: (t.weekday() + 1) % 7), None),
    "getHours": (
        _time_part(lambda t: t.hour),
        _duration_part(lambda d: _truncate(d.total_seconds() / 3600)),
    ),
    "getMinutes": (
        _time_part(lambda t: t.minute),
        _duration_part(lambda d: _truncate(d.total_seconds() / 60)),
    ),
    "getSeconds": (
        _time_part(lambda t: t.second),
        _duration_part(lambda d: _truncate(d.total_seconds())),
    ),
    "getMilliseconds": (
        _time_part(lambda t: t.microsecond // 1000),
        _duration_part(lambda d: _truncate(d.total_seconds() * 1000) % 1000),
    ),
}


def _accessor(name: str) -> Callable[..., int]:
    on_time, on_duration = _ACCESSORS[name]

    def accessor(value: Any, *tz: Any) -> int:
        if type(value) is datetime.timedelta and on_duration is not None and not tz:
            return on_duration(value)
        return on_time(value, *tz)

    return accessor


# --- strings extension --------------------------------------------------------------------


def _char_at(s: Any, i: Any) -> str:
    require_strings(s)
    if type(i) is not int:
        raise NoOverload()
    if i < 0 or i > len(s):
        raise EvalError(f"index out of range: {i}")
    return str(s[i : i + 1])


def _index_of(s: Any, sub: Any, start: Any = 0) -> int:
    if type(s) in LIST_TYPES:
        for i, x in enumerate(s):
            if cel_equal(x, sub):
                return i
        return -1
    require_strings(s, sub)
    if type(start) is not int:
        raise NoOverload()
    if start < 0 or start > len(s):
        raise EvalError(f"index out of range: {start}")
    return int(s.find(sub, start))


def _last_index_of(s: Any, sub: Any, end: Any = None) -> int:
    if type(s) in LIST_TYPES:
        for i in range(len(s) - 1, -1, -1):
            if cel_equal(s[i], sub):
                return i
        return -1
    require_strings(s, sub)
    if end is None:
        return int(s.rfind(sub))
    if type(end) is not int:
        raise NoOverload()
    if end < 0 or end >= len(s):
        raise EvalError(f"index out of range: {end}")
    return int(s.rfind(sub, 0, end + len(sub)))


def _lower_ascii(s: Any) -> str:
    require_strings(s)
    return "".join(c.lower() if c.isascii() else c for c in s)


def _upper_ascii(s: Any) -> str:
    require_strings(s)
    return "".join(c.upper() if c.isascii() else c for c in s)


def _replace(s: Any, old: Any, new: Any, n: Any = -1) -> str:
    require_strings(s, old, new)
    if type(n) is not int:
        raise NoOverload()
    return str(s.replace(old, new, n if n >= 0 else -1))


def _split(s: Any, sep: Any, n: Any = -1) -> list[str]:
    require_strings(s, sep)
    if type(n) is not int:
        raise NoOverload()
    if n == 0:
        return []
    if sep == "":
        chars = list(s)
        if 0 < n < len(chars):
            return [*chars[: n - 1], "".join(chars[n - 1 :])]
        return chars
    return list(s.split(sep, n - 1 if n > 0 else -1))


def _substring(s: Any, start: Any, end: Any = None) -> str:
    require_strings(s)
    stop = len(s) if end is None else end
    if type(start) is not int or type(stop) is not int:
        raise NoOverload()
    if start < 0 or start > len(s):
        raise EvalError(f"index out of range: {start}")
    if stop < 0 or stop > len(s):
        raise EvalError(f"index out of range: {stop}")
    if start > stop:
        raise EvalError(f"invalid substring range. start: {start}, end: {stop}")
    return str(s[start:stop])


# Go's unicode.IsSpace set, which strings.trim() uses.
_SPACE: Final = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def _trim(s: Any) -> str:
    require_strings(s)
    return str(s.strip(_SPACE))


def _join(items: Any, sep: Any = "") -> str:
    if type(items) not in LIST_TYPES or type(sep) is not str:
        raise NoOverload()
    for x in items:
        if type(x) is not str:
            raise NoOverload()
    return str(sep.join(items))


def _quote(s: Any) -> str:
    require_strings(s)
    out = ['"']
    for c in s:
        if c == '"':
            out.append('\\"')
        elif c == "\\":
            out.append("\\\\")
        elif c in "\a\b\f\n\r\t\v":
            out.append("\\" + "abfnrtv"["\a\b\f\n\r\t\v".index(c)])
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def _reverse(v: Any) -> Any:
    # strings.reverse is strings extension version 3; Kubernetes 1.36 enables version 2.
    if type(v) in LIST_TYPES:
        return list(reversed(v))
    raise NoOverload()


# --- lists extension (Kubernetes' library and cel-go ext.Lists) ---------------------------


def _list(v: Any) -> list[Any]:
    if type(v) not in LIST_TYPES:
        raise NoOverload()
    return v  # type: ignore[no-any-return]


def _is_sorted(v: Any) -> bool:
    items = _list(v)
    return all(compare(items[i], items[i + 1]) <= 0 for i in range(len(items) - 1))


def _sum(v: Any) -> Any:
    items = _list(v)
    if not items:
        return 0
    total = items[0]
    for x in items[1:]:
        total = cel_add(total, x)
    return total


def _min(v: Any) -> Any:
    items = _list(v)
    if not items:
        raise EvalError("min called on empty list")
    best = items[0]
    for x in items[1:]:
        if compare(x, best) < 0:
            best = x
    return best


def _max(v: Any) -> Any:
    items = _list(v)
    if not items:
        raise EvalError("max called on empty list")
    best = items[0]
    for x in items[1:]:
        if compare(x, best) > 0:
            best = x
    return best


def _slice(v: Any, start: Any, end: Any) -> list[Any]:
    items = _list(v)
    if type(start) is not int or type(end) is not int:
        raise NoOverload()
    if start < 0 or end < 0:
        raise EvalError(f"cannot slice({start}, {end}), negative indexes not supported")
    if start > end:
        raise EvalError(
            f"cannot slice({start}, {end}), start index must be less than or equal to end index"
        )
    if end > len(items):
        raise EvalError(f"cannot slice({start}, {end}), list is length {len(items)}")
    return list(items[start:end])


def _flatten(v: Any, depth: Any = 1) -> list[Any]:
    items = _list(v)
    if type(depth) is not int:
        raise NoOverload()
    if depth < 0:
        raise EvalError("level must be non-negative")
    out: list[Any] = []
    for x in items:
        if type(x) in LIST_TYPES and depth > 0:
            out.extend(_flatten(x, depth - 1))
        else:
            out.append(x)
    return out


def _distinct(v: Any) -> list[Any]:
    out: list[Any] = []
    for x in _list(v):
        if not any(cel_equal(x, y) for y in out):
            out.append(x)
    return out


def _sort(v: Any) -> list[Any]:
    return sorted(_list(v), key=functools.cmp_to_key(compare))


def _map_insert(m: Any, key: Any, value: Any = MISSING) -> dict[Any, Any]:
    """transformMap / transformMapEntry's accumulator step (cel-go's ``cel.@mapInsert``)."""
    if type(m) is not dict:
        raise NoOverload()
    entries: Any = key if value is MISSING else {key: value}
    if type(entries) is not dict:
        raise NoOverload()
    out = dict(m)
    for k, v in entries.items():
        if k in out:
            raise EvalError(f"insert failed: key {to_string(k)} already exists")
        out[k] = v
    return out


def _sort_by_keys(items: Any, keys: Any) -> list[Any]:
    values, order = _list(items), _list(keys)
    if len(values) != len(order):
        raise EvalError(
            "@sortByAssociatedKeys() expected a list of the same size as the associated keys "
            f"list, but got {len(values)} and {len(order)} elements respectively."
        )

    def by_key(a: tuple[Any, Any], b: tuple[Any, Any]) -> int:
        return compare(a[0], b[0])

    pairs = sorted(zip(order, values, strict=True), key=functools.cmp_to_key(by_key))
    return [v for _, v in pairs]


# --- optional ---------------------------------------------------------------------------------


def _opt(v: Any) -> Optional:
    if type(v) is not Optional:
        raise NoOverload()
    return v


def _opt_value(o: Any) -> Any:
    opt = _opt(o)
    if not opt.has_value():
        raise EvalError("optional.none() dereference")
    return opt.value


_ZERO_TIME: Final = datetime.datetime(1, 1, 1, tzinfo=datetime.UTC)


def _of_non_zero(v: Any) -> Optional:
    if v is None or v is False or (type(v) in NUMERIC and v == 0):
        return NONE
    if (type(v) is datetime.timedelta and not v) or (
        type(v) is datetime.datetime and v == _ZERO_TIME
    ):
        return NONE
    if type(v) in SIZED_TYPES and len(v) == 0:
        return NONE
    return Optional(v)


EXTENSIONS: Final[dict[str, Callable[..., Any]]] = {
    "charAt": _char_at,
    "indexOf": _index_of,
    "lastIndexOf": _last_index_of,
    "lowerAscii": _lower_ascii,
    "upperAscii": _upper_ascii,
    "replace": _replace,
    "split": _split,
    "substring": _substring,
    "trim": _trim,
    "join": _join,
    "strings.quote": _quote,
    "reverse": _reverse,
    "isSorted": _is_sorted,
    "sum": _sum,
    "min": _min,
    "max": _max,
    "slice": _slice,
    "flatten": _flatten,
    "distinct": _distinct,
    "sort": _sort,
    "lists.range": lambda n: list(range(n)) if type(n) is int else _list(n),
    "cel.@mapInsert": _map_insert,
    "lists.@sortByAssociatedKeys": _sort_by_keys,
    **{name: _accessor(name) for name in _ACCESSORS},
    "sets.contains": lambda a, b: all(cel_in(x, _list(a)) for x in _list(b)),
    "sets.equivalent": lambda a, b: (
        all(cel_in(x, _list(a)) for x in _list(b)) and all(cel_in(x, _list(b)) for x in _list(a))
    ),
    "sets.intersects": lambda a, b: any(cel_in(x, _list(a)) for x in _list(b)),
    "optional.of": Optional,
    "optional.none": lambda: NONE,
    "optional.ofNonZeroValue": _of_non_zero,
    "hasValue": lambda o: _opt(o).has_value(),
    "value": _opt_value,
    "orValue": lambda o, d: _opt(o).value if _opt(o).has_value() else d,
    "or": lambda o, other: o if _opt(o).has_value() else _opt(other),
}
