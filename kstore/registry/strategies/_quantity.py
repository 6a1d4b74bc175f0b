"""Resource quantities (``100m``, ``1.5Gi``, ``2e3``) as exact fractions, for comparisons.

Kubernetes' ``resource.Quantity`` grammar: an optionally signed decimal number followed by a
binary SI suffix (``Ki`` … ``Ei``), a decimal SI suffix (``n u m k M G T P E`` or none) or a
decimal exponent (``e3``, ``E-2``). Only comparison and addition are needed here (pod QoS), so
values are :class:`fractions.Fraction` and never rounded.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any, Final

__all__ = ["parse_quantity"]

_QUANTITY_RE: Final = re.compile(
    r"([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?"
)
_SUFFIXES: Final = {
    "": Fraction(1),
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
    "Ki": Fraction(2**10),
    "Mi": Fraction(2**20),
    "Gi": Fraction(2**30),
    "Ti": Fraction(2**40),
    "Pi": Fraction(2**50),
    "Ei": Fraction(2**60),
}


def parse_quantity(value: Any) -> Fraction | None:
    """The quantity's exact value; None when it is not a quantity (validation reports it)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        return Fraction(value)
    if not isinstance(value, str):
        return None
    match = _QUANTITY_RE.fullmatch(value.strip())
    if match is None:
        return None
    number = Fraction(match.group(1))
    suffix = match.group(2) or ""
    if suffix[:1] in ("e", "E") and suffix not in _SUFFIXES:
        return number * Fraction(10) ** int(suffix[1:])
    return number * _SUFFIXES[suffix]
