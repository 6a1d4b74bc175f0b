"""The LMDB store's verbs as coroutines: creates awaited on the event loop, not in a thread.

A create from an asyncio task queues its write for the writer thread and awaits a future,
which the writer settles after the commit, with one wake-up of the loop for all of that
loop's writes in the commit (:func:`kstore.storage._lmdb_writes.hand_back`); the written
bytes are decoded while the commit's fsync is in flight (:mod:`._lmdb_ahead`), as for
threads. Compared with a thread per waiting create, this saves the relay of wake-ups through
the waiting threads, one thread hand-off after each commit. The write is never committed on
the loop's own thread (an fsync there would stall every other task).

get runs on the loop (a short read transaction, tens of microseconds); list,
guaranteed_update and delete run in the loop's default executor (a long list, or an update's
``try_update``, should not hold the loop).
"""

from __future__ import annotations

from kstore.api.gvk import Object
from kstore.storage._lmdb_storage import LmdbStorage
from kstore.storage.aio import ThreadedAsyncStorage
from kstore.storage.interface import GetOptions
from kstore.storage.versioner import with_resource_version

__all__ = ["LmdbAsyncStorage"]

_GET_DEFAULTS = GetOptions()


class LmdbAsyncStorage(ThreadedAsyncStorage):
    """An :class:`LmdbStorage`'s verbs as coroutines (an
    :class:`~kstore.storage.aio.AsyncStorage`): create and get native, the rest threaded."""

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
