"""Quantities as admission compares and prints them: exact values, and sums printed in the
canonical form of Kubernetes' ``resource.Quantity`` (the first term's format: binary SI
suffixes when it had one, else decimal SI in steps of a thousand)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Final

from kstore.api.quantity import parse_quantity

__all__ = ["add", "format_like", "value"]

_BINARY: Final = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_DECIMAL: Final = {
    -9: "n",
    -6: "u",
    -3: "m",
    0: "",
    3: "k",
    6: "M",
    9: "G",
    12: "T",
    15: "P",
    18: "E",
}


def value(text: Any) -> Fraction:
    """The quantity's exact value (0 for what does not parse)."""
    parsed = parse_quantity(text)
    return parsed if parsed is not None else Fraction(0)


def _is_binary(text: Any) -> bool:
    return isinstance(text, str) and text.endswith(_BINARY[1:])


def format_like(amount: Fraction, like: Any) -> str:
    """``amount`` canonically, in the format of the quantity ``like``."""
    if _is_binary(like) and amount.denominator == 1 and amount >= 0:
        number = int(amount)
        for power in range(len(_BINARY) - 1, -1, -1):
            if number % (1024**power) == 0 and (power == 0 or number >= 1024**power):
                return f"{number // 1024**power}{_BINARY[power]}"
    if amount == 0:
        return "0"
    for exponent in sorted(_DECIMAL, reverse=True):
        mantissa = amount / Fraction(10) ** exponent
        if mantissa.denominator == 1:
            return f"{int(mantissa)}{_DECIMAL[exponent]}"
    nanos = -(-amount * 10**9 // 1)
    return f"{int(nanos)}n"


def add(total: dict[str, tuple[Fraction, Any]], resources: Any) -> None:
    """Add ``resources`` (a resource list) into ``total``: name -> (value, format of first)."""
    if not isinstance(resources, dict):
        return
    for name, text in resources.items():
        amount = value(text)
        if name in total:
            total[name] = (total[name][0] + amount, total[name][1])
        else:
            total[name] = (amount, text)


def maximum(total: dict[str, tuple[Fraction, Any]], resources: Any) -> None:
    """Raise each of ``total``'s entries to ``resources``' where that is larger."""
    if not isinstance(resources, dict):
        return
    for name, text in resources.items():
        amount = value(text)
        if name not in total or amount > total[name][0]:
            total[name] = (amount, text)
