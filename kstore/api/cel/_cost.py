"""Runtime cost of one function call, in cel-go's units, as Kubernetes charges them.

cel-go's ``CostTracker`` charges 1 per call unless the overload traverses its input:
``startsWith``/``endsWith`` and string<->bytes conversions cost a tenth of the string's size,
``in`` a list its length, string/bytes ordering and any ``==``/``!=`` a tenth of the smaller
operand, string/bytes ``+`` a tenth of both, ``contains`` and ``matches`` the product of the
two traversals (a regex is guessed at one state per 4 characters). Kubernetes' library
``CostEstimator.CallCost`` adds its own functions: list traversals for ``isSorted``, ``sum``,
``min``, ``max``, ``indexOf``, ``lastIndexOf``; string traversals for the strings extension,
``url``, ``quantity``, ``ip``, ``cidr``; regex products for ``find``/``findAll``.

A value's size is ``size()`` for strings, bytes, lists and maps and 1 for anything else.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Final

from kstore.api.cel._values import LIST_TYPES, SIZED_TYPES

__all__ = ["CALL_COSTS", "STRING_TRAVERSAL", "size_of"]

STRING_TRAVERSAL: Final = 0.1
REGEX_LENGTH: Final = 0.25


def size_of(v: Any) -> int:
    if type(v) in SIZED_TYPES:
        return len(v)
    return 1


def _ceil(x: float) -> int:
    return math.ceil(x)


def _traversal(v: Any) -> int:
    t = type(v)
    if t is str or t is bytes:
        return int(len(v) * STRING_TRAVERSAL)
    if t in LIST_TYPES:
        return sum(_traversal(x) for x in v)
    if t is dict:
        return sum(_traversal(k) + _traversal(x) for k, x in v.items())
    return 1


def _first(factor: float) -> Callable[[tuple[Any, ...], Any], int]:
    return lambda args, result: _ceil(size_of(args[0]) * factor)


def _min_size(args: tuple[Any, ...], result: Any) -> int:
    return _ceil(min(size_of(args[0]), size_of(args[1])) * STRING_TRAVERSAL)


def _ordering(args: tuple[Any, ...], result: Any) -> int:
    if type(args[0]) in (str, bytes):
        return _min_size(args, result)
    return 1


def _add(args: tuple[Any, ...], result: Any) -> int:
    if type(args[0]) in (str, bytes):
        return _ceil((size_of(args[0]) + size_of(args[1])) * STRING_TRAVERSAL)
    return 1


def _in(args: tuple[Any, ...], result: Any) -> int:
    return size_of(args[1]) if type(args[1]) in LIST_TYPES else 1


def _regex(args: tuple[Any, ...], result: Any) -> int:
    text = _ceil((1 + size_of(args[0])) * STRING_TRAVERSAL)
    return text * _ceil(size_of(args[1]) * REGEX_LENGTH)


def _contains(args: tuple[Any, ...], result: Any) -> int:
    if type(args[0]) is not str:
        return 1
    return _ceil(size_of(args[0]) * STRING_TRAVERSAL) * _ceil(size_of(args[1]) * STRING_TRAVERSAL)


def _conversion(args: tuple[Any, ...], result: Any) -> int:
    # string(bytes) and bytes(string) traverse; every other conversion is O(1).
    if type(args[0]) in (str, bytes) and type(result) in (str, bytes):
        return _ceil(size_of(args[0]) * STRING_TRAVERSAL)
    return 1


def _ip(args: tuple[Any, ...], result: Any) -> int:
    if type(args[0]) is not str:  # cidr.ip() reads a field
        return 1
    return _ceil(size_of(args[0]) * STRING_TRAVERSAL)


def _contains_ip(args: tuple[Any, ...], result: Any) -> int:
    cost = _ceil(2 * STRING_TRAVERSAL)
    if type(args[1]) is str:
        cost += _ceil(size_of(args[1]) * STRING_TRAVERSAL)
    return cost


def _contains_cidr(args: tuple[Any, ...], result: Any) -> int:
    cost = _ceil(2 * STRING_TRAVERSAL) + _ceil(STRING_TRAVERSAL) + 1
    if type(args[1]) is str:
        cost += _ceil(size_of(args[1]) * STRING_TRAVERSAL)
    return cost


CALL_COSTS: Final[dict[str, Callable[[tuple[Any, ...], Any], int]]] = {
    "startsWith": _first(STRING_TRAVERSAL),
    "endsWith": _first(STRING_TRAVERSAL),
    "@in": _in,
    "_==_": _min_size,
    "_!=_": _min_size,
    "_<_": _ordering,
    "_<=_": _ordering,
    "_>_": _ordering,
    "_>=_": _ordering,
    "_+_": _add,
    "matches": _regex,
    "contains": _contains,
    "string": _conversion,
    "bytes": _conversion,
    "isSorted": lambda args, result: _traversal(args[0]),
    "sum": lambda args, result: _traversal(args[0]),
    "min": lambda args, result: _traversal(args[0]),
    "max": lambda args, result: _traversal(args[0]),
    "indexOf": lambda args, result: _traversal(args[0]),
    "lastIndexOf": lambda args, result: _traversal(args[0]),
    "url": _first(STRING_TRAVERSAL),
    "lowerAscii": _first(STRING_TRAVERSAL),
    "upperAscii": _first(STRING_TRAVERSAL),
    "substring": _first(STRING_TRAVERSAL),
    "trim": _first(STRING_TRAVERSAL),
    "replace": _first(2 * STRING_TRAVERSAL),
    "split": _first(2 * STRING_TRAVERSAL),
    "join": lambda args, result: _ceil(size_of(result) * 2 * STRING_TRAVERSAL),
    "find": _regex,
    "findAll": _regex,
    "cidr": _first(STRING_TRAVERSAL),
    "isIP": _first(STRING_TRAVERSAL),
    "isCIDR": _first(STRING_TRAVERSAL),
    "ip": _ip,
    "ip.isCanonical": _first(2 * STRING_TRAVERSAL),
    "containsIP": _contains_ip,
    "containsCIDR": _contains_cidr,
    "quantity": _first(STRING_TRAVERSAL),
    "isQuantity": _first(STRING_TRAVERSAL),
}
