"""Watches on etcd: one gRPC Watch stream per kstore watch, driven by a loop of our own.

python3-etcd3's own watch thread dies when a stream ends (0.13.0), and a paused member keeps a
stream open and silent for ever, so each :class:`EtcdWatcher` runs its stream itself:

- a **reader thread** opens the stream (``start_revision`` = last complete revision + 1,
  ``prev_kv`` on), turns etcd events into kstore events as Kubernetes' etcd3 watcher does
  (create -> ADDED, update -> MODIFIED, delete -> DELETED of the previous state at the delete's
  revision, selector transitions -> ADDED/DELETED), and hands them to a bounded queue the
  consumer reads with :meth:`EtcdWatcher.next`;
- the stream's **request iterator** doubles as its watchdog: after ``watch_idle_timeout`` of
  silence it sends a progress request, and when that is not answered within the same time the
  stream is cancelled and the member reported failed;
- a stream that breaks for any reason that resuming can cure (member killed, paused, lost its
  leader, closed the stream) is **resumed on the next member** from the revision after the last
  one fully delivered. etcd never splits one revision over two responses, so the resume point is
  always a complete revision (python-etcd3 #729): no gap, no duplicate;
- a resume (or start) below the compacted revision ends the watch with one ERROR event, 410
  Expired, never a silent later start; so does a stream that cannot be re-established within
  ``watch_reconnect_timeout`` (503).

Progress notifications: a stream opened with ``progress_notify`` gets etcd's periodic ones,
which become BOOKMARK events. Responses to our own progress requests only prove liveness: on
etcd before 3.4.31 they can overtake queued events (etcd #15220), so their revision is never
used, neither for bookmarks nor as a resume point.

Invariants: events leave in strictly increasing revision order (bookmarks: non-decreasing);
after an ERROR event nothing more is delivered; a stopped watcher's threads end within a tick.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Iterator
from typing import Any, Protocol

from etcd3 import etcdrpc
from etcd3.etcdrpc import kv_pb2

from kstore.api.gvk import Object
from kstore.errors import Expired, InternalError, KStoreError, Unavailable, to_status
from kstore.storage._etcd_client import (
    CompactedError,
    EtcdClient,
    classify_stream_error,
)
from kstore.storage._etcd_config import EtcdConfig
from kstore.storage.interface import (
    INITIAL_EVENTS_END_ANNOTATION,
    EventType,
    Watcher,
    WatchEvent,
)

__all__ = ["EtcdWatcher", "WatchSource", "WatchStart"]

#: Objects per page when a watch lists its initial state (as Kubernetes' watch sync does).
INITIAL_PAGE = 500
#: Events buffered for a consumer; a full buffer pauses the stream (etcd holds the rest).
QUEUE_SIZE = 1024
#: How often the watchdog and blocked hand-overs look at the clock and the stop flag.
_TICK = 0.1

_EXPIRED_MESSAGE = "The resourceVersion for the provided watch is too old."
_END = object()
_DELETE = kv_pb2.Event.DELETE


class WatchSource(Protocol):
    """What a watcher needs from its storage."""

    def decode_value(self, key: bytes, value: bytes) -> Object:
        """Transform and decode stored bytes (fresh object); CorruptObject when impossible."""
        ...

    def matches(self, obj: Object) -> bool:
        """Whether the watch's selectors accept ``obj``."""
        ...

    def range_page(self, start: bytes, revision: int, limit: int) -> Any:
        """One page of the watched range from ``start`` at ``revision`` (0: latest)."""
        ...

    def observe_compacted(self, revision: int) -> None:
        """etcd reported history compacted up to ``revision``."""
        ...


class WatchStart:
    """Where a watch begins: after ``revision`` (>0), or with the state at the latest revision
    listed as ADDED events first (``initial_state``), optionally closed by the
    initial-events-end bookmark."""

    __slots__ = ("initial_bookmark", "initial_state", "revision")

    def __init__(
        self, *, revision: int = 0, initial_state: bool = False, initial_bookmark: bool = False
    ) -> None:
        self.revision = revision
        self.initial_state = initial_state
        self.initial_bookmark = initial_bookmark


class _StreamBroken(Exception):
    """The stream ended in a way that resuming on another member may cure."""


class _Stopped(Exception):
    """The consumer stopped the watch."""


class _Session:
    """State one stream shares between its reader and its request iterator (watchdog)."""

    __slots__ = ("call", "dead", "done", "last_recv", "probe_at")

    def __init__(self) -> None:
        self.call: Any = None
        self.last_recv = time.monotonic()
        self.probe_at: float | None = None
        self.dead = False
        self.done = False


def _bookmark(revision: int, *, initial_end: bool = False) -> WatchEvent:
    meta: dict[str, Any] = {"resourceVersion": str(revision)}
    if initial_end:
        meta["annotations"] = {INITIAL_EVENTS_END_ANNOTATION: "true"}
    return WatchEvent(EventType.BOOKMARK, {"metadata": meta}, revision)


def _with_rv(obj: Object, revision: int) -> Object:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
        obj["metadata"] = meta
    meta["resourceVersion"] = str(revision)
    return obj


