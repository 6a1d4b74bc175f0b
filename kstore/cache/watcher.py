"""One watch served by the cache: its filter, its replay, its bounded buffer, its consumer.

A :class:`CacheWatcher` hands out, in order: the replay it was started with (initial ADDED
events for the current state, or the history after the requested revision), the
initial-events-end bookmark when asked for, then live events the dispatcher pushed into its
bounded buffer. Live events arrive already filtered and converted (the dispatcher does that
once per distinct filter); the replay is filtered here, in the consumer's thread.

Buffer rule: at most ``buffer_size`` undelivered live events. A push that finds the buffer
full closes the watcher with a final ERROR event (429 TooManyRequests, so a client backs off
and watches again from the last revision it received, as client-go's reflector does): the
watcher is never silently skipped, and nobody else waits for it.

Consumers: one per watcher, either blocking (:meth:`next`, iteration) or asyncio
(:meth:`next_async`, ``async for``). A blocked consumer is woken with a lock released by the
dispatcher; an asyncio one through its event loop, with one loop callback per dispatch batch
for all the watchers of that loop (see :mod:`kstore.cache.dispatcher`) — waking a thread per
event costs far more CPU than the delivery itself. An asyncio consumer may instead install a
*sink* (:meth:`set_sink`): a plain function the same loop callback calls, which takes what is
ready with :meth:`take` and writes it out, without waking the consumer's task at all (an HTTP
watch stream writing its shared, pre-encoded frames; one task wake-up per watcher per event
is what fan-out over HTTP cost most). While a sink is installed the dispatcher calls it
instead of resolving ``async_waiter``; :meth:`stop` and :meth:`terminate` still resolve it.
A consumer on a thread may likewise install a *listener* (:meth:`set_listener`): a function
the dispatching thread itself calls once per dispatch batch (and on :meth:`terminate`,
:meth:`stop` and bookmarks), which takes what is ready and handles it there, so that the
consumer's own thread is not woken for each event (a controller's informer, whose handling
is a few dict updates; waking its thread cost more than that).

Objects in events are shared and read-only.
"""

from __future__ import annotations

import _thread
import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Hashable, Iterator, Mapping, Sequence
from typing import Any

from kstore.api.selectors import FieldSelector, LabelSelector
from kstore.cache.watch_cache import CacheEvent, Entry
from kstore.errors import KStoreError, TooManyRequests, to_status
from kstore.storage.interface import (
    INITIAL_EVENTS_END_ANNOTATION,
    EventType,
    Watcher,
    WatchEvent,
)

__all__ = [
    "AFTER_SINKS",
    "CacheWatcher",
    "ErrorWatcher",
    "Sink",
    "SinkMemo",
    "WatchFilter",
    "bookmark_event",
    "error_event",
    "resolve_all",
    "run_sinks",
]

_log = logging.getLogger("kstore.cache")

_Match = Callable[[str, Mapping[str, str], Mapping[str, str]], bool]

#: Scratch space shared by the sinks called in one loop callback (:func:`run_sinks`), which
#: lives only for that call: watchers of one filter mostly take the same events there, so a
#: sink can keep what it derived from them (a stream's written bytes) for the next sinks.
SinkMemo = dict[Hashable, Any]
#: The key of a list of callables in a :data:`SinkMemo` that :func:`run_sinks` calls once
#: every sink ran (e.g. to report what they did together rather than one by one).
AFTER_SINKS = "kstore.after-sinks"
#: A watcher's sink (see the module docstring).
Sink = Callable[[SinkMemo], None]


def error_event(error: KStoreError) -> WatchEvent:
    return WatchEvent(EventType.ERROR, to_status(error), 0)


def bookmark_event(revision: int, *, initial_events_end: bool = False) -> WatchEvent:
    """A BOOKMARK: an object with only ``metadata.resourceVersion`` (and the
    initial-events-end annotation when it ends a watch-list's initial events)."""
    meta: dict[str, Any] = {"resourceVersion": str(revision)}
    if initial_events_end:
        meta["annotations"] = {INITIAL_EVENTS_END_ANNOTATION: "true"}
    return WatchEvent(EventType.BOOKMARK, {"metadata": meta}, revision)


