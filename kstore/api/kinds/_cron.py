"""Cron schedules and time zones as the API server checks a CronJob's: what
``cron.ParseStandard`` (github.com/robfig/cron/v3) accepts and the error text it gives, and
which names Go's ``time.LoadLocation`` knows.

:func:`schedule_error` accepts the standard five fields (minute, hour, day of month, month, day
of week: numbers, ``*`` or ``?``, ranges ``a-b``, steps ``/n``, lists ``a,b``, month and weekday
names ``jan``/``sun`` in any case), the descriptors ``@yearly`` ``@annually`` ``@monthly``
``@weekly`` ``@daily`` ``@midnight`` ``@hourly`` and ``@every <duration>``, optionally behind a
``TZ=<zone>`` or ``CRON_TZ=<zone>`` prefix. It returns None for a valid schedule, else the
parser's message (``expected exactly 5 fields, found 4: [* * * *]``, ``end of range (60) above
maximum (59): 60``...), which Kubernetes uses as the detail of the field error.
"""

from __future__ import annotations

import re
import zoneinfo
from dataclasses import dataclass
from typing import Final

__all__ = ["load_location_error", "schedule_error"]


@dataclass(frozen=True, slots=True)
class _Bounds:
    low: int
    high: int
    names: dict[str, int]


_MONTHS: Final = _Bounds(
    1,
    12,
    {
        name: i + 1
        for i, name in enumerate(
            ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
        )
    },
)
_WEEKDAYS: Final = _Bounds(
    0, 6, {name: i for i, name in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
)
# The five standard fields, in order (the seconds field of the parser is always "0").
_FIELDS: Final = (_Bounds(0, 59, {}), _Bounds(0, 23, {}), _Bounds(1, 31, {}), _MONTHS, _WEEKDAYS)
_DESCRIPTORS: Final = frozenset(
    ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
)
_EVERY: Final = "@every "
_GO_INT: Final = re.compile(r"[+-]?[0-9]+")
_INT64_MAX: Final = 2**63 - 1


class _CronError(Exception):
    pass


def _atoi(text: str) -> int:
    """``strconv.Atoi`` on a 64-bit platform, with its error text."""
    if _GO_INT.fullmatch(text) is None:
        raise _CronError(f'strconv.Atoi: parsing "{text}": invalid syntax')
    value = int(text)
    if not -_INT64_MAX - 1 <= value <= _INT64_MAX:
        raise _CronError(f'strconv.Atoi: parsing "{text}": value out of range')
    return value


def _non_negative(text: str) -> int:
    try:
        value = _atoi(text)
    except _CronError as exc:
        raise _CronError(f"failed to parse int from {text}: {exc}") from None
    if value < 0:
        raise _CronError(f"negative number ({value}) not allowed: {text}")
    return value


def _int_or_name(text: str, bounds: _Bounds) -> int:
    named = bounds.names.get(text.lower())
    return named if named is not None else _non_negative(text)


def _check_range(expr: str, bounds: _Bounds) -> None:
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    if low_and_high[0] in ("*", "?"):
        start, end = bounds.low, bounds.high
    else:
        start = _int_or_name(low_and_high[0], bounds)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _int_or_name(low_and_high[1], bounds)
        else:
            raise _CronError(f"too many hyphens: {expr}")
    step = 1
    if len(range_and_step) == 2:
        step = _non_negative(range_and_step[1])
        # "N/step" means "N-max/step".
        if len(low_and_high) == 1:
            end = bounds.high
    elif len(range_and_step) > 2:
        raise _CronError(f"too many slashes: {expr}")
    if start < bounds.low:
        raise _CronError(f"beginning of range ({start}) below minimum ({bounds.low}): {expr}")
    if end > bounds.high:
        raise _CronError(f"end of range ({end}) above maximum ({bounds.high}): {expr}")
    if start > end:
        raise _CronError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise _CronError(f"step of range should be a positive number: {expr}")


_DURATION_UNITS: Final = frozenset(("ns", "us", "µs", "μs", "ms", "s", "m", "h"))
_DURATION_PART: Final = re.compile(r"([0-9]*(?:\.[0-9]*)?)([^0-9.]*)")


def _duration_error(text: str) -> str | None:
    """Whether Go's ``time.ParseDuration`` accepts ``text``; its message when not."""
    quoted = '"' + text + '"'
    rest = text
    if rest[:1] in ("+", "-"):
        rest = rest[1:]
    if rest == "0":
        return None
    if not rest:
        return f"time: invalid duration {quoted}"
    while rest:
        match = _DURATION_PART.match(rest)
        number, unit = (match.group(1), match.group(2)) if match else ("", "")
        if not number or number == ".":
            return f"time: invalid duration {quoted}"
        if not unit:
            return f"time: missing unit in duration {quoted}"
        if unit not in _DURATION_UNITS:
            return f'time: unknown unit "{unit}" in duration {quoted}'
        rest = rest[len(number) + len(unit) :]
    return None


def _check_descriptor(spec: str) -> None:
    if spec in _DESCRIPTORS:
        return
    if spec.startswith(_EVERY):
        error = _duration_error(spec[len(_EVERY) :])
        if error is not None:
            raise _CronError(f"failed to parse duration {spec}: {error}")
        return
    raise _CronError(f"unrecognized descriptor: {spec}")


def load_location_error(name: str) -> str | None:
    """None when Go's ``time.LoadLocation`` knows ``name``, else its error text."""
    if name in ("", "UTC", "Local"):
        return None
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return f"unknown time zone {name}"
    return None


def _check(spec: str) -> None:
    if not spec:
        raise _CronError("empty spec string")
    if spec.startswith(("TZ=", "CRON_TZ=")):
        space = spec.find(" ")
        zone = spec[spec.find("=") + 1 : space] if space >= 0 else spec[spec.find("=") + 1 :]
        error = load_location_error(zone)
        if error is not None:
            raise _CronError(f"provided bad location {zone}: {error}")
        spec = spec[space:].strip() if space >= 0 else ""
    if spec.startswith("@"):
        _check_descriptor(spec)
        return
    fields = spec.split()
    if len(fields) != len(_FIELDS):
        raise _CronError(
            f"expected exactly {len(_FIELDS)} fields, found {len(fields)}: [{' '.join(fields)}]"
        )
    for field, bounds in zip(fields, _FIELDS, strict=True):
        for expr in (part for part in field.split(",") if part):
            _check_range(expr, bounds)


def schedule_error(spec: str) -> str | None:
    """None when ``cron.ParseStandard`` accepts ``spec``, else the parser's error text."""
    try:
        _check(spec)
    except _CronError as exc:
        return str(exc)
    return None
