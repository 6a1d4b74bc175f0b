"""The cache's feeding thread: one backend watch per resource, into the state and the watchers.

A :class:`Reflector` opens a **watch-list** on the backend storage (``sendInitialEvents`` with
bookmarks and progress notifications, from the latest revision): the ADDED events up to the
initial-events-end bookmark are the initial list, which replaces the
:class:`~kstore.cache.watch_cache.WatchCache` state at the bookmark's revision; every later
event is applied in order and handed to the :class:`~kstore.cache.dispatcher.Dispatcher` in
batches (up to 256 events: small enough to add no noticeable latency, large enough to share
wake-ups under load); progress bookmarks advance the cache's revision without fan-out. About
every second (or a quarter of the bookmark period) it sends the watchers' periodic bookmarks;
between those it sleeps until the backend has something for it. A reader waiting for the cache
to reach a revision asks for progress (:meth:`Reflector.request_progress`), which a backend
watch that can answer at once (LMDB's) delivers as a bookmark: an idle server's caches do not
poll their backend to be ready for such readers.

Using the watch-list instead of LIST then WATCH leaves no gap between the two and needs no
special case for an empty store at revision 0.

When the backend watch fails or ends, the cache stops being ready, waiters for freshness are
released (they go to the backend), every watcher is ended (clients watch again from their last
revision, as with Kubernetes' cacher) and the thread re-lists after a backoff (1 s doubling to
30 s; immediately when a re-list was requested).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Protocol, runtime_checkable

from kstore.cache.dispatcher import Dispatcher
from kstore.cache.heap import return_free_memory
from kstore.cache.watch_cache import CacheEvent, Entry, WatchCache
from kstore.errors import KStoreError
from kstore.storage.interface import (
    INITIAL_EVENTS_END_ANNOTATION,
    EventType,
    ListOptions,
    ResourceVersionMatch,
    Storage,
    Watcher,
    WatchEvent,
)

__all__ = ["ProgressRequester", "Reflector"]

_log = logging.getLogger(__name__)

#: Backend events applied and dispatched together (see the module docstring).
_MAX_BATCH = 256
_MAX_BACKOFF = 30.0


@runtime_checkable
class ProgressRequester(Protocol):
    """A backend watcher that can be asked for a progress notification (etcd's
    ``RequestWatchProgress``): soon after, it delivers a BOOKMARK at the revision it has
    reached, even when nothing under its key changed."""

    def request_progress(self) -> None: ...


class _WatchEnded(KStoreError):
    """The backend watch ended or failed: re-list."""


class Reflector:
    """Feeds one WatchCache and its Dispatcher from one backend watch (a daemon thread)."""

    def __init__(
        self,
        *,
        storage: Storage,
        key: str,
        cache: WatchCache,
        dispatcher: Dispatcher,
        resource: str,
        bookmark_interval: float,
        relist_backoff: float,
    ) -> None:
        self._storage = storage
        self._prefix = key
        self._cache = cache
        self._dispatcher = dispatcher
        self._resource = resource
        self._bookmark_interval = bookmark_interval
        self._relist_backoff = relist_backoff
        #: Set while the cache mirrors the backend (after an initial list, until a failure).
        self.ready = threading.Event()
        #: Set once the first list-and-watch attempt has succeeded or failed.
        self.first_attempt = threading.Event()
        self._stopping = threading.Event()
        self._relist = threading.Event()
        self._backend_watch: Watcher | None = None
        self._watch_lock = threading.Lock()
        #: Completed initial lists (the first one included).
        self.relists = 0
        self._thread = threading.Thread(
            target=self._run, name=f"kstore-cache {resource}", daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self.ready.clear()
        self._stop_backend_watch()
        self._thread.join(timeout=10.0)

    def request_relist(self) -> None:
        self._relist.set()
        self._stop_backend_watch()

    def request_progress(self) -> None:
        """Ask the backend watch for a progress notification, if it can give one."""
        with self._watch_lock:
            watch = self._backend_watch
        if isinstance(watch, ProgressRequester):
            watch.request_progress()

    def _stop_backend_watch(self) -> None:
        with self._watch_lock:
            watch = self._backend_watch
        if watch is not None:
            watch.stop()

    def _run(self) -> None:
        backoff = self._relist_backoff
        while not self._stopping.is_set():
            try:
                self._list_and_watch()
                backoff = self._relist_backoff
            except KStoreError as exc:
                _log.warning("watch cache of %s: %s; re-listing", self._resource, exc)
            except Exception:  # keep serving: a bug here must not kill the cache for good
                _log.exception("watch cache of %s failed; re-listing", self._resource)
            self.ready.clear()
            self._cache.invalidate()
            self.first_attempt.set()
            self._dispatcher.terminate_all()
            if self._stopping.is_set():
                return
            if not self._relist.is_set():
                self._stopping.wait(backoff)
                backoff = min(backoff * 2, _MAX_BACKOFF)
            self._relist.clear()

    def _open_watch(self) -> Watcher:
        watch = self._storage.watch(
            self._prefix,
            ListOptions(
                resource_version="",
                resource_version_match=ResourceVersionMatch.NOT_OLDER_THAN,
                send_initial_events=True,
                allow_bookmarks=True,
                progress_notify=True,
                recursive=True,
            ),
        )
        with self._watch_lock:
            self._backend_watch = watch
        if self._stopping.is_set():
            watch.stop()
        return watch

    def _list_and_watch(self) -> None:
        watch = self._open_watch()
        try:
            self._initial_sync(watch)
            self.relists += 1
            self.ready.set()
            self.first_attempt.set()
            self._follow(watch)
        finally:
            with self._watch_lock:
                self._backend_watch = None
            watch.stop()

    def _initial_sync(self, watch: Watcher) -> None:
        # Entries as the objects arrive: each decoded object is dropped once its entry holds
        # it compactly, so the initial list never costs the whole list decoded.
        entries: list[Entry] = []
        while True:
            event = watch.next(timeout=1.0)
            if event is None:
                if watch.stopped or self._stopping.is_set():
                    raise _WatchEnded("the backend watch ended during the initial list")
                continue
            if event.type is EventType.ADDED:
                entries.append(self._cache.listed_entry(event.object))
            elif event.type is EventType.BOOKMARK:
                annotations = (event.object.get("metadata") or {}).get("annotations") or {}
                if annotations.get(INITIAL_EVENTS_END_ANNOTATION) == "true":
                    self._cache.replace_entries(entries, event.resource_version)
                    # The decoded list is gone: its pages go back to the system.
                    return_free_memory()
                    return
            elif event.type is EventType.ERROR:
                raise _WatchEnded(f"the backend watch failed: {event.object.get('message')}")
            else:
                raise _WatchEnded(f"unexpected {event.type} before the initial-events bookmark")

    def _follow(self, watch: Watcher) -> None:
        cache = self._cache
        dispatcher = self._dispatcher
        tick = min(1.0, self._bookmark_interval / 4)
        next_tick = time.monotonic() + tick
        batch: list[CacheEvent] = []
        while not self._stopping.is_set() and not self._relist.is_set():
            # Stopping and re-listing stop the backend watch, which ends this wait at once.
            event = watch.next(timeout=max(0.0, next_tick - time.monotonic()))
            while event is not None:
                if not self._absorb(event, batch):
                    self._flush(batch)
                    return
                if len(batch) >= _MAX_BATCH:
                    break
                event = watch.next(timeout=0)
            self._flush(batch)
            if event is None and watch.stopped:
                if self._stopping.is_set() or self._relist.is_set():
                    return
                raise _WatchEnded("the backend watch ended")
            now = time.monotonic()
            if now >= next_tick:
                next_tick = now + tick
                dispatcher.send_bookmarks(cache.resource_version)

    def _absorb(self, event: WatchEvent, batch: list[CacheEvent]) -> bool:
        """Apply one backend event; False when the watch failed (an ERROR event)."""
        type_ = event.type
        if type_ is EventType.BOOKMARK:
            # Progress: nothing changed for this resource up to that revision. Not fanned
            # out: watchers get their own bookmarks at the cache's revision.
            self._cache.advance(event.resource_version)
            return True
        if type_ is EventType.ERROR:
            _log.warning(
                "watch cache of %s: backend watch error: %s",
                self._resource,
                event.object.get("message"),
            )
            return False
        cache_event = self._cache.apply(type_, event.object, event.resource_version)
        if cache_event is not None:
            batch.append(cache_event)
        return True

    def _flush(self, batch: list[CacheEvent]) -> None:
        if batch:
            self._dispatcher.dispatch(batch)
            for event in batch:
                event.release()
            batch.clear()
        self._cache.notify_fresh()
