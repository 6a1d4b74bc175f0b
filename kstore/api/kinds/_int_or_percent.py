"""``maxUnavailable``/``maxSurge`` values (``intstr.IntOrString``) as apps validation reads them.

A rolling update's limits are a count or a percentage: a JSON integer, or a string that should
be ``<digits>%``. Kubernetes' apps validation (``ValidatePositiveIntOrPercent``,
``IsNotMoreThan100Percent``, ``getIntOrPercentValue``) is reproduced here on the JSON value, with
its quirks: an absent value is the int 0, a string that is not a percentage counts as
``strconv.Atoi`` of it (0 when that fails), and bad values are printed as JSON, as Kubernetes
prints an ``IntOrString``.
"""

from __future__ import annotations

import re
from typing import Any, Final

from kstore.api.validation.field import JSONValue, Path, invalid
from kstore.api.validation.names import regex_error
from kstore.api.validation.objectmeta import validate_nonnegative_field
from kstore.errors import Cause

__all__ = [
    "int_or_percent_value",
    "int_or_string",
    "validate_not_more_than_100_percent",
    "validate_positive_int_or_percent",
]

_PERCENT_RE: Final = re.compile(r"[0-9]+%")
_PERCENT_MSG: Final = regex_error(
    "a valid percent string must be a numeric string followed by an ending '%'",
    "[0-9]+%",
    "1%",
    "93%",
)
_GO_ATOI_RE: Final = re.compile(r"[+-]?[0-9]+")
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1


def int_or_string(value: Any) -> int | str:
    """The internal ``intstr.IntOrString`` a JSON value decodes to (absent: the int 0)."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return 0


def _go_atoi(text: str) -> int:
    """``IntOrString.IntValue`` of a string: ``strconv.Atoi``, 0 when it fails, clamped."""
    if _GO_ATOI_RE.fullmatch(text) is None:
        return 0
    return max(_INT64_MIN, min(_INT64_MAX, int(text)))


def _percent(value: int | str) -> int | None:
    if isinstance(value, str) and _PERCENT_RE.fullmatch(value):
        return _go_atoi(value[:-1])
    return None


def int_or_percent_value(value: int | str) -> int:
    """``getIntOrPercentValue``: the percentage's number, or the count."""
    percent = _percent(value)
    if percent is not None:
        return percent
    return _go_atoi(value) if isinstance(value, str) else value


def validate_positive_int_or_percent(value: int | str, path: Path) -> list[Cause]:
    """``ValidatePositiveIntOrPercent``: a non-negative count or a ``<digits>%`` string."""
    if isinstance(value, str):
        if _PERCENT_RE.fullmatch(value) is None:
            return [invalid(path, JSONValue(value), _PERCENT_MSG)]
        return []
    return validate_nonnegative_field(value, path)


def validate_not_more_than_100_percent(value: int | str, path: Path) -> list[Cause]:
    """``IsNotMoreThan100Percent``: counts pass, percentages may not exceed 100%."""
    percent = _percent(value)
    if percent is None or percent <= 100:
        return []
    return [invalid(path, JSONValue(value), "must not be greater than 100%")]
