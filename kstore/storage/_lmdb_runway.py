"""Zeroed space kept ahead of the LMDB data file's end, so that commits do not grow the file.

Why: LMDB writes a commit's new pages past the end of ``data.mdb``, so most commits make the
file longer, and ``fdatasync`` of a file whose size changed must also commit the
filesystem's journal (ext4): one more synchronous write per commit. Overwriting blocks that
are already allocated and written is a plain data flush. So, like a database that pre-fills
its log segments with zeros, :class:`Runway` writes zeros past the last page LMDB uses, a
chunk at a time, and flushes them once; LMDB's next commits then land inside the file.
(``fallocate`` is not enough: its blocks are marked unwritten, and the first write to each
one is a metadata change again.) Measured on the dev VM with raw py-lmdb, one 5 KiB put per
durable commit into a store of 3,000, a median commit of 243-300 us with zeros ahead against
310-380 us growing the file (three runs); ``kstore bench storage``, sequential durable create
0.85-0.89x raw instead of 0.76-0.81x, 16 concurrent creators unchanged (4 paired runs).

Invariants:
- zeros are only written past the last page of the last commit, while LMDB's write lock is
  held (``exclusive``: an empty write transaction, which keeps every process sharing the
  store from committing meanwhile), so LMDB never writes there at the same time; LMDB ignores
  everything past its last page, so the zeros are never read, and a crash in the middle of a
  fill leaves a store as good as before;
- nothing here fails a write: a fill that cannot be written (a full disk, a file size limit)
  turns the runway off, and LMDB grows the file as it would without it;
- small stores (tests, a fresh server) never get a runway: it starts once the store uses
  :data:`MIN_STORE_BYTES`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

__all__ = ["MIN_STORE_BYTES", "Runway"]

_log = logging.getLogger(__name__)

#: A store smaller than this grows the file as LMDB does.
MIN_STORE_BYTES = 8 << 20
#: What one fill adds: ~5 ms of writing on the dev VM, during which commits wait, so a fill
#: is kept small (a 32 MiB fill, ~40 ms, cost 300 sequential creates more than it saved them).
_FILL = 4 << 20
#: When less than this is left ahead of the last page, the next check fills more.
_LOW_WATER = 2 << 20
#: Commits between two looks at the store's size (LMDB's ``env.info()``).
_CHECK_EVERY = 16
#: Fill only while commits grow the store by less than this on average: zeroing costs disk
#: bandwidth per byte, the journal write it saves is one per commit, so large (group) commits
#: lose more to the zeros than they gain (16 writers of 5 KiB Pods, ~130 KiB per commit:
#: 10-12% fewer creates/s with fills; lone commits grow the store by ~8 KiB).
_MAX_GROWTH_PER_COMMIT = 48 << 10
_ZEROS = bytes(1 << 20)


class Runway:
    """The zeroed space past the end of one LMDB environment's data file."""

    def __init__(
        self, data_file: Path, exclusive: Callable[[], AbstractContextManager[object]]
    ) -> None:
        self._path = data_file
        self._exclusive = exclusive
        self._fd = os.open(data_file, os.O_WRONLY | os.O_CLOEXEC)
        self._end = os.fstat(self._fd).st_size
        self._commits = 0
        # The store's size at the last look, to tell small commits from large ones.
        self._used = 0
        self.enabled = True

    def after_commit(self, used_bytes_of: Callable[[], int]) -> None:
        """Commit lock held, no write transaction open: fill more zeros if the last page of
        the store (``used_bytes_of()``, called only now and then) comes near the end."""
        self._commits += 1
        if not self.enabled or self._commits % _CHECK_EVERY:
            return
        used = used_bytes_of()
        growth, self._used = used - self._used, used
        if (
            used < MIN_STORE_BYTES
            or self._end - used >= _LOW_WATER
            or growth > _MAX_GROWTH_PER_COMMIT * _CHECK_EVERY
        ):
            return
        try:
            with self._exclusive():
                # Read again under the lock: another process may have committed since.
                start = max(os.fstat(self._fd).st_size, used_bytes_of())
                for offset in range(start, start + _FILL, len(_ZEROS)):
                    os.pwrite(self._fd, _ZEROS, offset)
                os.fdatasync(self._fd)
        except OSError as exc:
            # A full disk or a file size limit: LMDB's own writes will say so, clearly.
            _log.warning("no zeroed runway for %s any more: %s", self._path, exc)
            self.enabled = False
            return
        self._end = start + _FILL

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
