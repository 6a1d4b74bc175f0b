"""The watch cache's state: current objects by key, their indexes, the event history, the revision.

One :class:`WatchCache` mirrors one resource of a backend. It is fed by a single thread (the
cacher's reflector) with the backend's initial list (:meth:`replace`) and then its watch
events in revision order (:meth:`apply`, :meth:`advance` for progress bookmarks); any number
of threads read it (:meth:`get`, :meth:`list`, :meth:`start_watch`).

What it keeps:

- every current object as an :class:`Entry` (key, the object as compact JSON decoded when
  read: :mod:`kstore.cache.compact`, labels, fields, encodings memo), in
  key order (lists come out sorted without sorting), with indexes on the configured field and
  label names (e.g. ``spec.nodeName``) and namespace ranges found by key prefix;
- the history of recent events (:class:`~kstore.cache.history.EventHistory`) as
  :class:`CacheEvent` records, each holding the object before and after the change so every
  watcher's selector transition (ADDED / MODIFIED / DELETED) is computed from cached attributes;
- ``resource_version``: how far the cache has caught up with the backend (events, progress
  bookmarks, and revisions a freshness probe proved unchanged: :mod:`kstore.cache.freshness`),
  and a condition variable readers wait on to get a fresher cache.

Invariants: objects (and events) are never mutated after they enter the cache; they are shared
with every reader, read-only. ``resource_version`` never decreases. All state changes and all
reads of more than one field happen under ``lock``.
"""

from __future__ import annotations

import bisect
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from kstore.api.gvk import Object
from kstore.api.selectors import FieldSelector, LabelSelector
from kstore.cache.attributes import LabelSets, compact_fields
from kstore.cache.caching_object import CachedWatchEvent, Encodings
from kstore.cache.compact import LazyObjects, compact, expand, structure_dictionary
from kstore.cache.history import EventHistory
from kstore.cache.label_groups import LabelGroups
from kstore.errors import TooLargeResourceVersion
from kstore.storage.interface import EventType

__all__ = [
    "CacheEvent",
    "CacheUnavailable",
    "Entry",
    "ListSlice",
    "WatchCache",
    "WatchStart",
    "key_of",
]

GetAttrs = Callable[[Object], tuple[dict[str, str], dict[str, str]]]


class CacheUnavailable(Exception):
    """The cache stopped following its backend while a reader waited (it is re-listing):
    the reader should ask the backend instead."""


# Guards the lazy creation of the events shared through an Entry or a CacheEvent: rare misses.
_LAZY = threading.Lock()


def key_of(resource_prefix: str, obj: Object) -> str:
    """Kubernetes' key of an object: ``<prefix>/<namespace>/<name>``, or ``<prefix>/<name>``
    when the object has no namespace. ``resource_prefix`` ends with ``/``."""
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace") or ""
    if namespace:
        return f"{resource_prefix}{namespace}/{meta.get('name', '')}"
    return f"{resource_prefix}{meta.get('name', '')}"


def _with_revision(obj: Object, revision: int) -> Object:
    """A copy of ``obj`` (metadata copied, the rest shared) carrying ``revision``."""
    out = dict(obj)
    meta = dict(out.get("metadata") or {})
    meta["resourceVersion"] = str(revision)
    out["metadata"] = meta
    return out


class Entry:
    """One object version in the cache: read-only. The object is kept as compact JSON
    (:mod:`kstore.cache.compact`) and decoded, as a new object, on each read of ``object``."""

    __slots__ = ("_body", "encodings", "fields", "key", "labels", "resource_version")

    def __init__(
        self,
        key: str,
        obj: Object,
        labels: Mapping[str, str],
        fields: Mapping[str, str],
        resource_version: int,
        dictionary: int | None = None,
        checked: bool = True,
    ) -> None:
        self.key = key
        self._body = compact(obj, dictionary, checked=checked)
        self.labels = labels
        self.fields = fields
        self.resource_version = resource_version
        self.encodings = Encodings()

    @property
    def object(self) -> Object:
        """The object (decoded anew: the caller's to keep)."""
        return expand(self._body)

    def added_event(self) -> CachedWatchEvent:
        """An ADDED event for this version (initial events), sharing its encodings memo.
        Not kept: an entry holds no decoded object."""
        return CachedWatchEvent(EventType.ADDED, self.object, self.resource_version, self.encodings)


