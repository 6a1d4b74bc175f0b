"""Which etcd members answer at all: a quick probe after an attempt timed out.

When an attempt times out, the member it went to is not necessarily the one at fault: a
follower waits for a frozen leader just as long as the frozen leader itself does. Moving to
"the next member" may then pick the frozen one, and every call that starts there loses a
whole attempt. A frozen (SIGSTOPped) member is the one that answers nothing, not even
``Maintenance.Status``, which every live member answers locally in milliseconds, with or
without a leader. So after a timeout one probe round asks every member for its status at once
(gRPC futures, a short deadline) and reports which answered; the client then avoids the
silent ones and stops avoiding the live ones (:meth:`EtcdClient.probed
<kstore.storage._etcd_client.EtcdClient.probed>`).

At most one round runs at a time, on a daemon thread, and rounds are at least
``_MIN_INTERVAL`` apart, so a burst of timed-out calls costs one round.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import grpc  # type: ignore[import-untyped, unused-ignore]
from etcd3 import etcdrpc

__all__ = ["LivenessProbe"]

#: How long a member may take to answer its status: a live one answers in milliseconds.
PROBE_TIMEOUT = 0.5
_MIN_INTERVAL = 0.5


class LivenessProbe:
    """Probes ``stubs`` (one ``MaintenanceStub`` per member) on request; ``report`` is
    called with the indexes that answered and those that did not."""

    def __init__(
        self,
        stubs: Sequence[Any],
        report: Callable[[list[int], list[int]], None],
    ) -> None:
        self._stubs = list(stubs)
        self._report = report
        self._lock = threading.Lock()
        self._running = False
        self._last = 0.0

    def suspect(self) -> None:
        """Start a probe round unless one runs or one ran very recently."""
        now = time.monotonic()
        with self._lock:
            if self._running or now - self._last < _MIN_INTERVAL:
                return
            self._running = True
            self._last = now
        threading.Thread(target=self._round, name="kstore-etcd-probe", daemon=True).start()

    def _round(self) -> None:
        try:
            futures = []
            for stub in self._stubs:
                try:
                    futures.append(
                        stub.Status.future(etcdrpc.StatusRequest(), timeout=PROBE_TIMEOUT)
                    )
                except Exception:  # a closed channel: the client is closing
                    return
            answered: list[int] = []
            silent: list[int] = []
            for index, future in enumerate(futures):
                try:
                    future.result()
                    answered.append(index)
                except grpc.RpcError:
                    silent.append(index)
            self._report(answered, silent)
        finally:
            with self._lock:
                self._running = False
