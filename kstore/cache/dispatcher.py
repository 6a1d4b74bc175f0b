"""Fan-out: every cache event to every interested watcher, once per distinct filter.

Watchers are grouped by filter identity (key, recursive, selectors): an event is converted
(Kubernetes' ADDED / MODIFIED / DELETED transition table) once per group, and the resulting
event object, shared and read-only, is appended to each member's bounded buffer. Groups are
indexed so an event visits only those that can match it: groups requiring one value of the
*trigger field* (Kubernetes' indexed trigger, e.g. ``spec.nodeName`` for the kubelets' pod
watches) under the event's old and new values of that field, groups confined to one namespace
under the event's namespace, and the rest always.

Wake-ups are what costs in Python, so they are batched: :meth:`Dispatcher.dispatch` takes a
batch of events, and only after the whole batch releases each blocked thread consumer once and
schedules **one** callback per asyncio event loop that resolves all its waiting consumers and
calls the sinks of its watchers that have one (each at most once per batch; an HTTP watch
stream's sink writes the frames out without a task wake-up). Sink rounds that take long (many
streams) are paced (:class:`SinkRounds`): the next waits twice as long as the last took, and
serves together what arrived meanwhile.

Threading: :meth:`dispatch` and :meth:`send_bookmarks` run on the cacher's one feeding thread;
:meth:`add` (under the watch cache lock, so no event can slip between a watcher's replay and
its first live event) and :meth:`remove` from any thread. The dispatching thread reads an
immutable snapshot of the groups, rebuilt on every add or remove.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import threading
import weakref
from collections.abc import Callable, Sequence

from kstore.cache.watch_cache import CacheEvent
from kstore.cache.watcher import (
    CacheWatcher,
    Sink,
    WatchFilter,
    bookmark_event,
    resolve_all,
    run_sinks,
)

__all__ = ["HOLD", "PACED_ROUND", "Dispatcher", "SinkRounds"]

#: Its own generator: the process's shared one stays the application's (seeded runs, tests).
_JITTER = random.Random()


#: A sink round that takes this long (seconds) or longer holds the next one back.
PACED_ROUND = 0.001
#: How long, in multiples of its own duration, such a round holds the next back: fan-out to
#: many streams then takes at most a third of the loop. Measured (1,000 HTTP watches,
#: ConfigMap creates): 1 gave 0.9-2.0 us of server CPU per delivery and writes at 0.31-0.53x
#: of their rate without watches, 2 gave 0.5-1.2 us and 0.47-0.62x, 3 no better than 2.
HOLD = 2.0

_Loop = asyncio.AbstractEventLoop
_Sinks = dict[_Loop, list[Sink]]


class _Group:
    __slots__ = ("filter", "watchers")

    def __init__(self, watch_filter: WatchFilter) -> None:
        self.filter = watch_filter
        self.watchers: tuple[CacheWatcher, ...] = ()


class Dispatcher:
    """The registry of a cache's watchers and the fan-out of its events."""

    def __init__(
        self,
        *,
        resource_prefix: str,
        bookmark_interval: float,
        clock: Callable[[], float],
        trigger_field: str | None = None,
    ) -> None:
        self._prefix = resource_prefix
        self._trigger_field = trigger_field
        self._bookmark_interval = bookmark_interval
        self._clock = clock
        self._lock = threading.Lock()
        self._groups: dict[object, _Group] = {}
        self._members: set[CacheWatcher] = set()
        # Snapshots the dispatching thread reads without the lock.
        self._unscoped: tuple[_Group, ...] = ()
        self._scoped: dict[str, tuple[_Group, ...]] = {}
        self._triggered: dict[str, tuple[_Group, ...]] = {}
        self._bookmarked: tuple[CacheWatcher, ...] = ()
        self.closed_slow = 0
        # Each loop's sink rounds (the dispatching thread's; a loop gone is forgotten).
        self._rounds: weakref.WeakKeyDictionary[_Loop, SinkRounds] = weakref.WeakKeyDictionary()

    def __len__(self) -> int:
        return len(self._members)

    # -- registry --------------------------------------------------------------------------

    def add(self, watcher: CacheWatcher) -> None:
        with self._lock:
            if watcher in self._members:
                return
            identity = watcher.filter.identity
            group = self._groups.get(identity)
            if group is None:
                group = self._groups[identity] = _Group(watcher.filter)
            group.watchers = (*group.watchers, watcher)
            self._members.add(watcher)
            if watcher.allow_bookmarks:
                watcher.next_bookmark = self._clock() + self._jittered_interval()
            self._rebuild()

    def remove(self, watcher: CacheWatcher) -> None:
        with self._lock:
            if watcher not in self._members:
                return
            self._members.discard(watcher)
            identity = watcher.filter.identity
            group = self._groups[identity]
            group.watchers = tuple(w for w in group.watchers if w is not watcher)
            if not group.watchers:
                del self._groups[identity]
            self._rebuild()

    def _rebuild(self) -> None:
        unscoped: list[_Group] = []
        scoped: dict[str, list[_Group]] = {}
        triggered: dict[str, list[_Group]] = {}
        for group in self._groups.values():
            trigger = group.filter.trigger_value
            namespace = group.filter.namespace
            if trigger is not None and self._trigger_field is not None:
                triggered.setdefault(trigger, []).append(group)
            elif namespace is not None:
                scoped.setdefault(namespace, []).append(group)
            else:
                unscoped.append(group)
        self._unscoped = tuple(unscoped)
        self._scoped = {ns: tuple(groups) for ns, groups in scoped.items()}
        self._triggered = {value: tuple(groups) for value, groups in triggered.items()}
        self._bookmarked = tuple(w for w in self._members if w.allow_bookmarks)

    def _jittered_interval(self) -> float:
        # Spread bookmarks so that watchers started together are not all served in one tick.
        return self._bookmark_interval * (1.0 - 0.25 * _JITTER.random())

    def terminate_all(self) -> None:
        """End every watch (the cache is relisting or stopping); each drains what it holds."""
        with self._lock:
            members = list(self._members)
            self._members.clear()
            self._groups.clear()
            self._rebuild()
        for watcher in members:
            watcher.terminate()

    # -- fan-out (the feeding thread) ------------------------------------------------------

    def _namespace_of(self, key: str) -> str:
        rest = key[len(self._prefix) :]
        namespace, slash, _ = rest.partition("/")
        return namespace if slash else ""

    def dispatch(self, events: Sequence[CacheEvent]) -> None:
        """Deliver a batch of events (in revision order) to the interested watchers."""
        if not self._members:
            return
        woken: dict[_Loop, list[asyncio.Future[None]]] = {}
        sinks: _Sinks = {}
        listening: list[CacheWatcher] = []
        slow: list[CacheWatcher] = []
        scoped = self._scoped
        unscoped = self._unscoped
        triggered = self._triggered
        for event in events:
            revision = event.resource_version
            groups = unscoped
            if scoped:
                extra = scoped.get(self._namespace_of(event.key))
                if extra:
                    groups = groups + extra
            if triggered:
                groups = groups + self._triggered_groups(triggered, event)
            for group in groups:
                converted = group.filter.convert(event)
                if converted is None:
                    continue
                for watcher in group.watchers:
                    if revision <= watcher.floor or watcher.closed:
                        continue
                    # CacheWatcher.push, inlined: this loop runs once per delivery.
                    queue = watcher.queue
                    if len(queue) < watcher.buffer_size:
                        queue.append(converted)
                        watcher.last_revision = revision
                    else:
                        watcher.overflow()
                        slow.append(watcher)
                    sink = watcher.sink
                    if sink is not None:
                        if not watcher.sink_pending:
                            watcher.sink_pending = True
                            loop = watcher.sink_loop
                            if loop is not None:
                                sinks.setdefault(loop, []).append(sink)
                    elif watcher.listener is not None:
                        if not watcher.listener_pending:
                            watcher.listener_pending = True
                            listening.append(watcher)
                    elif watcher.sync_waiter is not None:
                        watcher.wake()
                    else:
                        future = watcher.async_waiter
                        if future is not None:
                            watcher.async_waiter = None
                            woken.setdefault(future.get_loop(), []).append(future)
        self._flush(woken, sinks)
        for watcher in listening:
            watcher.listener_pending = False
            watcher.call_listener()
        if slow:
            self.closed_slow += len(slow)
            for watcher in slow:
                self.remove(watcher)

    def _triggered_groups(
        self, triggered: dict[str, tuple[_Group, ...]], event: CacheEvent
    ) -> tuple[_Group, ...]:
        # Both values count: a change of the field is a DELETED for the old value's watchers
        # and an ADDED for the new value's.
        field = self._trigger_field
        assert field is not None
        new = event.new
        prev = event.prev
        new_value = None if new is None else new.fields.get(field, "")
        old_value = None if prev is None else prev.fields.get(field, "")
        found: tuple[_Group, ...] = ()
        if new_value is not None:
            found = triggered.get(new_value, ())
        if old_value is not None and old_value != new_value:
            found = found + triggered.get(old_value, ())
        return found

    def send_bookmarks(self, revision: int) -> None:
        """Push a BOOKMARK at ``revision`` to each watcher whose periodic bookmark is due."""
        watchers = self._bookmarked
        if not watchers:
            return
        now = self._clock()
        event = None
        woken: dict[_Loop, list[asyncio.Future[None]]] = {}
        sinks: _Sinks = {}
        for watcher in watchers:
            if watcher.next_bookmark > now or watcher.closed or revision < watcher.floor:
                continue
            watcher.next_bookmark = now + self._jittered_interval()
            if event is None:
                event = bookmark_event(revision)
            watcher.push_bookmark(event)
            sink = watcher.sink
            if sink is not None:
                if not watcher.sink_pending:
                    watcher.sink_pending = True
                    loop = watcher.sink_loop
                    if loop is not None:
                        sinks.setdefault(loop, []).append(sink)
            elif watcher.listener is not None:
                watcher.call_listener()
            elif watcher.sync_waiter is not None:
                watcher.wake()
            else:
                future = watcher.async_waiter
                if future is not None:
                    watcher.async_waiter = None
                    woken.setdefault(future.get_loop(), []).append(future)
        self._flush(woken, sinks)

    def _flush(self, woken: dict[_Loop, list[asyncio.Future[None]]], sinks: _Sinks) -> None:
        for loop, futures in woken.items():
            with contextlib.suppress(RuntimeError):  # a closed loop has no consumer left
                loop.call_soon_threadsafe(resolve_all, futures)
        for loop, calls in sinks.items():
            rounds = self._rounds.get(loop)
            if rounds is None:
                rounds = self._rounds[loop] = SinkRounds(loop)
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(rounds.submit, calls)


