"""Ages as Kubernetes prints them: ``duration.HumanDuration`` of the time since a timestamp.

``0s`` up to two minutes in seconds, then ``5m10s``, ``3h``, ``2d4h``, ``3y12d``...; a
timestamp up to one second in the future reads ``0s`` (clock skew), further ``<invalid>``; a
missing or malformed timestamp ``<unknown>``.
"""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["human_duration", "parse_timestamp", "translate_timestamp_since"]


def human_duration(seconds: float) -> str:
    """A duration as Kubernetes prints ages (``duration.HumanDuration``)."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rest = s % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h" if rest == 0 else f"{hours}h{rest}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d" if rest == 0 else f"{hours // 24}d{rest}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        years = hours // 24 // 365
        return f"{years}y" if days == 0 else f"{years}y{days}d"
    return f"{hours // 24 // 365}y"


def parse_timestamp(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def translate_timestamp_since(value: object, now: datetime) -> str:
    """The age of an RFC 3339 timestamp, ``<unknown>`` when there is none."""
    ts = parse_timestamp(value)
    if ts is None:
        return "<unknown>"
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=UTC)
    return human_duration((now - ts).total_seconds())
