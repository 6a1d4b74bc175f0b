"""An asyncio event loop running in a thread of its own, and a blocking Storage over an
AsyncStorage on it: how blocking test code (the conformance suite) drives coroutines."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from kstore.api.gvk import Object
from kstore.storage.aio import AsyncStorage
from kstore.storage.interface import (
    GetOptions,
    ListOptions,
    ListResult,
    Preconditions,
    Stats,
    TryUpdate,
    Watcher,
)

T = TypeVar("T")

_GET_DEFAULTS = GetOptions()
_LIST_DEFAULTS = ListOptions()

#: No call of the suite takes this long; a hang fails the test instead of the run.
_CALL_TIMEOUT = 120.0


class LoopThread:
    """An event loop run forever by a daemon thread until :meth:`close`."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the loop; its result (or error) here."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(_CALL_TIMEOUT)

    def in_loop(self) -> bool:
        """Whether the caller is the loop's own thread (a callback of a running coroutine)."""
        return threading.current_thread() is self._thread

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()


class LoopPerThread:
    """One :class:`LoopThread` for each thread that runs coroutines through it, so that
    callers in different threads (the suite's concurrency tests, whose callbacks block on
    purpose) are as independent as they are on the blocking verbs."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loops: dict[threading.Thread, LoopThread] = {}

    def _mine(self) -> LoopThread:
        with self._lock:
            caller = threading.current_thread()
            loop = self._loops.get(caller)
            if loop is None:
                loop = self._loops[caller] = LoopThread()
            return loop

    def run(self, make: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """Run the coroutine ``make`` gives on the calling thread's loop."""
        return self._mine().run(make())

    def in_loop(self) -> bool:
        with self._lock:
            return any(loop.in_loop() for loop in self._loops.values())

    def close(self) -> None:
        with self._lock:
            loops = list(self._loops.values())
            self._loops.clear()
        for loop in loops:
            loop.run(_settle())
            loop.close()


async def _settle() -> None:
    """Give channel closes scheduled on a loop (by a backend's close) their turn."""
    for _ in range(3):
        await asyncio.sleep(0.01)


class BlockingOverAsync:
    """A Storage whose verbs await ``aio``'s on the caller's loop (watch, stats and the revision are
    the blocking storage's own). A call from the loop's own thread, made by a callback of a
    verb being awaited (``try_update``, ``validate_deletion``), takes the blocking verb:
    waiting there for the loop would wait forever."""

    def __init__(self, aio: AsyncStorage, loop: LoopPerThread) -> None:
        self._aio = aio
        self._loop = loop
        self._storage = aio.storage

    def _call(self, verb: str, *args: Any, **kwargs: Any) -> Any:
        if self._loop.in_loop():
            return getattr(self._storage, verb)(*args, **kwargs)
        return self._loop.run(lambda: getattr(self._aio, verb)(*args, **kwargs))

    def create(self, key: str, obj: Object, *, ttl_seconds: int | None = None) -> Object:
        return self._call("create", key, obj, ttl_seconds=ttl_seconds)

    def get(self, key: str, opts: GetOptions = _GET_DEFAULTS) -> Object:
        return self._call("get", key, opts)

    def list(self, key: str, opts: ListOptions = _LIST_DEFAULTS) -> ListResult:
        return self._call("list", key, opts)

    def guaranteed_update(
        self,
        key: str,
        try_update: TryUpdate,
        *,
        ignore_not_found: bool = False,
        preconditions: Preconditions | None = None,
        cached_existing: Object | None = None,
        ttl_seconds: int | None = None,
    ) -> Object:
        return self._call(
            "guaranteed_update",
            key,
            try_update,
            ignore_not_found=ignore_not_found,
            preconditions=preconditions,
            cached_existing=cached_existing,
            ttl_seconds=ttl_seconds,
        )

    def delete(
        self,
        key: str,
        *,
        preconditions: Preconditions | None = None,
        validate_deletion: Callable[[Object], None] | None = None,
        cached_existing: Object | None = None,
    ) -> Object:
        return self._call(
            "delete",
            key,
            preconditions=preconditions,
            validate_deletion=validate_deletion,
            cached_existing=cached_existing,
        )

    def watch(self, key: str, opts: ListOptions = _LIST_DEFAULTS) -> Watcher:
        return self._storage.watch(key, opts)

    def stats(self) -> Stats:
        return self._storage.stats()

    def current_revision(self) -> int:
        return self._storage.current_revision()
