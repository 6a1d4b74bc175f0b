"""Watch fan-out shared by the backends: a hub of committed changes and the watchers it feeds.

A backend's single writer calls :meth:`WatchHub.publish` after every commit, in commit order,
with the raw changes (stored bytes, not objects). The hub only appends references to the
bounded queues of the subscriptions whose key range matches, so a publish costs the writer a
few microseconds per interested watcher and never blocks on one: a subscription whose queue
overflows is cut off and its watcher ends with an ERROR event, others are unaffected.

Everything expensive happens in the consumer's own thread, inside :meth:`HubWatcher.next`:
reading the initial state or replaying history (through the backend's :class:`HistorySource`,
in short chunks), transforming and decoding, filtering, and turning selector transitions into
ADDED/MODIFIED/DELETED as Kubernetes does.

Hand-over invariant (no gap, no duplicate): a subscription records the hub's last published
revision ``L`` when it is created; every change with a revision above ``L`` reaches its queue,
every change at or below ``L`` is already committed and readable from the backend. A watcher
therefore serves ``(start, L]`` from history (or the state at ``L``) and then only queued
changes above ``max(start, L)``.

Progress: a watcher that asked for progress notifications gets a BOOKMARK at the hub's last
revision when a wait for changes times out with its queue drained; any watcher gets one soon
after :meth:`HubWatcher.request_progress` (as etcd answers ``RequestWatchProgress``), which wakes
a blocked :meth:`HubWatcher.next`. A cache that waits for changes a second at a time thus
confirms a quiet resource's revision as soon as a reader needs it, without polling for it.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from kstore.api.gvk import Object
from kstore.api.selectors import FieldSelector, LabelSelector
from kstore.errors import InternalError, KStoreError, to_status
from kstore.storage.interface import (
    INITIAL_EVENTS_END_ANNOTATION,
    EventType,
    Watcher,
    WatchEvent,
)

__all__ = [
    "HistorySource",
    "HubWatcher",
    "RawEvent",
    "StartPlan",
    "Subscription",
    "WatchHub",
    "error_watcher",
]

#: Objects per chunk when reading the initial state, revisions per chunk when replaying:
#: large enough to amortise a read transaction, small enough that none is held for long.
STATE_CHUNK = 500
REPLAY_CHUNK = 1000


@dataclass(frozen=True, slots=True)
class RawEvent:
    """One committed change of one key, as stored.

    ``value`` is the stored (transformed) bytes after the change, None for a delete (or an
    expiry); ``prev_value`` the stored bytes before it, None when the key did not exist."""

    key: str
    revision: int
    value: bytes | None
    prev_value: bytes | None


class HistorySource(Protocol):
    """What a backend offers watchers for the part of a watch that precedes the live stream.

    Each call is one short read; implementations raise ``Expired`` when the revision asked for
    is no longer retained."""

    def read_state(
        self, key: str, recursive: bool, revision: int, after: str | None, limit: int
    ) -> tuple[list[tuple[str, int, bytes]], bool]:
        """Up to ``limit`` live ``(key, mod_revision, stored bytes)`` at ``revision`` in key
        order, keys strictly after ``after``; and whether more may follow."""
        ...

    def read_events(
        self, key: str, recursive: bool, after_revision: int, upto_revision: int, limit: int
    ) -> tuple[list[RawEvent], int]:
        """Changes in ``(after_revision, upto_revision]`` to keys in range, in revision order,
        scanning at most ``limit`` revisions; and the last revision scanned."""
        ...


def _bucket(key: str) -> str:
    # The first path segment: the resource (or API group) a key belongs to. Dispatch only
    # looks at subscriptions of the same bucket.
    parts = key.split("/", 2)
    return parts[1] if len(parts) > 1 else ""


class Subscription:
    """The hub's side of one watcher: a bounded queue of raw changes above ``start_revision``."""

    __slots__ = (
        "_hub",
        "_queue",
        "_wake",
        "bucket",
        "closed",
        "failure",
        "key",
        "limit",
        "overflowed",
        "progress_requested",
        "recursive",
        "start_revision",
    )

    def __init__(
        self, hub: WatchHub, key: str, recursive: bool, limit: int, start_revision: int
    ) -> None:
        self._hub = hub
        self._queue: deque[RawEvent] = deque()
        self._wake = threading.Event()
        self.key = key
        self.recursive = recursive
        self.bucket = _bucket(key)
        self.limit = limit
        self.start_revision = start_revision
        self.overflowed = False
        #: Why the subscription was cut off, when not for overflowing its queue.
        self.failure: KStoreError | None = None
        self.closed = False
        #: Set by :meth:`request_progress`, cleared by the watcher that answers it.
        self.progress_requested = False

    def accepts(self, key: str) -> bool:
        return key.startswith(self.key) if self.recursive else key == self.key

    def pop(self, timeout: float | None) -> RawEvent | None:
        """The next queued change, or None when ``timeout`` passed, the queue overflowed, the
        subscription was closed and drained, or progress was requested with the queue empty."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self.overflowed:
                return None
            try:
                return self._queue.popleft()
            except IndexError:
                pass
            if self.closed or self.progress_requested:
                return None
            # Clear, then re-check: a publish between the check above and the clear would
            # otherwise be missed until the next one.
            self._wake.clear()
            if self._queue or self.closed or self.overflowed or self.progress_requested:
                continue
            if deadline is None:
                self._wake.wait()
            else:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self._wake.wait(remaining):
                    return None

    def is_drained(self) -> bool:
        return not self._queue

    def request_progress(self) -> None:
        """Ask the consumer for a progress bookmark: a blocked :meth:`pop` returns at once."""
        self.progress_requested = True
        self._wake.set()

    def close(self) -> None:
        """Stop receiving changes; those already queued can still be popped."""
        self._hub._unsubscribe(self)
        self.closed = True
        self._wake.set()

    def _push(self, event: RawEvent) -> bool:
        if len(self._queue) >= self.limit:
            self.overflowed = True
            self._queue.clear()
            return False
        self._queue.append(event)
        return True


class WatchHub:
    """Fan-out of committed changes to subscriptions. Thread-safe; publish is called by one
    writer, in revision order."""

    def __init__(self, *, queue_limit: int, last_revision: int = 0) -> None:
        if queue_limit < 1:
            raise ValueError("queue_limit must be positive")
        self._lock = threading.Lock()
        self._buckets: dict[str, list[Subscription]] = {}
        self._queue_limit = queue_limit
        self._last_revision = last_revision
        self._start_revision = last_revision
        #: bucket -> the revision of its last published change (absent: none since start).
        self._changed: dict[str, int] = {}
        self._closed = False

    @property
    def last_revision(self) -> int:
        """The revision of the last publish: every change up to it has been dispatched."""
        return self._last_revision

    def has_subscribers(self) -> bool:
        return bool(self._buckets)

    def last_change(self, key: str) -> int:
        """A revision at or after the last change published for any key under ``key``,
        read locally: the revision of the last change of a key sharing ``key``'s first path
        segment (other resources under that segment count too, which only makes the answer
        larger), or the hub's starting revision when there was none since. Every change
        a writer has been answered for is published, so a reader holding the state of that
        range at this revision or later holds its current state."""
        return self._changed.get(_bucket(key), self._start_revision)

    def subscribe(self, key: str, recursive: bool) -> Subscription:
        with self._lock:
            sub = Subscription(self, key, recursive, self._queue_limit, self._last_revision)
            if self._closed:
                sub.closed = True
            else:
                self._buckets.setdefault(sub.bucket, []).append(sub)
            return sub

    def publish(self, events: Sequence[RawEvent], revision: int) -> None:
        """Dispatch committed ``events`` (ascending revisions); the store is now at
        ``revision``."""
        woken: set[Subscription] = set()
        overflowed: list[Subscription] = []
        with self._lock:
            if self._buckets:
                for event in events:
                    subs = self._buckets.get(_bucket(event.key))
                    if not subs:
                        continue
                    for sub in subs:
                        if sub.overflowed or not sub.accepts(event.key):
                            continue
                        if not sub._push(event):
                            overflowed.append(sub)
                        woken.add(sub)
                # Removed after dispatch: the bucket lists must not change while iterated.
                for sub in overflowed:
                    self._remove_locked(sub)
            changed = self._changed
            for event in events:
                changed[_bucket(event.key)] = event.revision
            if revision > self._last_revision:
                self._last_revision = revision
        for sub in woken:
            sub._wake.set()

    def cut_off_all(self, revision: int, failure: KStoreError) -> None:
        """The changes up to ``revision`` cannot be delivered (their history is gone): end
        every subscription with ``failure`` (its watcher gets it as an ERROR and watches
        again) and continue from ``revision``."""
        with self._lock:
            subs = [s for group in self._buckets.values() for s in group]
            self._buckets.clear()
            for sub in subs:
                sub.failure = failure
                sub.overflowed = True
                sub._queue.clear()
            self._changed.clear()
            self._start_revision = max(self._start_revision, revision)
            self._last_revision = max(self._last_revision, revision)
        for sub in subs:
            sub._wake.set()

    def progress_revision(self, sub: Subscription) -> int | None:
        """The revision a progress bookmark may carry for ``sub``: the last published one, if
        everything up to it has been taken from ``sub``'s queue."""
        with self._lock:
            if sub._queue or sub.overflowed:
                return None
            return self._last_revision

    def close(self) -> None:
        """End every subscription (their watchers drain and finish)."""
        with self._lock:
            self._closed = True
            subs = [s for group in self._buckets.values() for s in group]
            self._buckets.clear()
        for sub in subs:
            sub.closed = True
            sub._wake.set()

    def _unsubscribe(self, sub: Subscription) -> None:
        with self._lock:
            self._remove_locked(sub)

    def _remove_locked(self, sub: Subscription) -> None:
        group = self._buckets.get(sub.bucket)
        if group is not None and sub in group:
            group.remove(sub)
            if not group:
                del self._buckets[sub.bucket]


