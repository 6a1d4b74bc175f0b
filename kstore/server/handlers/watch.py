"""WATCH (``?watch=true`` and the ``/watch/`` paths): a 200 streaming events until the end.

The stream is newline-delimited JSON ``{"type", "object"}`` events (``Content-Type:
application/json``), or length-prefixed protobuf ``WatchEvent`` frames
(``application/vnd.kubernetes.protobuf;stream=watch``) when asked; with a Table ``Accept``
(``kubectl get -w``) each object event carries a one-row Table. Bookmarks carry only the
kind, apiVersion and metadata; an error after the start (a too-old resourceVersion: 410
Expired) is an ERROR event inside the 200, after which the stream ends — as Kubernetes does.

A watch ends at ``timeoutSeconds`` (default: a random time between 30 and 60 minutes, as
kube-apiserver's ``minRequestTimeout`` gives), when the client goes away, when the watcher
ends, or when the server shuts down (:class:`WatchRegistry.stop_all`).

Events are read from the watcher without a thread per watch when the watcher can be awaited
(the watch cache's ``next_async``), else by one pump thread per watch; either way, events
available together are encoded and written as one chunk. Frames are encoded once per
(version, media type) for all watchers of an event (:mod:`kstore.cache.caching_object`).

Fan-out to many streams: when the server's own HTTP protocol serves the request (its scope
names the response cycle, :data:`CYCLE_SCOPE_KEY`, :mod:`kstore.server.http_protocol`), the body is
chunked and the watcher takes a sink (the watch cache's), the stream is written without its
task: the dispatcher's one loop callback per batch calls each stream's sink, which writes the
events' chunks — each framed once, with its chunk header, for every stream of the same
version and media type (:meth:`~kstore.server.encoding.ResponseEncoder.watch_chunk`) —
straight to the connection's transport. Only the start and the end of the response go
through the filters' ``send``. Streams of the same shape that take the same events in one
round write the same joined bytes (joined once: the round's memo); a round of many streams
holds the next one back twice as long as it took, so that fan-out leaves the loop two thirds
of its time and each stream gets what arrived meanwhile in one write
(:class:`~kstore.cache.dispatcher.SinkRounds`). The task wakes only for what needs
waiting: a client that stopped reading (its transport's buffer above the high-water mark:
events then stay in the watcher's bounded buffer, whose overflow ends the watch with a 429
ERROR as for any slow watcher, and nobody else waits), the end of the watch, or its timeout.
"""

from __future__ import annotations

import asyncio
import functools
import random
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Hashable
from dataclasses import dataclass
from typing import Any, Protocol, cast, runtime_checkable

import anyio
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from kstore.api.gvk import Object
from kstore.cache.watcher import AFTER_SINKS, SinkMemo
from kstore.errors import to_status
from kstore.server.encoding import http_chunk
from kstore.server.handlers.scope import Call, ResourceScope
from kstore.server.negotiation import OutputFormat, Target, negotiate
from kstore.server.options import list_request
from kstore.server.table import build_table
from kstore.storage.interface import EventType, Watcher, WatchEvent

__all__ = ["CYCLE_SCOPE_KEY", "WatchPlan", "WatchRegistry", "WatchResponse", "open_watch"]

#: Its own generator: the process's shared one stays the application's (seeded runs, tests).
_JITTER = random.Random()


#: The scope key of a weak reference to the request's uvicorn ``RequestResponseCycle`` (its
#: ``transport``, ``flow`` control and ``chunked_encoding``), set by the server's HTTP
#: protocol; weak, so that the scope and the cycle, which holds the scope, are not a
#: reference cycle left to the garbage collector.
CYCLE_SCOPE_KEY = "kstore.cycle"

#: kube-apiserver's --min-request-timeout: a watch without timeoutSeconds lasts between one
#: and two of these.
MIN_REQUEST_TIMEOUT = 1800.0
#: Events drained into one written chunk at most (bounds the latency of the first one).
_BATCH = 128
#: How long a pump thread blocks on the watcher before it rechecks the deadline and stop flag.
_POLL = 1.0


@runtime_checkable
class _AsyncWatcher(Protocol):
    async def next_async(self, timeout: float | None = None) -> WatchEvent | None: ...


@runtime_checkable
class _SinkWatcher(Protocol):
    """A watcher that calls a sink in the event loop when events are ready
    (:class:`kstore.cache.watcher.CacheWatcher`)."""

    async_waiter: asyncio.Future[None] | None
    sink_pending: bool
    closed: bool

    def set_sink(self, sink: Callable[[SinkMemo], None] | None) -> None: ...

    def take_batch(self, limit: int) -> list[WatchEvent]: ...

    @property
    def ready(self) -> bool: ...

    @property
    def stopped(self) -> bool: ...


