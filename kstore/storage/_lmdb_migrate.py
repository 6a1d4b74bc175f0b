"""LMDB's side of a migration (see :mod:`kstore.storage.migrate`) and its maintenance.

**Changes of a source store** are read from its history log (the ``r`` entries of
:mod:`._lmdb_records`), through a read-only environment beside the ``kstore serve`` that keeps
writing it, as a snapshot save reads it: every revision after the one a migration has reached
is there, in order, with the key, the stored bytes of a put and the expiry, until compaction
purges it. A migration that falls behind the compacted revision cannot continue and says so.

**Changes into a target store** are written as the backend writes them (:class:`._Txn` of
:mod:`._lmdb_writes`): each gets the next revision of the target, with its history entry,
version entry and expiry entry, under the directory's ``kstore.lock``.

**Defragmentation** copies the environment with compaction (``mdb_env_copy2`` with
``MDB_CP_COMPACT``: live pages only, in order) into a new directory beside it and renames it
into place, all under ``kstore.lock``, so no server is serving the directory meanwhile.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lmdb

from kstore.errors import BadRequest, Expired, InternalError, Unavailable
from kstore.storage import _lmdb_records as rec
from kstore.storage._lmdb_board import forget_board
from kstore.storage._lmdb_sync import LOCK_FILE, DirectoryLock, holders
from kstore.storage._lmdb_writes import _Txn
from kstore.storage.migrate import Change

__all__ = ["LmdbChangeFeed", "LmdbChangeTarget", "defragment_lmdb", "lmdb_held_by", "lmdb_values"]

_MAX_READERS = 512


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def lmdb_held_by(path: Path) -> str | None:
    """The pid (as text, maybe empty) of the process holding ``path``'s ``kstore.lock``, or
    None when no process holds it."""
    lock_path = path / LOCK_FILE
    if not lock_path.exists():
        return None
    fd = os.open(lock_path, os.O_RDONLY)
    try:
        try:
            # Exclusive: servers hold the lock shared, a tool exclusive; either blocks this.
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            held = os.pread(fd, 32, 0).decode(errors="replace").strip()
            return held or ", ".join(holders(path))
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _open_readonly(path: Path) -> Any:
    data = path / "data.mdb"
    if not data.is_file():
        raise BadRequest(f"{path} holds no kstore LMDB store (no data.mdb)")
    try:
        return lmdb.open(
            str(path),
            readonly=True,
            lock=True,
            subdir=True,
            max_dbs=0,
            max_readers=_MAX_READERS,
            map_size=max(data.stat().st_size, 1 << 20),
        )
    except lmdb.Error as exc:
        raise BadRequest(f"cannot open the LMDB store at {path}: {exc}") from None


def _begin(env: Any) -> Any:
    try:
        return env.begin()
    except lmdb.MapResizedError:
        env.set_mapsize(0)
        return env.begin()


class LmdbChangeFeed:
    """The changes of the store in ``path`` after a revision, from its history log."""

    def __init__(self, path: str | Path) -> None:
        self._path = Path(path)
        self._lock: DirectoryLock | None = None
        # The environment is opened per call, never held between calls: a process must not
        # have one environment open twice (a save of the same store runs meanwhile), and
        # closing one of two opens would drop LMDB's lock-file locks for both.
        _open_readonly(self._path).close()

    def close(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def begin(self, revision: int) -> None:
        return None  # the history log has every change after it

    def hold(self) -> None:
        """Take the store's lock (waiting for a server that is still closing it), so that no
        server starts on it until :meth:`close`."""
        deadline = time.monotonic() + 30
        while self._lock is None:
            try:
                self._lock = DirectoryLock(self._path)
            except Unavailable:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    def held(self) -> bool:
        """Whether a process (a server) holds the store."""
        return lmdb_held_by(self._path) is not None

    def changes(self, after: int, limit: int) -> tuple[list[Change], int, int]:
        """Up to ``limit`` changes after revision ``after``; the revision they cover up to,
        and the store's revision (equal when nothing more is pending)."""
        env = _open_readonly(self._path)
        try:
            return self._changes(env, after, limit)
        finally:
            env.close()

    @staticmethod
    def _changes(env: Any, after: int, limit: int) -> tuple[list[Change], int, int]:
        txn = _begin(env)
        try:
            head = rec.revision_of(txn)
            compacted = rec.meta_int(txn, rec.META_COMPACTED)
            if after < compacted:
                raise Expired(
                    f"the source store was compacted at revision {compacted}, past revision "
                    f"{after} this migration had reached; migrate again (with --force)"
                )
            now_ms = _now_ms()
            out: list[Change] = []
            covered = head
            cursor = txn.cursor()
            if cursor.set_range(rec.hist_key(after + 1)):
                unpack = rec.HIST_HEADER.unpack_from
                size = rec.HIST_HEADER.size
                for raw_rev, record in cursor.iternext():
                    rev = int.from_bytes(raw_rev[1:], "big")
                    if rev > head:
                        break
                    if len(out) >= limit:
                        covered = rev - 1
                        break
                    kind, _create, _prev, expiry, key_len = unpack(record)
                    key = bytes(record[size : size + key_len])
                    if kind == rec.KIND_PUT and not (expiry and expiry <= now_ms):
                        ttl_ms = expiry - now_ms if expiry else 0
                        out.append(Change(key, rev, bytes(record[size + key_len :]), ttl_ms))
                    else:
                        out.append(Change(key, rev, None, 0))
            return out, covered, head
        finally:
            txn.abort()