class CacheEvent:
    """One change of one key as the cache saw it: the versions before and after.

    ``new`` is None for a delete; ``prev`` None when the key was not in the cache.
    ``deleted_object`` is what a real delete delivers (the last state with the delete's
    revision). The events watchers receive are built lazily, once, and shared; until
    :meth:`release`, they are built on ``fresh``, the decoded object the new entry was made
    from, where one is given (so a change dispatched at once is not decoded again)."""

    __slots__ = (
        "_added",
        "_deleted",
        "_fresh",
        "_modified",
        "deleted_object",
        "key",
        "new",
        "prev",
        "record_time",
        "resource_version",
    )

    def __init__(
        self,
        key: str,
        new: Entry | None,
        prev: Entry | None,
        resource_version: int,
        record_time: float,
        deleted_object: Object | None = None,
        fresh: Object | None = None,
    ) -> None:
        self.key = key
        self.new = new
        self.prev = prev
        self.resource_version = resource_version
        self.record_time = record_time
        self.deleted_object = deleted_object
        self._added: CachedWatchEvent | None = None
        self._modified: CachedWatchEvent | None = None
        self._deleted: CachedWatchEvent | None = None
        self._fresh = fresh

    def _new_object(self, new: Entry) -> Object:
        fresh = self._fresh
        return new.object if fresh is None else fresh

    def added(self) -> CachedWatchEvent:
        event = self._added
        if event is None:
            new = self.new
            assert new is not None
            with _LAZY:
                event = self._added
                if event is None:
                    event = CachedWatchEvent(
                        EventType.ADDED, self._new_object(new), new.resource_version, new.encodings
                    )
                    self._added = event
        return event

    def modified(self) -> CachedWatchEvent:
        event = self._modified
        if event is None:
            new = self.new
            assert new is not None
            with _LAZY:
                event = self._modified
                if event is None:
                    event = CachedWatchEvent(
                        EventType.MODIFIED,
                        self._new_object(new),
                        self.resource_version,
                        new.encodings,
                    )
                    self._modified = event
        return event

    def deleted(self) -> CachedWatchEvent:
        """DELETED with the state before the change and this event's revision: the real
        delete's object, or (a selector no longer matching) a copy of the previous version."""
        event = self._deleted
        if event is None:
            with _LAZY:
                event = self._deleted
                if event is None:
                    obj = self.deleted_object
                    if obj is None:
                        assert self.prev is not None
                        obj = _with_revision(self.prev.object, self.resource_version)
                    event = CachedWatchEvent(EventType.DELETED, obj, self.resource_version)
                    self._deleted = event
        return event

    def release(self) -> None:
        """Drop the events built so far (they hold decoded objects): called once the event
        went to every watcher, so the history holds no decoded objects; a watcher replaying
        it later gets events built anew."""
        with _LAZY:
            self._added = self._modified = self._deleted = None
            self._fresh = None

    def old_attrs(self) -> tuple[Mapping[str, str], Mapping[str, str]] | None:
        prev = self.prev
        return None if prev is None else (prev.labels, prev.fields)


@dataclass(frozen=True, slots=True)
class ListSlice:
    """What a list read from the cache: matching entries' objects and memos, in key order."""

    objects: Sequence[Object]
    encodings: Sequence[Encodings]
    last_key: str
    resource_version: int
    has_more: bool
    total: int

    @classmethod
    def of(cls, chosen: list[Entry], revision: int, has_more: bool, total: int) -> ListSlice:
        """The slice of the entries ``chosen`` (in key order), read at ``revision``."""
        return cls(
            LazyObjects(chosen),
            [e.encodings for e in chosen],
            chosen[-1].key if chosen else "",
            revision,
            has_more,
            total,
        )


