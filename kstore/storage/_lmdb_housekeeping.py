"""The LMDB backend's housekeeping thread: the TTL reaper and the compaction schedule.

Only the leader runs it (``leads``: the holder of the store's leader lock, one process of
those sharing the store); the others look again every :data:`_FOLLOWER_RETRY_S`, so a
leader that dies is replaced within about that. It never writes itself: it hands
:class:`ExpireRequest` and :class:`CompactRequest` to the writer like any client, so expiries
take revisions in order with every other write.

- Reaper: sleeps until the earliest expiry in the ``ttl`` index (the writer pokes it when a
  write sets an earlier one), then has every due value removed, each its own revision and
  DELETED event. Reads never depend on it: they hide expired values themselves.
- Compaction, as Kubernetes' compactor does with etcd: every ``compaction_interval_s`` it
  records the current revision and compacts to the newest recorded revision that is at least
  ``history_retention_s`` old, so at least that much history is always kept.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol

from kstore.storage._lmdb_records import TTL
from kstore.storage._lmdb_writes import CompactRequest, ExpireRequest, Outcome, Request

__all__ = ["Housekeeper"]

_log = logging.getLogger(__name__)

#: Expired values removed per reaper transaction.
_EXPIRE_CHUNK = 1000
#: The longest sleep: a safety net should a poke ever be missed.
_MAX_SLEEP = 60.0
#: How often a process that does not lead tries to take the lead.
_FOLLOWER_RETRY_S = 1.0


class _Host(Protocol):
    def read(self) -> AbstractContextManager[Any]: ...

    def submit(self, request: Request) -> Outcome: ...

    def current_revision(self) -> int: ...

    @property
    def compacted_revision(self) -> int: ...

    @staticmethod
    def now_ms() -> int: ...


class Housekeeper:
    """Runs the reaper and the compaction schedule of one backend on its own thread."""

    def __init__(
        self,
        host: _Host,
        *,
        compaction_interval_s: float,
        history_retention_s: float,
        revision: int,
        name: str,
        leads: Callable[[], bool] = lambda: True,
    ) -> None:
        self._host = host
        self._leads = leads
        self._interval = compaction_interval_s
        self._retention = history_retention_s
        self._cond = threading.Condition(threading.Lock())
        self._stopping = False
        self._next_wake_ms = 0
        self._samples: deque[tuple[float, int]] = deque([(time.monotonic(), revision)])
        self._samples_lock = threading.Lock()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def request_stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()

    def join(self) -> None:
        if threading.current_thread() is not self._thread:
            self._thread.join()

    def poke(self, expiry_ms: int) -> None:
        """A value now expires at ``expiry_ms``: wake up earlier than planned if needed."""
        with self._cond:
            if not self._next_wake_ms or expiry_ms < self._next_wake_ms:
                self._cond.notify_all()

    def compaction_target(self) -> int | None:
        """Record the current revision, forget samples older than needed, and return the newest
        revision at least ``history_retention_s`` old (None when there is none yet)."""
        now = time.monotonic()
        cutoff = now - self._retention
        with self._samples_lock:
            samples = self._samples
            samples.append((now, self._host.current_revision()))
            while len(samples) > 1 and samples[1][0] <= cutoff:
                samples.popleft()
            taken, revision = samples[0]
            return revision if taken <= cutoff else None

    def _loop(self) -> None:
        interval = self._interval
        next_compaction = time.monotonic() + interval if interval > 0 else float("inf")
        while not self._stopping:
            try:
                wait = self.step(next_compaction)
            except Exception:
                if self._stopping:
                    return
                # The store stays usable; reaping and compaction are retried shortly.
                _log.exception("LMDB housekeeping failed")
                wait = 1.0
            if time.monotonic() >= next_compaction:
                next_compaction = time.monotonic() + interval
            with self._cond:
                if self._stopping:
                    return
                self._next_wake_ms = self._host.now_ms() + int(wait * 1000)
                self._cond.wait(wait)
                self._next_wake_ms = 0

    def _next_expiry_ms(self) -> int:
        host = self._host
        with host.read() as txn:
            cursor = txn.cursor()
            if not cursor.set_range(TTL):
                return 0
            first = cursor.key()
            if first[:1] != TTL:
                return 0
            return int.from_bytes(first[1:9], "big")

    def step(self, next_compaction: float) -> float:
        """Reap what has expired, compact when due; return how long to sleep."""
        if not self._leads():
            return _FOLLOWER_RETRY_S
        host = self._host
        next_expiry = self._next_expiry_ms()
        now_ms = host.now_ms()
        while next_expiry and next_expiry <= now_ms and not self._stopping:
            outcome = host.submit(ExpireRequest(_EXPIRE_CHUNK))
            if not outcome.more:
                next_expiry = self._next_expiry_ms()
                now_ms = host.now_ms()
        if time.monotonic() >= next_compaction and not self._stopping:
            target = self.compaction_target()
            if target is not None and target > host.compacted_revision:
                host.submit(CompactRequest(target))
        wait = max(0.0, next_compaction - time.monotonic())
        if next_expiry:
            wait = min(wait, max(0.0, (next_expiry - host.now_ms()) / 1000.0))
        return min(wait, _MAX_SLEEP)
