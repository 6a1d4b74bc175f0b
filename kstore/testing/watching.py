"""Assertions on watches and on calls that may block, with short, bounded waits.

Waits are sized for a loaded 2-core machine: an expected event may take up to
:data:`EVENT_WAIT` seconds (tests fail fast when it never comes), while "nothing more arrives"
is checked for :data:`QUIET_WAIT` seconds (a late unexpected event can then slip through, never
a false failure). Calls that a wrong backend could deadlock (a try_update that waits for another
update, a validate_deletion that writes) run in a helper thread via :func:`run_bounded`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import pytest

from kstore.api.gvk import Object
from kstore.storage.interface import (
    EventType,
    ListOptions,
    Storage,
    Watcher,
    WatchEvent,
)
from kstore.testing.objects import rv_of

__all__ = [
    "CALL_WAIT",
    "EVENT_WAIT",
    "QUIET_WAIT",
    "bookmark_view",
    "event_summary",
    "expect_event",
    "expect_events",
    "expect_no_event",
    "expect_watch_ended",
    "next_event",
    "run_bounded",
    "watching",
]

#: Longest wait for an event that must arrive.
EVENT_WAIT = 5.0
#: How long "no further event" is observed.
QUIET_WAIT = 0.3
#: Longest wait for a storage call that must return.
CALL_WAIT = 20.0

T = TypeVar("T")


@contextmanager
def watching(storage: Storage, key: str, opts: ListOptions) -> Iterator[Watcher]:
    """A watch that is stopped when the block ends, whatever happens in it."""
    watcher = storage.watch(key, opts)
    try:
        yield watcher
    finally:
        watcher.stop()


def event_summary(event: WatchEvent | None) -> str:
    """A one-line description of an event for failure messages."""
    if event is None:
        return "no event"
    meta = event.object.get("metadata") or {}
    name = "/".join(p for p in (meta.get("namespace", ""), meta.get("name", "")) if p)
    if event.type is EventType.ERROR:
        name = f"{event.object.get('code')} {event.object.get('reason')}"
    return f"{event.type} {name or '-'} @{event.resource_version}"


def next_event(watcher: Watcher, timeout: float = EVENT_WAIT) -> WatchEvent:
    """The next event, which must arrive within ``timeout``; data events must carry their
    revision both on the event and in the object."""
    event = watcher.next(timeout=timeout)
    if event is None:
        pytest.fail(f"no watch event within {timeout}s (stopped={watcher.stopped})")
    if event.type in (EventType.ADDED, EventType.MODIFIED, EventType.DELETED):
        assert event.resource_version == rv_of(event.object), (
            f"event revision {event.resource_version} differs from its object's "
            f"resourceVersion in {event_summary(event)}"
        )
    return event


def expect_event(
    watcher: Watcher, type_: EventType, obj: Object | None = None, *, timeout: float = EVENT_WAIT
) -> WatchEvent:
    """The next event is of ``type_`` and, when ``obj`` is given, carries exactly ``obj``."""
    event = next_event(watcher, timeout)
    assert event.type == type_, f"expected {type_}, got {event_summary(event)}: {event.object}"
    if obj is not None:
        assert event.object == obj, f"{type_} carries the wrong object"
    return event


def expect_events(watcher: Watcher, expected: list[tuple[EventType, Object]]) -> None:
    """The next events are exactly ``expected``, in order."""
    for type_, obj in expected:
        expect_event(watcher, type_, obj)


def expect_no_event(
    watcher: Watcher, *, timeout: float = QUIET_WAIT, ignore_bookmarks: bool = False
) -> None:
    """No (non-bookmark, if asked) event arrives within ``timeout``."""
    while True:
        event = watcher.next(timeout=timeout)
        if event is None:
            return
        if ignore_bookmarks and event.type is EventType.BOOKMARK:
            continue
        pytest.fail(f"unexpected watch event {event_summary(event)}: {event.object}")


def expect_watch_ended(watcher: Watcher, *, timeout: float = EVENT_WAIT) -> None:
    """The watch delivers nothing more and reports itself stopped."""
    event = watcher.next(timeout=timeout)
    assert event is None, f"watch still delivers after its end: {event_summary(event)}"
    assert watcher.stopped, "a watch that delivers nothing more must report stopped"
    assert list(watcher) == [], "iterating an ended watch must yield nothing"


def bookmark_view(event: WatchEvent) -> Object:
    """A bookmark's object without ``apiVersion``/``kind`` (which may name the watched kind):
    what remains must be only ``metadata`` with the resourceVersion and annotations."""
    return {k: v for k, v in event.object.items() if k not in ("apiVersion", "kind")}


def run_bounded(call: Callable[[], T], what: str, timeout: float = CALL_WAIT) -> T:
    """Run ``call`` in a helper thread; fail (instead of hanging) if it does not return in
    ``timeout`` seconds. Exceptions propagate to the caller."""
    result: list[T] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            result.append(call())
        except BaseException as exc:  # handed to the test thread below
            failure.append(exc)

    thread = threading.Thread(target=target, name=f"conformance: {what}", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        pytest.fail(f"{what} did not return within {timeout}s (deadlock?)")
    if failure:
        raise failure[0]
    return result[0]
