"""The ring buffer of recent events: window validity, 410 messages, dynamic sizing."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from kstore.cache.history import (
    LOWER_BOUND_CAPACITY,
    UPPER_BOUND_CAPACITY,
    EventHistory,
    upper_bound_capacity,
)
from kstore.errors import Expired


@dataclass(frozen=True)
class Event:
    resource_version: int
    record_time: float = 0.0


def revisions(events: list[Event]) -> list[int]:
    return [e.resource_version for e in events]


def test_defaults_are_kubernetes_bounds() -> None:
    history: EventHistory[Event] = EventHistory()
    assert history.capacity == LOWER_BOUND_CAPACITY == 100
    assert upper_bound_capacity(75.0) == UPPER_BOUND_CAPACITY == 102_400
    # A longer window scales the upper bound by a power of two (150 s -> 2x, 300 s -> 4x).
    assert upper_bound_capacity(150.0) == 2 * UPPER_BOUND_CAPACITY
    assert upper_bound_capacity(300.0) == 4 * UPPER_BOUND_CAPACITY


def test_window_shorter_than_75_seconds_is_rejected() -> None:
    with pytest.raises(ValueError):
        EventHistory[Event](window_seconds=30.0)


def test_watch_from_inside_the_window_replays_the_later_events() -> None:
    # Kubernetes' TestEvents, with a fixed capacity of 5.
    history: EventHistory[Event] = EventHistory(lower_bound=5, upper_bound=5)
    history.append(Event(3))
    with pytest.raises(Expired, match=r"^too old resource version: 1 \(2\)$"):
        history.since(1)
    assert revisions(history.since(2)) == [3]

    for revision in range(4, 10):
        history.append(Event(revision))
    assert len(history) == 5
    with pytest.raises(Expired, match=r"^too old resource version: 3 \(4\)$"):
        history.since(3)
    assert revisions(history.since(4)) == [5, 6, 7, 8, 9]
    assert revisions(history.since(7)) == [8, 9]
    assert history.since(9) == []
    assert history.since(42) == []  # newer than the cache: nothing yet, not an error


def test_after_a_relist_the_window_starts_at_the_list_revision() -> None:
    history: EventHistory[Event] = EventHistory(lower_bound=3, upper_bound=3)
    for revision in (5, 6, 7, 8):
        history.append(Event(revision))
    history.reset(list_revision=20)
    start = history.start_index
    assert len(history) == 0
    assert history.oldest_watchable() == 20
    with pytest.raises(Expired, match=r"too old resource version: 19 \(20\)"):
        history.since(19)
    assert history.since(20) == []
    history.append(Event(21))
    assert revisions(history.since(20)) == [21]
    assert history.start_index >= start  # indexes never go back


def test_capacity_doubles_while_the_oldest_event_is_fresh() -> None:
    history: EventHistory[Event] = EventHistory(lower_bound=4, upper_bound=16)
    for revision in range(1, 5):
        history.append(Event(revision, record_time=0.0))
    assert history.capacity == 4
    history.append(Event(5, record_time=1.0))
    assert history.capacity == 8
    for revision in range(6, 18):
        history.append(Event(revision, record_time=2.0))
    assert history.capacity == 16  # the upper bound
    assert len(history) == 16
    assert revisions(history.since(1)) == list(range(2, 18))  # 1 was evicted at the bound


def test_capacity_halves_when_a_quarter_of_the_buffer_is_stale() -> None:
    history: EventHistory[Event] = EventHistory(lower_bound=4, upper_bound=16)
    for revision in range(1, 17):
        history.append(Event(revision, record_time=0.0))
    assert history.capacity == 16
    # Full, the oldest is stale, and so is the event a quarter back from the newest.
    history.append(Event(17, record_time=100.0))
    assert history.capacity == 8
    assert revisions(history.since(9)) == [10, 11, 12, 13, 14, 15, 16, 17]
    with pytest.raises(Expired):
        history.since(8)


def test_stale_but_recently_busy_buffer_evicts_instead_of_shrinking() -> None:
    history: EventHistory[Event] = EventHistory(lower_bound=4, upper_bound=4)
    history.append(Event(1, record_time=0.0))
    for revision in range(2, 5):
        history.append(Event(revision, record_time=99.0))
    history.append(Event(5, record_time=100.0))
    assert history.capacity == 4
    assert revisions(history.since(1)) == [2, 3, 4, 5]


def test_compaction_expires_watches_from_below_the_compacted_revision() -> None:
    history: EventHistory[Event] = EventHistory(lower_bound=10, upper_bound=10)
    history.reset(list_revision=1)
    for revision in range(2, 8):
        history.append(Event(revision))
    assert revisions(history.since(1)) == [2, 3, 4, 5, 6, 7]
    history.compact(5)
    with pytest.raises(Expired, match=r"too old resource version: 4 \(5\)"):
        history.since(4)
    assert revisions(history.since(5)) == [6, 7]