class WatchFilter:
    """Which changes a watch sees: a key (exact, or a prefix ending in ``/``) and selectors.

    ``identity`` is equal for filters that select exactly the same changes, so the dispatcher
    evaluates each distinct filter once per event. ``namespace`` is the one namespace the
    filter is confined to and ``trigger_value`` the one value of the dispatcher's trigger
    field it requires, when it does (the dispatcher's indexes)."""

    __slots__ = ("identity", "key", "matches", "namespace", "recursive", "trigger_value")

    def __init__(
        self,
        key: str,
        *,
        recursive: bool,
        label_selector: LabelSelector,
        field_selector: FieldSelector,
        namespace: str | None,
        trigger_value: str | None = None,
    ) -> None:
        self.key = key
        self.recursive = recursive
        self.namespace = namespace
        self.trigger_value = trigger_value
        self.identity = (key, recursive, label_selector, field_selector)
        self.matches: _Match = _compile(key, recursive, label_selector, field_selector)

    def convert(self, event: CacheEvent) -> WatchEvent | None:
        """What this filter sees of ``event`` (Kubernetes' transition table), or None."""
        key = event.key
        new = event.new
        new_passes = new is not None and self.matches(key, new.labels, new.fields)
        prev = event.prev
        old_passes = prev is not None and self.matches(key, prev.labels, prev.fields)
        if new_passes:
            return event.modified() if old_passes else event.added()
        if old_passes:
            return event.deleted()
        return None


def _compile(key: str, recursive: bool, labels: LabelSelector, fields: FieldSelector) -> _Match:
    label_match = None if labels.empty() else labels.matches
    field_match = None if fields.empty() else fields.matches
    if recursive:
        if label_match is None and field_match is None:
            return lambda k, lab, fld: k.startswith(key)
        if label_match is None:
            assert field_match is not None
            return lambda k, lab, fld: k.startswith(key) and field_match(fld)
        if field_match is None:
            return lambda k, lab, fld: k.startswith(key) and label_match(lab)
        return lambda k, lab, fld: k.startswith(key) and label_match(lab) and field_match(fld)
    label_ok = label_match or (lambda lab: True)
    field_ok = field_match or (lambda fld: True)
    return lambda k, lab, fld: k == key and label_ok(lab) and field_ok(fld)