@dataclass(frozen=True, slots=True)
class WatchStart:
    """Where a new watch starts: the entries or events it replays first, at ``revision``."""

    initial_entries: Sequence[Entry]
    initial_events: Sequence[CacheEvent]
    revision: int


class WatchCache:
    """Current state + history + revision of one resource (see the module docstring).

    ``fed_by_storage``: every object it is given was made by a storage decoder, so holds
    JSON's types only, and its entries skip the JSON round-trip check
    (:func:`kstore.cache.compact.compact`)."""

    def __init__(
        self,
        *,
        resource_prefix: str,
        get_attrs: GetAttrs,
        key_func: Callable[[Object], str] | None = None,
        indexed_fields: Iterable[str] = (),
        indexed_labels: Iterable[str] = (),
        history: EventHistory[CacheEvent] | None = None,
        clock: Callable[[], float] = time.monotonic,
        fed_by_storage: bool = False,
    ) -> None:
        self.resource_prefix = resource_prefix
        self._fed_by_storage = fed_by_storage
        self._get_attrs = get_attrs
        self._key_func = key_func or (lambda obj: key_of(resource_prefix, obj))
        self._clock = clock
        self.history: EventHistory[CacheEvent] = history if history is not None else EventHistory()
        self.lock = threading.Lock()
        self._fresh = threading.Condition(self.lock)
        self._fresh_waiters = 0
        self.resource_version = 0
        #: False from :meth:`invalidate` until the next :meth:`replace`.
        self.usable = False
        #: Bumped by every :meth:`replace` and :meth:`invalidate`: a claim about the state
        #: read in one epoch (:meth:`advance_confirmed`) is void in another.
        self._epoch = 0
        # Parallel arrays in key order: a list's items are a slice of the entries.
        self._keys: list[str] = []
        self._entries: list[Entry] = []
        self._by_key: dict[str, Entry] = {}
        self._field_index: dict[str, dict[str, set[str]]] = {f: {} for f in indexed_fields}
        self._label_index: dict[str, dict[str, set[str]]] = {k: {} for k in indexed_labels}
        self._label_sets = LabelSets()
        self._label_groups = LabelGroups()
        self._dictionary: int | None = None
        self._dictionary_tried = False

    # -- feeding (the reflector thread) ----------------------------------------------------

    def _entry(self, obj: Object, revision: int) -> Entry:
        labels, fields = self._get_attrs(obj)
        key = self._key_func(obj)
        if not self._dictionary_tried:
            # The first object's structure serves the resource's (see kstore.cache.compact).
            self._dictionary = structure_dictionary(obj)
            self._dictionary_tried = True
        return Entry(
            key,
            obj,
            self._label_sets.shared(labels),
            compact_fields(self.resource_prefix, key, fields),
            revision,
            self._dictionary,
            checked=not self._fed_by_storage,
        )

    def listed_entry(self, obj: Object) -> Entry:
        """The entry for ``obj`` from an initial list (at its own resourceVersion), for
        :meth:`replace_entries`: made as the list arrives, so the decoded list is never
        held whole."""
        return self._entry(obj, _object_revision(obj))

    def replace(self, objects: Sequence[Object], revision: int) -> None:
        """Replace the whole state with a list read at ``revision``; history restarts there."""
        self.replace_entries([self.listed_entry(obj) for obj in objects], revision)

    def replace_entries(self, listed: Sequence[Entry], revision: int) -> None:
        """:meth:`replace` with entries made by :meth:`listed_entry`."""
        entries = sorted(listed, key=lambda e: e.key)
        with self._fresh:
            self._by_key = {e.key: e for e in entries}
            self._keys = [e.key for e in entries]
            self._entries = entries
            for index in (*self._field_index.values(), *self._label_index.values()):
                index.clear()
            self._label_groups.clear()
            for entry in entries:
                self._index(entry)
                self._label_groups.add(entry.labels, entry.key)
            self.history.reset(revision)
            self.resource_version = max(self.resource_version, revision)
            self.usable = True
            self._epoch += 1
            self._fresh.notify_all()

    def invalidate(self) -> None:
        """The backend watch is gone: release every reader waiting for freshness."""
        with self._fresh:
            self.usable = False
            self._epoch += 1
            self._fresh.notify_all()

    def apply(self, type_: EventType, obj: Object, revision: int) -> CacheEvent | None:
        """Apply one backend event (ADDED / MODIFIED / DELETED at ``revision``); the history
        record, or None for an event the cache already reflects (revision not newer)."""
        if revision <= self.resource_version:
            return None
        new = None if type_ is EventType.DELETED else self._entry(obj, revision)
        key = new.key if new is not None else self._key_func(obj)
        with self.lock:
            prev = self._by_key.get(key)
            if new is None:
                if prev is not None:
                    self._remove(prev)
                deleted = obj
                if prev is None:
                    # Unknown to the cache: filter on the deleted state's own attributes.
                    prev = self._entry(obj, revision)
            else:
                self._put(new, prev)
                deleted = None
            # The decoded object rides along until the event is dispatched and released.
            event = CacheEvent(
                key, new, prev, revision, self._clock(), deleted, obj if new is not None else None
            )
            self.history.append(event)
            self.resource_version = revision
        return event

    def advance(self, revision: int) -> bool:
        """The backend reports progress up to ``revision`` (no change for this resource in
        between). True when the cache's revision moved."""
        with self.lock:
            if revision <= self.resource_version:
                return False
            self.resource_version = revision
            return True

    def probe_point(self, key: str | None = None) -> tuple[int, int, int]:
        """``(revision, object count, epoch)`` read together, for a freshness probe
        (:mod:`kstore.cache.freshness`); the count of the objects under ``key`` (a prefix
        ending in ``/``, or one exact key), or of all of them. CacheUnavailable while the
        cache is not usable."""
        with self.lock:
            if not self.usable:
                raise CacheUnavailable
            if key is None or key == self.resource_prefix:
                count = len(self._keys)
            elif key.endswith("/"):
                lo = bisect.bisect_left(self._keys, key)
                hi = bisect.bisect_left(self._keys, key[:-1] + chr(ord(key[-1]) + 1), lo)
                count = hi - lo
            else:
                count = 1 if key in self._by_key else 0
            return self.resource_version, count, self._epoch

    def advance_confirmed(self, epoch: int, base: int, revision: int) -> bool:
        """Claim ``revision`` after a probe proved the backend unchanged in (``base``,
        ``revision``], where ``base`` and ``epoch`` came from :meth:`probe_point`. Only while
        the cache is in the same epoch (no re-list since) and at or past ``base``; wakes the
        readers waiting for freshness. True when the revision moved."""
        with self._fresh:
            if epoch != self._epoch or not self.usable or self.resource_version < base:
                return False
            if revision <= self.resource_version:
                return False
            self.resource_version = revision
            self._fresh.notify_all()
            return True

    def compact_history(self, revision: int) -> None:
        """Drop history at or below ``revision`` (see EventHistory.compact)."""
        with self.lock:
            self.history.compact(revision)

    def notify_fresh(self) -> None:
        """Wake readers waiting for a fresher cache (after a batch of apply/advance)."""
        if self._fresh_waiters:
            with self._fresh:
                self._fresh.notify_all()

    def _put(self, entry: Entry, prev: Entry | None) -> None:
        key = entry.key
        if prev is not None:
            self._unindex(prev)
            position = bisect.bisect_left(self._keys, key)
            self._entries[position] = entry
            if prev.labels is not entry.labels:
                self._label_groups.discard(prev.labels, key)
                self._label_groups.add(entry.labels, key)
        else:
            position = bisect.bisect_left(self._keys, key)
            self._keys.insert(position, key)
            self._entries.insert(position, entry)
            self._label_groups.add(entry.labels, key)
        self._by_key[key] = entry
        self._index(entry)

    def _remove(self, entry: Entry) -> None:
        position = bisect.bisect_left(self._keys, entry.key)
        del self._keys[position]
        del self._entries[position]
        del self._by_key[entry.key]
        self._unindex(entry)
        self._label_groups.discard(entry.labels, entry.key)

    def _index(self, entry: Entry) -> None:
        for name, index in self._field_index.items():
            index.setdefault(entry.fields.get(name, ""), set()).add(entry.key)
        for name, index in self._label_index.items():
            value = entry.labels.get(name)
            if value is not None:
                index.setdefault(value, set()).add(entry.key)

    def _unindex(self, entry: Entry) -> None:
        for name, index in self._field_index.items():
            _discard(index, entry.fields.get(name, ""), entry.key)
        for name, index in self._label_index.items():
            value = entry.labels.get(name)
            if value is not None:
                _discard(index, value, entry.key)

    # -- waiting for freshness -------------------------------------------------------------

    def wait_fresh(
        self,
        revision: int,
        timeout: float,
        poke: Callable[[], None] | None = None,
        poke_interval: float = 0.1,
    ) -> None:
        """Return once the cache has reached ``revision``; TooLargeResourceVersion (retry
        after 1 s) after ``timeout`` seconds, CacheUnavailable if the cache stops following
        its backend meanwhile. ``poke`` (asking the backend for a progress notification) runs
        every ``poke_interval`` while waiting, outside the lock."""
        if revision <= self.resource_version:
            return
        deadline = time.monotonic() + timeout
        while True:
            with self._fresh:
                if self.resource_version >= revision:
                    return
                if not self.usable:
                    raise CacheUnavailable
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TooLargeResourceVersion(revision, self.resource_version)
                self._fresh_waiters += 1
                try:
                    self._fresh.wait(min(remaining, poke_interval))
                finally:
                    self._fresh_waiters -= 1
                if self.resource_version >= revision:
                    return
            if poke is not None:
                poke()

    # -- reads -----------------------------------------------------------------------------

    def get(self, key: str) -> tuple[Entry | None, int]:
        """The entry at ``key`` (None when absent) and the cache revision it was read at."""
        with self.lock:
            return self._by_key.get(key), self.resource_version

    def entry(self, key: str) -> Entry | None:
        return self._by_key.get(key)

    def __len__(self) -> int:
        return len(self._keys)

    def list(
        self,
        key: str,
        *,
        recursive: bool,
        label_selector: LabelSelector,
        field_selector: FieldSelector,
        limit: int = 0,
        namespaced_keys: bool = True,
    ) -> ListSlice:
        """Matching objects under ``key`` (a prefix ending in ``/`` when ``recursive``, else an
        exact key) in key order, up to ``limit`` (0: all), at the current cache revision."""
        filtered = not (label_selector.empty() and field_selector.empty())
        with self.lock:
            revision = self.resource_version
            if not recursive:
                entry = self._by_key.get(key)
                if entry is None or (
                    filtered
                    and not (
                        label_selector.matches(entry.labels)
                        and field_selector.matches(entry.fields)
                    )
                ):
                    return ListSlice.of([], revision, False, 0)
                return ListSlice.of([entry], revision, False, 1)
            candidates = self._indexed_candidates(label_selector, field_selector)
            if candidates is None and namespaced_keys and key == self.resource_prefix:
                namespace = field_selector.exact_value("metadata.namespace")
                if namespace:
                    key = f"{key}{namespace}/"
            if candidates is not None:
                # Few keys (an index hit): resolve them, keep the ones under the prefix.
                entries = sorted(
                    (self._by_key[k] for k in candidates if k.startswith(key)),
                    key=lambda e: e.key,
                )
                return _select(
                    entries, 0, len(entries), revision, label_selector, field_selector, limit
                )
            end_key = key[:-1] + chr(ord(key[-1]) + 1)
            lo = bisect.bisect_left(self._keys, key)
            hi = bisect.bisect_left(self._keys, end_key, lo)
            if not filtered:
                total = hi - lo
                end = hi if limit <= 0 or total <= limit else lo + limit
                return ListSlice.of(self._entries[lo:end], revision, end < hi, total)
            if not label_selector.empty():
                grouped = self._label_groups.select(label_selector.matches, key, end_key, hi - lo)
                if grouped is not None:
                    return self._select_keys(grouped, lo, hi, revision, field_selector, limit)
            return _select(self._entries, lo, hi, revision, label_selector, field_selector, limit)

    def _select_keys(
        self,
        keys: Iterator[str],
        lo: int,
        hi: int,
        revision: int,
        field_selector: FieldSelector,
        limit: int,
    ) -> ListSlice:
        """:func:`_select` of the range ``[lo, hi)`` over the keys whose labels match, in
        order (from :class:`LabelGroups`)."""
        by_key = self._by_key
        fields_match = None if field_selector.empty() else field_selector.matches
        chosen: list[Entry] = []
        for key in keys:
            entry = by_key[key]
            if fields_match is None or fields_match(entry.fields):
                chosen.append(entry)
                if limit > 0 and len(chosen) >= limit:
                    break
        # As Kubernetes' cacher: more may follow when any key is left, matching or not.
        has_more = (
            limit > 0
            and len(chosen) >= limit
            and bisect.bisect_left(self._keys, chosen[-1].key, lo, hi) < hi - 1
        )
        return ListSlice.of(chosen, revision, has_more, hi - lo)

    def _indexed_candidates(
        self, label_selector: LabelSelector, field_selector: FieldSelector
    ) -> set[str] | None:
        best: set[str] | None = None
        for name, index in self._field_index.items():
            value = field_selector.exact_value(name)
            if value is not None:
                keys = index.get(value, set())
                if best is None or len(keys) < len(best):
                    best = keys
        for name, index in self._label_index.items():
            value = label_selector.exact_value(name)
            if value is not None:
                keys = index.get(value, set())
                if best is None or len(keys) < len(best):
                    best = keys
        return best

    def start_watch(
        self,
        key: str,
        *,
        recursive: bool,
        from_state: bool,
        revision: int,
        register: Callable[[int], None],
    ) -> WatchStart:
        """Atomically take what a new watch replays and register it for later events.

        ``from_state``: the current state under ``key`` (initial ADDED events) at the cache
        revision; else the history after ``revision`` (Expired when evicted). ``register`` is
        called under the lock with the revision the replay ends at; events applied after that
        are dispatched to the watcher."""
        with self.lock:
            current = self.resource_version
            if from_state:
                if recursive:
                    lo = bisect.bisect_left(self._keys, key)
                    hi = bisect.bisect_left(self._keys, key[:-1] + chr(ord(key[-1]) + 1), lo)
                    entries: Sequence[Entry] = self._entries[lo:hi]
                else:
                    entry = self._by_key.get(key)
                    entries = [entry] if entry is not None else []
                register(current)
                return WatchStart(entries, (), current)
            events = self.history.since(revision)
            register(max(current, revision))
            return WatchStart((), events, max(current, revision))


