"""History compaction on a timer, coordinated between kstore processes as the API server does.

Kubernetes' compactor (``pkg/storage/etcd3/compact.go``): every interval each process runs a
transaction on the key ``compact_rev_key`` (at the root of the keyspace, outside every prefix):
``If(version(compact_rev_key) == last seen version) Then(Put(compact_rev_key, rev seen one
interval ago)) Else(Get(compact_rev_key))``. Only the winner of that compare-and-swap compacts,
and it compacts to the revision it saw one interval earlier, so about one interval of history
is always kept, whatever the number of processes. A loser learns the current version and the
last compacted revision from the else-branch and tries again next interval.

Invariants: ``compacted_revision`` only increases; it is what this process knows (its own
compactions, what it read from ``compact_rev_key``, what etcd reported), a lower bound of the
cluster's real compacted revision. Errors in the timer loop are kept for :attr:`last_error`
and retried next interval, never raised into the caller of a storage method.
"""

from __future__ import annotations

import contextlib
import threading

from etcd3 import etcdrpc

from kstore.storage._etcd_client import CompactedError, EtcdClient

__all__ = ["COMPACT_REV_KEY", "Compactor"]

#: Kubernetes' key (no prefix) holding the last compacted revision; its version counts rounds.
COMPACT_REV_KEY = b"compact_rev_key"


class Compactor:
    """Compacts every ``interval`` seconds (0: only on demand) and tracks the compacted
    revision."""

    def __init__(self, client: EtcdClient, interval: float) -> None:
        self._client = client
        self._interval = interval
        self._lock = threading.Lock()
        self._compacted = 0
        # State of the compare-and-swap round, as Kubernetes keeps it between iterations.
        self._expect_version = 0
        self._rev_seen = 0
        self.last_error: BaseException | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if interval > 0:
            self._thread = threading.Thread(
                target=self._run, name="kstore-etcd-compactor", daemon=True
            )
            self._thread.start()

    @property
    def compacted_revision(self) -> int:
        return self._compacted

    def observe(self, revision: int) -> None:
        """Record that history up to ``revision`` is known to be compacted."""
        with self._lock:
            if revision > self._compacted:
                self._compacted = revision

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self.run_round()
            except Exception as exc:  # kept and retried next interval, as Kubernetes logs it
                self.last_error = exc
            else:
                self.last_error = None

    def run_round(self) -> int:
        """One round of the compare-and-swap protocol; the compacted revision afterwards."""
        with self._lock:
            expect_version, rev_seen = self._expect_version, self._rev_seen
        compare = etcdrpc.Compare(
            result=etcdrpc.Compare.EQUAL,
            target=etcdrpc.Compare.VERSION,
            key=COMPACT_REV_KEY,
            version=expect_version,
        )
        put = etcdrpc.RequestOp(
            request_put=etcdrpc.PutRequest(key=COMPACT_REV_KEY, value=str(rev_seen).encode())
        )
        get = etcdrpc.RequestOp(request_range=etcdrpc.RangeRequest(key=COMPACT_REV_KEY))
        response = self._client.txn(
            etcdrpc.TxnRequest(compare=[compare], success=[put], failure=[get])
        )
        current_rev = int(response.header.revision)
        if not response.succeeded:
            kvs = response.responses[0].response_range.kvs
            with self._lock:
                self._rev_seen = current_rev
                if kvs:
                    self._expect_version = int(kvs[0].version)
                    with contextlib.suppress(ValueError):
                        compacted = int(kvs[0].value)
                        self._compacted = max(self._compacted, compacted)
                return self._compacted
        with self._lock:
            self._expect_version = expect_version + 1
            self._rev_seen = current_rev
        if rev_seen == 0:
            # Nothing seen one interval ago: the first round only records where we are.
            return self._compacted
        # Someone compacted further already: history is still compacted up to rev_seen.
        with contextlib.suppress(CompactedError):
            self._client.compact(rev_seen)
        self.observe(rev_seen)
        return self._compacted

    def compact_to(self, revision: int) -> int:
        """Compact history up to ``revision`` now (on demand); the compacted revision."""
        with contextlib.suppress(CompactedError):  # already compacted at or past it
            self._client.compact(revision)
        self.observe(revision)
        return self._compacted

    def stop(self) -> None:
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)
