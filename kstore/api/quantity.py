"""Resource quantities (``100m``, ``1.5Gi``, ``2e3``) as exact fractions, for comparisons.

Kubernetes' ``resource.Quantity`` grammar: an optionally signed decimal number followed by a
binary SI suffix (``Ki`` … ``Ei``), a decimal SI suffix (``n u m k M G T P E`` or none) or a
decimal exponent (``e3``, ``E-2``). Only comparison and addition are needed (pod QoS, claim
sizes), so values are exact and never rounded: :func:`parse_quantity` gives a
:class:`fractions.Fraction`; :func:`nano_units` gives the value in billionths, a plain ``int``
whenever that is exact (every quantity Kubernetes can store), so that sums and comparisons of
the usual quantities avoid ``Fraction`` arithmetic (~1.5 us an addition). Parsed strings are
memoised: a pod's handful of quantities repeat across every pod of a workload.
"""

from __future__ import annotations

import functools
import re
from fractions import Fraction
from typing import Any, Final

__all__ = ["nano_units", "parse_quantity"]

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


_NANO: Final = 10**9


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
    return _parse_text(value)


def nano_units(value: Any) -> int | Fraction | None:
    """The quantity times 10^9: an ``int`` when exact, else a ``Fraction``; None when it is
    not a quantity. Values of both types compare and add exactly with each other."""
    if isinstance(value, str):
        return _nano_text(value)
    amount = parse_quantity(value)
    return None if amount is None else _scaled(amount)


def _scaled(amount: Fraction) -> int | Fraction:
    nanos = amount * _NANO
    return nanos.numerator if nanos.denominator == 1 else nanos


@functools.lru_cache(maxsize=4096)
def _nano_text(text: str) -> int | Fraction | None:
    amount = _parse_text(text)
    return None if amount is None else _scaled(amount)


@functools.lru_cache(maxsize=4096)
def _parse_text(value: str) -> Fraction | None:
    # Fractions are immutable: a memoised one is safe to share.
    match = _QUANTITY_RE.fullmatch(value.strip())
    if match is None:
        return None
    number = Fraction(match.group(1))
    suffix = match.group(2) or ""
    if suffix[:1] in ("e", "E") and suffix not in _SUFFIXES:
        return number * Fraction(10) ** int(suffix[1:])
    return number * _SUFFIXES[suffix]