class EtcdWatcher(Watcher):
    """A kstore watch over one etcd key or prefix (see the module docstring)."""

    def __init__(
        self,
        *,
        client: EtcdClient,
        config: EtcdConfig,
        source: WatchSource,
        key: bytes,
        range_end: bytes,
        start: WatchStart,
        filtered: bool,
        progress_notify: bool,
    ) -> None:
        self._client = client
        self._config = config
        self._source = source
        self._key = key
        self._range_end = range_end
        self._start = start
        self._filtered = filtered
        self._progress_notify = progress_notify
        # The last revision whose events have all been handed to the queue.
        self._last_rev = start.revision
        self._last_delivered = 0
        self._out: queue.Queue[object] = queue.Queue(maxsize=QUEUE_SIZE)
        self._stop = threading.Event()
        self._done = False
        self._session: _Session | None = None
        # Whether the current stream got anywhere (created, or delivered events): a stream
        # that did restarts the reconnect budget.
        self._session_progressed = False
        self._endpoint: str | None = None
        self._thread = threading.Thread(target=self._run, name="kstore-etcd-watch", daemon=True)
        self._thread.start()

    # -- Watcher protocol ------------------------------------------------------------------

    @property
    def stopped(self) -> bool:
        return self._done or self._stop.is_set()

    @property
    def endpoint(self) -> str | None:
        """``host:port`` of the member whose stream serves this watch now (for operators and
        fault tests); None before the first stream opens."""
        return self._endpoint

    def stop(self) -> None:
        if self._stop.is_set():
            return
        self._stop.set()
        session = self._session
        if session is not None and session.call is not None:
            session.call.cancel()

    def next(self, timeout: float | None = None) -> WatchEvent | None:
        if self._done or self._stop.is_set():
            return None
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            wait = _TICK if deadline is None else min(_TICK, deadline - time.monotonic())
            try:
                item = self._out.get(timeout=max(0.0, wait))
            except queue.Empty:
                if self._stop.is_set():
                    return None
                if deadline is not None and time.monotonic() >= deadline:
                    return None
                continue
            if item is _END:
                self._done = True
                return None
            assert isinstance(item, WatchEvent)
            if item.type is EventType.ERROR:
                self._done = True
                self.stop()
            return item

    def __iter__(self) -> Iterator[WatchEvent]:
        while True:
            event = self.next(None)
            if event is None:
                return
            yield event

    # -- the reader thread -----------------------------------------------------------------

    def _emit(self, event: object) -> None:
        """Hand ``event`` to the consumer, waiting while the queue is full (the stream then
        pauses; the watchdog does not count that time as silence)."""
        session = self._session
        while True:
            if self._stop.is_set():
                raise _Stopped
            try:
                self._out.put(event, timeout=_TICK)
            except queue.Full:
                if session is not None:
                    session.last_recv = time.monotonic()
                continue
            if isinstance(event, WatchEvent) and event.type is not EventType.ERROR:
                self._last_delivered = max(self._last_delivered, event.resource_version)
            return

    def _run(self) -> None:
        try:
            if self._start.initial_state:
                self._sync()
            self._follow()
        except _Stopped:
            pass
        except KStoreError as exc:
            self._fail(exc)
        except Exception as exc:  # a bug or an unexpected answer must not hang the consumer
            self._fail(InternalError(f"etcd watch failed: {exc}"))
        finally:
            # The end marker must get through even to a consumer that is not reading.
            self._end()

    def _fail(self, error: KStoreError) -> None:
        with contextlib.suppress(_Stopped):
            self._emit(WatchEvent(EventType.ERROR, to_status(error), 0))

    def _end(self) -> None:
        while not self._stop.is_set():
            try:
                self._out.put(_END, timeout=_TICK)
                return
            except queue.Full:
                continue

    def _sync(self) -> None:
        """List the current state as ADDED events; the watch then follows from its revision."""
        revision = 0
        start = self._key
        while True:
            if self._stop.is_set():
                raise _Stopped
            try:
                page = self._source.range_page(start, revision, INITIAL_PAGE)
            except CompactedError:
                raise Expired(_EXPIRED_MESSAGE) from None
            if revision == 0:
                revision = int(page.header.revision)
            for kv in page.kvs:
                obj = self._source.decode_value(kv.key, kv.value)
                if self._filtered and not self._source.matches(obj):
                    continue
                rev = int(kv.mod_revision)
                self._emit(WatchEvent(EventType.ADDED, _with_rv(obj, rev), rev))
            if not page.more or not page.kvs:
                break
            start = bytes(page.kvs[-1].key) + b"\x00"
        self._last_rev = revision
        if self._start.initial_bookmark:
            self._emit(_bookmark(revision, initial_end=True))

    def _follow(self) -> None:
        reconnect_deadline: float | None = None
        pause = 0.05
        while True:
            if self._stop.is_set():
                raise _Stopped
            if self._client.closed:
                raise Unavailable("the etcd backend was closed")
            try:
                self._stream()
            except _StreamBroken:
                now = time.monotonic()
                if reconnect_deadline is None or self._session_progressed:
                    reconnect_deadline = now + self._config.watch_reconnect_timeout
                    pause = 0.05
                if now > reconnect_deadline:
                    raise Unavailable(
                        "etcd watch could not be re-established within "
                        f"{self._config.watch_reconnect_timeout:g}s"
                    ) from None
                if self._stop.wait(pause):
                    raise _Stopped from None
                pause = min(pause * 2, 1.0)

    def _requests(self, session: _Session, create: Any) -> Iterator[Any]:
        yield create
        idle_timeout = self._config.watch_idle_timeout
        progress = etcdrpc.WatchRequest(progress_request=etcdrpc.WatchProgressRequest())
        while not session.done and not self._stop.is_set():
            time.sleep(_TICK)
            now = time.monotonic()
            if session.probe_at is None:
                if now - session.last_recv > idle_timeout:
                    session.probe_at = now
                    yield progress
            elif now - session.probe_at > idle_timeout and now - session.last_recv > idle_timeout:
                session.dead = True
                if session.call is not None:
                    session.call.cancel()
                return

    def _stream(self) -> None:
        """One stream session: returns only when stopped; raises _StreamBroken to resume."""
        self._session_progressed = False
        session = _Session()
        create = etcdrpc.WatchRequest(
            create_request=etcdrpc.WatchCreateRequest(
                key=self._key,
                range_end=self._range_end,
                start_revision=self._last_rev + 1,
                prev_kv=True,
                progress_notify=self._progress_notify,
            )
        )
        call, endpoint = self._client.watch_stream(self._requests(session, create))
        self._endpoint = endpoint.target
        session.call = call
        self._session = session
        if self._stop.is_set():
            call.cancel()
        try:
            for response in call:
                session.last_recv = time.monotonic()
                session.probe_at = None
                self._handle(response)
        except (KStoreError, _Stopped, _StreamBroken):
            raise  # decided by _handle: not a stream failure
        except Exception as exc:
            if self._stop.is_set():
                raise _Stopped from None
            if session.dead:
                self._client.endpoint_failed(endpoint)
                raise _StreamBroken("watch stream went silent") from None
            error = classify_stream_error(exc)
            if isinstance(error, CompactedError):
                raise Expired(_EXPIRED_MESSAGE) from None
            if error is not None:
                raise error from None
            self._client.endpoint_failed(endpoint)
            raise _StreamBroken(str(exc)) from None
        finally:
            session.done = True
        if self._stop.is_set():
            raise _Stopped
        # etcd ended the stream without an error status: resume elsewhere.
        self._client.endpoint_failed(endpoint)
        raise _StreamBroken("watch stream closed by etcd")

    def _handle(self, response: Any) -> None:
        if response.canceled:
            if response.compact_revision > 0:
                self._source.observe_compacted(int(response.compact_revision))
                raise Expired(_EXPIRED_MESSAGE)
            raise _StreamBroken(response.cancel_reason or "watch cancelled by etcd")
        if response.created:
            self._session_progressed = True
            return
        events = response.events
        if not events:
            # A progress notification. Our own requests (watch id -1) only prove liveness.
            if self._progress_notify and response.watch_id != -1:
                revision = int(response.header.revision)
                if revision >= self._last_delivered and revision >= self._last_rev:
                    self._emit(_bookmark(revision))
            return
        self._session_progressed = True
        last = self._last_rev
        for event in events:
            kv = event.kv
            revision = int(kv.mod_revision)
            converted = self._convert(event, kv, revision)
            if converted is not None:
                self._emit(converted)
            if revision > last:
                last = revision
        self._last_rev = last

    def _convert(self, event: Any, kv: Any, revision: int) -> WatchEvent | None:
        source = self._source
        deleted = event.type == _DELETE
        created = not deleted and kv.create_revision == kv.mod_revision
        has_prev = event.HasField("prev_kv")
        if not created and not has_prev:
            # etcd keeps the compacted revision itself readable but not the one before it, so
            # a watch resumed right at the compaction point gets its first change without the
            # previous state: the watch's start state is gone (Kubernetes reports a 500 here).
            raise Expired(_EXPIRED_MESSAGE)
        if deleted:
            old = source.decode_value(kv.key, event.prev_kv.value)
            if self._filtered and not source.matches(old):
                return None
            return WatchEvent(EventType.DELETED, _with_rv(old, revision), revision)
        new = source.decode_value(kv.key, kv.value)
        if created:
            if self._filtered and not source.matches(new):
                return None
            return WatchEvent(EventType.ADDED, _with_rv(new, revision), revision)
        if not self._filtered:
            return WatchEvent(EventType.MODIFIED, _with_rv(new, revision), revision)
        new_match = source.matches(new)
        old = source.decode_value(kv.key, event.prev_kv.value)
        old_match = source.matches(old)
        if new_match:
            kind = EventType.MODIFIED if old_match else EventType.ADDED
            return WatchEvent(kind, _with_rv(new, revision), revision)
        if old_match:
            return WatchEvent(EventType.DELETED, _with_rv(old, revision), revision)
        return None
