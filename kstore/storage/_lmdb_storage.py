"""The Storage of one resource on the LMDB backend: Kubernetes' etcd3 store semantics.

Each method is a short pipeline: prepare the key, read (one short read transaction) or hand a
request to the writer, transform and decode outside any transaction. The contracts are the
ones of :mod:`kstore.storage.interface` and the reference's sections 1.4-1.8:

- create: AlreadyExists if the key is live; the result is decoded from the written bytes;
- guaranteed_update: compare-and-swap on the revision read (or the caller's cached object),
  retried with fresh state on conflict, no write when the encoded bytes are unchanged and not
  stale; delete likewise, returning the last state with the delete's revision;
- list: the options are validated here as Kubernetes' ``ValidateListOptions`` does; the reads
  are in :mod:`kstore.storage._lmdb_list`;
- watch: see :mod:`kstore.storage._watch_hub`; this class is also the watchers' history source.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from kstore.api.gvk import Object
from kstore.errors import (
    AlreadyExists,
    BadRequest,
    Conflict,
    CorruptObject,
    Expired,
    InternalError,
    NotFound,
    TooLargeResourceVersion,
)
from kstore.storage import _lmdb_records as rec
from kstore.storage._lmdb_list import Lister, list_one
from kstore.storage._lmdb_writes import DeleteRequest, Outcome, PutRequest, Request
from kstore.storage._watch_hub import (
    HistorySource,
    HubWatcher,
    RawEvent,
    StartPlan,
    error_watcher,
)
from kstore.storage.continue_token import InvalidContinueToken, decode_continue
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
)
from kstore.storage.keys import (
    name_of_key,
    prepare_key,
    qualified_resource,
    resource_prefix_with_slash,
)
from kstore.storage.versioner import (
    check_preconditions,
    object_resource_version,
    parse_list_resource_version,
    parse_resource_version,
    prepare_for_storage,
    with_resource_version,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from kstore.storage._lmdb_aio import LmdbAsyncStorage
    from kstore.storage.lmdb import LmdbBackend

__all__ = ["LmdbStorage", "WriteSteps", "run_writes"]

MAX_KEY_BYTES = rec.MAX_KEY_BYTES
_T = TypeVar("_T")
_GET_DEFAULTS = GetOptions()
_LIST_DEFAULTS = ListOptions()

#: A write verb as a generator: it yields each request it needs committed and is sent the
#: request's outcome (raising its error is the runner's part); it returns the verb's result.
WriteSteps = Generator[Request, Outcome, Object]


def run_writes(steps: Generator[Request, Outcome, _T], backend: LmdbBackend) -> _T:
    """Run a write verb's steps on this thread, each request committed through ``backend``
    (its error raised here, which closes the generator)."""
    try:
        request = next(steps)
        while True:
            request = steps.send(backend.submit(request))
    except StopIteration as done:
        result: _T = done.value
        return result


# Aliases for annotations inside LmdbStorage, where ``list`` names the method.
_StateItems = list[tuple[str, int, bytes]]
_Events = list[RawEvent]


@dataclass(slots=True)
class _State:
    """What an update or delete starts from: the object, its revision (0: absent), its plain
    (untransformed) bytes and whether the transformer called them stale."""

    obj: Object
    revision: int
    plain: bytes
    stale: bool = False


_ABSENT = _State({}, 0, b"")


class LmdbStorage(Storage, HistorySource):
    """One resource (key prefix, codec, transformer) on an :class:`LmdbBackend`."""

    def __init__(self, backend: LmdbBackend, config: ResourceStorageConfig) -> None:
        self.backend = backend
        self._config = config
        self._prefix = resource_prefix_with_slash(config.resource_prefix)
        self._resource = qualified_resource(config.resource_prefix)
        self._codec = config.codec
        self._transformer = config.transformer

    # -- helpers ---------------------------------------------------------------------------

    def _key(self, key: str, *, recursive: bool) -> str:
        key = prepare_key(key, self._prefix, recursive=recursive)
        if "\x00" in key:
            raise BadRequest(f"invalid key: {key!r} contains a NUL character")
        if len(key.encode()) > MAX_KEY_BYTES:
            raise BadRequest(f"invalid key: longer than {MAX_KEY_BYTES} bytes")
        return key

    def _not_found(self, key: str) -> NotFound:
        name = name_of_key(key)
        resource, _, group = self._resource.partition(".")
        return NotFound(
            f'{self._resource} "{name}" not found', name=name, kind=resource, group=group
        )

    def already_exists(self, key: str) -> AlreadyExists:
        name = name_of_key(key)
        resource, _, group = self._resource.partition(".")
        return AlreadyExists(
            f'{self._resource} "{name}" already exists', name=name, kind=resource, group=group
        )

    def _plain(self, key: str, data: bytes) -> tuple[bytes, bool]:
        try:
            return self._transformer.from_storage(data, key)
        except Exception as exc:
            raise CorruptObject(f'unable to transform key "{key}": {exc}') from exc

    def decode_plain(self, key: str, plain: bytes) -> Object:
        try:
            return self._codec.decode(plain)
        except Exception as exc:
            raise CorruptObject(f'unable to decode key "{key}": {exc}') from exc

    def decode_stored(self, key: str, data: bytes) -> Object:
        """A fresh object (without resourceVersion) from stored bytes; CorruptObject when the
        bytes cannot be transformed or decoded."""
        return self.decode_plain(key, self._plain(key, data)[0])

    def _encode(self, key: str, obj: Object) -> tuple[bytes, bytes]:
        """(plain, stored) bytes of ``obj`` for ``key``."""
        plain = self._codec.encode(prepare_for_storage(obj))
        try:
            stored = self._transformer.to_storage(plain, key)
        except Exception as exc:
            raise InternalError(f'unable to transform key "{key}": {exc}') from exc
        return plain, stored

    @staticmethod
    def _expiry_ms(ttl_seconds: int | None) -> int:
        if ttl_seconds is None or ttl_seconds == 0:
            return 0
        if ttl_seconds < 0:
            raise BadRequest(f"ttl must not be negative, got {ttl_seconds}")
        return time.time_ns() // 1_000_000 + int(ttl_seconds * 1000)

    def _state(self, key: str, found: tuple[int, bytes] | None) -> _State:
        if found is None:
            return _ABSENT
        revision, data = found
        plain, stale = self._plain(key, data)
        obj = with_resource_version(self.decode_plain(key, plain), revision)
        return _State(obj, revision, plain, stale)

    def _read_state(self, key: str) -> _State:
        with self.backend.read() as txn:
            found = rec.get_current(txn, key.encode(), self.backend.now_ms())
        return self._state(key, found)

    def _state_from_object(self, obj: Object) -> _State:
        plain = self._codec.encode(prepare_for_storage(obj))
        return _State(obj, object_resource_version(obj), plain)

    def _put(self, key: str, plain: bytes, request: PutRequest) -> tuple[Outcome, Object | None]:
        return run_writes(self._put_steps(key, plain, request), self.backend)

    def _put_steps(
        self, key: str, plain: bytes, request: PutRequest
    ) -> Generator[Request, Outcome, tuple[Outcome, Object | None]]:
        """Have ``request`` written; return its outcome and the stored object (``plain``
        decoded, with its new resourceVersion), or None for the object on a conflict.

        A write that is likely alone in its commit (:attr:`LmdbBackend.lone_writes`) is decoded
        before it is queued, while this thread is running: decoding after the commit means
        decoding right after a wake-up, and on the shared dev VM the first tens of microseconds
        of a thread woken from a ~0.5 ms wait run at about half speed (decode 53 us there,
        28 us here). Sequential creates gain 2-5% (paired runs). With company the decode waits
        for the outcome: done early, it delays the enqueue the group commit is waiting for
        (16 creators: 12-19% fewer creates/s), so it is deferred instead: run while the
        commit's fsync is in flight (:mod:`kstore.storage._lmdb_ahead`), or here after the
        wake-up if that thread has not reached it. Errors come in the order of a plain
        write-then-decode: the write's own error, then the conflict, then a decode failure
        (CorruptObject) of an object that was nevertheless written."""
        decoded: Object | None = None
        failure: CorruptObject | None = None
        if self.backend.lone_writes:
            try:
                decoded = self.decode_plain(key, plain)
            except CorruptObject as exc:
                failure = exc
        else:
            request.defer(lambda: self.decode_plain(key, plain))
        outcome = yield request
        if outcome.conflict:
            return outcome, None
        if failure is not None:
            raise failure
        stored: Object = request.ahead_result() if decoded is None else decoded
        return outcome, with_resource_version(stored, outcome.revision)

    # -- Storage ---------------------------------------------------------------------------

    def create(self, key: str, obj: Object, *, ttl_seconds: int | None = None) -> Object:
        key, plain, request = self.create_request(key, obj, ttl_seconds)
        _outcome, stored_obj = self._put(key, plain, request)
        if stored_obj is None:
            raise self.already_exists(key)
        return stored_obj

    def create_request(
        self, key: str, obj: Object, ttl_seconds: int | None
    ) -> tuple[str, bytes, PutRequest]:
        """The storage key, the plain bytes and the write request of a create."""
        key = self._key(key, recursive=False)
        if object_resource_version(obj) != 0:
            raise BadRequest("resourceVersion should not be set on objects to be created")
        plain, stored = self._encode(key, obj)
        request = PutRequest(
            key, stored, expected=0, expiry_ms=self._expiry_ms(ttl_seconds), create=True
        )
        return key, plain, request

    @property
    def aio(self) -> LmdbAsyncStorage:
        """This storage's verbs as coroutines (see :func:`kstore.storage.aio.as_async`)."""
        from kstore.storage._lmdb_aio import LmdbAsyncStorage

        return LmdbAsyncStorage(self)

    def get(self, key: str, opts: GetOptions = _GET_DEFAULTS) -> Object:
        key = self._key(key, recursive=False)
        minimum = parse_list_resource_version(opts.resource_version)
        with self.backend.read() as txn:
            current = rec.revision_of(txn)
            found = rec.get_current(txn, key.encode(), self.backend.now_ms())
        if minimum > current:
            raise TooLargeResourceVersion(minimum, current)
        if found is None:
            if opts.ignore_not_found:
                return {}
            raise self._not_found(key)
        return with_resource_version(self.decode_stored(key, found[1]), found[0])

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
        steps = self.update_steps(
            key, try_update, ignore_not_found, preconditions, cached_existing, ttl_seconds
        )
        return run_writes(steps, self.backend)

    def update_steps(
        self,
        key: str,
        try_update: TryUpdate,
        ignore_not_found: bool,
        preconditions: Preconditions | None,
        cached_existing: Object | None,
        ttl_seconds: int | None,
    ) -> WriteSteps:
        """guaranteed_update as a generator of the writes it needs committed: it yields each
        request and is sent its outcome (:func:`run_writes`, or awaited on an event loop by
        :mod:`._lmdb_aio`); reads and ``try_update`` run where it runs."""
        key = self._key(key, recursive=False)
        name = name_of_key(key)
        if cached_existing is not None:
            state, current = self._state_from_object(cached_existing), False
        else:
            state, current = self._read_state(key), True
        while True:
            if state.revision == 0 and not ignore_not_found:
                raise self._not_found(key)
            try:
                check_preconditions(preconditions, state.obj, resource=self._resource, name=name)
            except Conflict:
                if current:
                    raise
                state, current = self._read_state(key), True
                continue
            try:
                new_obj = try_update(state.obj)
            except Exception:
                if current:
                    raise
                fresh = self._read_state(key)
                if fresh.revision == state.revision:
                    raise
                state, current = fresh, True
                continue
            plain, stored = self._encode(key, new_obj)
            if state.revision and not state.stale and plain == state.plain:
                if not current:
                    # The suggestion may be stale: compare with what is really stored.
                    state, current = self._read_state(key), True
                    continue
                return with_resource_version(self.decode_plain(key, plain), state.revision)
            outcome, stored_obj = yield from self._put_steps(
                key,
                plain,
                PutRequest(
                    key, stored, expected=state.revision, expiry_ms=self._expiry_ms(ttl_seconds)
                ),
            )
            if stored_obj is None:
                state, current = self._state(key, outcome.current), True
                continue
            return stored_obj

    def delete(
        self,
        key: str,
        *,
        preconditions: Preconditions | None = None,
        validate_deletion: Callable[[Object], None] | None = None,
        cached_existing: Object | None = None,
    ) -> Object:
        steps = self.delete_steps(key, preconditions, validate_deletion, cached_existing)
        return run_writes(steps, self.backend)

    def delete_steps(
        self,
        key: str,
        preconditions: Preconditions | None,
        validate_deletion: Callable[[Object], None] | None,
        cached_existing: Object | None,
    ) -> WriteSteps:
        """delete as a generator of the writes it needs committed (see :meth:`update_steps`)."""
        key = self._key(key, recursive=False)
        name = name_of_key(key)
        if cached_existing is not None:
            state, current = self._state_from_object(cached_existing), False
        else:
            state, current = self._read_state(key), True
            if state.revision == 0:
                raise self._not_found(key)
        while True:
            try:
                check_preconditions(preconditions, state.obj, resource=self._resource, name=name)
                if validate_deletion is not None:
                    validate_deletion(state.obj)
            except Exception:
                if current:
                    raise
                fresh = self._read_state(key)
                if fresh.revision == 0:
                    raise self._not_found(key) from None
                if fresh.revision == state.revision:
                    raise
                state, current = fresh, True
                continue
            outcome = yield DeleteRequest(key, expected=state.revision)
            if outcome.conflict:
                if outcome.current is None:
                    raise self._not_found(key)
                state, current = self._state(key, outcome.current), True
                continue
            assert outcome.prev_value is not None
            return with_resource_version(
                self.decode_stored(key, outcome.prev_value), outcome.revision
            )

    def list(self, key: str, opts: ListOptions = _LIST_DEFAULTS) -> ListResult:
        recursive = opts.recursive
        prefix = self._key(key, recursive=recursive)
        exact_revision = 0
        minimum = 0
        start = prefix
        continue_key = ""
        if recursive and opts.continue_token:
            try:
                token = decode_continue(opts.continue_token, prefix)
            except InvalidContinueToken as exc:
                raise BadRequest(f"invalid continue token: {exc}") from None
            if opts.resource_version not in ("", "0"):
                raise BadRequest("specifying resource version is not allowed when using continue")
            exact_revision = max(token.resource_version, 0)
            start = continue_key = token.start_key
        elif opts.resource_version:
            parsed = parse_list_resource_version(opts.resource_version)
            match = opts.resource_version_match
            if match == ResourceVersionMatch.NOT_OLDER_THAN:
                minimum = parsed
            elif match == ResourceVersionMatch.EXACT:
                exact_revision = parsed
            elif match == ResourceVersionMatch.UNSET:
                if recursive and opts.limit > 0 and parsed > 0:
                    exact_revision = parsed
                else:
                    minimum = parsed
            else:
                raise BadRequest(f"unknown ResourceVersionMatch value: {match}")
        if not recursive:
            return list_one(self, prefix, opts, exact_revision, minimum)
        return Lister(self, prefix, opts, exact_revision, minimum, start, continue_key).run()

    def matches(self, obj: Object, opts: ListOptions) -> bool:
        """Whether ``obj`` passes the label and field selectors of ``opts``."""
        if opts.label_selector.empty() and opts.field_selector.empty():
            return True
        labels, fields = self._config.get_attrs(obj)
        return opts.label_selector.matches(labels) and opts.field_selector.matches(fields)

    def watch(self, key: str, opts: ListOptions = _LIST_DEFAULTS) -> Watcher:
        recursive = opts.recursive
        key = self._key(key, recursive=recursive)
        revision = parse_resource_version(opts.resource_version)
        initial = opts.send_initial_events
        hub = self.backend.hub
        if initial is True or revision == 0 or revision > hub.last_revision:
            # Another process sharing the store may have committed what this hub has not yet
            # published: a watch from "now", or with an initial state, must start at the
            # store's now (a write the other process acknowledged before the watch belongs to
            # that state, not to the events after it), and one from a revision must find that
            # revision in the hub.
            self.backend.sync()
        subscription = hub.subscribe(key, recursive)
        start = subscription.start_revision
        if initial is True or (initial is None and revision == 0):
            if revision > start:
                subscription.close()
                raise TooLargeResourceVersion(revision, start)
            plan = StartPlan.INITIAL_STATE
            start_revision = start
        elif revision == 0:
            plan, start_revision = StartPlan.REPLAY, start
        else:
            compacted = self.backend.compacted_revision
            if revision < compacted:
                subscription.close()
                return error_watcher(Expired(f"too old resource version: {revision} ({compacted})"))
            plan, start_revision = StartPlan.REPLAY, revision
        return HubWatcher(
            hub=hub,
            subscription=subscription,
            source=self,
            decode=self.decode_stored,
            get_attrs=self._config.get_attrs,
            label_selector=opts.label_selector,
            field_selector=opts.field_selector,
            plan=plan,
            start_revision=start_revision,
            initial_events_bookmark=initial is True and opts.allow_bookmarks,
            progress_notify_interval=(
                self.backend.progress_notify_interval if opts.progress_notify else None
            ),
        )

    def stats(self) -> Stats:
        start = self._prefix.encode()
        end = rec.prefix_end(start)
        with self.backend.read() as txn:
            count, total = rec.current_sizes(txn, start, end, self.backend.now_ms())
        average = total // count if count else 0
        return Stats(object_count=count, estimated_average_object_size_bytes=average)

    def current_revision(self) -> int:
        return self.backend.current_revision()

    def last_change_revision(self, key: str) -> int:
        """A revision at or after the last change under the prefix ``key`` that any writer
        has been answered for (see :class:`kstore.cache.freshness.LocalChangeClock`): the
        changes of every process sharing the store are first brought into this process's
        hub (one read when there are none, :meth:`LmdbBackend.sync`)."""
        self.backend.sync()
        return self.backend.hub.last_change(key)

    # -- HistorySource (for watchers) ------------------------------------------------------

    def read_state(
        self, key: str, recursive: bool, revision: int, after: str | None, limit: int
    ) -> tuple[_StateItems, bool]:
        key_bytes = key.encode()
        with self.backend.read() as txn:
            compacted = rec.meta_int(txn, rec.META_COMPACTED)
            if revision < compacted:
                raise Expired(f"too old resource version: {revision} ({compacted})")
            current = rec.revision_of(txn)
            now = self.backend.now_ms()
            if not recursive:
                if after is not None:
                    return [], False
                if revision == current:
                    found = rec.get_current(txn, key_bytes, now)
                else:
                    found = rec.get_at(txn, key_bytes, revision, now)
                return ([(key, found[0], found[1])] if found else []), False
            start = after.encode() + b"\x00" if after is not None else key_bytes
            end = rec.prefix_end(key_bytes)
            if revision == current:
                items, more = rec.scan_current(txn, start, end, limit, now)
            else:
                items, more = rec.scan_at(txn, start, end, revision, limit, now)
        return [(k.decode(), r, v) for k, r, v in items], more

    def read_events(
        self, key: str, recursive: bool, after_revision: int, upto_revision: int, limit: int
    ) -> tuple[_Events, int]:
        with self.backend.read() as txn:
            compacted = rec.meta_int(txn, rec.META_COMPACTED)
            if after_revision < compacted:
                raise Expired(f"too old resource version: {after_revision} ({compacted})")
            return rec.read_events(
                txn, key.encode(), recursive, after_revision, upto_revision, limit
            )
