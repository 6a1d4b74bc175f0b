"""An informer: a cache of one resource's objects kept by list + watch, told of every change.

It lists the resource and then watches it from the list's resourceVersion; a watch that
expires (410 Gone) or fails is answered by listing again (and the objects that vanished
meanwhile are reported deleted). Controllers build on it, and so does admission (the policies
and webhook configurations in force are the ones an informer holds), which is why it lives in
the registry layer: it is a client of the stores, nothing more.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.selectors import FieldSelector
from kstore.errors import Expired, TooManyRequests
from kstore.registry.interface import RequestContext, ResourceStore
from kstore.storage.interface import EventType, ListOptions, WatchEvent

__all__ = ["PAGE_SIZE", "Informer", "InformerHandler", "InformerTransform", "object_key"]

_log = logging.getLogger("kstore.informer")

_CONTEXT: Final = RequestContext()
#: Objects per list call. Smaller than client-go's pager (500): a page is decoded whole
#: before the transform keeps its small view, and the decoded pages of several informers
#: listing a big collection at once (at a server's start) leave the heap fragmented for
#: good. Pages of 50 ~5 KiB Pods kept a 5,000-Pod server at 124 MiB, against 162 at 500.
PAGE_SIZE: Final = 50
#: Events an inline informer takes per step (see Informer._follow_inline).
_BATCH: Final = 256
#: How often an inline informer's thread looks at its watch unasked (see _follow_inline):
#: dozens of informers wake an idle server no more than a few times a second in all.
_SAFETY_CHECK_SECONDS: Final = 5.0


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def object_key(obj: Object) -> str:
    """``namespace/name``, or ``name`` for a cluster-scoped object."""
    meta = _map(obj.get("metadata"))
    namespace = str(meta.get("namespace") or "")
    name = str(meta.get("name") or "")
    return f"{namespace}/{name}" if namespace else name


#: Told of every change an informer sees: the key, and the object (None once it is gone).
InformerHandler = Callable[[str, Object | None], None]
#: What an informer keeps of each object (client-go's transform): e.g. its metadata alone.
InformerTransform = Callable[[Object], Object]


class Informer:
    """A cache of one resource's objects, kept by list + watch (see the module docstring).

    ``transform``, when given, is applied to every object listed or watched before it is
    kept and handed to the handler (the cache then holds what it returns: a metadata-only
    view for a controller that reads nothing else; the key comes from the object itself, so
    a view need not keep its name, and views may be shared between objects).
    ``field_selector``, when given, limits the objects followed to the ones it matches (the
    others are never held)."""

    def __init__(
        self,
        store: ResourceStore,
        handler: InformerHandler,
        *,
        stopping: threading.Event,
        relist_pause_seconds: float = 1.0,
        transform: InformerTransform | None = None,
        field_selector: FieldSelector | None = None,
        inline: bool = False,
    ) -> None:
        self.store = store
        self._inline = inline
        self._selector = field_selector or FieldSelector.everything()
        self._handler = handler
        self._transform = transform
        self._stopping = stopping
        self._pause = relist_pause_seconds
        self._lock = threading.Lock()
        self._objects: dict[str, Object] = {}
        self._resource_version = ""
        self._thread: threading.Thread | None = None
        self._watcher: Any = None
        #: How many times the informer listed (the first list included).
        self.lists = 0

    def get(self, key: str) -> Object | None:
        with self._lock:
            return self._objects.get(key)

    def items(self) -> list[Object]:
        with self._lock:
            return list(self._objects.values())

    def keys(self) -> list[str]:
        with self._lock:
            return list(self._objects)

    def start(self) -> None:
        """List (before returning), then follow the watch on a thread."""
        self.relist()
        name = f"informer-{self.store.info.plural}"
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def interrupt(self) -> None:
        """End the current watch at once (its thread then sees the stop)."""
        watcher = self._watcher
        if watcher is not None:
            watcher.stop()

    def join(self, timeout: float) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def relist(self) -> None:
        # In pages, as client-go's pager: a collection of any size is never held decoded
        # whole (a page is kept, transformed, before the next is read).
        transform = self._transform
        fresh: dict[str, Object] = {}
        token = ""
        while True:
            listing = self.store.list(
                _CONTEXT,
                ListOptions(field_selector=self._selector, limit=PAGE_SIZE, continue_token=token),
            )
            for item in listing.items:
                fresh[object_key(item)] = item if transform is None else transform(item)
            token = listing.continue_token
            if not token:
                break
        with self._lock:
            gone = [k for k in self._objects if k not in fresh]
            self._objects = fresh
            self._resource_version = str(listing.resource_version)
            self.lists += 1
        for key in gone:
            self._handler(key, None)
        for key, obj in fresh.items():
            self._handler(key, obj)

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                self._follow()
            except Expired:
                if self._stopping.is_set():
                    return  # the watch was ended by stop()
                self._relist_safely(0.0)
            except TooManyRequests:
                # The server's watch cache is still filling (client-go retries such a watch
                # without listing again): the list held is still good, and listing a big
                # collection again each second, decoded from storage, is what a start can
                # least afford.
                if self._stopping.wait(self._pause):
                    return
            except Exception:
                _log.exception("watching %s failed; listing again", self.store.info.plural)
                self._relist_safely(self._pause)

    def _relist_safely(self, pause: float) -> None:
        if pause and self._stopping.wait(pause):
            return
        try:
            self.relist()
        except Exception:
            _log.exception("listing %s failed", self.store.info.plural)
            self._stopping.wait(self._pause)

    def _follow(self) -> None:
        opts = ListOptions(
            resource_version=self._resource_version,
            allow_bookmarks=True,
            field_selector=self._selector,
        )
        watcher = self.store.watch(_CONTEXT, opts)
        self._watcher = watcher
        try:
            set_listener = getattr(watcher, "set_listener", None)
            if self._inline and set_listener is not None:
                self._follow_inline(watcher, set_listener)
                return
            while not self._stopping.is_set():
                event = watcher.next(timeout=0.5)
                if event is None:
                    if watcher.stopped:
                        raise Expired(f"the {self.store.info.plural} watch ended")
                    continue
                self._apply(event)
        finally:
            self._watcher = None
            watcher.stop()

    def _apply(self, event: WatchEvent) -> None:
        """Keep and hand on one event of the watch; Expired for an ERROR (list again)."""
        if event.type is EventType.ERROR:
            raise Expired(f"the {self.store.info.plural} watch ended with an error")
        meta = _map(_map(event.object).get("metadata"))
        if meta.get("resourceVersion"):
            self._resource_version = str(meta["resourceVersion"])
        if event.type is EventType.BOOKMARK:
            return
        key = object_key(event.object)
        obj = event.object if self._transform is None else self._transform(event.object)
        with self._lock:
            if event.type is EventType.DELETED:
                self._objects.pop(key, None)
            else:
                self._objects[key] = obj
        self._handler(key, None if event.type is EventType.DELETED else obj)

    def _follow_inline(self, watcher: Any, set_listener: Callable[[Any], None]) -> None:
        """Follow ``watcher`` through a listener the watch cache's dispatching thread calls
        (see :meth:`kstore.cache.watcher.CacheWatcher.set_listener`): events are kept and
        handed on there, and this thread only waits for the watch to end (then Expired:
        list again)."""
        ended = threading.Event()
        taking = threading.Lock()
        failed: list[BaseException] = []

        def take_ready() -> None:
            # The dispatching thread's, or this one's for the replay: one at a time, in order.
            with taking:
                while not ended.is_set():
                    events = watcher.take_batch(_BATCH)
                    if not events:
                        if watcher.stopped:
                            ended.set()
                        return
                    for event in events:
                        try:
                            self._apply(event)
                        except BaseException as exc:
                            failed.append(exc)
                            ended.set()
                            return

        set_listener(take_ready)
        take_ready()  # what the watch replays, and anything pushed before the listener
        # Every end of the watch (stopped, interrupted, ended by its cache) calls the
        # listener, which sets ``ended``: the timeout is only a safety net.
        while not self._stopping.is_set() and not ended.wait(_SAFETY_CHECK_SECONDS):
            if watcher.stopped:
                take_ready()
        set_listener(None)
        with taking:
            # A listener call still under way ends first: the list that follows is told to
            # the handler after the watch's last event, never beside it.
            ended.set()
        if self._stopping.is_set():
            return
        if failed and not isinstance(failed[0], Expired):
            raise failed[0]
        raise Expired(f"the {self.store.info.plural} watch ended")
