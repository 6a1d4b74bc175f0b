"""Hand-offs to and from the LMDB writer thread: the gathering queue and the doorbells."""

from __future__ import annotations

import signal
import threading
import time

from kstore.storage._lmdb_handoff import Doorbell, GatherQueue, doorbell
from kstore.storage._lmdb_writes import Outcome, PutRequest, hand_back


def _put_later(queue: GatherQueue[int], items: list[int], delay: float) -> threading.Thread:
    def run() -> None:
        for item in items:
            time.sleep(delay)
            queue.put(item)

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_take_returns_what_is_queued_in_order_up_to_the_limit() -> None:
    queue: GatherQueue[int] = GatherQueue()
    for item in range(5):
        queue.put(item)
    assert queue.qsize() == 5
    assert queue.take(1, 3) == [0, 1, 2]
    assert queue.take(1, 10) == [3, 4]
    assert queue.empty()


def test_take_waits_for_the_count() -> None:
    queue: GatherQueue[int] = GatherQueue()
    queue.put(0)
    producer = _put_later(queue, [1, 2, 3], 0.02)
    assert queue.take(4, 10, timeout=10.0) == [0, 1, 2, 3]
    producer.join()


def test_take_gives_what_there_is_when_the_timeout_passes() -> None:
    queue: GatherQueue[int] = GatherQueue()
    queue.put(0)
    started = time.monotonic()
    assert queue.take(3, 10, timeout=0.05) == [0]
    assert time.monotonic() - started >= 0.04


class _LateProducerBell:
    """A doorbell whose timed waits time out just before a producer fills the count."""

    def __init__(self, queue: GatherQueue[int]) -> None:
        self._real = Doorbell()
        self._queue = queue

    def ring(self) -> None:
        self._real.ring()

    def wait(self, timeout: float | None = None) -> bool:
        if timeout is None:
            return self._real.wait()
        self._real.wait(timeout)
        self._queue.put(99)
        return False


def test_no_ring_is_left_behind_when_the_count_arrives_at_the_deadline() -> None:
    queue: GatherQueue[int] = GatherQueue()
    bell = _LateProducerBell(queue)
    queue._bell = bell  # type: ignore[assignment]
    queue.put(0)
    assert queue.take(2, 10, timeout=0.01) == [0, 99]
    # The late producer's ring was taken back: the next wait sleeps until the next put.
    producer = _put_later(queue, [1], 0.05)
    started = time.monotonic()
    assert queue.take(1, 10) == [1]
    assert time.monotonic() - started >= 0.04
    producer.join()


def test_doorbell_counts_its_rings() -> None:
    bell = Doorbell()
    for _ in range(3):
        bell.ring()
    assert all(bell.wait(0.0) for _ in range(3))
    assert bell.wait(0.01) is False


def test_doorbell_wakes_a_waiting_thread() -> None:
    bell = Doorbell()
    woke = threading.Event()

    def wait() -> None:
        bell.wait()
        woke.set()

    waiter = threading.Thread(target=wait)
    waiter.start()
    assert not woke.wait(0.05)
    bell.ring()
    assert woke.wait(5.0)
    waiter.join()


def test_a_signal_handled_meanwhile_does_not_end_the_wait() -> None:
    # A server handles SIGTERM in Python; the kernel may deliver it to any thread, and a
    # waiting writer or ahead thread must keep waiting rather than die of EINTR.
    bell = Doorbell()
    outcome: list[object] = []

    def wait() -> None:
        try:
            outcome.append(bell.wait())
        except BaseException as error:  # what ended the wait is the result
            outcome.append(error)

    previous = signal.signal(signal.SIGUSR1, lambda *_: None)
    try:
        waiter = threading.Thread(target=wait)
        waiter.start()
        time.sleep(0.2)  # blocked in the read by now
        assert waiter.ident is not None
        signal.pthread_kill(waiter.ident, signal.SIGUSR1)
        time.sleep(0.1)
        assert outcome == []
        bell.ring()
        waiter.join(5.0)
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert outcome == [True]


def test_a_thread_reuses_its_doorbell_unless_it_is_busy() -> None:
    first = doorbell()
    assert first.busy
    spare = doorbell()  # the first is still in use (an abandoned request)
    assert spare is not first
    spare.busy = False
    assert doorbell() is spare


def test_a_request_hands_back_its_outcome_and_leaves_the_doorbell_clean() -> None:
    for revision in (5, 6):
        request = PutRequest("/pods/ns/a", b"{}", expected=0)
        request.attach()
        resolver = threading.Thread(target=request.resolve, args=(Outcome(revision=revision),))
        resolver.start()
        assert request.wait().revision == revision
        resolver.join()
    bell = doorbell()
    assert bell.wait(0.01) is False
    bell.busy = False


def _attached_in_thread() -> PutRequest:
    made: list[PutRequest] = []

    def run() -> None:
        req = PutRequest("/pods/ns/a", b"{}", expected=0, create=True)
        req.attach()
        made.append(req)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return made[0]


def _rung(req: PutRequest) -> bool:
    bell = req._bell
    assert bell is not None
    return bell.wait(timeout=0)


def test_the_waiters_of_a_commit_are_woken_as_a_relay_in_queue_order() -> None:
    requests = [_attached_in_thread() for _ in range(3)]
    hand_back(list(requests), [Outcome(revision=r) for r in (5, 6, 7)])
    assert [req.outcome.revision for req in requests if req.outcome] == [5, 6, 7]
    # Only the first is rung; each one woken rings the next.
    assert _rung(requests[0])
    assert not _rung(requests[1]) and not _rung(requests[2])
    requests[0]._bell.ring()  # type: ignore[union-attr]
    assert requests[0].wait().revision == 5
    assert _rung(requests[1])
    assert not _rung(requests[2])
    requests[1]._bell.ring()  # type: ignore[union-attr]
    assert requests[1].wait().revision == 6
    assert requests[2].wait().revision == 7


def test_the_main_thread_is_woken_directly_never_as_part_of_a_relay() -> None:
    # It alone gets KeyboardInterrupt, which could end its wait before it passed the relay on.
    on_main = PutRequest("/pods/ns/m", b"{}", expected=0, create=True)
    on_main.attach()
    others = [_attached_in_thread() for _ in range(2)]
    hand_back([others[0], on_main, others[1]], [Outcome(revision=r) for r in (1, 2, 3)])
    assert on_main.wait().revision == 2
    assert others[0].wait().revision == 1
    assert others[1].wait().revision == 3


def test_a_request_committed_by_its_own_thread_has_no_doorbell_to_ring() -> None:
    req = PutRequest("/pods/ns/a", b"{}", expected=0, create=True)
    hand_back([req], [Outcome(revision=9)])
    assert req.outcome == Outcome(revision=9)