class LmdbChangeTarget:
    """Applies changes to the store in ``path`` (which a snapshot restore has filled)."""

    def __init__(self, path: str | Path, *, durable: bool = True) -> None:
        self._path = Path(path)
        self._lock = DirectoryLock(self._path)
        forget_board(self._path)  # the store may go back to a lower revision
        try:
            data = self._path / "data.mdb"
            self._env = lmdb.open(
                str(self._path),
                map_size=max(1 << 30, 2 * data.stat().st_size if data.is_file() else 0),
                subdir=True,
                max_dbs=1,
                sync=durable,
                metasync=durable,
                max_readers=_MAX_READERS,
                lock=True,
            )
        except BaseException:
            self._lock.release()
            raise

    def close(self) -> None:
        self._env.close()
        self._lock.release()

    def apply(self, changes: list[Change]) -> None:
        while True:
            txn = self._env.begin(write=True)
            try:
                self._apply(txn, changes)
                txn.commit()
                return
            except lmdb.MapFullError:
                txn.abort()
                self._env.set_mapsize(int(self._env.info()["map_size"]) * 2)
            except BaseException:
                txn.abort()
                raise

    @staticmethod
    def _apply(txn: Any, changes: list[Change]) -> None:
        now_ms = _now_ms()
        w = _Txn(txn, rec.revision_of(txn), now_ms)
        for change in changes:
            key = change.key
            text = key.decode()
            old = w.live(key, text)
            if change.value is None:
                if old is not None:
                    w.remove(key, text, old[0], old[1], old[2], rec.KIND_DELETE)
                continue
            expiry = now_ms + change.ttl_ms if change.ttl_ms > 0 else 0
            w.put(key, text, change.value, expiry, old)


def lmdb_values(path: str | Path) -> Iterator[tuple[bytes, bytes]]:
    """Every live key of the store in ``path`` and its stored bytes, in key order, at one read
    transaction; then every record outside the layout, as ``(record key, b"")`` after a key
    ``b"?"`` marker entry. For :func:`kstore.storage.migrate.check_store`."""
    env = _open_readonly(Path(path))
    try:
        txn = _begin(env)
        try:
            found = txn.get(rec.META_FORMAT)
            if found != rec.FORMAT:
                raise BadRequest(
                    f"the LMDB store at {path} has format {found!r}, this kstore reads "
                    f"{rec.FORMAT!r}"
                )
            for key, _mod, _create, _expiry, value in rec.iter_current(txn, _now_ms()):
                yield key, value
            cursor = txn.cursor()
            for raw in cursor.iternext(values=False):
                if raw[:1] not in (b"m", rec.KEYS, rec.TTL, rec.HIST):
                    yield b"?", bytes(raw)
        finally:
            txn.abort()
    finally:
        env.close()


def defragment_lmdb(path: str | Path) -> tuple[int, int]:
    """Compact the store in ``path`` in place (see the module docstring); its data file's
    size before and after. Refused (Unavailable) while a process holds the store."""
    directory = Path(path)
    if not (directory / "data.mdb").is_file():
        raise BadRequest(f"{directory} holds no kstore LMDB store (no data.mdb)")
    lock = DirectoryLock(directory)
    try:
        before = (directory / "data.mdb").stat().st_size
        staging = directory / f".defrag-{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        try:
            env = lmdb.open(str(directory), subdir=True, max_dbs=1, lock=True, readonly=True)
            try:
                env.reader_check()
                readers = env.readers()
                if "no active readers" not in readers:
                    # A snapshot save reading the store: its environment would outlive the
                    # swap. Its pid is in LMDB's reader table.
                    raise Unavailable(
                        f"the LMDB store at {directory} is being read by another process "
                        f"(a snapshot save?); try again when it ends:\n{readers.strip()}"
                    )
                env.copy(str(staging), compact=True)
            finally:
                env.close()
            copied = staging / "data.mdb"
            with copied.open("rb+") as f:
                os.fsync(f.fileno())
            check = lmdb.open(str(staging), subdir=True, max_dbs=1, readonly=True, lock=False)
            try:
                with check.begin() as txn:
                    if txn.get(rec.META_FORMAT) != rec.FORMAT:
                        raise InternalError("the compacted copy does not hold the store")
            finally:
                check.close()
            # One rename replaces the data file; the lock file (held) and lock.mdb stay.
            os.replace(copied, directory / "data.mdb")
            fd = os.open(directory, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return before, (directory / "data.mdb").stat().st_size
    finally:
        lock.release()
