"""What every API-only controller is built on: informers, a work queue, a worker, a resync.

* :class:`WorkQueue` holds keys (``namespace/name`` or a plain name) to reconcile. A key
  added while queued is queued once; a key added while being processed is queued again when
  its processing is done, so one key is never handled by two workers at once. Failed keys
  come back after a per-key exponential backoff.
* :class:`~kstore.registry.informer.Informer` (in the registry layer, which admission shares)
  lists one resource and then watches it, keeping a cache of the objects.
* :class:`Controller` ties them together: its informers' events become keys
  (:meth:`Controller.keys_for`), one worker thread calls :meth:`Controller.reconcile` for each
  key, and every ``resync_seconds`` all keys are queued again. Handlers are idempotent: they
  compare what is stored with what should be, and write only the difference.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar, Final

from kstore.api.gvk import Object
from kstore.api.selectors import FieldSelector
from kstore.errors import Conflict, NotFound
from kstore.registry.informer import Informer, InformerHandler, InformerTransform, object_key
from kstore.registry.interface import CreateOptions, Registry, RequestContext, ResourceStore

__all__ = ["Controller", "ControllerTimings", "Informer", "WorkQueue", "object_key"]

_log = logging.getLogger("kstore.controllers")

_CONTEXT: Final = RequestContext()


@dataclass(frozen=True, kw_only=True, slots=True)
class ControllerTimings:
    """How often a controller looks again; shortened by tests."""

    #: Every key is reconciled again this often, whatever the watch said.
    resync_seconds: float = 300.0
    #: The first retry of a failed key; doubled per failure up to ``max_backoff_seconds``.
    base_backoff_seconds: float = 0.005
    max_backoff_seconds: float = 60.0
    #: The pause before listing again after a watch failed for another reason than 410.
    relist_pause_seconds: float = 1.0


class WorkQueue:
    """A de-duplicating queue of keys with delayed adds and per-key backoff (thread-safe)."""

    def __init__(self, *, base_backoff: float = 0.005, max_backoff: float = 60.0) -> None:
        self._cond = threading.Condition()
        self._queue: deque[str] = deque()
        self._dirty: set[str] = set()
        self._processing: set[str] = set()
        self._delayed: list[tuple[float, int, str]] = []
        self._seq = itertools.count()
        self._failures: dict[str, int] = {}
        self._base_backoff = base_backoff
        self._max_backoff = max_backoff
        self._shut_down = False

    def add(self, key: str) -> None:
        with self._cond:
            self._add_locked(key)

    def _add_locked(self, key: str) -> None:
        if self._shut_down or key in self._dirty:
            return
        self._dirty.add(key)
        if key not in self._processing:
            self._queue.append(key)
            self._cond.notify()

    def add_after(self, key: str, delay: float) -> None:
        """Queue ``key`` once ``delay`` seconds have passed."""
        if delay <= 0:
            self.add(key)
            return
        with self._cond:
            if self._shut_down:
                return
            heapq.heappush(self._delayed, (time.monotonic() + delay, next(self._seq), key))
            self._cond.notify()

    def add_rate_limited(self, key: str) -> float:
        """Queue ``key`` again after its backoff (which doubles per call); the delay used."""
        with self._cond:
            failures = self._failures.get(key, 0)
            self._failures[key] = failures + 1
        delay = min(self._base_backoff * float(2**failures), self._max_backoff)
        self.add_after(key, delay)
        return delay

    def forget(self, key: str) -> None:
        """``key`` succeeded: its next failure starts from the base backoff again."""
        with self._cond:
            self._failures.pop(key, None)

    def failures(self, key: str) -> int:
        with self._cond:
            return self._failures.get(key, 0)

    def get(self, timeout: float | None = None) -> str | None:
        """The next key to process (call :meth:`done` after); None on timeout or shutdown."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while True:
                now = time.monotonic()
                while self._delayed and self._delayed[0][0] <= now:
                    self._add_locked(heapq.heappop(self._delayed)[2])
                if self._queue:
                    key = self._queue.popleft()
                    self._dirty.discard(key)
                    self._processing.add(key)
                    return key
                if self._shut_down:
                    return None
                waits = []
                if deadline is not None:
                    if now >= deadline:
                        return None
                    waits.append(deadline - now)
                if self._delayed:
                    waits.append(self._delayed[0][0] - now)
                self._cond.wait(min(waits) if waits else None)

    def done(self, key: str) -> None:
        with self._cond:
            self._processing.discard(key)
            if key in self._dirty:
                self._queue.append(key)
                self._cond.notify()

    def shut_down(self) -> None:
        with self._cond:
            self._shut_down = True
            self._cond.notify_all()

    def __len__(self) -> int:
        with self._cond:
            return len(self._queue)


