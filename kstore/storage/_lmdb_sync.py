"""The LMDB backend's two exclusion mechanisms: across processes, and around a map resize.

- :class:`DirectoryLock`: an exclusive ``flock`` on ``<dir>/kstore.lock`` for as long as a
  store is open, so a second process (or a second open in this one, which LMDB forbids too)
  gets a clear Unavailable naming the holder instead of a corrupted store. The kernel drops the
  lock when the holder dies, even by ``kill -9``. The file holds the holder's pid while the
  store is open, and nothing once it is closed.
- :class:`Gate`: many short reads at once, or the map resize alone (LMDB forbids
  ``mdb_env_set_mapsize`` while any transaction of the process is open).
"""

from __future__ import annotations

import fcntl
import os
import threading
from pathlib import Path

from kstore.errors import Unavailable

__all__ = ["LOCK_FILE", "DirectoryLock", "Gate"]

LOCK_FILE = "kstore.lock"


class DirectoryLock:
    """An exclusive ``flock`` on ``<directory>/kstore.lock``, holding the owner's pid."""

    def __init__(self, directory: Path) -> None:
        path = directory / LOCK_FILE
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
            os.close(fd)
            raise Unavailable(
                f"the LMDB store at {directory} is already open"
                + (f" (process {holder})" if holder else "")
                + "; one process may open it at a time"
            ) from None
        except OSError:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd: int | None = fd

    def release(self) -> None:
        """Unlock, leaving the file empty. The file itself stays: removing it would let one
        opener lock the old inode while the next creates and locks a new one."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            try:
                os.ftruncate(fd, 0)
            finally:
                os.close(fd)


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
