"""A Backend whose writes run in one process and whose reads and watches run in another.

Both processes have the same LMDB directory open (each its own :class:`LmdbBackend`, so each
its own writer thread, watch hub and change feed). :class:`SplitStorage` sends ``create``,
``guaranteed_update`` and ``delete`` to the writing process and ``get``, ``list``, ``watch``,
``stats`` and ``current_revision`` to the reading one, so every write the suite makes must be
seen across the process boundary: by reads (the store's own revision and MVCC) and by watches
(the reading process's hub, fed from the store's revision log). Compaction is a write;
the compacted revision is read where the reads are.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from kstore.api.gvk import Object
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

from .rpc import Remote

__all__ = ["SplitBackend", "SplitStorage"]

_GET_DEFAULTS = GetOptions()
_LIST_DEFAULTS = ListOptions()


class SplitStorage(Storage):
    """One resource: writes through ``writes``, reads and watches through ``reads``."""

    def __init__(self, writes: Storage, reads: Storage) -> None:
        self._writes = writes
        self._reads = reads

    def create(self, key: str, obj: Object, *, ttl_seconds: int | None = None) -> Object:
        return self._writes.create(key, obj, ttl_seconds=ttl_seconds)

    def get(self, key: str, opts: GetOptions = _GET_DEFAULTS) -> Object:
        return self._reads.get(key, opts)

    def list(self, key: str, opts: ListOptions = _LIST_DEFAULTS) -> ListResult:
        return self._reads.list(key, opts)

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
        return self._writes.guaranteed_update(
            key,
            try_update,
            ignore_not_found=ignore_not_found,
            preconditions=preconditions,
            cached_existing=cached_existing,
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
        return self._writes.delete(
            key,
            preconditions=preconditions,
            validate_deletion=validate_deletion,
            cached_existing=cached_existing,
        )

    def watch(self, key: str, opts: ListOptions = _LIST_DEFAULTS) -> Watcher:
        return self._reads.watch(key, opts)

    def stats(self) -> Stats:
        return self._reads.stats()

    def current_revision(self) -> int:
        return self._reads.current_revision()


def _compacted_revision(backend: Any) -> int:
    if isinstance(backend, Remote):
        return int(backend.remote_attribute("compacted_revision"))
    return int(backend.compacted_revision)


class SplitBackend(Backend):
    """Two backends on one store, one of them (either) in another process."""

    def __init__(self, writes: Any, reads: Any, close: Callable[[], None]) -> None:
        self._writes = writes
        self._reads = reads
        self._close = close
        self._lock = threading.Lock()
        self._storages: dict[ResourceStorageConfig, SplitStorage] = {}

    def storage_for(self, config: ResourceStorageConfig) -> Storage:
        with self._lock:
            existing = self._storages.get(config)
            if existing is None:
                existing = self._storages[config] = SplitStorage(
                    self._writes.storage_for(config), self._reads.storage_for(config)
                )
            return existing

    def current_revision(self) -> int:
        return int(self._reads.current_revision())

    def compact(self, revision: int | None = None) -> int:
        return int(self._writes.compact(revision))

    @property
    def compacted_revision(self) -> int:
        return _compacted_revision(self._reads)

    def close(self) -> None:
        self._close()