class Controller:
    """A watch-driven control loop (see the module docstring). Subclasses set :attr:`name`
    and :attr:`watches` and implement :meth:`keys_for` and :meth:`reconcile`."""

    #: kube-controller-manager's name of the controller (for ``--controllers``).
    name: ClassVar[str] = ""
    #: The (group, resource) pairs watched; the first is the primary one.
    watches: ClassVar[tuple[tuple[str, str], ...]] = ()
    #: A field selector for some of :attr:`watches`: only the objects it matches are held.
    field_selectors: ClassVar[dict[tuple[str, str], str]] = {}

    def __init__(self, registry: Registry, *, timings: ControllerTimings | None = None) -> None:
        self.registry = registry
        self.timings = timings or ControllerTimings()
        self.queue = WorkQueue(
            base_backoff=self.timings.base_backoff_seconds,
            max_backoff=self.timings.max_backoff_seconds,
        )
        self._stopping = threading.Event()
        self.informers: dict[tuple[str, str], Informer] = {}
        self._threads: list[threading.Thread] = []
        #: How many reconciles ran (tests read it to see that work was not done twice).
        self.reconciles = 0

    # -- what subclasses provide ---------------------------------------------------------------

    def keys_for(self, watched: tuple[str, str], key: str, obj: Object | None) -> Iterable[str]:
        """The keys to reconcile when ``obj`` (of ``watched``) changed; default: its key.
        Called in the watch cache's dispatching thread (the informers are inline): it may
        read informers and memory, never a store, and must not wait."""
        return (key,)

    def reconcile(self, key: str) -> None:
        raise NotImplementedError

    def transform_for(self, watched: tuple[str, str]) -> InformerTransform | None:
        """What the informer of ``watched`` keeps of each object; default: all of it."""
        return None

    def resync_keys(self) -> Iterable[str]:
        """The keys a periodic resync queues; default: every object of the primary resource."""
        return self.informers[self.watches[0]].keys() if self.watches else ()

    # -- helpers ------------------------------------------------------------------------------

    def informer(self, group: str, resource: str) -> Informer:
        return self.informers[(group, resource)]

    def store(self, group: str, resource: str) -> ResourceStore:
        return self.registry.store(group, resource)

    def create(self, group: str, resource: str, namespace: str, obj: Object) -> Object:
        """Create ``obj`` (external form) as a request in ``namespace`` would."""
        scheme = self.registry.scheme
        external = dict(obj)
        scheme.default(external)
        ctx = RequestContext(namespace=namespace)
        opts = CreateOptions(field_manager=f"kstore-{self.name}-controller")
        return self.store(group, resource).create(ctx, scheme.to_hub(external), opts).object

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        """List what is watched (before returning), then work on threads."""
        for watched in self.watches:
            store = self.registry.store(*watched)
            handler = self._handler_for(watched)
            selector = self.field_selectors.get(watched)
            self.informers[watched] = Informer(
                store,
                handler,
                stopping=self._stopping,
                relist_pause_seconds=self.timings.relist_pause_seconds,
                transform=self.transform_for(watched),
                field_selector=None if selector is None else FieldSelector.parse(selector),
                # keys_for only reads and queues: it runs in the watch cache's thread.
                inline=True,
            )
        for informer in list(self.informers.values()):
            informer.start()
        for target, suffix in ((self._work, "worker"), (self._resync, "resync")):
            thread = threading.Thread(target=target, name=f"{self.name}-{suffix}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        self._stopping.set()
        self.queue.shut_down()
        for informer in list(self.informers.values()):
            informer.interrupt()
        for thread in self._threads:
            thread.join(10)
        for informer in list(self.informers.values()):
            informer.join(10)

    @property
    def stopped(self) -> bool:
        return self._stopping.is_set()

    def _handler_for(self, watched: tuple[str, str]) -> InformerHandler:
        def handle(key: str, obj: Object | None) -> None:
            for queued in self.keys_for(watched, key, obj):
                self.queue.add(queued)

        return handle

    def _resync(self) -> None:
        while not self._stopping.wait(self.timings.resync_seconds):
            for key in self.resync_keys():
                self.queue.add(key)

    def _work(self) -> None:
        while not self._stopping.is_set():
            key = self.queue.get()
            if key is None:
                return
            try:
                self.reconciles += 1
                self.reconcile(key)
            except (Conflict, NotFound):
                # Something changed meanwhile: look again soon, with a fresh copy.
                self.queue.add_rate_limited(key)
            except Exception:
                _log.exception("%s controller: reconciling %s failed", self.name, key)
                self.queue.add_rate_limited(key)
            else:
                self.queue.forget(key)
            finally:
                self.queue.done(key)
