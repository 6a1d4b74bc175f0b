"""The watch cache as a :class:`~kstore.storage.interface.Storage` decorator ("cacher").

A :class:`Cacher` sits in front of one resource's backend storage (LMDB, etcd, anything that
implements the interface) and serves it the way Kubernetes' cacher does:

- **one backend watch** per resource, opened as a watch-list (the backend's initial state,
  the initial-events-end bookmark, then every change, with progress notifications), feeds a
  :class:`~kstore.cache.watch_cache.WatchCache` and the
  :class:`~kstore.cache.dispatcher.Dispatcher` from one thread (the
  :class:`~kstore.cache.reflector.Reflector`). If that watch fails, every cache watcher is
  ended (clients watch again from their last revision) and the cache re-lists;
- **writes** go to the backend; update and delete get the cache's current object as the
  ``cached_existing`` hint (the backend re-reads on a revision mismatch, so a stale hint costs
  a retry, never correctness);
- **reads** are routed like Kubernetes' delegator: GET at ``""`` from the backend; GET and
  LIST at ``"0"`` from memory (LIST ignores ``limit`` there, #108003); at ``"N"`` (not older
  than) from memory once the cache has reached N (up to 3 s, then 504 TooLargeResourceVersion);
  exact-revision and continue LISTs from the backend; consistent LISTs (``""``) from memory
  after the cache has reached the backend's current revision, and (as Kubernetes by default)
  from the backend if that takes longer than 3 s. How the cache confirms it: when the backend
  is an :class:`~kstore.cache.freshness.UnchangedProbe` (etcd), by a quorum read of the
  resource's prefix that proves nothing changed since the cache's revision (probing again
  every 20 ms while events are in flight; the same probes serve any reader waiting for the
  cache to reach a revision); otherwise by the backend's current revision and progress
  requests to the backend watch every 100 ms;
- **watches** always from memory: any revision still in the history window (else one ERROR
  event, 410 Expired ``too old resource version: N (oldest-1)``), initial events, the
  initial-events-end bookmark, periodic bookmarks when ``allow_bookmarks``.

Until the first list and watch are up the cache is not ready: reads go to the backend and a
watch waits for readiness (3 s, then 429 TooManyRequests).

Objects handed out (GET, LIST items, watch events) are **shared and read-only**: never mutate
them; lists are :class:`~kstore.cache.caching_object.CachedListResult` and events
:class:`~kstore.cache.caching_object.CachedWatchEvent`, whose encodings are computed once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field
from typing import TypeVar

from kstore.api.gvk import Object
from kstore.cache.caching_object import CachedListResult
from kstore.cache.dispatcher import Dispatcher
from kstore.cache.freshness import LocalChangeClock, UnchangedProbe
from kstore.cache.history import DEFAULT_EVENT_WINDOW, LOWER_BOUND_CAPACITY, EventHistory
from kstore.cache.reflector import Reflector
from kstore.cache.watch_cache import CacheUnavailable, Entry, WatchCache
from kstore.cache.watcher import CacheWatcher, ErrorWatcher, WatchFilter
from kstore.errors import (
    Expired,
    KStoreError,
    NotFound,
    TooLargeResourceVersion,
    TooManyRequests,
)
from kstore.storage.aio import AsyncStorage, ThreadedAsyncStorage, as_async
from kstore.storage.continue_token import encode_continue
from kstore.storage.interface import (
    GetOptions,
    ListOptions,
    ListResult,
    Preconditions,
    ResourceStorageConfig,
    ResourceVersionMatch,
    Stats,
    Storage,
    TryUpdate,
    Watcher,
    WouldWait,
)
from kstore.storage.keys import (
    name_of_key,
    prepare_key,
    qualified_resource,
    resource_prefix_with_slash,
)
from kstore.storage.versioner import parse_list_resource_version, parse_resource_version

__all__ = ["CacheConfig", "Cacher"]

_log = logging.getLogger(__name__)

#: What :meth:`Cacher.cached_view` works out of an object.
_V = TypeVar("_V")

_GET_DEFAULTS = GetOptions()
#: A consistent list of part of a resource probes the whole resource (which also moves the
#: cache's revision, so later "0" reads see it) unless the resource holds more than 4x the
#: part's objects plus 1,000: etcd reads every value of the probed range, a few ms for 1,000
#: objects of 5 KiB, while 10,000 took 350 ms under load (16 on 2 cores).
_WHOLE_PREFIX_FACTOR = 4
_WHOLE_PREFIX_SMALL = 1000
_LIST_DEFAULTS = ListOptions()


@dataclass(frozen=True, kw_only=True, slots=True)
class CacheConfig:
    """How to cache one resource.

    ``storage`` is the backend storage of the resource described by ``resource``.
    ``indexed_fields`` / ``indexed_labels`` name the field and label selectors worth an index
    for lists (namespaces need none: they are key ranges). ``trigger_field`` is the field
    whose exact-match watches the dispatcher indexes (Kubernetes' indexed trigger, e.g.
    ``spec.nodeName`` for pods), so an event only visits the watches of its old and new
    values. ``event_window_seconds`` is the
    history the ring buffer covers (75 s, at least 100 and at most 102,400 events).
    ``watcher_buffer_size`` bounds each watcher's undelivered live events.
    ``bookmark_interval_seconds`` is how often a watch with ``allow_bookmarks`` gets a
    BOOKMARK (Kubernetes: about every minute). ``fresh_timeout_seconds`` is how long a read
    waits for the cache to reach a revision (3 s). ``consistent_read_fallback`` sends a
    consistent LIST that timed out to the backend (Kubernetes' default) instead of failing it
    with 504. ``consistent_reads_from_cache`` False sends every consistent LIST to the backend,
    as Kubernetes does when etcd cannot answer progress requests: use it for a backend whose
    watch reports progress only rarely and that is no
    :class:`~kstore.cache.freshness.UnchangedProbe`. ``consistent_gets_from_cache`` answers a
    GET without resourceVersion from memory when the cache has already reached the revision
    of the resource's last acknowledged change, where the backend knows it locally
    (:class:`~kstore.cache.freshness.LocalChangeClock`: the LMDB store), else the backend's
    current revision, read after the request began (so the answer is as linearizable as the
    backend's own); only for a backend that answers either without I/O (no probe), and not
    for objects that expire (the backend hides an expired object at once, the cache only on
    its DELETED event). When the cache lags, the GET reads the
    backend, as Kubernetes' does for every such GET. ``freshness_probe_interval_seconds`` is
    how often a consistent read that found changes in flight probes such a backend again.
    ``consistency_check_interval_seconds`` runs the consistency checker periodically (None:
    only on demand).
    """

    storage: Storage
    resource: ResourceStorageConfig
    indexed_fields: tuple[str, ...] = ()
    indexed_labels: tuple[str, ...] = ()
    trigger_field: str | None = None
    event_window_seconds: float = DEFAULT_EVENT_WINDOW
    history_lower_bound: int = LOWER_BOUND_CAPACITY
    history_upper_bound: int | None = None
    watcher_buffer_size: int = 1024
    bookmark_interval_seconds: float = 60.0
    fresh_timeout_seconds: float = 3.0
    progress_request_interval_seconds: float = 0.1
    #: 20 ms: events in flight reach the cache within a few ms on a quiet machine; a probe is
    #: one range read of the prefix, cheap next to a list from the backend.
    freshness_probe_interval_seconds: float = 0.02
    consistent_read_fallback: bool = True
    consistent_reads_from_cache: bool = True
    consistent_gets_from_cache: bool = False
    ready_timeout_seconds: float = 3.0
    relist_backoff_seconds: float = 1.0
    consistency_check_interval_seconds: float | None = None
    key_func: Callable[[Object], str] | None = None
    clock: Callable[[], float] = field(default=time.monotonic)


class Cacher(Storage):
    """The watch cache of one resource (see the module docstring). Thread-safe.

    Starts its feeding thread on construction; :meth:`stop` ends it and every watch."""

    def __init__(self, config: CacheConfig) -> None:
        self._config = config
        self._storage = config.storage
        self._prefix = resource_prefix_with_slash(config.resource.resource_prefix)
        self._resource = qualified_resource(config.resource.resource_prefix)
        self._namespaced = config.resource.namespaced
        self._cache = WatchCache(
            resource_prefix=self._prefix,
            get_attrs=config.resource.get_attrs,
            key_func=config.key_func,
            indexed_fields=config.indexed_fields,
            indexed_labels=config.indexed_labels,
            history=EventHistory(
                window_seconds=config.event_window_seconds,
                lower_bound=config.history_lower_bound,
                upper_bound=config.history_upper_bound,
            ),
            clock=config.clock,
            # What the reflector feeds it comes from the backend's decoder.
            fed_by_storage=True,
        )
        self._dispatcher = Dispatcher(
            resource_prefix=self._prefix,
            bookmark_interval=config.bookmark_interval_seconds,
            clock=config.clock,
            trigger_field=config.trigger_field,
        )
        self._reflector = Reflector(
            storage=self._storage,
            key=self._prefix,
            cache=self._cache,
            dispatcher=self._dispatcher,
            resource=self._resource,
            bookmark_interval=config.bookmark_interval_seconds,
            relist_backoff=config.relist_backoff_seconds,
        )
        self._ready = self._reflector.ready
        self._probe = self._storage if isinstance(self._storage, UnchangedProbe) else None
        self._changes = self._storage if isinstance(self._storage, LocalChangeClock) else None
        # One re-probe at a time: readers waiting together share it (its result wakes them
        # all), so a crowd of waiters does not multiply range reads of the whole prefix.
        self._reprobe = threading.Lock()
        #: Probes that moved the cache's revision (no event needed to reach it).
        self.probe_hits = 0
        self._stopping = threading.Event()
        self._checker_thread: threading.Thread | None = None
        self._reflector.start()
        if config.consistency_check_interval_seconds is not None:
            self._checker_thread = threading.Thread(
                target=self._check_periodically,
                args=(config.consistency_check_interval_seconds,),
                name=f"kstore-cache-check {self._resource}",
                daemon=True,
            )
            self._checker_thread.start()

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        """True once the initial list and the backend watch are up (and not re-listing)."""
        return self._ready.is_set()

    def wait_ready(self, timeout: float | None = None) -> bool:
        return self._ready.wait(timeout)

    def wait_first_sync(self, timeout: float | None = None) -> bool:
        """Wait until the first list-and-watch has either made the cache ready or failed
        (e.g. on an object it cannot decode); True when ready. Until it is, reads are
        served by the backend and watches answer 429."""
        self._reflector.first_attempt.wait(timeout)
        return self._ready.is_set()

    @property
    def resource_version(self) -> int:
        """The revision the cache has caught up to."""
        return self._cache.resource_version

    @property
    def watch_cache(self) -> WatchCache:
        return self._cache

    @property
    def dispatcher(self) -> Dispatcher:
        return self._dispatcher

    @property
    def relists(self) -> int:
        """How many initial lists the cache has completed (1 after a clean start)."""
        return self._reflector.relists

    def request_relist(self) -> None:
        """Drop the backend watch and rebuild the cache from a fresh list (ends every watch)."""
        self._reflector.request_relist()

    def stop(self) -> None:
        """Stop feeding the cache and end every watch. Idempotent."""
        self._stopping.set()
        self._reflector.stop()
        if self._checker_thread is not None:
            self._checker_thread.join(timeout=10.0)
        self._dispatcher.terminate_all()

    def __enter__(self) -> Cacher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- writes: straight to the backend ---------------------------------------------------

    def create(self, key: str, obj: Object, *, ttl_seconds: int | None = None) -> Object:
        return self._storage.create(key, obj, ttl_seconds=ttl_seconds)

    @property
    def aio(self) -> AsyncStorage:
        """This cache's verbs as coroutines: the writes go straight to the backend's own
        coroutines (native where it has them, see :func:`kstore.storage.aio.as_async`); the
        reads, which may wait for the cache, run in the loop's executor."""
        return _CacherAsync(self, as_async(self._storage))

    def _cached_object(self, key: str) -> Object | None:
        if not self._ready.is_set():
            return None
        entry = self._cache.entry(key)
        return None if entry is None else entry.object

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
        # As Kubernetes' delegator: the cache's copy replaces the caller's hint.
        return self._storage.guaranteed_update(
            key,
            try_update,
            ignore_not_found=ignore_not_found,
            preconditions=preconditions,
            cached_existing=self._cached_object(key),
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
        return self._storage.delete(
            key,
            preconditions=preconditions,
            validate_deletion=validate_deletion,
            cached_existing=self._cached_object(key),
        )

    def stats(self) -> Stats:
        return self._storage.stats()

    def current_revision(self) -> int:
        return self._storage.current_revision()

    # -- reads -----------------------------------------------------------------------------

    def _wait_fresh(self, revision: int) -> None:
        if self._probe is None:
            poke, interval = (
                self._reflector.request_progress,
                self._config.progress_request_interval_seconds,
            )
            if revision > self._cache.resource_version:
                poke()  # a quiet resource's cache then confirms the revision at once
        else:
            poke, interval = self._probe_again, self._config.freshness_probe_interval_seconds
        self._cache.wait_fresh(
            revision, self._config.fresh_timeout_seconds, poke=poke, poke_interval=interval
        )

    def _probe_again(self) -> None:
        """A waiting reader's poke: probe from the revision the cache has reached by now,
        unless another reader's probe is running (its outcome wakes this one too)."""
        probe = self._probe
        if probe is None or not self._reprobe.acquire(blocking=False):
            return
        try:
            self._confirm_fresh(probe)
        finally:
            self._reprobe.release()

    def _confirm_fresh(self, probe: UnchangedProbe) -> int:
        """Probe the backend once from the cache's revision (see :mod:`.freshness`), advance
        the cache when it proves nothing changed since; the backend's current revision."""
        base, count, epoch = self._cache.probe_point()
        current, unchanged = probe.confirm_unchanged(self._prefix, base, count)
        if unchanged and self._cache.advance_confirmed(epoch, base, current):
            self.probe_hits += 1
        return current

    def _confirm_range(self, probe: UnchangedProbe, key: str) -> int:
        """For a consistent list of ``key`` (a prefix ending in ``/`` or one key): a revision
        R read linearizably after the call began such that the cache's state of that range,
        at whatever revision the cache has reached, is the backend's at R or later (see
        :mod:`.freshness`). Probes the range itself; while writes to it are in flight, waits
        for their events and probes again, up to the fresh timeout (then
        TooLargeResourceVersion). A probe of the whole prefix also advances the cache, so the
        whole prefix is probed unless the range is a small part of a large resource."""
        config = self._config
        deadline = time.monotonic() + config.fresh_timeout_seconds
        if key != self._prefix:
            _, in_range, _ = self._cache.probe_point(key)
            if len(self._cache) <= _WHOLE_PREFIX_FACTOR * in_range + _WHOLE_PREFIX_SMALL:
                key = self._prefix
        target = 0
        while True:
            base, count, epoch = self._cache.probe_point(key)
            current, unchanged = probe.confirm_unchanged(key, base, count)
            target = target or current
            if unchanged:
                if key == self._prefix and self._cache.advance_confirmed(epoch, base, current):
                    self.probe_hits += 1
                return current
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TooLargeResourceVersion(target, self._cache.resource_version)
            try:
                # Events in flight may bring the whole cache to the target meanwhile.
                self._cache.wait_fresh(
                    target, min(remaining, config.freshness_probe_interval_seconds)
                )
                return target
            except TooLargeResourceVersion:
                continue

    def _sync_to_current(self) -> int:
        """Wait until the cache has reached the backend's current revision (read now,
        linearizably); that revision. TooLargeResourceVersion after the fresh timeout,
        CacheUnavailable when the cache stops following the backend meanwhile."""
        probe = self._probe
        # The reader's own probe, started after the request: its revision is linearizable.
        current = self._storage.current_revision() if probe is None else self._confirm_fresh(probe)
        self._wait_fresh(current)
        return current

    def get(self, key: str, opts: GetOptions = _GET_DEFAULTS) -> Object:
        if not self._ready.is_set():
            return self._storage.get(key, opts)
        prepared = prepare_key(key, self._prefix, recursive=False)
        if opts.resource_version == "":
            if not self._fresh_now():
                return self._storage.get(key, opts)
            entry, _ = self._cache.get(prepared)
            if entry is None:
                return self._storage.get(key, opts)  # its NotFound, or ignore_not_found
            return entry.object
        revision = parse_list_resource_version(opts.resource_version)
        try:
            self._wait_fresh(revision)
        except CacheUnavailable:
            return self._storage.get(key, opts)
        entry, _ = self._cache.get(prepared)
        if entry is None:
            if opts.ignore_not_found:
                return {}
            name = name_of_key(prepared)
            resource, _, group = self._resource.partition(".")
            raise NotFound(
                f'{self._resource} "{name}" not found', name=name, kind=resource, group=group
            )
        return entry.object

    def cached_view(
        self, key: str, view: Callable[[Object], _V], memo: MutableMapping[str, tuple[Entry, _V]]
    ) -> _V | None:
        """``view(object)`` of the object at ``key`` as a GET at any revision ("0") reads it
        from memory, worked out once per version of it (``memo`` keeps the last); None when
        the cache cannot answer (not ready yet, or the key absent): read the storage then.
        For readers on every write's path that need a few fields of a hot object (the
        namespace of each create), not a decoded copy of it each time."""
        if not self._ready.is_set():
            return None
        entry = self._cache.entry(prepare_key(key, self._prefix, recursive=False))
        if entry is None:
            return None
        known = memo.get(key)
        if known is not None and known[0] is entry:
            return known[1]
        found = view(entry.object)
        memo[key] = (entry, found)
        return found

    def list_now(self, key: str, opts: ListOptions = _LIST_DEFAULTS) -> ListResult:
        """A consistent list that never waits for the cache (for readers on a write's path,
        such as admission): from memory when the cache provably holds the current state
        without waiting, as for a consistent GET (see :meth:`_fresh_now`); else from the
        backend."""
        if (
            opts.resource_version == ""
            and not opts.continue_token
            and opts.resource_version_match == ResourceVersionMatch.UNSET
            and self._ready.is_set()
            and self._fresh_now()
        ):
            # As a list at "0" (the whole range, any limit ignored), straight from memory:
            # this runs several times per admitted write.
            found = self._cache.list(
                prepare_key(key, self._prefix, recursive=opts.recursive),
                recursive=opts.recursive,
                label_selector=opts.label_selector,
                field_selector=opts.field_selector,
                namespaced_keys=self._namespaced,
            )
            return CachedListResult(
                items=found.objects,
                resource_version=found.resource_version,
                item_encodings=found.encodings,
            )
        return self._storage.list(key, opts)

    def _fresh_now(self) -> bool:
        """Whether a consistent GET may be answered from memory now: allowed by the config,
        and provable locally (no probe, never a wait: a GET that would wait reads the
        backend instead). Where the backend knows when this resource last changed (LMDB,
        :class:`~kstore.cache.freshness.LocalChangeClock`), once the cache has reached that
        revision, whatever other resources are being written meanwhile; else once it has
        reached the backend's current revision, if reading that is local."""
        if not self._config.consistent_gets_from_cache or self._probe is not None:
            return False
        changes = self._changes
        if changes is not None:
            return self._cache.resource_version >= changes.last_change_revision(self._prefix)
        return self._cache.resource_version >= self._storage.current_revision()

    def list(self, key: str, opts: ListOptions = _LIST_DEFAULTS) -> ListResult:
        if self._delegates_list(opts) or not self._ready.is_set():
            return self._storage.list(key, opts)
        prepared = prepare_key(key, self._prefix, recursive=opts.recursive)
        revision = parse_list_resource_version(opts.resource_version)
        consistent = opts.resource_version == "" and (
            opts.resource_version_match == ResourceVersionMatch.UNSET
        )
        if consistent and not self._config.consistent_reads_from_cache:
            return self._storage.list(key, opts)
        confirmed = 0
        if not opts.wait:
            if not self._answers_now(consistent, revision):
                raise WouldWait(f"a list of {self._resource} would wait for its watch cache")
        else:
            try:
                if consistent and self._probe is not None:
                    confirmed = self._confirm_range(self._probe, prepared)
                elif consistent:
                    self._sync_to_current()
                elif revision:
                    self._wait_fresh(revision)
            except TooLargeResourceVersion:
                if not (consistent and self._config.consistent_read_fallback):
                    raise
                return self._storage.list(key, opts)
            except CacheUnavailable:
                return self._storage.list(key, opts)
        # Kubernetes ignores the limit of a list at "0" served from the cache (#108003).
        limit = 0 if opts.resource_version == "0" else opts.limit
        found = self._cache.list(
            prepared,
            recursive=opts.recursive,
            label_selector=opts.label_selector,
            field_selector=opts.field_selector,
            limit=limit,
            namespaced_keys=self._namespaced,
        )
        # The range is the backend's at ``confirmed`` (or at the cache's revision, if newer).
        list_revision = max(confirmed, found.resource_version)
        token = ""
        remaining = None
        if found.has_more:
            token = encode_continue(found.last_key + "\x00", prepared, list_revision)
            if opts.label_selector.empty() and opts.field_selector.empty():
                remaining = found.total - limit
        return CachedListResult(
            items=found.objects,
            resource_version=list_revision,
            continue_token=token,
            remaining_item_count=remaining,
            item_encodings=found.encodings,
        )

    def _answers_now(self, consistent: bool, revision: int) -> bool:
        """Whether a list may be answered from memory without waiting: a consistent one once
        the cache holds this resource's current state (as a consistent GET, see
        :meth:`_fresh_now`; the list then carries the cache's revision), one at a revision
        once the cache has reached it."""
        if consistent:
            return self._fresh_now()
        return self._cache.resource_version >= revision

    @staticmethod
    def _delegates_list(opts: ListOptions) -> bool:
        """Kubernetes' ShouldDelegateList for a cache without snapshots."""
        match = opts.resource_version_match
        if match == ResourceVersionMatch.NOT_OLDER_THAN:
            return False
        if match != ResourceVersionMatch.UNSET:
            # Exact reads need history; anything else is invalid and the backend says so.
            return True
        if opts.continue_token:
            return True
        # A legacy list at a revision with a limit reads at exactly that revision.
        return opts.limit > 0 and opts.resource_version not in ("", "0")

    # -- watch -----------------------------------------------------------------------------

    def watch(self, key: str, opts: ListOptions = _LIST_DEFAULTS) -> Watcher:
        prepared = prepare_key(key, self._prefix, recursive=opts.recursive)
        requested = parse_resource_version(opts.resource_version)
        if not self._ready.wait(self._config.ready_timeout_seconds):
            raise TooManyRequests(
                f"the watch cache of {self._resource} is not ready yet", retry_after_seconds=1
            )
        initial = opts.send_initial_events
        if opts.resource_version:
            required = requested
        elif initial is None:
            required = 0
        elif initial is True:
            required = -1  # the current revision, once the cache has reached it (below)
        else:
            try:
                required = self._storage.current_revision()
            except KStoreError as exc:
                return ErrorWatcher(exc)
        if initial is True:
            try:
                if required < 0:
                    required = self._sync_to_current()
                else:
                    self._wait_fresh(required)
            except KStoreError as exc:
                return ErrorWatcher(exc)
            except CacheUnavailable:
                raise TooManyRequests(
                    f"the watch cache of {self._resource} is re-listing", retry_after_seconds=1
                ) from None
        from_state = initial is True or (initial is None and required == 0)
        watcher = CacheWatcher(
            watch_filter=WatchFilter(
                prepared,
                recursive=opts.recursive,
                label_selector=opts.label_selector,
                field_selector=opts.field_selector,
                namespace=self._scope_namespace(prepared, opts),
                trigger_value=(
                    None
                    if self._config.trigger_field is None
                    else opts.field_selector.exact_value(self._config.trigger_field)
                ),
            ),
            buffer_size=self._config.watcher_buffer_size,
            allow_bookmarks=opts.allow_bookmarks,
            initial_events_end_bookmark=initial is True and opts.allow_bookmarks,
            on_stop=self._dispatcher.remove,
            description=f"{self._resource} at {prepared}",
        )

        def register(revision: int) -> None:
            watcher.register_at(revision)
            self._dispatcher.add(watcher)

        try:
            start = self._cache.start_watch(
                prepared,
                recursive=opts.recursive,
                from_state=from_state,
                # "0" without initial events: from whatever the cache has reached now.
                revision=required if required else self._cache.resource_version,
                register=register,
            )
        except Expired as exc:
            return ErrorWatcher(exc)
        watcher.begin(start.initial_entries, start.initial_events, start.revision)
        return watcher

    def _scope_namespace(self, prepared: str, opts: ListOptions) -> str | None:
        """The one namespace a watch is confined to, if any (the dispatcher's index)."""
        if not self._namespaced:
            return None
        rest = prepared[len(self._prefix) :]
        namespace, slash, _ = rest.partition("/")
        if slash and namespace:
            return namespace
        value = opts.field_selector.exact_value("metadata.namespace")
        return value or None

    # -- history ---------------------------------------------------------------------------

    def wait_fresh(self, revision: int) -> None:
        """Block until the cache has reached ``revision``: TooLargeResourceVersion after the
        configured wait (3 s), CacheUnavailable if it stops following its backend."""
        self._wait_fresh(revision)

    def compact_history(self, revision: int) -> None:
        """Make the cache's watch window start at ``revision``, as the backend's does after a
        compaction there (the cache's own window is time-based and would otherwise keep
        serving watches from older revisions, which Kubernetes' cacher also does). Waits
        until the cache has reached ``revision`` (TooLargeResourceVersion after 3 s)."""
        self._wait_fresh(revision)
        self._cache.compact_history(revision)

    # -- consistency -----------------------------------------------------------------------

    def _check_periodically(self, interval: float) -> None:
        from kstore.cache.consistency import check_consistency

        while not self._stopping.wait(interval):
            if not self._ready.is_set():
                continue
            try:
                report = check_consistency(self, self._storage, self._prefix)
            except KStoreError as exc:
                _log.warning("consistency check of %s failed to run: %s", self._resource, exc)
                continue
            if not report.consistent:
                _log.error(
                    "watch cache of %s is inconsistent: %s; re-listing", self._resource, report
                )
                self.request_relist()


class _CacherAsync(ThreadedAsyncStorage):
    """A :class:`Cacher`'s verbs as coroutines: the writes on the backend's face (an update or
    delete with the cache's copy as the hint, as :class:`Cacher` does), the reads threaded over
    the cacher."""

    __slots__ = ("_backend", "_cacher")

    def __init__(self, cacher: Cacher, backend: AsyncStorage) -> None:
        super().__init__(cacher)
        self._cacher = cacher
        self._backend = backend

    async def create(self, key: str, obj: Object, *, ttl_seconds: int | None = None) -> Object:
        return await self._backend.create(key, obj, ttl_seconds=ttl_seconds)

    async def guaranteed_update(
        self,
        key: str,
        try_update: TryUpdate,
        *,
        ignore_not_found: bool = False,
        preconditions: Preconditions | None = None,
        cached_existing: Object | None = None,
        ttl_seconds: int | None = None,
    ) -> Object:
        return await self._backend.guaranteed_update(
            key,
            try_update,
            ignore_not_found=ignore_not_found,
            preconditions=preconditions,
            cached_existing=self._cacher._cached_object(key),
            ttl_seconds=ttl_seconds,
        )

    async def delete(
        self,
        key: str,
        *,
        preconditions: Preconditions | None = None,
        validate_deletion: Callable[[Object], None] | None = None,
        cached_existing: Object | None = None,
    ) -> Object:
        return await self._backend.delete(
            key,
            preconditions=preconditions,
            validate_deletion=validate_deletion,
            cached_existing=self._cacher._cached_object(key),
        )
