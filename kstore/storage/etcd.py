"""The etcd backend: kstore's storage contract on a real etcd cluster, as Kubernetes stores it.

Keys are Kubernetes' (``<prefix>/<resource prefix>/<namespace>/<name>``, prefix ``/registry``
by default, resource prefixes as :func:`kubernetes_resource_prefix` gives them), values are
the resource's storage encoding after its value transformer (whose authenticated data is the
full etcd key), and an object's resourceVersion is its etcd ``mod_revision``, so kstore and
kube-apiserver can read each other's etcd.

Each operation is Kubernetes' etcd3 store (``pkg/storage/etcd3/store.go``):

- **create**: one transaction ``If(mod_revision(key) == 0) Then(Put)``; AlreadyExists otherwise;
  writes send hand-encoded transactions (:mod:`._etcd_wire`) and decode their result from the
  bytes they write while the transaction is in flight;
- **guaranteed_update**: start from the caller's cached object or a read, apply ``try_update``,
  then ``If(mod_revision == expected) Then(Put) Else(Get)``: one round trip when the expected
  revision is right, and on conflict the else-branch already holds the current value for the
  retry. Writing bytes identical to the stored ones (and not stale) is skipped;
- **delete**: ``If(mod_revision == expected) Then(Delete) Else(Get)`` with preconditions and
  ``validate_deletion`` checked on the state it deletes; the result is the last state with the
  delete's revision;
- **TTL**: leases shared between objects with close TTLs (:mod:`._etcd_leases`);
- **list**: pages of a range pinned at one revision, Kubernetes continue tokens, exact and
  not-older-than resourceVersions, 410 Expired below the compacted revision;
- **watch**: one etcd watch stream per watch, resumed across members (:mod:`._etcd_watch`);
- **freshness probe** for the watch cache (``confirm_unchanged``): one quorum range over a
  prefix says whether anything there was written since a revision, so consistent reads are
  served from the cache without etcd 3.4's unreliable progress requests;
- **compaction**: Kubernetes' compactor on a timer and on demand (:mod:`._etcd_compactor`).

create, get, guaranteed_update and delete are written once as steps (:mod:`._etcd_steps`)
and run either blocking or as coroutines on the event loop's ``grpc.aio`` client
(:class:`EtcdAsyncStorage`, what :func:`kstore.storage.aio.as_async` gives for this backend).

This module and its private ``_etcd_*`` helpers are the only ones that talk to etcd; the gRPC
client with its fail-over and retry policy is :mod:`._etcd_client`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Generator
from typing import Any

from etcd3 import etcdrpc

from kstore.api.gvk import Object
from kstore.errors import (
    AlreadyExists,
    BadRequest,
    Conflict,
    CorruptObject,
    Expired,
    InternalError,
    KStoreError,
    NotFound,
    TooLargeResourceVersion,
)
from kstore.storage._etcd_baseline import RawEtcdBaseline
from kstore.storage._etcd_client import (
    EtcdClient,
    FutureRevisionError,
    LeaseNotFoundError,
    prefix_range_end,
)
from kstore.storage._etcd_compactor import Compactor
from kstore.storage._etcd_config import EtcdConfig
from kstore.storage._etcd_layout import kubernetes_resource_prefix
from kstore.storage._etcd_leases import LeaseManager
from kstore.storage._etcd_list import read_list
from kstore.storage._etcd_settle import WriteOutcome, guarded_write
from kstore.storage._etcd_snapshot import EtcdSnapshotSource, EtcdSnapshotTarget
from kstore.storage._etcd_steps import Lease, Range, Step, Steps, Txn, run_async, run_blocking
from kstore.storage._etcd_watch import EtcdWatcher, WatchStart
from kstore.storage._etcd_wire import delete_txn, put_txn
from kstore.storage._watch_hub import error_watcher
from kstore.storage.interface import (
    Backend,
    GetOptions,
    ListOptions,
    ListResult,
    Preconditions,
    ResourceStorageConfig,
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
    prepare_for_storage,
    with_resource_version,
)

__all__ = [
    "EtcdAsyncStorage",
    "EtcdBackend",
    "EtcdConfig",
    "EtcdSnapshotSource",
    "EtcdSnapshotTarget",
    "EtcdStorage",
    "RawEtcdBaseline",
    "kubernetes_resource_prefix",
]

_WATCH_EXPIRED = "The resourceVersion for the provided watch is too old."
_GET_DEFAULTS = GetOptions()
_LIST_DEFAULTS = ListOptions()


class _State:
    """An object as a write loop knows it: decoded, its revision, its plain (untransformed)
    bytes, and whether those were reported stale by the transformer."""

    __slots__ = ("data", "obj", "rev", "stale")

    def __init__(self, obj: Object, rev: int, data: bytes, stale: bool) -> None:
        self.obj = obj
        self.rev = rev
        self.data = data
        self.stale = stale


class _DecodeAhead:
    """The decode of the bytes a write sends, run while its transaction is in flight (the
    result is decoded from them, as Kubernetes' store does): called as the client's
    ``meanwhile``, at most once; an error is kept for :meth:`result`, never raised there."""

    __slots__ = ("_data", "_decode", "_error", "_obj")

    def __init__(self, decode: Callable[[bytes], Object], data: bytes) -> None:
        self._decode = decode
        self._data = data
        self._obj: Object | None = None
        self._error: Exception | None = None

    def __call__(self) -> None:
        if self._obj is None and self._error is None:
            try:
                self._obj = self._decode(self._data)
            except Exception as exc:
                self._error = exc

    def result(self, revision: int) -> Object:
        """The decoded object with ``revision`` (decoding now if not done yet)."""
        self()
        if self._error is not None:
            raise self._error
        assert self._obj is not None
        return with_resource_version(self._obj, revision)


def _path_prefix(prefix: str) -> str:
    # Kubernetes: path.Join("/", prefix) + "/", so "registry", "/registry/" and "/registry"
    # all give "/registry/".
    cleaned = "/".join(part for part in prefix.split("/") if part)
    return "/" + cleaned + "/" if cleaned else "/"


class EtcdStorage(Storage):
    """One resource stored in etcd (see the module docstring). Thread-safe."""

    def __init__(self, backend: EtcdBackend, config: ResourceStorageConfig) -> None:
        self._backend = backend
        self._client = backend._client
        self._config = config
        self._codec = config.codec
        self._transformer = config.transformer
        self._get_attrs = config.get_attrs
        self._resource_prefix = resource_prefix_with_slash(config.resource_prefix)
        self._resource = qualified_resource(config.resource_prefix)
        self._kind, _, self._group = self._resource.partition(".")
        self._path_prefix = backend._path_prefix

    # -- keys, values, errors ------------------------------------------------------------------

    def _etcd_key(self, key: str, *, recursive: bool) -> str:
        prepared = prepare_key(key, self._resource_prefix, recursive=recursive)
        return self._path_prefix + prepared[1:]

    def _not_found(self, key: str) -> NotFound:
        name = name_of_key(key)
        return NotFound(
            f'{self._resource} "{name}" not found', kind=self._kind, group=self._group, name=name
        )

    def _encode(self, obj: Object) -> bytes:
        try:
            return self._codec.encode(prepare_for_storage(obj))
        except KStoreError:
            raise
        except Exception as exc:
            raise InternalError(f"unable to encode object: {exc}") from exc

    def _to_storage(self, data: bytes, etcd_key: str) -> bytes:
        try:
            return self._transformer.to_storage(data, etcd_key)
        except Exception as exc:
            raise InternalError(f'unable to transform key "{etcd_key}": {exc}') from exc

    def _from_storage(self, value: bytes, etcd_key: str) -> tuple[bytes, bool]:
        try:
            return self._transformer.from_storage(value, etcd_key)
        except Exception as exc:
            raise CorruptObject(f'unable to transform key "{etcd_key}": {exc}') from exc

    def decode_stored(self, key: str, data: bytes) -> Object:
        """A fresh object (without resourceVersion) from the bytes stored at ``key`` (without
        the etcd prefix); CorruptObject when they cannot be transformed or decoded."""
        etcd_key = self._etcd_key(key, recursive=False)
        return self._decode_plain(self._from_storage(data, etcd_key)[0], etcd_key)

    def _decode(self, data: bytes, etcd_key: str, revision: int) -> Object:
        return with_resource_version(self._decode_plain(data, etcd_key), revision)

    def _decode_plain(self, data: bytes, etcd_key: str) -> Object:
        try:
            return self._codec.decode(data)
        except Exception as exc:
            raise CorruptObject(f'unable to decode key "{etcd_key}": {exc}') from exc

    def _decode_ahead(self, data: bytes, etcd_key: str) -> _DecodeAhead:
        return _DecodeAhead(lambda plain: self._decode_plain(plain, etcd_key), data)

    def decode_value(self, key: bytes, value: bytes) -> Object:
        """Stored bytes of ``key`` as an object (without a resourceVersion): for watches."""
        etcd_key = key.decode("utf-8", "surrogateescape")
        data, _ = self._from_storage(value, etcd_key)
        return self._decode(data, etcd_key, 0)

    def _state_from_kv(self, kv: Any, etcd_key: str) -> _State:
        rev = int(kv.mod_revision)
        data, stale = self._from_storage(kv.value, etcd_key)
        return _State(self._decode(data, etcd_key, rev), rev, data, stale)

    def _state_from_kvs(self, kvs: Any, etcd_key: str, key: str, ignore_not_found: bool) -> _State:
        if kvs:
            return self._state_from_kv(kvs[0], etcd_key)
        if ignore_not_found:
            return _State({}, 0, b"", False)
        raise self._not_found(key)

    def _read_state(
        self, etcd_key: str, key: str, ignore_not_found: bool
    ) -> Generator[Step, Any, _State]:
        response = yield Range(etcd_key.encode())
        return self._state_from_kvs(response.kvs, etcd_key, key, ignore_not_found)

    def _state_from_object(self, obj: Object) -> _State:
        return _State(obj, object_resource_version(obj), self._encode(obj), False)

    def _put_txn(
        self,
        etcd_key: bytes,
        value: bytes,
        expected_rev: int,
        ttl: int | None,
        *,
        read: bool,
        deadline: float,
        meanwhile: Callable[[], None] | None = None,
    ) -> Generator[Step, Any, WriteOutcome]:
        """``If(mod_revision == expected_rev) Then(Put) [Else(Get)]``, with a lease for
        ``ttl``, an unknown outcome settled (:mod:`._etcd_settle`); a lease that vanished
        before the put is replaced once. ``meanwhile`` runs while the transaction is in
        flight."""
        for attempt in range(2):
            lease = (yield Lease(ttl)) if ttl else 0
            request = put_txn(etcd_key, value, expected_rev, lease, read=read)
            try:
                return (
                    yield from guarded_write(
                        Txn(request, meanwhile, deadline),
                        key=etcd_key,
                        expected_revision=expected_rev,
                        written=value,
                        deadline=deadline,
                    )
                )
            except LeaseNotFoundError:
                self._backend._leases.forget(lease)
                if attempt:
                    raise InternalError(f"etcd: lease {lease} vanished twice") from None
        raise AssertionError("unreachable")

    def _run(self, steps: Steps) -> Object:
        return run_blocking(steps, self._client, self._backend._leases)

    @property
    def aio(self) -> EtcdAsyncStorage:
        """This storage's verbs as coroutines, native on ``grpc.aio`` (see
        :func:`kstore.storage.aio.as_async`)."""
        return EtcdAsyncStorage(self)

    # -- Storage -------------------------------------------------------------------------------

    def create(self, key: str, obj: Object, *, ttl_seconds: int | None = None) -> Object:
        return self._run(self._create(key, obj, ttl_seconds))

    def get(self, key: str, opts: GetOptions = _GET_DEFAULTS) -> Object:
        return self._run(self._get(key, opts))

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
        return self._run(
            self._update(
                key, try_update, ignore_not_found, preconditions, cached_existing, ttl_seconds
            )
        )

    def delete(
        self,
        key: str,
        *,
        preconditions: Preconditions | None = None,
        validate_deletion: Callable[[Object], None] | None = None,
        cached_existing: Object | None = None,
    ) -> Object:
        return self._run(self._delete(key, preconditions, validate_deletion, cached_existing))

    # -- the verbs as steps (:mod:`._etcd_steps`) ----------------------------------------------

    def _deadline(self) -> float:
        """When a write started now must have been answered (settling included)."""
        return time.monotonic() + self._backend._config.request_timeout

    def _create(self, key: str, obj: Object, ttl_seconds: int | None) -> Steps:
        deadline = self._deadline()
        etcd_key = self._etcd_key(key, recursive=False)
        if object_resource_version(obj):
            raise BadRequest("resourceVersion should not be set on objects to be created")
        data = self._encode(obj)
        value = self._to_storage(data, etcd_key)
        result = self._decode_ahead(data, etcd_key)
        outcome = yield from self._put_txn(
            etcd_key.encode(),
            value,
            0,
            ttl_seconds,
            read=False,
            deadline=deadline,
            meanwhile=result,
        )
        if not outcome.succeeded:
            name = name_of_key(key)
            raise AlreadyExists(
                f'{self._resource} "{name}" already exists',
                kind=self._kind,
                group=self._group,
                name=name,
            )
        return result.result(outcome.revision)

    def _get(self, key: str, opts: GetOptions) -> Steps:
        etcd_key = self._etcd_key(key, recursive=False)
        minimum = parse_list_resource_version(opts.resource_version) if opts.resource_version else 0
        response = yield Range(etcd_key.encode())
        current = int(response.header.revision)
        if minimum > current:
            raise TooLargeResourceVersion(minimum, current)
        if not response.kvs:
            if opts.ignore_not_found:
                return {}
            raise self._not_found(key)
        return self._state_from_kv(response.kvs[0], etcd_key).obj

    def _update(
        self,
        key: str,
        try_update: TryUpdate,
        ignore_not_found: bool,
        preconditions: Preconditions | None,
        cached_existing: Object | None,
        ttl_seconds: int | None,
    ) -> Steps:
        deadline = self._deadline()
        etcd_key = self._etcd_key(key, recursive=False)
        raw_key = etcd_key.encode()
        name = name_of_key(key)
        if cached_existing is not None:
            state = self._state_from_object(cached_existing)
            current = False
        else:
            state = yield from self._read_state(etcd_key, key, ignore_not_found)
            current = True
        while True:
            try:
                check_preconditions(preconditions, state.obj, resource=self._resource, name=name)
            except Conflict:
                if current:
                    raise
                # The cached copy may be stale: decide on the current state.
                state = yield from self._read_state(etcd_key, key, ignore_not_found)
                current = True
                continue
            try:
                new = try_update(state.obj)
            except Exception:
                if current:
                    raise
                cached_rev = state.rev
                state = yield from self._read_state(etcd_key, key, ignore_not_found)
                current = True
                if state.rev == cached_rev:
                    raise
                continue
            data = self._encode(new)
            if not state.stale and data == state.data:
                if not current:
                    # Only the current bytes may short-circuit the write.
                    state = yield from self._read_state(etcd_key, key, ignore_not_found)
                    current = True
                    if data != state.data:
                        continue
                if not state.stale:
                    return self._decode(state.data, etcd_key, state.rev)
            value = self._to_storage(data, etcd_key)
            result = self._decode_ahead(data, etcd_key)
            outcome = yield from self._put_txn(
                raw_key,
                value,
                state.rev,
                ttl_seconds,
                read=True,
                deadline=deadline,
                meanwhile=result,
            )
            if not outcome.succeeded:
                state = self._state_from_kvs(outcome.current, etcd_key, key, ignore_not_found)
                current = True
                continue
            return result.result(outcome.revision)

    def _delete(
        self,
        key: str,
        preconditions: Preconditions | None,
        validate_deletion: Callable[[Object], None] | None,
        cached_existing: Object | None,
    ) -> Steps:
        deadline = self._deadline()
        etcd_key = self._etcd_key(key, recursive=False)
        raw_key = etcd_key.encode()
        name = name_of_key(key)
        if cached_existing is not None:
            state = self._state_from_object(cached_existing)
            current = False
        else:
            state = yield from self._read_state(etcd_key, key, False)
            current = True
        while True:
            try:
                check_preconditions(preconditions, state.obj, resource=self._resource, name=name)
                if validate_deletion is not None:
                    validate_deletion(state.obj)
            except Exception:
                if current:
                    raise
                cached_rev = state.rev
                state = yield from self._read_state(etcd_key, key, False)
                current = True
                if state.rev == cached_rev:
                    raise
                continue
            outcome = yield from guarded_write(
                Txn(delete_txn(raw_key, state.rev), None, deadline),
                key=raw_key,
                expected_revision=state.rev,
                written=None,
                deadline=deadline,
            )
            if not outcome.succeeded:
                state = self._state_from_kvs(outcome.current, etcd_key, key, False)
                current = True
                continue
            return self._decode(state.data, etcd_key, outcome.revision)

    def list(self, key: str, opts: ListOptions = _LIST_DEFAULTS) -> ListResult:
        etcd_prefix = self._etcd_key(key, recursive=opts.recursive)
        filtered = not (opts.label_selector.empty() and opts.field_selector.empty())

        def decode(kv: Any) -> Object:
            return self._state_from_kv(kv, kv.key.decode("utf-8", "surrogateescape")).obj

        def matches(obj: Object) -> bool:
            return self._matches_selectors(obj, opts)

        return read_list(
            self._client,
            etcd_prefix,
            opts,
            decode=decode,
            matches=matches if filtered else None,
            current_revision=self.current_revision,
        )

    def _matches_selectors(self, obj: Object, opts: ListOptions) -> bool:
        labels, fields = self._get_attrs(obj)
        return opts.label_selector.matches(labels) and opts.field_selector.matches(fields)

    def watch(self, key: str, opts: ListOptions = _LIST_DEFAULTS) -> Watcher:
        recursive = opts.recursive
        etcd_key = self._etcd_key(key, recursive=recursive)
        revision = parse_list_resource_version(opts.resource_version)
        send_initial = opts.send_initial_events
        try:
            if revision == 0 and send_initial is None:
                # Legacy: the state now as ADDED events, then the changes after it.
                start = WatchStart(initial_state=True)
            elif send_initial:
                if revision > 0:
                    current = self.current_revision()
                    if revision > current:
                        raise TooLargeResourceVersion(revision, current)
                start = WatchStart(initial_state=True, initial_bookmark=opts.allow_bookmarks)
            elif revision == 0:
                # "From now" is decided before watch() returns: a write after it is delivered.
                start = WatchStart(revision=self.current_revision())
            elif revision < self._backend.compacted_revision:
                # The state at the watch's revision is gone: etcd would still replay from the
                # compaction point, which would hide that the watcher missed history.
                raise Expired(_WATCH_EXPIRED)
            else:
                start = WatchStart(revision=revision)
        except (TooLargeResourceVersion, Expired) as exc:
            return error_watcher(exc)
        raw_key = etcd_key.encode()
        range_end = prefix_range_end(raw_key) if recursive else b""
        return EtcdWatcher(
            client=self._client,
            config=self._backend._config,
            source=_WatchView(self, opts, range_end),
            key=raw_key,
            range_end=range_end,
            start=start,
            filtered=not (opts.label_selector.empty() and opts.field_selector.empty()),
            progress_notify=opts.progress_notify,
        )

    def stats(self) -> Stats:
        prefix = (self._path_prefix + self._resource_prefix[1:]).encode()
        response = self._client.range(
            etcdrpc.RangeRequest(key=prefix, range_end=prefix_range_end(prefix), count_only=True)
        )
        return Stats(object_count=int(response.count))

    def current_revision(self) -> int:
        return self._backend.current_revision()

    def confirm_unchanged(self, key: str, revision: int, count: int) -> tuple[int, bool]:
        """The watch cache's freshness probe (:mod:`kstore.cache.freshness`), in one
        linearizable Range over the prefix (or the one key): ``min_mod_revision`` keeps only
        the keys written after ``revision`` (etcd drops the limit and reads the whole range
        when such a filter is set, and prunes after counting, so ``count`` stays the number
        of keys in the range); ``keys_only`` leaves the values on the server."""
        recursive = key.endswith("/")
        start = self._etcd_key(key, recursive=recursive).encode()
        response = self._client.range(
            etcdrpc.RangeRequest(
                key=start,
                range_end=prefix_range_end(start) if recursive else b"",
                keys_only=True,
                min_mod_revision=revision + 1,
            )
        )
        current = int(response.header.revision)
        return current, not response.kvs and int(response.count) == count


class EtcdAsyncStorage:
    """An :class:`EtcdStorage`'s verbs as coroutines (an
    :class:`~kstore.storage.aio.AsyncStorage`): create, get, guaranteed_update and delete run
    the same steps as the blocking verbs on the event loop's ``grpc.aio`` client
    (:mod:`._etcd_aio`), so many of them stay in flight from one thread, etcd's fastest
    client form; list runs in a worker thread (its pages are a loop of blocking reads)."""

    __slots__ = ("_storage",)

    def __init__(self, storage: EtcdStorage) -> None:
        self._storage = storage

    @property
    def storage(self) -> EtcdStorage:
        """The blocking storage behind this one (for watch, stats, current_revision)."""
        return self._storage

    def _run(self, steps: Steps) -> Coroutine[Any, Any, Object]:
        # The verbs return run_async's coroutine itself (one coroutine frame less per call).
        storage = self._storage
        return run_async(steps, storage._client, storage._backend._leases)

    def create(
        self, key: str, obj: Object, *, ttl_seconds: int | None = None
    ) -> Coroutine[Any, Any, Object]:
        return self._run(self._storage._create(key, obj, ttl_seconds))

    def get(self, key: str, opts: GetOptions = _GET_DEFAULTS) -> Coroutine[Any, Any, Object]:
        return self._run(self._storage._get(key, opts))

    async def list(self, key: str, opts: ListOptions = _LIST_DEFAULTS) -> ListResult:
        return await asyncio.to_thread(self._storage.list, key, opts)

    def guaranteed_update(
        self,
        key: str,
        try_update: TryUpdate,
        *,
        ignore_not_found: bool = False,
        preconditions: Preconditions | None = None,
        cached_existing: Object | None = None,
        ttl_seconds: int | None = None,
    ) -> Coroutine[Any, Any, Object]:
        return self._run(
            self._storage._update(
                key, try_update, ignore_not_found, preconditions, cached_existing, ttl_seconds
            )
        )

    def delete(
        self,
        key: str,
        *,
        preconditions: Preconditions | None = None,
        validate_deletion: Callable[[Object], None] | None = None,
        cached_existing: Object | None = None,
    ) -> Coroutine[Any, Any, Object]:
        return self._run(
            self._storage._delete(key, preconditions, validate_deletion, cached_existing)
        )


class _WatchView:
    """A storage as one watch sees it: its selectors and its key range (a WatchSource)."""

    def __init__(self, storage: EtcdStorage, opts: ListOptions, range_end: bytes) -> None:
        self._storage = storage
        self._opts = opts
        self._range_end = range_end

    def decode_value(self, key: bytes, value: bytes) -> Object:
        return self._storage.decode_value(key, value)

    def matches(self, obj: Object) -> bool:
        return self._storage._matches_selectors(obj, self._opts)

    def range_page(self, start: bytes, revision: int, limit: int) -> Any:
        request = etcdrpc.RangeRequest(
            key=start, range_end=self._range_end, limit=limit, revision=revision
        )
        return self._storage._client.range(request)

    def observe_compacted(self, revision: int) -> None:
        self._storage._backend._compactor.observe(revision)


class EtcdBackend(Backend):
    """kstore on an etcd cluster: resources share the cluster's one revision and history."""

    def __init__(self, config: EtcdConfig | None = None) -> None:
        self._config = config or EtcdConfig()
        self._path_prefix = _path_prefix(self._config.prefix)
        self._client = EtcdClient(self._config)
        self._leases = LeaseManager(
            self._client,
            reuse_duration_seconds=self._config.lease_reuse_duration_seconds,
            max_object_count=self._config.lease_max_object_count,
        )
        self._compactor = Compactor(self._client, self._config.compaction_interval)
        self._closed = False

    @property
    def config(self) -> EtcdConfig:
        return self._config

    @property
    def current_endpoint(self) -> str:
        """``host:port`` of the member that requests go to now (it changes on fail-over)."""
        return str(self._client.current_endpoint().target)

    def storage_for(self, config: ResourceStorageConfig) -> Storage:
        return EtcdStorage(self, config)

    def current_revision(self) -> int:
        """The cluster's revision, from a linearizable read (as Kubernetes'
        ``GetCurrentResourceVersion``)."""
        response = self._client.range(
            etcdrpc.RangeRequest(key=self._path_prefix.encode(), count_only=True)
        )
        revision = int(response.header.revision)
        if revision <= 0:
            raise InternalError("the current resource version must be greater than 0")
        return revision

    def compact(self, revision: int | None = None) -> int:
        """Compact to ``revision`` now, or (None) run one round of the timer's
        compare-and-swap protocol; the compacted revision this process knows afterwards."""
        if revision is None:
            return self._compactor.run_round()
        if revision <= 0:
            raise BadRequest(f"invalid compaction revision {revision}")
        try:
            return self._compactor.compact_to(revision)
        except FutureRevisionError:
            raise TooLargeResourceVersion(revision, self.current_revision()) from None

    @property
    def compacted_revision(self) -> int:
        return self._compactor.compacted_revision

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._compactor.stop()
        self._client.close()