def _select(
    entries: Sequence[Entry],
    lo: int,
    hi: int,
    revision: int,
    label_selector: LabelSelector,
    field_selector: FieldSelector,
    limit: int,
) -> ListSlice:
    chosen: list[Entry] = []
    has_more = False
    labels_match = label_selector.matches
    fields_match = None if field_selector.empty() else field_selector.matches
    # Equal label sets are one shared dict (kstore.cache.attributes): each is judged once per
    # scan, which is most of a scan's work when a page skips many objects of other labels.
    verdicts: dict[int, bool] = {}
    for position in range(lo, hi):
        entry = entries[position]
        labels = entry.labels
        verdict = verdicts.get(id(labels))
        if verdict is None:
            verdict = verdicts[id(labels)] = labels_match(labels)
        if verdict and (fields_match is None or fields_match(entry.fields)):
            chosen.append(entry)
            if limit > 0 and len(chosen) >= limit:
                # As Kubernetes' cacher: more may follow when any key is left, matching or not.
                has_more = position < hi - 1
                break
    return ListSlice.of(chosen, revision, has_more, hi - lo)


def _discard(index: dict[str, set[str]], value: str, key: str) -> None:
    keys = index.get(value)
    if keys is not None:
        keys.discard(key)
        if not keys:
            del index[value]


def _object_revision(obj: Object) -> int:
    text = (obj.get("metadata") or {}).get("resourceVersion") or "0"
    return int(text) if isinstance(text, str) and text.isdigit() else 0
