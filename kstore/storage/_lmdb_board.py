"""The revision board: the highest revision any process has committed to a store, in one
shared word, so a consistent read learns that nothing is new without a read transaction.

A consistent read on a store several processes share must first bring this process's watch hub
up to the store's revision (:meth:`kstore.storage._lmdb_feed.ChangeFeed.sync`). Reading that
revision takes a read transaction and three B-tree lookups, ~20 us of a ~300 us GET served from
the watch cache, and nearly always finds nothing new. The board is an 8-byte word in
``<dir>/kstore.revision``, mapped shared by every process: each commit raises it to its last
revision *inside* its write transaction, before committing, so before any writer is answered.
A reader that finds the board at or below its hub's revision knows that every write
acknowledged before it looked is in the hub already; otherwise it reads the store as before.

Raised only inside write transactions, which LMDB serialises across processes, so the word
never goes down. A transaction that raised it and then failed leaves it one commit ahead of
the store: readers take the slow path until the next commit reaches the same revision. The
word is aligned and written whole (one 8-byte store); it is not durable and need not be: every
open raises it to the store's revision first. A tool that rewrites a store whole (a snapshot
restore, a migration into it) may leave it at a lower revision than before: holding the
directory exclusively, it removes the word (:func:`forget_board`), else readers would take
the slow path until the store's revision passed the old word again. The mapping is never
unmapped by hand (a reader racing a close must not touch a released view): it goes with the
backend.
"""

from __future__ import annotations

import mmap
import os
from pathlib import Path

__all__ = ["BOARD_FILE", "RevisionBoard", "forget_board"]

BOARD_FILE = "kstore.revision"
_SIZE = 8


class RevisionBoard:
    """The shared word of one store directory (see the module docstring)."""

    __slots__ = ("_map", "_word")

    def __init__(self, directory: Path) -> None:
        fd = os.open(directory / BOARD_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            if os.fstat(fd).st_size < _SIZE:
                os.ftruncate(fd, _SIZE)
            self._map = mmap.mmap(fd, _SIZE, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        finally:
            os.close(fd)
        self._word = memoryview(self._map).cast("Q")

    def read(self) -> int:
        """The highest revision any process has begun committing."""
        return int(self._word[0])

    def raise_to(self, revision: int) -> None:
        """Inside a write transaction: the board is at least ``revision`` from now on."""
        if self._word[0] < revision:
            self._word[0] = revision


def forget_board(directory: Path) -> None:
    """Remove the board of the store in ``directory`` (its directory lock held exclusively:
    no process maps it); the next open makes it anew from the store's revision."""
    (directory / BOARD_FILE).unlink(missing_ok=True)
