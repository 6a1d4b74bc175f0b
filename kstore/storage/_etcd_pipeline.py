"""Unary etcd calls from many threads issued by one: a pipeline of gRPC futures per member.

Why: on the dev VM (2 cores, shared), 32 threads each making blocking gRPC calls reach only
about 0.75x the transactions per second of one thread keeping 32 futures in flight, and spend
~1.5x the process CPU per transaction (blocking calls: 335-390 us, futures: 200-250 us, 800
create transactions of 5 KiB per run, medians of 5 runs; perf notes of the etcd backend).
Several channels do not close that gap. So when calls overlap, callers hand their requests to
one **sender thread**, which issues them back to back as futures; gRPC's completion thread
hands each answer back to its caller through a lock the caller waits on.

A call that finds nothing in flight is made directly from the caller's thread (a blocking
call: one thread hand-off less, which is what a lone caller wants); as soon as calls overlap
they go through the sender. A queued caller may pass ``meanwhile``: work it needs anyway (the
backend decodes the bytes it is writing), run once the request is on its way and before
waiting for the answer, so that a caller woken with its answer starts its next request sooner.

Alternatives measured (32 creating threads, kstore/raw-futures ratio in the same run, with
this design's ratio in that run in brackets; loads 2-7 on the shared 2-core VM): blocking calls
from every caller 0.61-0.78x [0.59-0.66], 0.69 and 0.74 [0.67, 0.68] as medians of paired
slices; callers issuing their own futures 0.63x [0.71]; two or four channels with a sender each
0.62x, 0.59x [0.64] (requests wait less to be sent, longer for their answer); no sender thread,
the caller that finds nobody issuing sends the queue 0.81x, 0.62x [0.73, 0.71]; the completion
callback sending what is queued 0.64-0.68x [0.71]; the sender waiting 0.3 or 1 ms to send
larger batches 0.59x [0.62]; ``meanwhile`` run before the hand-off 0.62x [0.60], after the
answer 0.63x, 0.64x [0.60, 0.66], in the completion callback 0.59x [0.66]. What sets the
ratio on a loaded machine is CPU per call: the same threads sending pre-encoded bytes with no
codec work reach 0.74-0.94x (paired), and the ~45 us that a create's own work (encoding,
decoding, keys) costs on one thread adds 120-175 us of process CPU per create with 32 threads,
as each longer hold of the GIL makes the sender and gRPC's completion thread wait for it and
be switched out more often (~1.2 switches per call each, against ~0.5 for the raw client's
completion thread).

Invariants: every call returns the response or raises (the call's ``grpc.RpcError``, or
:class:`PipelineClosed`); none waits longer than its timeout plus a grace second, even when
the sender thread or gRPC misbehaves; after :meth:`Pipeline.close` no new call is accepted and
the queued ones fail.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["Pipeline", "PipelineClosed", "PipelineTimeout"]

#: How much longer than its gRPC deadline a caller waits for the answer before giving up
#: (gRPC ends every call at its deadline; this only bounds a bug).
_GRACE = 1.0


class PipelineClosed(Exception):
    """The pipeline was closed before the call was sent."""


class PipelineTimeout(Exception):
    """No answer (not even a gRPC error) came back in time."""


class _Slot:
    """Where one call's outcome is handed back: a lock its caller waits on."""

    __slots__ = ("error", "future", "lock")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.lock.acquire()
        self.future: Any = None
        self.error: BaseException | None = None

    def done(self, future: Any) -> None:
        self.future = future
        self.lock.release()

    def fail(self, error: BaseException) -> None:
        self.error = error
        self.lock.release()


class Pipeline:
    """Issues unary calls of one channel (see the module docstring). Thread-safe."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._cond = threading.Condition(threading.Lock())
        self._queue: list[tuple[Any, Any, float, Any, _Slot]] = []
        self._in_flight = 0
        self._closed = False
        self._thread: threading.Thread | None = None

    def call(
        self,
        method: Any,
        request: Any,
        *,
        timeout: float,
        metadata: Any,
        meanwhile: Callable[[], None] | None = None,
    ) -> Any:
        """``method(request)`` (a unary gRPC multi-callable) with ``timeout`` and
        ``metadata``: its response, or the call's ``grpc.RpcError``. ``meanwhile`` (which
        must not raise) runs after a queued request is handed over, before the wait; a lone
        call does not run it."""
        cond = self._cond
        with cond:
            if self._closed:
                raise PipelineClosed(f"the {self._name} pipeline is closed")
            self._in_flight += 1
            alone = self._in_flight == 1
            if not alone:
                slot = _Slot()
                self._queue.append((method, request, timeout, metadata, slot))
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=self._send, name=f"kstore-etcd-send {self._name}", daemon=True
                    )
                    self._thread.start()
                elif len(self._queue) == 1:
                    cond.notify()
        try:
            if alone:
                # Not through a future even with ``meanwhile``: a lone future costs more than
                # the decode it would overlap (sequential creates 0.51x raw instead of 0.68x,
                # paired runs at load 28); the caller does that work afterwards.
                return method(request, timeout=timeout, metadata=metadata)
            if meanwhile is not None:
                meanwhile()
            if not slot.lock.acquire(timeout=timeout + _GRACE):
                raise PipelineTimeout(f"no answer from etcd within {timeout:.1f} s")
            if slot.error is not None:
                raise slot.error
            return slot.future.result()
        finally:
            with cond:
                self._in_flight -= 1

    def _send(self) -> None:
        cond = self._cond
        while True:
            with cond:
                while not self._queue and not self._closed:
                    cond.wait()
                batch, self._queue = self._queue, []
                closed = self._closed
            for method, request, timeout, metadata, slot in batch:
                if closed:
                    slot.fail(PipelineClosed(f"the {self._name} pipeline is closed"))
                    continue
                try:
                    future = method.future(request, timeout=timeout, metadata=metadata)
                except Exception as exc:  # e.g. the channel was closed under us
                    slot.fail(exc)
                    continue
                future.add_done_callback(slot.done)
            if closed:
                return

    def close(self) -> None:
        """Refuse new calls and fail the queued ones; calls already sent end with their
        channel (closing it cancels them)."""
        with self._cond:
            self._closed = True
            self._cond.notify()
            thread = self._thread
        if thread is not None:
            thread.join(timeout=5.0)
