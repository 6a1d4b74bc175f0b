"""The LMDB backend's exclusion mechanisms: across processes, and around a map resize.

- :class:`DirectoryLock`: an ``flock`` on ``<dir>/kstore.lock`` for as long as a store is
  open. Backends hold it *shared*: several processes may open one store (LMDB's own lock file
  serialises their write transactions and tracks their readers). Tools that rewrite the whole
  store (snapshot restore, defragmentation, migration into it) hold it *exclusive*, so they
  get a clear Unavailable while any process has the store open, and no process opens it while
  they run. The kernel drops the lock when its holder dies, even by ``kill -9``. An exclusive
  holder writes its pid into the file; shared holders are named by the peer registry
  (:mod:`kstore.storage._lmdb_feed`).
- One open per process and store: LMDB forbids opening an environment twice in one process
  (closing one of two opens drops the process's locks for both), so a second open of the same
  directory in this process is refused (:func:`claim_in_process`).
- :class:`LeaderLock`: an exclusive ``flock`` on ``<dir>/kstore.leader``, tried without
  waiting; its holder (one process of those sharing the store) runs the leader-only loops
  (TTL reaper, compaction, and what the layers above gate on it). Taken for the life of the
  process's open store; when the holder dies the kernel frees it and the next try elsewhere
  wins it.
- :class:`Gate`: many short reads at once, or the map resize alone (LMDB forbids
  ``mdb_env_set_mapsize`` while any transaction of the process is open).
"""

from __future__ import annotations

import fcntl
import os
import threading
from pathlib import Path

from kstore.errors import Unavailable

__all__ = [
    "LEADER_FILE",
    "LOCK_FILE",
    "PEERS_DIR",
    "DirectoryLock",
    "Gate",
    "LeaderLock",
    "claim_in_process",
    "release_in_process",
]

LOCK_FILE = "kstore.lock"
LEADER_FILE = "kstore.leader"
#: One file per process that has the store open (see :mod:`kstore.storage._lmdb_feed`).
PEERS_DIR = "kstore.peers"

_opened_here: set[tuple[int, int]] = set()
_opened_lock = threading.Lock()


def _identity(directory: Path) -> tuple[int, int]:
    info = directory.stat()
    return info.st_dev, info.st_ino


def claim_in_process(directory: Path) -> tuple[int, int]:
    """Note that this process opens the store in ``directory``; Unavailable when it already
    has it open. Returns the token :func:`release_in_process` takes."""
    identity = _identity(directory)
    with _opened_lock:
        if identity in _opened_here:
            raise Unavailable(
                f"the LMDB store at {directory} is already open in this process; "
                "a process may open a store once"
            )
        _opened_here.add(identity)
    return identity


def release_in_process(identity: tuple[int, int]) -> None:
    with _opened_lock:
        _opened_here.discard(identity)


def _forget_after_fork() -> None:
    # A forked child has none of its parent's environments open (LMDB's are unusable there).
    _opened_here.clear()


os.register_at_fork(after_in_child=_forget_after_fork)


def holders(directory: Path) -> list[str]:
    """The pids of the processes registered as having the store open (maybe stale)."""
    try:
        names = os.listdir(directory / PEERS_DIR)
    except OSError:
        return []
    return sorted((n for n in names if n.isdigit()), key=int)


class DirectoryLock:
    """An ``flock`` on ``<directory>/kstore.lock``: shared (a backend) or exclusive (a tool
    that rewrites the store, which writes its pid into the file)."""

    def __init__(self, directory: Path, *, shared: bool = False) -> None:
        path = directory / LOCK_FILE
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
            os.close(fd)
            if shared:
                raise Unavailable(
                    f"the LMDB store at {directory} is held by a tool rewriting it"
                    + (f" (process {holder})" if holder else "")
                    + "; open it once that has finished"
                ) from None
            pids = holders(directory)
            raise Unavailable(
                f"the LMDB store at {directory} is already open"
                + (f" (process {', '.join(pids)})" if pids else "")
                + "; close every process using it first"
            ) from None
        except OSError:
            os.close(fd)
            raise
        self._shared = shared
        if not shared:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd: int | None = fd

    def release(self) -> None:
        """Unlock (an exclusive holder leaves the file empty). The file itself stays: removing
        it would let one opener lock the old inode while the next creates and locks a new
        one."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            try:
                if not self._shared:
                    os.ftruncate(fd, 0)
            finally:
                os.close(fd)


class LeaderLock:
    """The leader-only loops' lock: one holder among the processes sharing a store."""

    def __init__(self, directory: Path) -> None:
        self._fd = os.open(directory / LEADER_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        self._held = False
        self._lock = threading.Lock()

    def try_acquire(self) -> bool:
        """Whether this process leads (taking the lock if it is free)."""
        if self._held:
            return True
        with self._lock:
            if self._held or self._fd < 0:
                return self._held
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            self._held = True
            return True

    @property
    def held(self) -> bool:
        return self._held

    def release(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)  # drops the flock
                self._fd = -1
            self._held = False


class Gate:
    """Shared entry for reads, exclusive entry for the resize (which waits for the readers in
    flight and holds new ones back meanwhile)."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0
        self._exclusive = False

    def enter(self) -> None:
        with self._cond:
            while self._exclusive:
                self._cond.wait()
            self._readers += 1

    def leave(self) -> None:
        with self._cond:
            self._readers -= 1
            if self._exclusive and self._readers == 0:
                self._cond.notify_all()

    def hold_exclusive(self) -> None:
        with self._cond:
            while self._exclusive:
                self._cond.wait()
            self._exclusive = True
            while self._readers:
                self._cond.wait()

    def release_exclusive(self) -> None:
        with self._cond:
            self._exclusive = False
            self._cond.notify_all()
