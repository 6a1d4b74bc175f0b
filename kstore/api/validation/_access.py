"""Typed reads of an object dict, with Go's zero values for anything absent or mistyped.

Validators read decoded JSON that may lack fields or (if it bypassed strict decoding) carry the
wrong JSON type; Kubernetes sees the zero value of the Go field in both cases, so these helpers
return ``""``, ``0``, ``False``, ``{}`` or ``[]`` instead of raising.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["get_bool", "get_int", "get_list", "get_map", "get_str", "maps", "opt_int", "opt_str"]

_EMPTY: Mapping[str, Any] = {}


def get_map(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = obj.get(key)
    # The dict test first: an ABC isinstance check costs several times more.
    return value if type(value) is dict or isinstance(value, Mapping) else _EMPTY


def get_list(obj: Mapping[str, Any], key: str) -> Sequence[Any]:
    value = obj.get(key)
    return value if isinstance(value, list) else ()


def get_str(obj: Mapping[str, Any], key: str) -> str:
    value = obj.get(key)
    return value if isinstance(value, str) else ""


def get_int(obj: Mapping[str, Any], key: str) -> int:
    value = obj.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def get_bool(obj: Mapping[str, Any], key: str) -> bool:
    return obj.get(key) is True


def opt_str(obj: Mapping[str, Any], key: str) -> str | None:
    """A pointer-to-string field: ``None`` when absent or null."""
    value = obj.get(key)
    return value if isinstance(value, str) else None


def opt_int(obj: Mapping[str, Any], key: str) -> int | None:
    """A pointer-to-int field: ``None`` when absent or null."""
    value = obj.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def maps(items: Sequence[Any]) -> list[Mapping[str, Any]]:
    """List entries as maps (a non-map entry reads as an empty struct)."""
    return [item if type(item) is dict or isinstance(item, Mapping) else _EMPTY for item in items]