class StartPlan(Enum):
    """How a watch begins before following the live stream."""

    #: ADDED events for the state at the subscription's revision (optionally a bookmark).
    INITIAL_STATE = "initial-state"
    #: Every change after the requested revision, from history.
    REPLAY = "replay"


#: Transforms and decodes the stored bytes of one key; raises CorruptObject when it cannot.
Decode = Callable[[str, bytes], Object]
#: Labels and fields of an object, as ResourceStorageConfig.get_attrs.
GetAttrs = Callable[[Object], tuple[dict[str, str], dict[str, str]]]


def _with_rv(obj: Object, revision: int) -> Object:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
        obj["metadata"] = meta
    meta["resourceVersion"] = str(revision)
    return obj


def _error_event(error: KStoreError) -> WatchEvent:
    return WatchEvent(EventType.ERROR, to_status(error), 0)


class HubWatcher(Watcher):
    """A watcher fed by a :class:`Subscription`, after its initial state or history replay.

    Events come out in revision order, exactly once: the replay covers ``(start, L]`` and the
    live queue only contributes revisions above both ``start`` and ``L`` (see the module
    docstring). After an ERROR event the watcher is stopped. :meth:`stop` ends delivery at
    once, from any thread (a blocked :meth:`next` returns None); when the store closes instead,
    what is already queued is still handed out before the end.
    """

    def __init__(
        self,
        *,
        hub: WatchHub,
        subscription: Subscription,
        source: HistorySource,
        decode: Decode,
        get_attrs: GetAttrs,
        label_selector: LabelSelector,
        field_selector: FieldSelector,
        plan: StartPlan,
        start_revision: int,
        initial_events_bookmark: bool = False,
        progress_notify_interval: float | None = None,
    ) -> None:
        self._hub = hub
        self._sub = subscription
        self._source = source
        self._decode = decode
        self._get_attrs = get_attrs
        self._labels = label_selector
        self._fields = field_selector
        self._filtered = not (label_selector.empty() and field_selector.empty())
        self._plan: StartPlan | None = plan
        # Live changes at or below this revision were served by the plan (or precede start).
        self._live_floor = max(start_revision, subscription.start_revision)
        self._replay_from = start_revision
        self._state_after: str | None = None
        self._initial_bookmark = initial_events_bookmark
        self._progress_interval = progress_notify_interval
        self._last_delivered = start_revision if plan is StartPlan.REPLAY else 0
        self._ready: deque[WatchEvent] = deque()
        self._consume = threading.Lock()
        self._stopped = False
        self._finished = False

    # -- Watcher protocol ------------------------------------------------------------------

    @property
    def stopped(self) -> bool:
        return self._stopped or self._finished

    def stop(self) -> None:
        if not self._stopped:
            self._stopped = True
            self._sub.close()

    def request_progress(self) -> None:
        """Deliver a BOOKMARK at the hub's last revision soon (from any thread), once every
        change up to it has been delivered; none when nothing newer than the last event."""
        self._sub.request_progress()

    def __del__(self) -> None:
        # A watcher dropped without stop() must not stay subscribed (and keep events alive).
        with contextlib.suppress(Exception):
            self._sub.close()

    def __iter__(self) -> Iterator[WatchEvent]:
        while True:
            event = self.next(None)
            if event is None:
                return
            yield event

    def next(self, timeout: float | None = None) -> WatchEvent | None:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._consume:
            while True:
                if self._stopped:
                    # stop() ends delivery at once, whatever is buffered.
                    self._finish()
                    return None
                if self._ready:
                    event = self._ready.popleft()
                    if event.type is EventType.ERROR:
                        self._finish()
                    elif event.resource_version > self._last_delivered:
                        self._last_delivered = event.resource_version
                    return event
                if self._finished:
                    return None
                if self._plan is not None:
                    self._advance_plan()
                    continue
                remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
                if not self._take_live(remaining):
                    return None

    # -- internals -------------------------------------------------------------------------

    def _finish(self) -> None:
        self._finished = True
        self._ready.clear()
        self._sub.close()

    def _fail(self, error: KStoreError) -> None:
        # Events converted before the failure still go out first, in order; nothing after.
        self._plan = None
        self._ready.append(_error_event(error))

    def _advance_plan(self) -> None:
        try:
            if self._plan is StartPlan.INITIAL_STATE:
                self._advance_state()
            else:
                self._advance_replay()
        except KStoreError as exc:
            self._fail(exc)

    def _advance_state(self) -> None:
        revision = self._sub.start_revision
        items, more = self._source.read_state(
            self._sub.key, self._sub.recursive, revision, self._state_after, STATE_CHUNK
        )
        for key, mod_revision, data in items:
            obj = self._decode(key, data)
            if self._filtered and not self._matches(obj):
                continue
            self._ready.append(
                WatchEvent(EventType.ADDED, _with_rv(obj, mod_revision), mod_revision)
            )
        if items:
            self._state_after = items[-1][0]
        if not more or not items:
            self._plan = None
            if self._initial_bookmark:
                bookmark = {
                    "metadata": {
                        "resourceVersion": str(revision),
                        "annotations": {INITIAL_EVENTS_END_ANNOTATION: "true"},
                    }
                }
                self._ready.append(WatchEvent(EventType.BOOKMARK, bookmark, revision))

    def _advance_replay(self) -> None:
        upto = self._sub.start_revision
        if self._replay_from >= upto:
            self._plan = None
            return
        events, scanned = self._source.read_events(
            self._sub.key, self._sub.recursive, self._replay_from, upto, REPLAY_CHUNK
        )
        for raw in events:
            self._convert(raw)
        if scanned <= self._replay_from:
            raise InternalError(f"history replay made no progress after revision {scanned}")
        self._replay_from = scanned
        if scanned >= upto:
            self._plan = None

    def _take_live(self, timeout: float | None) -> bool:
        """Move one live change into the ready queue; False when the watch should return
        None now (timeout, or its end)."""
        sub = self._sub
        interval = self._progress_interval
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if interval is not None:
                wait = interval if wait is None else min(wait, interval)
            raw = sub.pop(wait)
            if self._stopped:
                return True  # next() ends the watch
            if raw is not None:
                if raw.revision > self._live_floor:
                    try:
                        self._convert(raw)
                    except KStoreError as exc:
                        self._fail(exc)
                    return True
                continue
            if sub.failure is not None:
                self._fail(sub.failure)
                return True
            if sub.overflowed:
                self._fail(
                    InternalError(
                        f"watch of {sub.key} fell {sub.limit} events behind and was closed; "
                        "watch again from the last resourceVersion received"
                    )
                )
                return True
            if sub.closed and sub.is_drained():
                self._finish()
                return False
            if interval is not None or sub.progress_requested:
                # Cleared before reading the revision: a request made after this read is
                # answered by the next pass.
                sub.progress_requested = False
                progress = self._hub.progress_revision(sub)
                if progress is not None and progress > self._last_delivered:
                    bookmark = {"metadata": {"resourceVersion": str(progress)}}
                    self._ready.append(WatchEvent(EventType.BOOKMARK, bookmark, progress))
                    return True
            if deadline is not None and time.monotonic() >= deadline:
                return False

    def _matches(self, obj: Object) -> bool:
        labels, fields = self._get_attrs(obj)
        return self._labels.matches(labels) and self._fields.matches(fields)

    def _convert(self, raw: RawEvent) -> None:
        rev = raw.revision
        if not self._filtered:
            if raw.value is None:
                if raw.prev_value is not None:
                    old = self._decode(raw.key, raw.prev_value)
                    self._ready.append(WatchEvent(EventType.DELETED, _with_rv(old, rev), rev))
                return
            new = self._decode(raw.key, raw.value)
            kind = EventType.ADDED if raw.prev_value is None else EventType.MODIFIED
            self._ready.append(WatchEvent(kind, _with_rv(new, rev), rev))
            return
        new_obj = None if raw.value is None else self._decode(raw.key, raw.value)
        old_obj = None if raw.prev_value is None else self._decode(raw.key, raw.prev_value)
        new_match = new_obj is not None and self._matches(new_obj)
        old_match = old_obj is not None and self._matches(old_obj)
        if new_match and new_obj is not None:
            kind = EventType.MODIFIED if old_match else EventType.ADDED
            self._ready.append(WatchEvent(kind, _with_rv(new_obj, rev), rev))
        elif old_match and old_obj is not None:
            self._ready.append(WatchEvent(EventType.DELETED, _with_rv(old_obj, rev), rev))


class _ErrorWatcher(Watcher):
    """A watch that failed before it started: one ERROR event, then the end."""

    def __init__(self, error: KStoreError) -> None:
        self._event: WatchEvent | None = _error_event(error)
        self._stopped = False

    @property
    def stopped(self) -> bool:
        return self._stopped or self._event is None

    def stop(self) -> None:
        self._stopped = True

    def next(self, timeout: float | None = None) -> WatchEvent | None:
        event, self._event = self._event, None
        return None if self._stopped else event

    def __iter__(self) -> Iterator[WatchEvent]:
        event = self.next()
        if event is not None:
            yield event


def error_watcher(error: KStoreError) -> Watcher:
    """A watcher that delivers ``error`` as its only (ERROR) event and then ends."""
    return _ErrorWatcher(error)
