"""A small in-memory Storage for unit tests of the cache's own logic (routing, readiness,
freshness, relisting). Not a backend: no history reads, no TTL, no paging; lists are always at
the current revision. The conformance suite and the benchmarks use the real LMDB backend.

What tests control: ``bump()`` moves the revision without an event for this prefix (a write
elsewhere), ``fail_watches()`` ends every watch with an ERROR event, ``progress`` decides
whether watches answer ``request_progress()``, and ``calls`` records which methods ran and
with which ``cached_existing``.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from kstore.api.gvk import Object
from kstore.errors import AlreadyExists, InternalError, NotFound, to_status
from kstore.storage.interface import (
    INITIAL_EVENTS_END_ANNOTATION,
    EventType,
    GetOptions,
    ListOptions,
    ListResult,
    Preconditions,
    Stats,
    Storage,
    TryUpdate,
    Watcher,
    WatchEvent,
)

_GET = GetOptions()
_LIST = ListOptions()


def _with_rv(obj: Object, revision: int) -> Object:
    out = dict(obj)
    out["metadata"] = {**(obj.get("metadata") or {}), "resourceVersion": str(revision)}
    return out


class FakeWatch(Watcher):
    def __init__(self, storage: FakeStorage, prefix: str) -> None:
        self._storage = storage
        self.prefix = prefix
        self._events: deque[WatchEvent] = deque()
        self._cond = threading.Condition()
        self._stopped = False

    def push(self, event: WatchEvent) -> None:
        with self._cond:
            if not self._stopped:
                self._events.append(event)
                self._cond.notify_all()

    @property
    def stopped(self) -> bool:
        return self._stopped and not self._events

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify_all()

    def next(self, timeout: float | None = None) -> WatchEvent | None:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while not self._events:
                if self._stopped:
                    return None
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return None
                self._cond.wait(remaining)
            event = self._events.popleft()
            if event.type is EventType.ERROR:
                self._stopped = True
            return event

    def __iter__(self) -> Iterator[WatchEvent]:
        while (event := self.next()) is not None:
            yield event


class ProgressFakeWatch(FakeWatch):
    """A watch that answers progress requests with a BOOKMARK at the current revision."""

    def request_progress(self) -> None:
        self._storage.progress_requests += 1
        revision = self._storage.revision
        self.push(
            WatchEvent(
                EventType.BOOKMARK, {"metadata": {"resourceVersion": str(revision)}}, revision
            )
        )


class FakeStorage(Storage):
    def __init__(
        self,
        prefix: str = "/pods/",
        *,
        key_of: Callable[[Object], str] | None = None,
        progress: bool = True,
    ) -> None:
        self.prefix = prefix
        self.revision = 1
        self.objects: dict[str, Object] = {}
        self.watches: list[FakeWatch] = []
        self.calls: list[tuple[str, Any]] = []
        self.progress = progress
        self.progress_requests = 0
        self.fail_initial_list = False
        self._lock = threading.RLock()

    # -- test controls ---------------------------------------------------------------------

    def bump(self) -> int:
        """A write outside this prefix: the revision moves, no event here."""
        with self._lock:
            self.revision += 1
            return self.revision

    def fail_watches(self, message: str = "injected watch failure") -> None:
        with self._lock:
            watches = list(self.watches)
            self.watches.clear()
        for watch in watches:
            watch.push(WatchEvent(EventType.ERROR, to_status(InternalError(message)), 0))

    # -- writes ----------------------------------------------------------------------------

    def _publish(self, type_: EventType, obj: Object) -> None:
        revision = int(obj["metadata"]["resourceVersion"])
        for watch in self.watches:
            watch.push(WatchEvent(type_, obj, revision))

    def create(self, key: str, obj: Object, *, ttl_seconds: int | None = None) -> Object:
        with self._lock:
            self.calls.append(("create", key))
            if key in self.objects:
                raise AlreadyExists(f'pods "{key}" already exists')
            self.revision += 1
            stored = _with_rv(obj, self.revision)
            self.objects[key] = stored
            self._publish(EventType.ADDED, stored)
            return stored

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
        with self._lock:
            self.calls.append(("guaranteed_update", cached_existing))
            current = self.objects.get(key)
            if current is None and not ignore_not_found:
                raise NotFound(f'pods "{key}" not found')
            updated = try_update(current or {})
            self.revision += 1
            stored = _with_rv(updated, self.revision)
            self.objects[key] = stored
            self._publish(EventType.ADDED if current is None else EventType.MODIFIED, stored)
            return stored

    def delete(
        self,
        key: str,
        *,
        preconditions: Preconditions | None = None,
        validate_deletion: Callable[[Object], None] | None = None,
        cached_existing: Object | None = None,
    ) -> Object:
        with self._lock:
            self.calls.append(("delete", cached_existing))
            current = self.objects.pop(key, None)
            if current is None:
                raise NotFound(f'pods "{key}" not found')
            self.revision += 1
            deleted = _with_rv(current, self.revision)
            self._publish(EventType.DELETED, deleted)
            return deleted

    # -- reads -----------------------------------------------------------------------------

    def get(self, key: str, opts: GetOptions = _GET) -> Object:
        with self._lock:
            self.calls.append(("get", opts))
            obj = self.objects.get(key)
            if obj is None:
                if opts.ignore_not_found:
                    return {}
                raise NotFound(f'pods "{key}" not found')
            return obj

    def list(self, key: str, opts: ListOptions = _LIST) -> ListResult:
        with self._lock:
            self.calls.append(("list", opts))
            prefix = key if key.endswith("/") else key + "/"
            items = [self.objects[k] for k in sorted(self.objects) if k.startswith(prefix)]
            return ListResult(items=items, resource_version=self.revision)

    def watch(self, key: str, opts: ListOptions = _LIST) -> Watcher:
        with self._lock:
            self.calls.append(("watch", opts))
            watch_type = ProgressFakeWatch if self.progress else FakeWatch
            watch = watch_type(self, key)
            if opts.send_initial_events:
                if self.fail_initial_list:
                    watch.push(
                        WatchEvent(EventType.ERROR, to_status(InternalError("unreadable")), 0)
                    )
                    return watch
                for k in sorted(self.objects):
                    obj = self.objects[k]
                    revision = int(obj["metadata"]["resourceVersion"])
                    watch.push(WatchEvent(EventType.ADDED, obj, revision))
                bookmark = {
                    "metadata": {
                        "resourceVersion": str(self.revision),
                        "annotations": {INITIAL_EVENTS_END_ANNOTATION: "true"},
                    }
                }
                watch.push(WatchEvent(EventType.BOOKMARK, bookmark, self.revision))
            self.watches.append(watch)
            return watch

    def stats(self) -> Stats:
        return Stats(object_count=len(self.objects))

    def current_revision(self) -> int:
        with self._lock:
            self.calls.append(("current_revision", None))
            return self.revision
