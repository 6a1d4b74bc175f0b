"""Snapshots in and out of an LMDB store directory (see :mod:`kstore.storage.snapshot`).

**Save** opens the directory's environment read-only, beside a ``kstore serve`` that keeps it
open and writing, and takes no ``kstore.lock``: LMDB lets readers of other processes in, and
one read transaction is one point in time. A read transaction never blocks the writer (LMDB
keeps the pages it reads until it ends, so the file may grow meanwhile); the writer's commits
go on as before. The revision saved is the store's revision as of that transaction
(:func:`~kstore.storage._lmdb_records.revision_of`), each key's TTL what its expiry had left at
the start of the save.

**Restore** takes the directory's ``kstore.lock`` (a running ``kstore serve`` holds it, so
the restore is refused with the server's pid) and refuses a store that holds anything unless
``force``, which empties it. It writes in the layout of :mod:`._lmdb_records`: each key gets
one history entry at its mod revision (with no previous version), its ``k`` version entry and,
with a TTL, an expiry entry; then the store's revision, compacted revision and purge position
are all set to the snapshot's revision, so resourceVersions are those of the snapshot, the
counter continues above it, and a read or watch at an older revision is 410 Expired (the
history before it is not in the snapshot). While it writes, the format marker says
``kstore-lmdb-2:restoring``, which every open refuses: an interrupted restore leaves a store
no server will serve until a restore with ``force`` completes.

Two keys of an etcd snapshot may share a mod revision (etcd gives every put of one
transaction the transaction's revision); LMDB gives each write its own. Such keys are
renumbered in revision order, each to the smallest revision above the previous key's, so
their order is kept and the only resourceVersions that change are theirs.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import lmdb

from kstore.errors import BadRequest, InternalError
from kstore.storage import _lmdb_records as rec
from kstore.storage._lmdb_board import forget_board
from kstore.storage._lmdb_sync import DirectoryLock
from kstore.storage.snapshot import InvalidSnapshot, SnapshotEntry

__all__ = ["LmdbSnapshotSource", "LmdbSnapshotTarget"]

#: Entries, or value bytes, written per restore transaction: few commits, and far below
#: LMDB's limit of dirty pages in one transaction.
_CHUNK_ENTRIES = 10_000
_CHUNK_BYTES = 64 << 20
_MAX_READERS = 512


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class LmdbSnapshotSource:
    """The live keys of the store in ``path`` at one read transaction."""

    name = "lmdb"
    key_prefix = ""

    def __init__(self, path: str | Path) -> None:
        self._path = Path(path)

    def read(self) -> tuple[int, Iterator[SnapshotEntry]]:
        data = self._path / "data.mdb"
        if not data.is_file():
            raise BadRequest(f"{self._path} holds no kstore LMDB store (no data.mdb)")
        try:
            env = lmdb.open(
                str(self._path),
                readonly=True,
                lock=True,
                subdir=True,
                max_dbs=0,
                max_readers=_MAX_READERS,
                # At least the pages in use; a map grown since by the server is adopted below.
                map_size=max(data.stat().st_size, 1 << 20),
            )
        except lmdb.Error as exc:
            raise BadRequest(f"cannot open the LMDB store at {self._path}: {exc}") from None
        try:
            try:
                txn = env.begin()
            except lmdb.MapResizedError:
                env.set_mapsize(0)
                txn = env.begin()
            try:
                found = txn.get(rec.META_FORMAT)
                if found != rec.FORMAT:
                    raise BadRequest(
                        f"the LMDB store at {self._path} has format {found!r}, this kstore "
                        f"reads {rec.FORMAT!r}"
                    )
                revision = rec.revision_of(txn)
                now_ms = _now_ms()
            except BaseException:
                txn.abort()
                raise
        except BaseException:
            env.close()
            raise
        return revision, self._entries(env, txn, now_ms)

    @staticmethod
    def _entries(env: Any, txn: Any, now_ms: int) -> Iterator[SnapshotEntry]:
        try:
            for key, mod_rev, create_rev, expiry, value in rec.iter_current(txn, now_ms):
                yield SnapshotEntry(
                    key, value, mod_rev, create_rev, expiry - now_ms if expiry else 0
                )
        finally:
            txn.abort()
            env.close()


class LmdbSnapshotTarget:
    """Restores into the store in ``path`` (created when missing); hold it with ``with``."""

    name = "lmdb"
    key_prefix = ""

    def __init__(self, path: str | Path, *, durable: bool = True) -> None:
        self._path = Path(path)
        self._durable = durable
        self._lock: DirectoryLock | None = None
        self._env: Any = None
        self._renumbered: dict[bytes, int] = {}
        self._map_size = 1 << 30
        # What inspect noted: the first reason to refuse, every (revision, key), the size.
        self._refusal: str | None = None
        self._revisions: list[tuple[int, bytes]] = []
        self._total = 0

    def __enter__(self) -> LmdbSnapshotTarget:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._env is not None:
            self._env.close()
            self._env = None
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def _open(self, map_size: int) -> Any:
        if self._env is None:
            self._path.mkdir(parents=True, exist_ok=True)
            self._lock = DirectoryLock(self._path)
            forget_board(self._path)  # the store may go back to a lower revision
            try:
                self._env = lmdb.open(
                    str(self._path),
                    map_size=map_size,
                    subdir=True,
                    max_dbs=1,
                    sync=self._durable,
                    metasync=self._durable,
                    max_readers=_MAX_READERS,
                    lock=True,
                )
            except lmdb.Error as exc:
                self.close()
                raise BadRequest(f"cannot open the LMDB store at {self._path}: {exc}") from None
            self._env.reader_check()
            self._map_size = int(self._env.info()["map_size"])
        return self._env

    def inspect(self, entry: SnapshotEntry) -> None:
        key = entry.key
        if self._refusal is None:
            if len(key) > rec.MAX_KEY_BYTES or b"\x00" in key or not key.startswith(b"/"):
                self._refusal = (
                    f"the key {key[:80]!r} cannot be stored in LMDB (keys are at most "
                    f"{rec.MAX_KEY_BYTES} bytes, start with / and hold no NUL)"
                )
            elif entry.mod_revision < 1 or not 0 < entry.create_revision <= entry.mod_revision:
                self._refusal = (
                    f"the key {key.decode('utf-8', 'replace')} has revisions "
                    f"{entry.create_revision}/{entry.mod_revision}"
                )
        self._revisions.append((entry.mod_revision, key))
        self._total += len(key) * 2 + len(entry.value) + 64

    def check(self, *, force: bool) -> None:
        if self._refusal is not None:
            raise InvalidSnapshot(self._refusal)
        revisions, total = self._revisions, self._total
        self._renumbered = _renumber(revisions)
        # Room for everything written plus LMDB's page overhead, so that the restore does not
        # stop to grow the map.
        env = self._open(max(1 << 30, 2 * total + (64 << 20)))
        with env.begin() as txn:
            found = txn.get(rec.META_FORMAT)
            if not force:
                if found not in (None, rec.FORMAT):
                    raise BadRequest(
                        f"the LMDB store at {self._path} has format {found!r}; restore into "
                        "an empty directory, or pass --force to replace it"
                    )
                if _holds_data(txn):
                    raise BadRequest(
                        f"the LMDB store at {self._path} is not empty (revision "
                        f"{rec.revision_of(txn)}); restore into an empty directory, or pass "
                        "--force to replace its content"
                    )
        if self._map_size < 2 * total:
            self._grow(2 * total + (64 << 20))

    def load(self, entries: Iterable[SnapshotEntry], revision: int, *, force: bool) -> int:
        env = self._env
        if env is None:
            raise InternalError("check the snapshot before loading it")

        def begin(txn: Any) -> None:
            if force:
                txn.drop(env.open_db(None, txn=txn), delete=False)
            txn.put(rec.META_FORMAT, rec.RESTORING)

        self._write(begin)
        now_ms = _now_ms()
        top = revision
        chunk: list[SnapshotEntry] = []
        size = 0
        for entry in entries:
            chunk.append(entry)
            size += len(entry.value)
            if len(chunk) >= _CHUNK_ENTRIES or size >= _CHUNK_BYTES:
                top = max(top, self._write_chunk(chunk, now_ms))
                chunk, size = [], 0
        if chunk:
            top = max(top, self._write_chunk(chunk, now_ms))
        final = max(top, 1)

        def finish(txn: Any) -> None:
            raw = final.to_bytes(8, "big")
            txn.put(rec.META_REVISION, raw)
            txn.put(rec.META_COMPACTED, raw)
            txn.put(rec.META_PURGED, raw)
            txn.put(rec.META_FORMAT, rec.FORMAT)

        self._write(finish)
        return final

    def _write_chunk(self, chunk: list[SnapshotEntry], now_ms: int) -> int:
        renumbered = self._renumbered
        top = 0

        def put_all(txn: Any) -> None:
            nonlocal top
            for entry in chunk:
                key = entry.key
                rev = renumbered.get(key, entry.mod_revision)
                create = min(entry.create_revision, rev)
                expiry = now_ms + entry.ttl_ms if entry.ttl_ms > 0 else 0
                header = rec.HIST_HEADER.pack(rec.KIND_PUT, create, 0, expiry, len(key))
                if not txn.put(rec.hist_key(rev), header + key + entry.value, overwrite=False):
                    raise InvalidSnapshot(f"two keys of the snapshot have revision {rev}")
                txn.put(
                    rec.version_key(key, rev),
                    rec.VERSION.pack(rec.KIND_PUT, create, expiry, len(entry.value)),
                )
                if expiry:
                    txn.put(rec.ttl_key(expiry, key), b"")
                top = max(top, rev)

        self._write(put_all)
        return top

    def _write(self, work: Any) -> None:
        env = self._env
        while True:
            txn = env.begin(write=True)
            try:
                work(txn)
                txn.commit()
                return
            except lmdb.MapFullError:
                txn.abort()
                self._grow(self._map_size * 2)
            except BaseException:
                txn.abort()
                raise

    def _grow(self, size: int) -> None:
        self._env.set_mapsize(size)
        self._map_size = int(self._env.info()["map_size"])


def _holds_data(txn: Any) -> bool:
    """Anything but metadata, or a revision past a fresh store's."""
    cursor = txn.cursor()
    if cursor.first() and cursor.key()[:1] != b"m":
        return True
    if cursor.set_range(b"n"):
        return True
    return rec.revision_of(txn) > 1


def _renumber(revisions: list[tuple[int, bytes]]) -> dict[bytes, int]:
    """New revisions for the keys that share a mod revision with another (see the module
    docstring); empty when every revision is distinct, the case of a kstore-written store."""
    revisions.sort()
    if all(revisions[i][0] != revisions[i + 1][0] for i in range(len(revisions) - 1)):
        return {}
    renumbered: dict[bytes, int] = {}
    last = 0
    for rev, key in revisions:
        new = max(rev, last + 1)
        if new != rev:
            renumbered[key] = new
        last = new
    return renumbered