class _FlowControl(Protocol):
    write_paused: bool

    async def drain(self) -> None: ...


class _Cycle(Protocol):
    """The parts of uvicorn's ``RequestResponseCycle`` a stream writes through."""

    transport: asyncio.Transport
    flow: _FlowControl
    chunked_encoding: bool | None


class WatchRegistry:
    """The watches open in this server, so that shutdown can end them all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._watchers: set[Watcher] = set()
        self._closed = False

    def add(self, watcher: Watcher) -> bool:
        with self._lock:
            if self._closed:
                return False
            self._watchers.add(watcher)
            return True

    def discard(self, watcher: Watcher) -> None:
        with self._lock:
            self._watchers.discard(watcher)

    def stop_all(self) -> None:
        """End every open watch and refuse new ones (their streams then close cleanly)."""
        with self._lock:
            self._closed = True
            watchers = list(self._watchers)
        for watcher in watchers:
            watcher.stop()

    def __len__(self) -> int:
        with self._lock:
            return len(self._watchers)


@dataclass(frozen=True, slots=True)
class WatchPlan:
    """A started watch and how to write its events."""

    scope: ResourceScope
    watcher: Watcher
    fmt: OutputFormat
    timeout_seconds: float
    include_object: str

    def frame(self, event: WatchEvent) -> bytes:
        table: Callable[[Object], Object] | None = None
        if self.fmt.target is Target.TABLE:
            table = self._table
        return self.scope.encoder.watch_frame(
            event, self.scope.gv, self.scope.kind, self.fmt, table=table
        )

    def chunk(self, event: WatchEvent) -> bytes:
        """:meth:`frame` as one HTTP/1.1 chunk (shared by every stream of the same shape)."""
        if self.fmt.target is Target.TABLE:
            return self.scope.encoder.watch_chunk(
                event, self.scope.gv, self.scope.kind, self.fmt, table=self._table
            )
        return self.scope.encoder.watch_chunk(event, self.scope.gv, self.scope.kind, self.fmt)

    def shared_shape(self) -> str | None:
        """What, besides the events, the chunks of this stream depend on, when streams can
        share them (not Tables: their rows depend on each request's options). A string: its
        hash is computed once, and the sinks hash it with every batch they look up."""
        if self.fmt.target is Target.TABLE:
            return None
        fmt = self.fmt
        return "\n".join(
            (self.scope.gv.api_version, self.scope.kind, fmt.media_type, fmt.target.value)
        )

    def _table(self, hub: Object) -> Object:
        return build_table(
            [self.scope.encoder.external(hub, self.scope.gv)],
            kind=self.scope.kind,
            group=self.scope.gv.group,
            printer=self.scope.printer,
            meta_version=self.fmt.meta_version,
            include_object=self.include_object,
        )


def open_watch(scope: ResourceScope, call: Call) -> WatchPlan:
    """Validate a watch request and start the watch (blocking: run in a worker thread)."""
    fmt = negotiate(call.accept, transforms=True, stream=True)
    request = list_request(
        call.query,
        name=call.info.name,
        watch=True,
        selectable_fields=scope.selectable_fields,
    )
    timeout = float(request.timeout_seconds)
    if timeout <= 0:
        timeout = MIN_REQUEST_TIMEOUT * (1.0 + _JITTER.random())
    watcher = scope.store.watch(scope.context(call.info), request.options)
    return WatchPlan(scope, watcher, fmt, timeout, call.query.get("includeObject", "Metadata"))


class WatchResponse(Response):
    """Streams a watch, ending it when the client disconnects or the watch ends."""

    def __init__(
        self,
        plan: WatchPlan,
        registry: WatchRegistry,
        on_events: Callable[[int], None],
        on_close: Callable[[], None],
        events_key: Hashable | None = None,
    ) -> None:
        """``on_events`` counts delivered events; streams with equal ``events_key`` count
        them in the same place, so that one call reports a sink round's events for all of
        them (the callback of any one of them is called, with their sum)."""
        super().__init__(status_code=200, media_type=None)
        self._plan = plan
        self._registry = registry
        self._on_events = on_events
        self._events_key = events_key
        self._on_close = on_close
        self.raw_headers = [
            (b"content-type", plan.fmt.content_type.encode("latin-1")),
            (b"cache-control", b"no-cache, private"),
        ]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        watcher = self._plan.watcher
        try:
            if not self._registry.add(watcher):
                watcher.stop()
            await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
            cycle = _direct_cycle(scope, watcher)
            async with anyio.create_task_group() as group:

                async def stream() -> None:
                    try:
                        if cycle is not None:
                            assert isinstance(watcher, _SinkWatcher)
                            await self._direct(cycle, watcher)
                        else:
                            async for chunk in self._chunks():
                                await send(
                                    {"type": "http.response.body", "body": chunk, "more_body": True}
                                )
                        await send({"type": "http.response.body", "body": b"", "more_body": False})
                    except OSError:
                        pass  # the client went away while we wrote
                    group.cancel_scope.cancel()

                async def disconnect() -> None:
                    while (await receive())["type"] != "http.disconnect":
                        pass
                    group.cancel_scope.cancel()

                group.start_soon(stream)
                group.start_soon(disconnect)
        finally:
            watcher.stop()
            self._registry.discard(watcher)
            self._on_close()

    async def _direct(self, cycle: _Cycle, watcher: _SinkWatcher) -> None:
        """Stream through the watcher's sink, writing chunks to the transport (see the module
        docstring); returns when the watch has ended or timed out."""
        plan = self._plan
        # The headers the cycle may still hold go out first; then the stream writes to the
        # connection's own transport (see kstore.server.http_protocol).
        flush_head = getattr(cycle.transport, "flush", None)
        if flush_head is not None:
            flush_head()
        transport = cycle.transport
        flow = cycle.flow
        on_events = self._on_events
        events_key = self._events_key
        take_batch = watcher.take_batch
        shape = plan.shared_shape()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + plan.timeout_seconds
        live = True

        def write_ready(memo: SinkMemo | None) -> bool:
            """Write what is ready until the transport pauses; True once the stream ended."""
            while not flow.write_paused:
                if transport.is_closing():
                    return True
                events = take_batch(_BATCH)
                if not events:
                    return watcher.stopped
                if memo is None or shape is None:
                    data, done = _joined_chunks(plan, events)
                else:
                    # The streams of one filter and shape mostly take the same events in one
                    # sink round: the first of them joins the chunks, the others reuse them.
                    key = (shape, id(events[0])) if len(events) == 1 else (shape, *map(id, events))
                    shared = memo.get(key)
                    if shared is None:
                        data, done = _joined_chunks(plan, events)
                        # The events ride along, so that their ids stay theirs meanwhile.
                        memo[key] = (data, done, events)
                    else:
                        data, done = shared[0], shared[1]
                transport.write(data)
                if memo is None or events_key is None:
                    on_events(len(events))
                else:
                    _tally(memo, events_key, on_events, len(events))
                if done:
                    return True
                if len(events) < _BATCH:
                    # All there was: the end, if it came, shows once the watcher is closed.
                    return watcher.closed and watcher.stopped
            return False

        def sink(memo: SinkMemo) -> None:
            watcher.sink_pending = False
            if not live:
                return
            if write_ready(memo) or flow.write_paused:
                waiter = watcher.async_waiter
                if waiter is not None and not waiter.done():
                    waiter.set_result(None)

        watcher.set_sink(sink)
        try:
            while not write_ready(None):
                remaining = deadline - loop.time()
                if remaining <= 0:
                    return
                if flow.write_paused:
                    # The client is not reading: its events wait in the watcher's buffer.
                    waiting: Awaitable[None] = flow.drain()
                else:
                    waiting = watcher.async_waiter = loop.create_future()
                    if watcher.ready:  # pushed meanwhile: its sink call may come after us
                        watcher.async_waiter = None
                        continue
                try:
                    await asyncio.wait_for(waiting, remaining)
                except TimeoutError:
                    return
                finally:
                    watcher.async_waiter = None
        finally:
            live = False
            watcher.set_sink(None)

    async def _chunks(self) -> AsyncIterator[bytes]:
        plan = self._plan
        deadline = time.monotonic() + plan.timeout_seconds
        # Events of a kind converted by a webhook are encoded by the pump thread: the
        # conversion waits on the webhook, which must not hold up the loop.
        source = (
            self._awaited(deadline)
            if isinstance(plan.watcher, _AsyncWatcher)
            and not plan.scope.definition.conversion_blocks
            else self._pumped(deadline)
        )
        async for batch, done in source:
            if batch:
                self._on_events(len(batch))
                yield b"".join(batch)
            if done:
                return

    async def _awaited(self, deadline: float) -> AsyncIterator[tuple[list[bytes], bool]]:
        plan = self._plan
        watcher = plan.watcher
        assert isinstance(watcher, _AsyncWatcher)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            event = await watcher.next_async(timeout=remaining)
            if event is None:
                if plan.watcher.stopped or time.monotonic() >= deadline:
                    return
                continue
            try:
                batch, done = _drain(plan, event)
            except Exception as exc:
                yield [_error_frame(plan, exc)], True
                return
            yield batch, done
            if done:
                return

    async def _pumped(self, deadline: float) -> AsyncIterator[tuple[list[bytes], bool]]:
        """Reads a blocking watcher in a thread, handing batches over through the loop."""
        plan = self._plan
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[list[bytes], bool]] = asyncio.Queue()
        # The pump waits for a free slot before handing over a batch: a slow client backs
        # up into the watcher's own bounded buffer instead of into memory here.
        slots = threading.BoundedSemaphore(4)
        stopping = threading.Event()

        def hand_over(item: tuple[list[bytes], bool]) -> bool:
            while not slots.acquire(timeout=_POLL):
                if stopping.is_set():
                    return False
            loop.call_soon_threadsafe(queue.put_nowait, item)
            return True

        def pump() -> None:
            watcher = plan.watcher
            try:
                while not stopping.is_set():
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        break
                    event = watcher.next(timeout=min(remaining, _POLL))
                    if event is None:
                        if watcher.stopped:
                            break
                        continue
                    batch, done = _drain(plan, event)
                    if not hand_over((batch, done)) or done:
                        return
            except Exception as exc:
                hand_over(([_error_frame(plan, exc)], True))
                return
            hand_over(([], True))

        thread = threading.Thread(target=pump, name="kstore-watch-pump", daemon=True)
        thread.start()
        try:
            while True:
                item = await queue.get()
                slots.release()
                yield item
                if item[1]:
                    return
        finally:
            stopping.set()


def _direct_cycle(scope: Scope, watcher: Watcher) -> _Cycle | None:
    """The response cycle to write ``watcher``'s stream through directly, if it can be."""
    ref = scope.get(CYCLE_SCOPE_KEY)
    if ref is None or not isinstance(watcher, _SinkWatcher):
        return None
    cycle = ref()
    if cycle is None or cycle.chunked_encoding is not True or scope.get("method") == "HEAD":
        return None
    return cast(_Cycle, cycle)


