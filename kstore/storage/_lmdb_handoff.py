"""Hand-offs between the threads that write and the LMDB writer thread, both ways.

- :class:`GatherQueue` carries requests to the writer. Unlike ``queue.SimpleQueue``, the writer
  can wait for a *count*: "at least N requests, or until a deadline". Group commit uses that
  to let the writers woken by one commit come back before the next commit starts (see
  :meth:`kstore.storage.lmdb.LmdbBackend._writer_loop`). The writer sleeps on a doorbell and
  is woken once, by the put that reaches the count it waits for, not by every put.
- :class:`Doorbell` carries the answer back: one per waiting thread (an ``eventfd``, or a pipe
  where there is none), rung by the writer once per signal it gives. Ringing it is a system
  call that releases the interpreter lock, unlike releasing a ``threading.Lock``: the writer
  wakes a batch of writers without holding the lock for the kernel's wake-up work, which on
  this virtual machine is most of the cost of a wake-up (py-spy with ``--gil``: 39% of the
  writer thread's lock time went to releasing its waiters' locks), and the woken threads can
  run meanwhile on the other core. The waiters of one commit are rung as a relay (the writer
  rings the first, each woken waiter the next: :func:`kstore.storage._lmdb_writes.hand_back`).

Invariants: requests come out of the queue in the order they were put; a doorbell's rings are
counted (semaphore semantics), so none is lost and each ``wait`` consumes exactly one; a thread
has at most one request in flight on its own doorbell (:func:`doorbell` hands out a spare one
otherwise).
"""

from __future__ import annotations

import os
import select
import threading
from collections import deque
from typing import Generic, TypeVar

__all__ = ["Doorbell", "GatherQueue", "doorbell"]

T = TypeVar("T")


class GatherQueue(Generic[T]):
    """Many producers, one consumer that takes batches and may wait for a count."""

    def __init__(self) -> None:
        self._items: deque[T] = deque()
        self._lock = threading.Lock()
        # The consumer sleeps on it; the producer that fills the count (``_want``) rings it,
        # at most once per wait.
        self._bell = Doorbell()
        self._want = 0

    def put(self, item: T) -> None:
        with self._lock:
            self._items.append(item)
            ring = bool(self._want) and len(self._items) >= self._want
            if ring:
                self._want = 0
        if ring:
            self._bell.ring()

    def qsize(self) -> int:
        return len(self._items)

    def empty(self) -> bool:
        return not self._items

    def take(self, count: int, limit: int, timeout: float | None = None) -> list[T]:
        """Up to ``limit`` items, oldest first, once at least ``count`` are queued; or what is
        queued when ``timeout`` seconds have passed (None: wait as long as it takes).
        Consumer only."""
        with self._lock:
            ready = len(self._items) >= count
            if not ready:
                self._want = count
        if not ready and not self._bell.wait(timeout):
            with self._lock:
                rung_late = self._want == 0
                self._want = 0
            if rung_late:
                # The count was reached between the timeout and the lock above, so the bell
                # is (about to be) rung for this wait: take the ring, or the next wait would
                # not sleep.
                self._bell.wait()
        with self._lock:
            items = self._items
            if len(items) <= limit:
                out = list(items)
                items.clear()
            else:
                out = [items.popleft() for _ in range(limit)]
        return out


class Doorbell:
    """A counting wake-up for one waiting thread: :meth:`ring` from any thread, :meth:`wait`
    from the owner. Both release the interpreter lock for their system call."""

    __slots__ = ("_poller", "_read", "_write", "busy")

    def __init__(self) -> None:
        if hasattr(os, "eventfd"):
            fd = os.eventfd(0, os.EFD_CLOEXEC | os.EFD_SEMAPHORE)
            self._read = self._write = fd
        else:  # pragma: no cover - platforms without eventfd
            self._read, self._write = os.pipe()
        self._poller: select.poll | None = None
        #: Whether a request of the owning thread is using it.
        self.busy = False

    def ring(self) -> None:
        if self._read == self._write:
            os.eventfd_write(self._write, 1)
        else:  # pragma: no cover
            os.write(self._write, b"\x01")

    def wait(self, timeout: float | None = None) -> bool:
        """Block until rung (True, one ring consumed) or until ``timeout`` seconds have passed
        (False; None: no limit)."""
        if timeout is not None:
            poller = self._poller
            if poller is None:
                # poll, not select: a descriptor number above FD_SETSIZE is fine.
                poller = self._poller = select.poll()
                poller.register(self._read, select.POLLIN)
            if not poller.poll(max(timeout, 0.0) * 1000.0):
                return False
        if self._read == self._write:
            # os.eventfd_read does not retry after a signal as the other os calls do (PEP
            # 475): a SIGTERM handled by the server, delivered to this thread, would end it.
            while True:
                try:
                    os.eventfd_read(self._read)
                    break
                except InterruptedError:
                    continue
        else:  # pragma: no cover
            os.read(self._read, 1)
        return True

    def __del__(self) -> None:
        os.close(self._read)
        if self._write != self._read:  # pragma: no cover
            os.close(self._write)


_local = threading.local()


def doorbell() -> Doorbell:
    """The calling thread's doorbell, marked busy; a spare one if it is busy already (a request
    abandoned by an exception in its wait, which may still be rung later)."""
    bell: Doorbell | None = getattr(_local, "bell", None)
    if bell is None or bell.busy:
        bell = Doorbell()
        _local.bell = bell
    bell.busy = True
    return bell
