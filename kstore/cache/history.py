"""The watch cache's event history: a ring buffer sized to cover a time window.

As Kubernetes' ``watch_cache_history.go``: capacity starts at the lower bound (100 events) and,
when the buffer is full on insert,

- doubles (up to the upper bound, 102,400 events for the default 75 s window) while the oldest
  event is younger than the window, so a burst is still replayable for a whole window;
- halves (down to the lower bound) when even the event a quarter of the capacity back from the
  newest is older than the window, so a quiet resource does not keep a large buffer;
- otherwise evicts the oldest event.

Invariants: events are appended in strictly increasing revision order; logical indexes only
grow (``start`` never decreases, also across :meth:`reset`), so a position taken earlier can be
checked for validity later. The oldest revision a watch may start from is ``list RV`` while
nothing has been evicted since the last (re)list, else the revision just before the first
buffered event. Not thread-safe: the watch cache calls it under its own lock.
"""

from __future__ import annotations

import math
from typing import Generic, Protocol, TypeVar

from kstore.errors import Expired

__all__ = [
    "DEFAULT_EVENT_WINDOW",
    "LOWER_BOUND_CAPACITY",
    "UPPER_BOUND_CAPACITY",
    "EventHistory",
    "HistoryEvent",
]

#: Kubernetes' defaults: 100 events at least, 100 * 1024 at most, for a 75 s window
#: (one bookmark period, 60 s, plus 15 s).
LOWER_BOUND_CAPACITY = 100
UPPER_BOUND_CAPACITY = 100 * 1024
DEFAULT_EVENT_WINDOW = 75.0
_INT32_MAX = 2**31 - 1


class HistoryEvent(Protocol):
    @property
    def resource_version(self) -> int: ...

    @property
    def record_time(self) -> float: ...


E = TypeVar("E", bound=HistoryEvent)


def upper_bound_capacity(window_seconds: float) -> int:
    """The largest capacity for a window: the default bound, scaled up by a power of two for
    windows longer than 75 s (the buffer only ever doubles), capped to fit an int32."""
    if window_seconds <= DEFAULT_EVENT_WINDOW:
        return UPPER_BOUND_CAPACITY
    exponent = math.ceil(math.log2(window_seconds / DEFAULT_EVENT_WINDOW))
    exponent = min(exponent, math.floor(math.log2(_INT32_MAX / UPPER_BOUND_CAPACITY)))
    return UPPER_BOUND_CAPACITY << exponent


class EventHistory(Generic[E]):
    """A dynamically sized ring buffer of events (see the module docstring)."""

    def __init__(
        self,
        *,
        window_seconds: float = DEFAULT_EVENT_WINDOW,
        lower_bound: int = LOWER_BOUND_CAPACITY,
        upper_bound: int | None = None,
    ) -> None:
        if window_seconds < DEFAULT_EVENT_WINDOW and upper_bound is None:
            raise ValueError(f"the event window must be at least {DEFAULT_EVENT_WINDOW}s")
        self._window = window_seconds
        self._lower = lower_bound
        self._upper = (
            upper_bound if upper_bound is not None else upper_bound_capacity(window_seconds)
        )
        if not 0 < self._lower <= self._upper:
            raise ValueError("history bounds must satisfy 0 < lower <= upper")
        self._capacity = self._lower
        self._buffer: list[E | None] = [None] * self._capacity
        self._start = 0
        self._end = 0
        self._evicted_since_relist = False
        self._list_revision = 0

    # -- sizing ----------------------------------------------------------------------------

    @property
    def capacity(self) -> int:
        return self._capacity

    def __len__(self) -> int:
        return self._end - self._start

    @property
    def start_index(self) -> int:
        """Logical index of the oldest buffered event (only grows)."""
        return self._start

    @property
    def end_index(self) -> int:
        """Logical index one past the newest buffered event (only grows)."""
        return self._end

    def _full(self) -> bool:
        return self._end == self._start + self._capacity

    def _at(self, index: int) -> E:
        event = self._buffer[index % self._capacity]
        assert event is not None
        return event

    def _resize(self, capacity: int) -> None:
        if capacity < self._capacity:
            self._start = self._end - capacity
        buffer: list[E | None] = [None] * capacity
        for index in range(self._start, self._end):
            buffer[index % capacity] = self._buffer[index % self._capacity]
        self._buffer = buffer
        self._capacity = capacity

    def _maybe_resize(self, now: float) -> None:
        if not self._full():
            return
        if now - self._at(self._start).record_time < self._window:
            if self._capacity < self._upper:
                self._resize(min(self._capacity * 2, self._upper))
            return
        recent = self._at(self._end - self._capacity // 4)
        if now - recent.record_time > self._window and self._capacity > self._lower:
            self._resize(max(self._capacity // 2, self._lower))

    # -- updates ---------------------------------------------------------------------------

    def append(self, event: E) -> None:
        """Add the newest event (its revision above every buffered one)."""
        self._maybe_resize(event.record_time)
        if self._full():
            self._buffer[self._start % self._capacity] = None
            self._start += 1
            self._evicted_since_relist = True
        self._buffer[self._end % self._capacity] = event
        self._end += 1

    def reset(self, list_revision: int) -> None:
        """Forget every event after a (re)list at ``list_revision``; indexes keep growing."""
        self._start = self._end
        self._evicted_since_relist = False
        self._list_revision = list_revision
        self._buffer = [None] * self._capacity

    def compact(self, revision: int) -> None:
        """Forget the events at or below ``revision`` (as a backend compaction does): a watch
        from below ``revision`` is then Expired even though the window still held it."""
        while self._start < self._end and self._at(self._start).resource_version <= revision:
            self._buffer[self._start % self._capacity] = None
            self._start += 1
        self._list_revision = max(self._list_revision, revision)

    # -- reads -----------------------------------------------------------------------------

    def oldest_watchable(self) -> int:
        """The smallest revision a watch may start from (events after it are all here)."""
        if self._list_revision > 0 and not self._evicted_since_relist:
            return self._list_revision
        if self._end > self._start:
            return self._at(self._start).resource_version - 1
        return self._list_revision

    def since(self, revision: int) -> list[E]:
        """Every buffered event with a revision above ``revision``, oldest first.

        Raises Expired (``too old resource version: N (oldest-1)``) when events after
        ``revision`` have already been evicted."""
        oldest = self.oldest_watchable()
        if revision < oldest:
            raise Expired(f"too old resource version: {revision} ({oldest})")
        lo, hi = self._start, self._end
        while lo < hi:  # first index whose revision is above ``revision``
            mid = (lo + hi) // 2
            if self._at(mid).resource_version > revision:
                hi = mid
            else:
                lo = mid + 1
        return [self._at(index) for index in range(lo, self._end)]

    def newest(self) -> E | None:
        return self._at(self._end - 1) if self._end > self._start else None