class SinkRounds:
    """Paces one loop's sink rounds of one dispatcher: after a round that took ``T`` (at
    least :data:`PACED_ROUND`: many streams), the next starts no sooner than ``HOLD * T``
    after it ended; sinks due meanwhile wait and are called together then. Fan-out to many
    streams thus takes at most about a third of the loop, leaving the rest to requests
    (writes), and each stream gets what arrived meanwhile in one write: the busier, the more
    events per write. Events wait at most about two rounds' time (a few ms at 1,000 streams);
    rounds of few streams are never held back. Runs in the loop."""

    __slots__ = ("_loop", "_not_before", "_waiting")

    def __init__(self, loop: _Loop) -> None:
        self._loop = loop
        self._not_before = 0.0
        self._waiting: list[Sink] | None = None

    def submit(self, sinks: list[Sink]) -> None:
        """Call ``sinks`` now, or with the next round if it is held back."""
        waiting = self._waiting
        if waiting is not None:
            waiting.extend(sinks)
            return
        if self._loop.time() < self._not_before:
            self._waiting = list(sinks)
            self._loop.call_at(self._not_before, self._run_waiting)
            return
        self._run(sinks)

    def _run_waiting(self) -> None:
        sinks, self._waiting = self._waiting or [], None
        self._run(sinks)

    def _run(self, sinks: list[Sink]) -> None:
        clock = self._loop.time
        started = clock()
        run_sinks(sinks)
        ended = clock()
        took = ended - started
        self._not_before = ended + HOLD * took if took >= PACED_ROUND else 0.0
