"""The admin verbs' view of a store named by a location: ``("lmdb", LmdbConfig)`` or
``("etcd", EtcdConfig)`` (what :func:`kstore.embedded.storage_location` gives for a
``kstore.open`` url). Migration (:mod:`kstore.storage.migrate`), verification, the stored
values a check decodes, and defragmentation, with the backend's modules imported only when
a location names them."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from kstore.storage.migrate import (
    ChangeFeed,
    ChangeTarget,
    MigrationResult,
    migrate,
)
from kstore.storage.snapshot import SnapshotSource, SnapshotTarget

__all__ = [
    "Location",
    "defragment",
    "migrate_between",
    "same_store",
    "stored_values",
]

Location = tuple[str, Any]


def _path(location: Location) -> Path:
    return Path(location[1].path)


def same_store(a: Location, b: Location) -> bool:
    if a[0] != b[0]:
        return False
    if a[0] == "lmdb":
        return _path(a).resolve() == _path(b).resolve()
    return bool(set(a[1].endpoints) & set(b[1].endpoints)) and (
        a[1].prefix.strip("/") == b[1].prefix.strip("/")
    )


def _source(location: Location) -> SnapshotSource:
    if location[0] == "lmdb":
        from kstore.storage.lmdb import LmdbSnapshotSource

        return LmdbSnapshotSource(_path(location))
    from kstore.storage.etcd import EtcdSnapshotSource

    return EtcdSnapshotSource(location[1])


def _restore_target(location: Location) -> SnapshotTarget:
    if location[0] == "lmdb":
        from kstore.storage.lmdb import LmdbSnapshotTarget

        return LmdbSnapshotTarget(_path(location), durable=location[1].durable)
    from kstore.storage.etcd import EtcdSnapshotTarget

    return EtcdSnapshotTarget(location[1])


def _feed(location: Location) -> ChangeFeed:
    if location[0] == "lmdb":
        from kstore.storage._lmdb_migrate import LmdbChangeFeed

        return LmdbChangeFeed(_path(location))
    from kstore.storage._etcd_migrate import EtcdChangeFeed

    return EtcdChangeFeed(location[1])


def _change_target(location: Location) -> ChangeTarget:
    if location[0] == "lmdb":
        from kstore.storage._lmdb_migrate import LmdbChangeTarget

        return LmdbChangeTarget(_path(location), durable=location[1].durable)
    from kstore.storage._etcd_migrate import EtcdChangeTarget

    return EtcdChangeTarget(location[1])


def migrate_between(
    source: Location,
    target: Location,
    *,
    work_dir: Path,
    force: bool = False,
    follow: bool = False,
    stop: threading.Event | None = None,
    on_progress: Callable[[str], None] | None = None,
    verify: bool = False,
) -> MigrationResult:
    """Copy ``source`` into ``target`` and follow it (:func:`kstore.storage.migrate.migrate`)."""
    from kstore.errors import BadRequest

    if same_store(source, target):
        raise BadRequest("the source and the target are the same store")
    snapshot_source = _source(source)
    try:
        return migrate(
            source=snapshot_source,
            restore_target=_restore_target(target),
            open_feed=lambda: _feed(source),
            open_target=lambda: _change_target(target),
            work_dir=work_dir,
            force=force,
            follow=follow,
            stop=stop,
            on_progress=on_progress,
            verify=(lambda: _source(source), lambda: _source(target)) if verify else None,
            stream=target[0] == "etcd",
        )
    finally:
        close = getattr(snapshot_source, "close", None)
        if close is not None:
            close()


def stored_values(location: Location) -> Iterator[tuple[bytes, bytes]]:
    """Every live key and its stored bytes at one point in time; LMDB also gives the records
    outside its layout (see :func:`kstore.registry.storage_migration.check_values`)."""
    if location[0] == "lmdb":
        from kstore.storage._lmdb_migrate import lmdb_values

        yield from lmdb_values(_path(location))
        return
    source = _source(location)
    try:
        _revision, entries = source.read()
        for entry in entries:
            yield entry.key, entry.value
    finally:
        close = getattr(source, "close", None)
        if close is not None:
            close()


def defragment(location: Location) -> list[tuple[str, int, int]]:
    """Compact the store's files: ``(where, size before, size after)`` per file or member."""
    if location[0] == "lmdb":
        from kstore.storage._lmdb_migrate import defragment_lmdb

        before, after = defragment_lmdb(_path(location))
        return [(str(_path(location)), before, after)]
    from kstore.storage._etcd_migrate import defragment_etcd

    return defragment_etcd(location[1])