class CacheWatcher(Watcher):
    """A watch served from the cache (see the module docstring). Thread-safe between its one
    consumer and the dispatcher; :meth:`stop` may be called from anywhere."""

    def __init__(
        self,
        *,
        watch_filter: WatchFilter,
        buffer_size: int,
        allow_bookmarks: bool,
        initial_events_end_bookmark: bool,
        on_stop: Callable[[CacheWatcher], None],
        description: str,
    ) -> None:
        self.filter = watch_filter
        self.buffer_size = buffer_size
        self.allow_bookmarks = allow_bookmarks
        self._want_end_bookmark = initial_events_end_bookmark
        self._end_bookmark_revision = 0
        self._on_stop = on_stop
        self.description = description
        # Replay, consumed before the live buffer.
        self._initial_entries: Sequence[Entry] = ()
        self._initial_events: Sequence[CacheEvent] = ()
        self._position = 0
        self._replaying = False
        #: Live changes at or below this revision were covered by the replay.
        self.floor = 0
        #: Revision of the last event pushed or replayed (bookmarks never go below it).
        self.last_revision = 0
        #: When the next periodic bookmark is due (the dispatcher's clock).
        self.next_bookmark = 0.0
        self.queue: deque[WatchEvent] = deque()
        # Set once no more live events will be pushed (stop, overflow, cache going away).
        self.closed = False
        self._stopped = False
        self._ended = False
        # Consumer wake-ups: a lock the dispatcher releases, or a future on a loop.
        self.sync_waiter: Any = None
        self.async_waiter: asyncio.Future[None] | None = None
        # An asyncio consumer's sink (see the module docstring), its loop, and whether a call
        # of it is already scheduled there (so that a batch schedules it once).
        self.sink: Sink | None = None
        self.sink_loop: asyncio.AbstractEventLoop | None = None
        self.sink_pending = False
        # A threaded consumer's listener (see the module docstring), and whether the current
        # dispatch batch has already noted it.
        self.listener: Callable[[], None] | None = None
        self.listener_pending = False

    # -- set-up -----------------------------------------------------------------------------

    def register_at(self, revision: int) -> None:
        """Live events at or below ``revision`` are covered by the replay (called under the
        cache lock, before the dispatcher can see this watcher)."""
        self.floor = revision
        self.last_revision = revision

    def begin(self, entries: Sequence[Entry], events: Sequence[CacheEvent], revision: int) -> None:
        self._initial_entries = entries
        self._initial_events = events
        self._end_bookmark_revision = revision
        self._replaying = bool(entries or events or self._want_end_bookmark)

    # -- dispatcher side -------------------------------------------------------------------

    def push(self, event: WatchEvent) -> bool:
        """Queue a live event; False (and the watcher closed with an ERROR) when full."""
        queue = self.queue
        if len(queue) >= self.buffer_size:
            self.overflow()
            return False
        queue.append(event)
        self.last_revision = event.resource_version
        return True

    def overflow(self) -> None:
        """The buffer is full: close with a final ERROR after the buffered events."""
        if not self.closed:
            self.closed = True
            self.queue.append(
                error_event(
                    TooManyRequests(
                        f"watch of {self.description} closed: the client did not keep up with "
                        f"{self.buffer_size} buffered events; watch again from the last "
                        "resourceVersion received",
                        retry_after_seconds=1,
                    )
                )
            )

    def push_bookmark(self, event: WatchEvent) -> None:
        """Queue a periodic bookmark unless the buffer is full (bookmarks are best effort)."""
        if len(self.queue) < self.buffer_size and event.resource_version >= self.last_revision:
            self.queue.append(event)
            self.last_revision = event.resource_version

    def wake(self) -> None:
        """Wake a blocked consumer, or call its listener (the dispatcher handles asyncio
        consumers, and listeners, in batches)."""
        if self.listener is not None:
            self.call_listener()
            return
        waiter = self.sync_waiter
        if waiter is not None:
            self.sync_waiter = None
            # try/except, not contextlib.suppress: this runs once per delivery to a blocked
            # consumer, and the context manager costs more than the release.
            try:  # noqa: SIM105
                waiter.release()
            except RuntimeError:  # already released by a concurrent wake
                pass

    def terminate(self) -> None:
        """The cache stops feeding this watch: buffered events are still delivered, then the
        watch ends (the client watches again from its last revision)."""
        self.closed = True
        self.wake()
        self._wake_async()

    # -- consumer side ---------------------------------------------------------------------

    @property
    def stopped(self) -> bool:
        return self._stopped or self._ended

    def stop(self) -> None:
        """End the watch: the consumer gets nothing more, not even what was buffered (the
        interface's "iteration then stops"). Idempotent, callable from any thread."""
        if self._stopped:
            return
        self._stopped = True
        self.closed = True
        self.queue.clear()
        self._on_stop(self)
        self.wake()
        self._wake_async()

    def _wake_async(self) -> None:
        future = self.async_waiter
        if future is not None:
            with contextlib.suppress(RuntimeError):  # a closed loop has no consumer left
                future.get_loop().call_soon_threadsafe(_resolve, future)

    def set_sink(self, sink: Sink | None) -> None:
        """Install (or, with None, remove) the sink, called in the running event loop when
        events are ready, instead of waking the consumer; call from that loop."""
        self.sink_loop = asyncio.get_running_loop() if sink is not None else None
        self.sink_pending = False
        self.sink = sink

    def call_listener(self) -> None:
        """Call the listener, if any; what it raises is logged, not passed to the dispatcher
        (the other watchers of the batch still get their events)."""
        listener = self.listener
        if listener is None:
            return
        try:
            listener()
        except Exception:
            _log.exception("the listener of watch %s failed", self.description)

    def set_listener(self, listener: Callable[[], None] | None) -> None:
        """Install (or, with None, remove) the listener: called, from the dispatching thread
        or the one that ends the watch, whenever events may be ready, instead of waking a
        blocked consumer. It must not block; it takes what is ready with :meth:`take_batch`
        (the consumer serialises it with its own takes)."""
        self.listener = listener

    def take(self) -> WatchEvent | None:
        """The next event without waiting; None when none is ready now (see :attr:`stopped`
        for whether more can come)."""
        return self._take()

    def take_batch(self, limit: int) -> list[WatchEvent]:
        """Up to ``limit`` events ready now, in order, as :meth:`take` would hand them out one
        by one (an ERROR, the last event of a watch, ends the batch); empty when none is
        ready (see :attr:`stopped` for whether more can come)."""
        queue = self.queue
        if self._stopped or self._replaying or not queue:
            batch: list[WatchEvent] = []
            while len(batch) < limit:
                event = self._take()
                if event is None:
                    break
                batch.append(event)
                if event.type is EventType.ERROR:
                    break
            return batch
        # Live events only: popped one by one, since the dispatcher may append meanwhile.
        count = min(len(queue), limit)
        if count == 1:
            batch = [queue.popleft()]
        else:
            popleft = queue.popleft
            batch = [popleft() for _ in range(count)]
        if batch[-1].type is EventType.ERROR:  # only ever the last one pushed
            self._end()
            queue.clear()
        return batch

    @property
    def ready(self) -> bool:
        """Whether :meth:`take` has something to hand out (or the end to note) right now."""
        return bool(self.queue) or self.closed or self._replaying or self._stopped

    def _take(self) -> WatchEvent | None:
        """The next event without blocking; None when none is ready now."""
        if self._stopped:  # the consumer ended the watch: nothing more, buffered or not
            self._end()
            return None
        if self._replaying:
            event = self._take_replay()
            if event is not None:
                return event
        queue = self.queue
        if queue:
            event = queue.popleft()
            if event.type is EventType.ERROR:
                self._end()
                queue.clear()
            return event
        if self.closed:
            self._end()
        return None

    def _take_replay(self) -> WatchEvent | None:
        matches = self.filter.matches
        entries = self._initial_entries
        if entries:
            while self._position < len(entries):
                entry = entries[self._position]
                self._position += 1
                if matches(entry.key, entry.labels, entry.fields):
                    return entry.added_event()
            self._initial_entries = ()
            self._position = 0
            self._replaying = False
            if self._want_end_bookmark:
                self._want_end_bookmark = False
                return bookmark_event(self._end_bookmark_revision, initial_events_end=True)
            return None
        events = self._initial_events
        if events:
            convert = self.filter.convert
            while self._position < len(events):
                cache_event = events[self._position]
                self._position += 1
                converted = convert(cache_event)
                if converted is not None:
                    return converted
            self._initial_events = ()
            self._position = 0
        self._replaying = False
        if self._want_end_bookmark:
            self._want_end_bookmark = False
            return bookmark_event(self._end_bookmark_revision, initial_events_end=True)
        return None

    def _end(self) -> None:
        if not self._ended:
            self._ended = True
            self._on_stop(self)

    def next(self, timeout: float | None = None) -> WatchEvent | None:
        event = self._take()
        if event is not None or self._ended:
            return event
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            lock = _thread.allocate_lock()
            lock.acquire()
            self.sync_waiter = lock
            # Re-check after publishing the waiter: a push in between either is seen here
            # or sees the waiter and releases it.
            event = self._take()
            if event is not None or self._ended:
                self.sync_waiter = None
                return event
            if deadline is None:
                lock.acquire()
            else:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not lock.acquire(True, remaining):
                    self.sync_waiter = None
                    return self._take()
            event = self._take()
            if event is not None or self._ended:
                return event

    async def next_async(self, timeout: float | None = None) -> WatchEvent | None:
        """As :meth:`next`, for a consumer running in an asyncio event loop."""
        event = self._take()
        if event is not None or self._ended:
            return event
        if timeout is not None:
            return await self._next_async_until(timeout)
        loop = asyncio.get_running_loop()
        while True:
            future = loop.create_future()
            self.async_waiter = future
            # Re-check after publishing the waiter (see next()).
            if self.queue or self.closed or self._replaying:
                self.async_waiter = None
            else:
                try:
                    await future
                finally:
                    self.async_waiter = None
            event = self._take()
            if event is not None or self._ended:
                return event

    async def _next_async_until(self, timeout: float) -> WatchEvent | None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                return self._take()
            future = loop.create_future()
            self.async_waiter = future
            if self.queue or self.closed or self._replaying:
                self.async_waiter = None
            else:
                try:
                    await asyncio.wait_for(future, remaining)
                except TimeoutError:
                    return self._take()
                finally:
                    self.async_waiter = None
            event = self._take()
            if event is not None or self._ended:
                return event

    def __iter__(self) -> Iterator[WatchEvent]:
        while True:
            event = self.next(None)
            if event is None:
                return
            yield event

    def __aiter__(self) -> AsyncIterator[WatchEvent]:
        return self

    async def __anext__(self) -> WatchEvent:
        event = await self.next_async(None)
        if event is None:
            raise StopAsyncIteration
        return event


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def resolve_all(futures: list[asyncio.Future[None]]) -> None:
    """Wake every waiting asyncio consumer of one loop (runs in that loop)."""
    for future in futures:
        if not future.done():
            future.set_result(None)


def run_sinks(sinks: list[Sink]) -> None:
    """Call the sinks of one loop's watchers that have events ready (runs in that loop), with
    one :data:`SinkMemo` shared by them all; then what they left under :data:`AFTER_SINKS`."""
    memo: SinkMemo = {}
    for sink in sinks:
        sink(memo)
    after = memo.get(AFTER_SINKS)
    if after is not None:
        for finish in after:
            finish()


class ErrorWatcher(Watcher):
    """A watch that failed before it started: one ERROR event, then the end."""

    def __init__(self, error: KStoreError) -> None:
        self._event: WatchEvent | None = error_event(error)
        self._stopped = False

    @property
    def stopped(self) -> bool:
        return self._stopped or self._event is None

    def stop(self) -> None:
        self._stopped = True

    def next(self, timeout: float | None = None) -> WatchEvent | None:
        event, self._event = self._event, None
        return None if self._stopped else event

    async def next_async(self, timeout: float | None = None) -> WatchEvent | None:
        return self.next(timeout)

    def __iter__(self) -> Iterator[WatchEvent]:
        event = self.next()
        if event is not None:
            yield event
