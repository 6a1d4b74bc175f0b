"""The embedded LMDB backend: one directory, one or more processes, durable group commit.

Structure (the only module that imports ``lmdb``, with :mod:`kstore.storage._lmdb_snapshot`,
which copies a store's keys to and from a snapshot file, and :mod:`kstore.storage._lmdb_migrate`,
which reads and applies a migration's changes and defragments a store):

- :class:`LmdbBackend` owns the environment, a shared ``flock`` on ``kstore.lock`` (several
  processes may open one store; a second open in this process, or a tool rewriting the store,
  gets a clear Unavailable instead of a corrupt store), **one writer thread**, one thread
  that decodes ahead (below), one housekeeping thread (TTL reaper and compaction schedule,
  run by the one process holding the leader lock) and the change feed's thread (the other
  processes' commits, see :mod:`kstore.storage._lmdb_feed`);
- writers encode in their own thread and hand ready-made requests to the writer thread; it
  takes up to ``max_batch`` of them into one write transaction (after giving the writers of
  its previous commit up to that commit's duration to come back: group commit), gives each
  change its own consecutive revision, commits (fsync'd unless ``durable=False``), publishes
  the changes to the watch hub, then wakes its waiters, as a relay (see
  :mod:`kstore.storage._lmdb_handoff`). So a commit's fsync is shared by every writer
  waiting on it, and the writer thread does LMDB work, little Python; the revisions are
  taken from the store inside the write transaction, so processes sharing the store number
  their changes as one sequence; while the fsync of a
  group commit is in flight, a third thread decodes what its writers wrote (see
  :mod:`kstore.storage._lmdb_ahead`);
- a lone writer (the last commit carried one write, nothing is queued, no commit is running)
  commits its own single-key request on its own thread instead, skipping the two thread
  wake-ups of the hand-off (see :meth:`LmdbBackend._commit_inline`). One commit lock makes
  every write transaction, wherever it runs, the only one: revisions are taken, committed
  and published in order exactly as on the writer thread;
- reads open a short read transaction per call (never across calls): paging and watches
  resume from keys and revisions, they never pin old pages;
- the map grows by itself: MapFullError aborts the transaction, the map doubles (readers are
  held off for that instant, as LMDB requires) and the batch is retried; a full disk or the
  ``max_map_size`` cap fails the batch with a clear InternalError and leaves the store intact;
- past the last page, zeros are kept written ahead while commits are small, so that a commit
  overwrites allocated blocks instead of growing the file (see :mod:`kstore.storage._lmdb_runway`).

The layout is described in :mod:`kstore.storage._lmdb_records`, the write rules in
:mod:`kstore.storage._lmdb_writes`, the per-resource operations in
:mod:`kstore.storage._lmdb_storage` and :mod:`kstore.storage._lmdb_list`, the reaper and
compaction schedule in :mod:`kstore.storage._lmdb_housekeeping`, the locks in
:mod:`kstore.storage._lmdb_sync`, the hand-offs to and from the writer thread in
:mod:`kstore.storage._lmdb_handoff`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import lmdb

from kstore.errors import InternalError, KStoreError, TooLargeResourceVersion, Unavailable
from kstore.storage._lmdb_ahead import AheadWorker
from kstore.storage._lmdb_board import RevisionBoard
from kstore.storage._lmdb_feed import ChangeFeed, Peers
from kstore.storage._lmdb_handoff import GatherQueue
from kstore.storage._lmdb_housekeeping import Housekeeper
from kstore.storage._lmdb_records import (
    FORMAT,
    META_COMPACTED,
    META_FORMAT,
    META_PURGED,
    META_REVISION,
    RESTORING,
    meta_int,
    revision_of,
)
from kstore.storage._lmdb_runway import Runway
from kstore.storage._lmdb_snapshot import LmdbSnapshotSource, LmdbSnapshotTarget
from kstore.storage._lmdb_storage import LmdbStorage
from kstore.storage._lmdb_sync import (
    DirectoryLock,
    Gate,
    LeaderLock,
    claim_in_process,
    release_in_process,
)
from kstore.storage._lmdb_writes import (
    Batch,
    CompactRequest,
    DeleteRequest,
    Outcome,
    PutRequest,
    Request,
    apply_batch,
    hand_back,
    purge_history,
)
from kstore.storage._watch_hub import RawEvent, WatchHub
from kstore.storage.interface import Backend, ResourceStorageConfig, Storage
from kstore.storage.read_point import synced_once

__all__ = [
    "LmdbBackend",
    "LmdbConfig",
    "LmdbSnapshotSource",
    "LmdbSnapshotTarget",
    "RawLmdbBaseline",
]

_log = logging.getLogger(__name__)

#: Where format 1 (five named databases) kept its format marker.
_LEGACY_META_DB = b"meta"
_LEGACY_FORMAT_KEY = b"format"
#: The longest a commit waits for the writers of the previous one to come back (it waits at
#: most as long as that commit took): a bound on the latency group commit may add, the
#: 1-2 ms window of the reference's perf-limits.md (section 3).
_MAX_GATHER_S = 0.002
#: The most puts the raw baseline's group commit takes into one transaction.
_RAW_MAX_BATCH = 1000
#: Revisions of history dropped per purge transaction: small enough that writers queued behind
#: a purge wait a few milliseconds at most.
_PURGE_CHUNK = 2000


@dataclass(frozen=True, kw_only=True, slots=True)
class LmdbConfig:
    """How to open an LMDB store.

    ``durable`` False turns off fsync (``sync``/``metasync``): much faster, survives a crash of
    the process but not of the machine. History is kept for at least ``history_retention_s``
    (and at most that plus ``compaction_interval_s``); ``compaction_interval_s`` 0 disables
    automatic compaction. ``max_batch`` bounds how many queued writes share one commit.
    ``watch_queue_limit`` is how many undelivered changes a watcher may fall behind before it
    is closed with an ERROR event. ``progress_notify_interval_s`` is how long a watch with
    ``progress_notify`` stays idle before it gets a progress BOOKMARK.
    """

    path: str | os.PathLike[str]
    durable: bool = True
    map_size: int = 1 << 30
    max_map_size: int = 1 << 40
    max_readers: int = 512
    max_batch: int = 1000
    compaction_interval_s: float = 300.0
    history_retention_s: float = 300.0
    watch_queue_limit: int = 10_000
    progress_notify_interval_s: float = 5.0


def _open_env(path: Path, config: LmdbConfig, max_dbs: int) -> lmdb.Environment:
    # The durability flags every write of the backend (and its benchmark baseline) runs with.
    return lmdb.open(
        str(path),
        map_size=max(config.map_size, 1 << 20),
        subdir=True,
        max_dbs=max_dbs,
        sync=config.durable,
        metasync=config.durable,
        writemap=False,
        map_async=False,
        max_readers=config.max_readers,
        lock=True,
    )


class RawLmdbBaseline:
    """Plain py-lmdb with the backend's durability flags: what benchmarks compare against.

    No revisions, history, codec or threads: one named-less database, bytes in, bytes out."""

    def __init__(self, config: LmdbConfig) -> None:
        Path(config.path).mkdir(parents=True, exist_ok=True)
        self._env = _open_env(Path(config.path), config, max_dbs=0)

    def put_each(self, keys: list[bytes], value: bytes) -> None:
        """One put per write transaction (one commit, so one fsync pair, per key)."""
        for key in keys:
            with self._env.begin(write=True) as txn:
                txn.put(key, value)

    def put_batched(self, keys: list[bytes], value: bytes, per_txn: int) -> None:
        """``per_txn`` puts per write transaction."""
        for first in range(0, len(keys), per_txn):
            with self._env.begin(write=True) as txn:
                for key in keys[first : first + per_txn]:
                    txn.put(key, value)

    def put_from_threads(self, keys: list[bytes], value: bytes, writers: int) -> int:
        """Group commit with nothing else: ``writers`` threads put ``keys`` (thread ``k`` every
        ``writers``-th one), each put waiting for its commit, through one writer thread that
        commits whatever is queued in one transaction, with the backend's hand-off (gathering
        queue, doorbells rung as a relay) and gather rule. Returns how many commits it took."""
        queue: GatherQueue[tuple[bytes, Request] | None] = GatherQueue()
        done = Outcome()
        commits = 0

        def commit_loop() -> None:
            nonlocal commits
            returning, commit_s = 0, 0.0
            while True:
                batch = queue.take(1, _RAW_MAX_BATCH)
                if returning > len(batch) and None not in batch:
                    batch += queue.take(
                        returning - len(batch),
                        _RAW_MAX_BATCH - len(batch),
                        timeout=min(commit_s, _MAX_GATHER_S),
                    )
                puts = [item for item in batch if item is not None]
                started = time.perf_counter()
                with self._env.begin(write=True) as txn:
                    for key, _bell in puts:
                        txn.put(key, value)
                commit_s = time.perf_counter() - started
                commits += 1
                returning = len(puts)
                hand_back([req for _key, req in puts], [done] * len(puts))
                if len(puts) < len(batch):
                    return

        def put_share(first: int) -> None:
            for key in keys[first::writers]:
                req = Request()
                req.attach()
                queue.put((key, req))
                req.wait()

        committer = threading.Thread(target=commit_loop, name="raw-lmdb-writer")
        committer.start()
        threads = [threading.Thread(target=put_share, args=(k,)) for k in range(writers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        queue.put(None)
        committer.join()
        return commits

    def get_each(self, keys: list[bytes]) -> int:
        """One read transaction per get; returns the bytes read."""
        total = 0
        for key in keys:
            with self._env.begin() as txn:
                total += len(txn.get(key) or b"")
        return total

    def scan(self, prefix: bytes) -> int:
        """Every value under ``prefix`` in one read transaction; returns how many."""
        count = 0
        with self._env.begin() as txn:
            cursor = txn.cursor()
            if cursor.set_range(prefix):
                for key, _value in cursor.iternext():
                    if not key.startswith(prefix):
                        break
                    count += 1
        return count

    def close(self) -> None:
        self._env.close()


class _ReadTxn:
    """A read transaction as a context manager (a class: cheaper than a generator)."""

    __slots__ = ("_backend", "_txn")

    def __init__(self, backend: LmdbBackend) -> None:
        self._backend = backend
        self._txn: lmdb.Transaction[bytes] | None = None

    def __enter__(self) -> lmdb.Transaction[bytes]:
        backend = self._backend
        backend._check_usable()
        while True:
            backend._gate.enter()
            try:
                self._txn = backend._env.begin()
            except lmdb.MapResizedError:
                # Another process grew the map: adopt its size (no transaction may be open).
                backend._gate.leave()
                with backend._commit_lock:  # LMDB: no write transaction open either
                    backend._adopt_map_size()
                continue
            except lmdb.Error as exc:
                backend._gate.leave()
                raise backend._lmdb_error(exc) from exc
            return self._txn

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            if self._txn is not None:
                self._txn.abort()
        finally:
            self._backend._gate.leave()
        if isinstance(exc, lmdb.Error):
            raise self._backend._lmdb_error(exc) from exc


_open_backends: weakref.WeakSet[LmdbBackend] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    # LMDB: an environment must not be used in a process it was not opened in.
    for backend in list(_open_backends):
        backend._forked = True


os.register_at_fork(after_in_child=_after_fork_in_child)

_STOP = object()
#: The requests a lone writer may commit on its own thread: a client's single-key writes.
#: Compaction and the reaper's requests set state the writer thread acts on (the purge), so
#: they always go through it.
_INLINE_REQUESTS = (PutRequest, DeleteRequest)


class LmdbBackend(Backend):
    """A store in one directory holding every resource under one global revision.

    Thread-safe. Use one instance per directory per process, and :meth:`close` it (it is also
    a context manager)."""

    def __init__(self, config: LmdbConfig) -> None:
        self._config = config
        if config.max_batch < 1:
            raise ValueError("max_batch must be positive")
        self._path = Path(config.path)
        self._path.mkdir(parents=True, exist_ok=True)
        self._identity = claim_in_process(self._path)
        try:
            self._lock = DirectoryLock(self._path, shared=True)
        except BaseException:
            release_in_process(self._identity)
            raise
        self._forked = False
        self._failed: KStoreError | None = None
        try:
            # One named database may be opened: format 1's, to name it when refusing it.
            self._env = _open_env(self._path, config, max_dbs=1)
            # Reader slots left behind by a process that died (e.g. kill -9).
            self._env.reader_check()
            self._board = RevisionBoard(self._path)
            with self._env.begin(write=True) as txn:
                self._check_format(txn)
                self._revision = revision_of(txn)
                self._compacted = meta_int(txn, META_COMPACTED)
                purged = meta_int(txn, META_PURGED)
                self._board.raise_to(self._revision)
        except BaseException:
            env = getattr(self, "_env", None)
            if env is not None:
                env.close()
            self._lock.release()
            release_in_process(self._identity)
            raise
        self._map_size = self._env.info()["map_size"]
        self._purge_pending = purged < self._compacted
        self._gate = Gate()
        self.hub = WatchHub(queue_limit=config.watch_queue_limit, last_revision=self._revision)
        self._leader = LeaderLock(self._path)
        self._peers = Peers(self._path)
        self._feed = ChangeFeed(
            self, self.hub, self._peers, name=f"kstore-lmdb-feed:{self._path}", board=self._board
        )
        self._queue: GatherQueue[Any] = GatherQueue()
        self._submit_lock = threading.Lock()
        # Held by whichever thread runs a write transaction: the writer thread, or a lone
        # writer committing its own request (see :meth:`submit`).
        self._commit_lock = threading.Lock()
        self._lone_writes = True
        # Whether lone writes may be committed on their writer's own thread (tests that hold
        # the writer thread turn it off), and how many were.
        self._inline_ok = True
        self._inline_commits = 0
        self._main_thread = threading.main_thread().ident
        self._closed = False
        self._writer = threading.Thread(
            target=self._writer_loop, name=f"kstore-lmdb-writer:{self._path}", daemon=True
        )
        self._housekeeper = Housekeeper(
            self,
            compaction_interval_s=config.compaction_interval_s,
            history_retention_s=config.history_retention_s,
            revision=self._revision,
            name=f"kstore-lmdb-housekeeping:{self._path}",
            leads=self._leader.try_acquire,
        )
        self._ahead = AheadWorker(f"kstore-lmdb-ahead:{self._path}")
        self._page_size = self._env.stat()["psize"]
        self._runway = Runway(self._path / "data.mdb", self._write_locked)
        self._writer.start()
        self._housekeeper.start()
        self._feed.start()
        _open_backends.add(self)

    def _check_format(self, txn: lmdb.Transaction[bytes]) -> None:
        """Accept a store in this layout, initialise an empty one, refuse anything else."""
        found = txn.get(META_FORMAT)
        if found == FORMAT:
            return
        if found == RESTORING:
            raise InternalError(
                f"the LMDB store at {self._path} is a snapshot restore that did not finish; "
                "run kstore snapshot restore --force into it again"
            )
        if found is None:
            found = self._legacy_format(txn)
        if found is not None:
            raise InternalError(
                f"the LMDB store at {self._path} has format {found!r}, this kstore reads "
                f"{FORMAT!r}; open it with the kstore release that wrote it"
            )
        if txn.cursor().first():
            raise InternalError(
                f"the LMDB store at {self._path} has no kstore format marker; "
                f"this kstore reads {FORMAT!r}"
            )
        txn.put(META_FORMAT, FORMAT)
        # A fresh store is at revision 1, as a fresh etcd is: a list's revision is never 0
        # (which clients would read as "any").
        txn.put(META_REVISION, (1).to_bytes(8, "big"))

    def _legacy_format(self, txn: lmdb.Transaction[bytes]) -> bytes | None:
        # Format 1 kept its marker in a named database, whose record sits in the main one.
        if txn.get(_LEGACY_META_DB) is None:
            return None
        try:
            meta = self._env.open_db(_LEGACY_META_DB, txn=txn, create=False)
        except lmdb.Error:
            return b"unknown"
        return txn.get(_LEGACY_FORMAT_KEY, db=meta) or b"unknown"

    # -- Backend -------------------------------------------------------------------------

    def storage_for(self, config: ResourceStorageConfig) -> Storage:
        return LmdbStorage(self, config)

    def current_revision(self) -> int:
        """The store's revision now, whichever process committed it (one read)."""
        with self.read() as txn:
            return revision_of(txn)

    def sync(self) -> int:
        """Publish to this process's watchers every change committed up to now by any process
        sharing the store (see :mod:`kstore.storage._lmdb_feed`); the store's revision. Once
        per :class:`~kstore.storage.read_point.single_sync` scope."""
        self._check_usable()
        return synced_once(self, self._feed.sync_for_read)

    @property
    def leads(self) -> bool:
        """Whether this process runs the store's leader-only loops (taking the lead if no
        process holds it): one of the processes sharing the store does."""
        return not self._closed and self._leader.try_acquire()

    def note_foreign(self, compacted: int, min_expiry: int) -> None:
        """The change feed read other processes' changes: follow their compaction, and wake
        the reaper for an expiry they set (it runs here if this process leads)."""
        if compacted > self._compacted:
            self._compacted = compacted
        if min_expiry and self._leader.held:
            self._housekeeper.poke(min_expiry)

    def check_readers(self) -> None:
        """Free the reader slots of processes that died (kill -9) so that they do not pin old
        pages (LMDB clears them only when asked)."""
        if not self._closed and not self._forked:
            self._env.reader_check()

    @property
    def compacted_revision(self) -> int:
        """The store's compacted revision, whichever process compacted it (one read): the
        change feed brings another process's compaction here only when it next runs."""
        if self._closed or self._forked:
            return self._compacted
        with self.read() as txn:
            return max(self._compacted, meta_int(txn, META_COMPACTED))

    @property
    def path(self) -> Path:
        return self._path

    @property
    def lone_writes(self) -> bool:
        """Whether the last commit carried a single write: a hint that the next one will be
        alone too (a sequential writer), for callers that can do some work before queueing
        rather than after their write is committed."""
        return self._lone_writes

    @property
    def write_commits(self) -> int:
        """Write transactions committed in this store's life (LMDB's transaction id): with the
        writes acknowledged meanwhile, how many each commit carried (group commit)."""
        self._check_usable()
        return int(self._env.info()["last_txnid"])

    @property
    def progress_notify_interval(self) -> float:
        return self._config.progress_notify_interval_s

    def compact(self, revision: int | None = None) -> int:
        if revision is None:
            target = self._housekeeper.compaction_target()
            if target is None or target <= self._compacted:
                return self._compacted
        else:
            current = self.current_revision()
            if revision > current:
                raise TooLargeResourceVersion(revision, current)
            target = revision
        outcome = self.submit(CompactRequest(target))
        return outcome.revision

    def close(self) -> None:
        self._housekeeper.request_stop()
        with self._submit_lock:
            if self._closed:
                return
            self._closed = True
            self._queue.put(_STOP)
        self._feed.stop()
        # Writes queued before the close are committed first.
        if threading.current_thread() is not self._writer:
            self._writer.join()
        self._housekeeper.join()
        self._ahead.stop()
        # A lone writer may still be committing on its own thread: its changes are published
        # before the watchers are ended.
        self._commit_lock.acquire()
        self._commit_lock.release()
        self.hub.close()
        self._gate.hold_exclusive()
        try:
            if not self._forked:
                self._env.close()
            self._runway.close()
        finally:
            self._gate.release_exclusive()
            self._peers.close()
            self._leader.release()
            self._lock.release()
            release_in_process(self._identity)
            _open_backends.discard(self)

    def __enter__(self) -> LmdbBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the engine interface used by LmdbStorage ---------------------------------------------

    def read(self) -> _ReadTxn:
        """A short read transaction: ``with backend.read() as txn: ...``."""
        return _ReadTxn(self)

    def submit(self, request: Request) -> Outcome:
        """Have ``request`` committed and return its outcome (raises its error)."""
        self._check_usable()
        if (
            self._lone_writes
            and self._inline_ok
            and self._queue.empty()
            and isinstance(request, _INLINE_REQUESTS)
            and threading.get_ident() != self._main_thread
            and self._commit_lock.acquire(blocking=False)
        ):
            try:
                outcome = self._commit_inline(request)
            finally:
                self._commit_lock.release()
            if outcome is not None:
                if outcome.error is not None:
                    raise outcome.error
                return outcome
        request.attach()
        with self._submit_lock:
            if self._closed:
                raise Unavailable(f"the LMDB store at {self._path} is closed")
            self._queue.put(request)
        outcome = request.wait()
        if outcome.error is not None:
            raise outcome.error
        return outcome

    async def submit_async(self, request: Request) -> Outcome:
        """:meth:`submit` for a caller on an asyncio event loop: always through the writer
        thread (an inline commit would hold the loop for an fsync), the loop woken once per
        commit for all its requests in it."""
        self._check_usable()
        future = request.attach_future(asyncio.get_running_loop())
        with self._submit_lock:
            if self._closed:
                raise Unavailable(f"the LMDB store at {self._path} is closed")
            self._queue.put(request)
        await future
        outcome = request.outcome
        assert outcome is not None
        if outcome.error is not None:
            raise outcome.error
        return outcome

    def _commit_inline(self, request: Request) -> Outcome | None:
        """Commit ``request`` alone on the calling thread (commit lock held); None when the
        writer thread must take it after all (the store closed, or writes queued meanwhile).

        A lone writer gains most from this: handing a write to the writer thread and being
        woken after its commit are two thread wake-ups, each tens of microseconds on the
        shared 2-core dev VM, where a durable commit is ~400 us. Writers that overlap still
        share commits through the writer thread: the first write of a burst may go inline,
        the rest queue meanwhile and make the next commit a group one, which ends the lone
        regime (:attr:`lone_writes`) until a commit carries one write again.

        Never on the main thread: it alone receives asynchronous exceptions (a
        KeyboardInterrupt from a signal handler), and one landing between a commit and the
        publication of its changes would leave watchers with a gap and the backend with a
        stale revision. Elsewhere nothing interrupts the few statements in between, as on
        the writer thread."""
        if self._closed or not self._queue.empty():
            return None
        self._run_batch([request])
        self._inline_commits += 1
        return request.outcome

    @staticmethod
    def now_ms() -> int:
        return time.time_ns() // 1_000_000

    # -- writer thread ------------------------------------------------------------------------

    def _writer_loop(self) -> None:
        take, empty = self._queue.take, self._queue.empty
        max_batch = self._config.max_batch
        # Writers woken by the last commit, and how long that commit took.
        returning = 0
        commit_s = 0.0
        inline_seen = 0
        while True:
            if self._purge_pending and empty():
                with self._commit_lock:
                    self._purge_step()
                continue
            batch: list[Any] = take(1, max_batch)
            if inline_seen != self._inline_commits:
                # Lone writers committed on their own threads since: nobody is coming back.
                inline_seen = self._inline_commits
                returning = 0
            if returning > len(batch) and _STOP not in batch:
                # Group commit: give the writers of the last commit the time of one commit to
                # come back with their next write, so that the next fsync serves them and the
                # ones already waiting together. Without this, writers split into two groups
                # that take turns, each commit carrying half of them (16 creators of 5 KiB
                # Pods: 7.6 creates per commit instead of ~15, and more kernel CPU per create
                # for the same fsync'd pages).
                batch += take(
                    min(returning, max_batch) - len(batch),
                    max_batch - len(batch),
                    timeout=min(commit_s, _MAX_GATHER_S),
                )
            with self._commit_lock:
                if len(batch) < max_batch and not empty():
                    # Writes that queued while a lone writer held the lock join this commit.
                    batch += take(0, max_batch - len(batch))
                if _STOP in batch:
                    batch = batch[: batch.index(_STOP)]
                    if batch:
                        self._run_batch(batch)
                    return
                started = time.perf_counter()
                try:
                    self._run_batch(batch)
                except Exception as exc:
                    # A bug here must not leave writers waiting forever.
                    _log.exception("LMDB writer of %s failed a batch", self._path)
                    for req in batch:
                        if req.outcome is None:
                            req.resolve(Outcome(error=InternalError(f"write failed: {exc}")))
                commit_s = time.perf_counter() - started
                returning = len(batch)
                if self._purge_pending:
                    # One purge chunk per batch keeps compaction moving under constant load.
                    self._purge_step()

    def _run_batch(self, batch: list[Request]) -> None:
        """Commit ``batch``, publish its changes, then wake its writers."""
        if self._failed is not None:
            for req in batch:
                req.resolve(Outcome(error=self._failed))
            return
        try:
            result, foreign = self._commit(batch)
        except Exception as exc:
            if len(batch) > 1 and self._failed is None:
                # Isolate the request that broke the transaction: rerun each alone, so one bad
                # request fails by itself and its batch-mates still commit.
                for req in batch:
                    self._run_batch([req])
                return
            error = (
                exc
                if isinstance(exc, KStoreError)
                else InternalError(f"write failed: {type(exc).__name__}: {exc}")
            )
            batch[0].resolve(Outcome(error=error))
            return
        self._revision = result.revision
        self._runway.after_commit(self._used_bytes)
        for req, outcome in zip(batch, result.outcomes, strict=True):
            if isinstance(req, CompactRequest) and outcome.revision > self._compacted:
                self._compacted = outcome.revision
                self._purge_pending = True
        # Noted before any writer of the batch is woken, so that its next write sees it.
        self._lone_writes = len(batch) == 1
        # Published before any writer of the batch is woken: a writer that watches from its
        # new resourceVersion finds every change up to it already dispatched.
        self._feed.publish_commit(foreign, result.events, result.revision)
        hand_back(batch, result.outcomes)
        if result.ttl_written:
            self._housekeeper.poke(result.ttl_written)

    def _begin_write(self) -> lmdb.Transaction[bytes]:
        """A write transaction (commit lock held), once LMDB's write lock is free."""
        while True:
            try:
                return self._env.begin(write=True)
            except lmdb.MapResizedError:
                self._adopt_map_size()

    @contextmanager
    def _write_locked(self) -> Iterator[object]:
        """LMDB's write lock held (an empty write transaction): no process commits meanwhile."""
        txn = self._begin_write()
        try:
            yield txn
        finally:
            txn.abort()

    def _commit(self, batch: list[Request]) -> tuple[Batch, list[RawEvent]]:
        """Apply ``batch`` in one write transaction and commit it (fsync'd when durable);
        with the changes other processes committed since this hub's last publication."""
        while True:
            txn = self._begin_write()
            try:
                # The store's revision, not this process's: other processes commit too.
                base = revision_of(txn)
                foreign = self._feed.foreign_before(txn, base)
                result = apply_batch(txn, batch, base, self.now_ms())
                # Before the commit, so before any writer is answered (see _lmdb_board).
                self._board.raise_to(result.revision)
                if len(batch) > 1:
                    # Their writers' decodes run while the commit below waits for the disk.
                    self._ahead.hand(batch)
                txn.commit()
                return result, foreign
            except lmdb.MapFullError:
                txn.abort()
                self._grow()
            except lmdb.Error as exc:
                txn.abort()
                raise self._lmdb_error(exc) from exc
            except BaseException:
                txn.abort()
                raise

    def _purge_step(self) -> None:
        try:
            while True:
                txn = self._begin_write()
                try:
                    more = purge_history(txn, _PURGE_CHUNK)
                    txn.commit()
                    break
                except lmdb.MapFullError:
                    txn.abort()
                    self._grow()
                except BaseException:
                    txn.abort()
                    raise
        except (KStoreError, lmdb.Error):
            # Purging is resumable (its position is stored); try again after the next batch.
            return
        self._purge_pending = more

    def _used_bytes(self) -> int:
        return (int(self._env.info()["last_pgno"]) + 1) * self._page_size

    def _grow(self) -> None:
        if self._map_size >= self._config.max_map_size:
            raise InternalError(
                f"database space exceeded: the LMDB map of {self._path} reached its limit of "
                f"{self._config.max_map_size} bytes"
            )
        new_size = min(self._map_size * 2, self._config.max_map_size)
        self._gate.hold_exclusive()
        try:
            self._env.set_mapsize(new_size)
            self._map_size = int(self._env.info()["map_size"])
        finally:
            self._gate.release_exclusive()

    def _adopt_map_size(self) -> None:
        """Take the map size another process grew the store to (LMDB: ``set_mapsize(0)``,
        with no transaction of this process open: the commit lock held, readers held off)."""
        self._gate.hold_exclusive()
        try:
            self._env.set_mapsize(0)
            self._map_size = int(self._env.info()["map_size"])
        finally:
            self._gate.release_exclusive()

    def _lmdb_error(self, exc: lmdb.Error) -> KStoreError:
        """The one place LMDB exceptions become kstore errors."""
        text = str(exc)
        if isinstance(exc, lmdb.DiskError) or "No space left" in text or "Input/output" in text:
            # LMDB reports a short write (full disk, file size limit) as EIO; the transaction
            # was aborted, so every acknowledged write is intact.
            return InternalError(
                f"could not write to the LMDB store at {self._path} (is its disk full?): {text}"
            )
        if isinstance(exc, lmdb.ReadersFullError):
            return Unavailable(f"too many concurrent readers of {self._path}: {exc}")
        if isinstance(exc, (lmdb.PanicError, lmdb.CorruptedError, lmdb.VersionMismatchError)):
            self._failed = InternalError(f"the LMDB store at {self._path} failed: {exc}")
            return self._failed
        return InternalError(f"LMDB error on {self._path}: {exc}")

    def _check_usable(self) -> None:
        if self._closed:
            raise Unavailable(f"the LMDB store at {self._path} is closed")
        if self._forked:
            raise InternalError(
                "this LMDB store was opened by the parent process; open it again after fork"
            )
        if self._failed is not None:
            raise self._failed
