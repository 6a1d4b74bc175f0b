"""Storage verbs as coroutines, for control planes written on asyncio.

:func:`as_async` gives any :class:`~kstore.storage.interface.Storage` an
:class:`AsyncStorage` face with the same verbs, arguments, results and errors. A backend
whose client can wait without a thread offers its own through an ``aio`` property, and that
is used: the etcd backend's runs on ``grpc.aio``, so one event loop keeps many requests in
flight (:mod:`kstore.storage._etcd_aio`); the LMDB store's writes await the writer
thread's commit on the loop (:mod:`kstore.storage._lmdb_aio`). Any other storage (a cache in
front of a backend, an embedder's own) runs each call in the loop's default executor: the
loop never blocks, at the cost of a thread hand-off per call.

Watches stay blocking or use the watch cache's own asyncio consumer
(:meth:`kstore.cache.watcher.CacheWatcher.next_async`); ``stats`` and ``current_revision``
are on :attr:`AsyncStorage.storage`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from kstore.api.gvk import Object
from kstore.storage.interface import (
    GetOptions,
    ListOptions,
    ListResult,
    Preconditions,
    Storage,
    TryUpdate,
)

__all__ = ["AsyncStorage", "ThreadedAsyncStorage", "as_async"]

_GET_DEFAULTS = GetOptions()
_LIST_DEFAULTS = ListOptions()


@runtime_checkable
class AsyncStorage(Protocol):
    """The verbs of :class:`~kstore.storage.interface.Storage`, awaited."""

    @property
    def storage(self) -> Storage:
        """The blocking storage behind this one."""
        ...

    async def create(self, key: str, obj: Object, *, ttl_seconds: int | None = None) -> Object: ...

    async def get(self, key: str, opts: GetOptions = _GET_DEFAULTS) -> Object: ...

    async def list(self, key: str, opts: ListOptions = _LIST_DEFAULTS) -> ListResult: ...

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
        """``try_update`` runs on the event loop's thread for native storages, in a worker
        thread otherwise: it must not block, and must not rely on either."""
        ...

    async def delete(
        self,
        key: str,
        *,
        preconditions: Preconditions | None = None,
        validate_deletion: Callable[[Object], None] | None = None,
        cached_existing: Object | None = None,
    ) -> Object: ...


class ThreadedAsyncStorage:
    """Any storage's verbs as coroutines, each call run in the loop's default executor (a
    backend's own face may override some verbs with native ones)."""

    __slots__ = ("_storage",)

    def __init__(self, storage: Storage) -> None:
        self._storage = storage

    @property
    def storage(self) -> Storage:
        return self._storage

    async def create(self, key: str, obj: Object, *, ttl_seconds: int | None = None) -> Object:
        return await asyncio.to_thread(self._storage.create, key, obj, ttl_seconds=ttl_seconds)

    async def get(self, key: str, opts: GetOptions = _GET_DEFAULTS) -> Object:
        return await asyncio.to_thread(self._storage.get, key, opts)

    async def list(self, key: str, opts: ListOptions = _LIST_DEFAULTS) -> ListResult:
        return await asyncio.to_thread(self._storage.list, key, opts)

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
        return await asyncio.to_thread(
            self._storage.guaranteed_update,
            key,
            try_update,
            ignore_not_found=ignore_not_found,
            preconditions=preconditions,
            cached_existing=cached_existing,
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
        return await asyncio.to_thread(
            self._storage.delete,
            key,
            preconditions=preconditions,
            validate_deletion=validate_deletion,
            cached_existing=cached_existing,
        )


def as_async(storage: Storage) -> AsyncStorage:
    """``storage``'s verbs as coroutines: its own native ones when it has them (an ``aio``
    property giving an :class:`AsyncStorage`), else each call in a worker thread."""
    native = getattr(storage, "aio", None)
    if isinstance(native, AsyncStorage):
        return native
    return ThreadedAsyncStorage(storage)
