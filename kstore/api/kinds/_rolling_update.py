"""The rolling update strategy of Deployments and DaemonSets: its defaults, and its limits as
apps validation reads and prints them.

:func:`default_rolling_update` is the strategy part of ``SetDefaults_Deployment`` and
``SetDefaults_DaemonSet`` (they differ in the field's name and the default limits);
:func:`strategy_value` prints the internal strategy as Kubernetes' errors show it.

A rolling update's limits (``maxUnavailable``/``maxSurge``, ``intstr.IntOrString``) are a count
or a percentage: a JSON integer, or a string that should be ``<digits>%``. Kubernetes' apps
validation (``ValidatePositiveIntOrPercent``,
``IsNotMoreThan100Percent``, ``getIntOrPercentValue``) is reproduced here on the JSON value, with
its quirks: an absent value is the int 0, a string that is not a percentage counts as
``strconv.Atoi`` of it (0 when that fails), and bad values are printed as JSON, as Kubernetes
prints an ``IntOrString``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from kstore.api.validation.field import GoStruct, JSONValue, Path, invalid
from kstore.api.validation.names import regex_error
from kstore.api.validation.objectmeta import validate_nonnegative_field
from kstore.errors import Cause

__all__ = [
    "default_rolling_update",
    "int_or_percent_value",
    "int_or_string",
    "strategy_value",
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


def default_rolling_update(
    spec: dict[str, Any], field: str, max_unavailable: int | str, max_surge: int | str
) -> None:
    """Default the strategy ``spec[field]`` in place: type ``RollingUpdate`` when unset, and
    then its ``rollingUpdate`` limits where they are unset (the struct is created if missing)."""
    strategy = spec.get(field)
    if strategy is None:
        strategy = spec[field] = {}
    if not isinstance(strategy, dict):
        return
    if strategy.get("type") in (None, ""):
        strategy["type"] = "RollingUpdate"
    if strategy["type"] != "RollingUpdate":
        return
    rolling = strategy.get("rollingUpdate")
    if rolling is None:
        rolling = strategy["rollingUpdate"] = {}
    if isinstance(rolling, dict):
        if rolling.get("maxUnavailable") is None:
            rolling["maxUnavailable"] = max_unavailable
        if rolling.get("maxSurge") is None:
            rolling["maxSurge"] = max_surge


def strategy_value(strategy: Mapping[str, Any]) -> GoStruct:
    """The internal strategy (``apps.DeploymentStrategy``, ``apps.DaemonSetUpdateStrategy``) as
    ``json.Marshal`` prints it: no json tags, the limits as IntOrString values."""
    rolling = strategy.get("rollingUpdate")
    rolling_value = None
    if isinstance(rolling, Mapping):
        rolling_value = GoStruct(
            MaxUnavailable=int_or_string(rolling.get("maxUnavailable")),
            MaxSurge=int_or_string(rolling.get("maxSurge")),
        )
    kind = strategy.get("type")
    return GoStruct(Type=kind if isinstance(kind, str) else "", RollingUpdate=rolling_value)
