"""CEL runtime values beside the JSON ones, and the errors evaluation raises.

JSON values are used as they are (``None``, ``bool``, ``int``, ``float``, ``str``, ``list``,
``dict``); CEL's extra kinds get small classes: :class:`UInt`, :class:`Optional`,
:class:`CelType` (what ``type(x)`` returns), durations as ``timedelta`` and timestamps as
aware ``datetime``. Dispatch is on ``type(v)`` (never ``isinstance``), because ``bool`` is an
``int`` to Python but a different type to CEL.

Errors: :class:`EvalError` carries cel-go's runtime error text (``no such key: foo``,
``division by zero``...), which Kubernetes puts in front of `` evaluating rule: ...``.
:class:`CostExceeded` is not a CEL error: nothing in the expression may absorb it.
"""

from __future__ import annotations

import datetime
from typing import Any, Final

from kstore.api.cel._ast import UInt

__all__ = [
    "INT_MAX",
    "INT_MIN",
    "LIST_TYPES",
    "NONE",
    "SIZED_TYPES",
    "UINT_MAX",
    "CelType",
    "CostExceeded",
    "ErrorValue",
    "EvalError",
    "MapList",
    "NoOverload",
    "Optional",
    "SetList",
    "UInt",
    "type_of",
]

INT_MAX: Final = (1 << 63) - 1
INT_MIN: Final = -(1 << 63)
UINT_MAX: Final = (1 << 64) - 1


class EvalError(Exception):
    """A CEL runtime error; ``str(err)`` is cel-go's message for it."""


class NoOverload(EvalError):
    def __init__(self, detail: str = "") -> None:
        super().__init__("no such overload" + (f": {detail}" if detail else ""))


class CostExceeded(Exception):
    """The evaluation ran past its cost limit; raised mid-evaluation, never absorbed."""

    def __init__(self, cost: int) -> None:
        super().__init__("operation cancelled: actual cost limit exceeded")
        self.cost = cost


class ErrorValue:
    """An error held as a value (a comprehension accumulator that ``&&`` may still absorb)."""

    __slots__ = ("error",)

    def __init__(self, error: EvalError) -> None:
        self.error = error


class Optional:
    """CEL ``optional_type``: a value or none."""

    __slots__ = ("value",)
    _EMPTY: Final[object] = object()

    def __init__(self, value: Any = _EMPTY) -> None:
        self.value = value

    def has_value(self) -> bool:
        return self.value is not Optional._EMPTY

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Optional):
            return False
        return self.value is other.value or self.value == other.value

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return f"optional.of({self.value!r})" if self.has_value() else "optional.none()"


NONE: Final = Optional()


class CelType:
    """A CEL type as a value: ``type(1) == int``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CelType) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return self.name


class SetList(list[Any]):
    """An ``x-kubernetes-list-type: set`` list: equal to any list with the same elements in
    any order; ``+`` appends only the elements not already present (Kubernetes'
    ``unorderedSetList``)."""

    __slots__ = ()


class MapList(list[Any]):
    """An ``x-kubernetes-list-type: map`` list: elements are identified by ``keys``; equal to
    a list with the same elements in any order; ``+`` replaces elements with the same keys
    and appends the rest (Kubernetes' ``mapList``)."""

    __slots__ = ("keys",)

    def __init__(self, items: Any, keys: tuple[str, ...]) -> None:
        super().__init__(items)
        self.keys = keys

    def key_of(self, item: Any) -> tuple[Any, ...] | None:
        if type(item) is not dict:
            return None
        return tuple(repr(item.get(k)) for k in self.keys)


LIST_TYPES: Final = frozenset({list, tuple, SetList, MapList})
SIZED_TYPES: Final = frozenset({str, bytes, dict}) | LIST_TYPES

_TYPE_NAMES: Final[dict[type, str]] = {
    type(None): "null_type",
    bool: "bool",
    int: "int",
    UInt: "uint",
    float: "double",
    str: "string",
    bytes: "bytes",
    list: "list",
    tuple: "list",
    SetList: "list",
    MapList: "list",
    dict: "map",
    datetime.timedelta: "google.protobuf.Duration",
    datetime.datetime: "google.protobuf.Timestamp",
    Optional: "optional_type",
    CelType: "type",
}


def type_of(value: Any) -> CelType:
    name = _TYPE_NAMES.get(type(value))
    if name is None:
        name = getattr(type(value), "cel_type_name", type(value).__name__)
    return CelType(name)