def _drain(plan: WatchPlan, first: WatchEvent) -> tuple[list[bytes], bool]:
    """Frames for ``first`` and the events already waiting behind it; True once an ERROR
    event (the last one a watch delivers) is among them."""
    batch = [plan.frame(first)]
    if first.type is EventType.ERROR:
        return batch, True
    watcher = plan.watcher
    while len(batch) < _BATCH:
        event = watcher.next(timeout=0)
        if event is None:
            break
        batch.append(plan.frame(event))
        if event.type is EventType.ERROR:
            return batch, True
    return batch, False


#: The key of the event counts of a sink round in its memo.
_TALLY = "kstore.watch-tally"


def _tally(memo: SinkMemo, key: Hashable, on_events: Callable[[int], None], count: int) -> None:
    """Count ``count`` events under ``key`` for the report at the end of the sink round."""
    tally: dict[Hashable, list[Any]] | None = memo.get(_TALLY)
    if tally is None:
        tally = memo[_TALLY] = {}
        memo.setdefault(AFTER_SINKS, []).append(functools.partial(_report, tally))
    slot = tally.get(key)
    if slot is None:
        tally[key] = [on_events, count]
    else:
        slot[1] += count


def _report(tally: dict[Hashable, list[Any]]) -> None:
    for on_events, count in tally.values():
        on_events(count)


def _joined_chunks(plan: WatchPlan, events: list[WatchEvent]) -> tuple[bytes, bool]:
    """The chunks of ``events`` as one write; True once it carries the last event of the
    stream (an ERROR, or the ERROR that a failed encoding turns into)."""
    parts: list[bytes] = []
    for event in events:
        try:
            parts.append(plan.chunk(event))
        except Exception as exc:
            parts.append(http_chunk(_error_frame(plan, exc)))
            return b"".join(parts), True
        if event.type is EventType.ERROR:
            return b"".join(parts), True
    return parts[0] if len(parts) == 1 else b"".join(parts), False


def _error_frame(plan: WatchPlan, exc: BaseException) -> bytes:
    event = WatchEvent(EventType.ERROR, to_status(exc), 0)
    return plan.frame(event)


#: A coroutine factory, for the routes that schedule watch work.
AsyncWork = Callable[[], Coroutine[Any, Any, None]]
