"""The LMDB store's verbs as coroutines: creates awaited on the event loop, not in a thread.

A create from an asyncio task queues its write for the writer thread and awaits a future,
which the writer settles after the commit, with one wake-up of the loop for all of that
loop's writes in the commit (:func:`kstore.storage._lmdb_writes.hand_back`); the written
bytes are decoded while the commit's fsync is in flight (:mod:`._lmdb_ahead`), as for
threads. Compared with a thread per waiting create, this saves the relay of wake-ups through
the waiting threads, one thread hand-off after each commit. The write is never committed on
the loop's own thread (an fsync there would stall every other task).

guaranteed_update and delete run on the loop too, their writes awaited the same way: they are
written once as generators of the writes they need (:meth:`LmdbStorage.update_steps`,
:meth:`LmdbStorage.delete_steps`), which the blocking verbs run on their own thread; their
reads are short local read transactions, and ``try_update`` / ``validate_deletion`` run on the
loop's thread (they must not block). get runs on the loop (a short read transaction, tens of
microseconds); list runs in the loop's default executor (a long list should not hold the loop).
"""

from __future__ import annotations

from collections.abc import Callable

from kstore.api.gvk import Object
from kstore.storage._lmdb_storage import LmdbStorage, WriteSteps
from kstore.storage.aio import ThreadedAsyncStorage
from kstore.storage.interface import GetOptions, Preconditions, TryUpdate
from kstore.storage.versioner import with_resource_version

__all__ = ["LmdbAsyncStorage"]

_GET_DEFAULTS = GetOptions()


class LmdbAsyncStorage(ThreadedAsyncStorage):
    """An :class:`LmdbStorage`'s verbs as coroutines (an
    :class:`~kstore.storage.aio.AsyncStorage`): all native but list, which is threaded."""

    __slots__ = ("_lmdb",)

    def __init__(self, storage: LmdbStorage) -> None:
        super().__init__(storage)
        self._lmdb = storage

    async def create(self, key: str, obj: Object, *, ttl_seconds: int | None = None) -> Object:
        storage = self._lmdb
        key, plain, request = storage.create_request(key, obj, ttl_seconds)
        request.defer(lambda: storage.decode_plain(key, plain))
        outcome = await storage.backend.submit_async(request)
        if outcome.conflict:
            raise storage.already_exists(key)
        stored: Object = request.ahead_result()
        return with_resource_version(stored, outcome.revision)

    async def get(self, key: str, opts: GetOptions = _GET_DEFAULTS) -> Object:
        return self._storage.get(key, opts)

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
        steps = self._lmdb.update_steps(
            key, try_update, ignore_not_found, preconditions, cached_existing, ttl_seconds
        )
        return await self._run(steps)

    async def delete(
        self,
        key: str,
        *,
        preconditions: Preconditions | None = None,
        validate_deletion: Callable[[Object], None] | None = None,
        cached_existing: Object | None = None,
    ) -> Object:
        steps = self._lmdb.delete_steps(key, preconditions, validate_deletion, cached_existing)
        return await self._run(steps)

    async def _run(self, steps: WriteSteps) -> Object:
        """:func:`~kstore.storage._lmdb_storage.run_writes` with each write awaited."""
        backend = self._lmdb.backend
        try:
            request = next(steps)
            while True:
                request = steps.send(await backend.submit_async(request))
        except StopIteration as done:
            result: Object = done.value
            return result
