"""Work done ahead while a group commit's fsync is in flight: a request's deferred decode."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from kstore.api.gvk import Object
from kstore.errors import CorruptObject
from kstore.storage._lmdb_ahead import AheadWorker
from kstore.storage._lmdb_writes import PutRequest
from kstore.storage.interface import ResourceStorageConfig, Storage
from kstore.storage.lmdb import LmdbBackend

from .conftest import JsonCodec, PausedWriter, pod, pod_attrs, rv


def _request() -> PutRequest:
    return PutRequest("/pods/ns/a", b"{}", expected=0, create=True)


class _Counted:
    def __init__(self, result: Any = "done", error: Exception | None = None) -> None:
        self.calls: list[str] = []
        self._result = result
        self._error = error

    def __call__(self) -> Any:
        self.calls.append(threading.current_thread().name)
        if self._error is not None:
            raise self._error
        return self._result


def test_work_run_ahead_is_not_run_again_by_its_caller() -> None:
    work = _Counted()
    req = _request()
    req.defer(work)
    assert req.has_ahead_work
    req.run_ahead()
    assert not req.has_ahead_work
    req.run_ahead()
    assert req.ahead_result() == "done"
    assert len(work.calls) == 1


def test_work_nobody_ran_ahead_runs_in_its_caller() -> None:
    work = _Counted()
    req = _request()
    req.defer(work)
    assert req.ahead_result() == "done"
    assert work.calls == [threading.current_thread().name]
    # The claim is gone: a late run_ahead does nothing.
    req.run_ahead()
    assert len(work.calls) == 1


def test_an_error_of_work_run_ahead_is_raised_in_its_caller() -> None:
    req = _request()
    req.defer(_Counted(error=CorruptObject("bad bytes")))
    req.run_ahead()
    with pytest.raises(CorruptObject, match="bad bytes"):
        req.ahead_result()


def test_a_caller_that_finds_its_work_claimed_but_unfinished_runs_it_itself() -> None:
    started, finish = threading.Event(), threading.Event()

    def slow() -> str:
        started.set()
        finish.wait(10.0)
        return "late"

    req = _request()
    req.defer(slow)
    other = threading.Thread(target=req.run_ahead)
    other.start()
    assert started.wait(10.0)
    # The work is pure, so running it here too is correct; nobody waits for the other thread.
    req._ahead = lambda: "here"
    assert req.ahead_result() == "here"
    finish.set()
    other.join(10.0)


def test_the_worker_runs_handed_work_in_order_and_skips_requests_without_any() -> None:
    worker = AheadWorker("test-ahead")
    try:
        order: list[int] = []
        done = threading.Event()
        requests = []
        for i in range(5):
            req = _request()
            if i != 2:
                req.defer(lambda i=i: order.append(i) or (done.set() if i == 4 else None))
            requests.append(req)
        worker.hand(requests)
        assert done.wait(10.0)
        assert order == [0, 1, 3, 4]
        assert not any(req.has_ahead_work for req in requests)
    finally:
        worker.stop()


def _commit_together(
    backend: LmdbBackend,
    monkeypatch: pytest.MonkeyPatch,
    pods: Storage,
    writes: list[Callable[[], object]],
) -> PausedWriter:
    """Run ``writes`` on their own threads, queued behind a held commit so that they share the
    next one, as writers in company (not lone writers) do; return the held writer."""
    paused = PausedWriter(backend, monkeypatch)
    blocker = threading.Thread(target=lambda: pods.create("/pods/ns/x", pod("ns", "x")))
    blocker.start()
    assert paused.entered.wait(10.0)
    monkeypatch.setattr(backend, "_lone_writes", False)
    threads = [threading.Thread(target=write) for write in writes]
    for thread in threads:
        thread.start()
    paused.wait_queued(len(writes))
    paused.release()
    for thread in [blocker, *threads]:
        thread.join(10.0)
    return paused


class _RecordingCodec(JsonCodec):
    """Notes the thread of every decode."""

    def __init__(self) -> None:
        self.decoded_on: list[str] = []

    def decode(self, data: bytes) -> Object:
        self.decoded_on.append(threading.current_thread().name)
        return super().decode(data)


def test_the_writes_of_a_group_commit_are_decoded_while_it_commits(
    backend: LmdbBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    codec = _RecordingCodec()
    pods = backend.storage_for(
        ResourceStorageConfig(resource_prefix="/pods", codec=codec, get_attrs=pod_attrs)
    )
    hand = backend._ahead.hand

    def hand_and_wait(requests: list[Any]) -> None:
        # However slow this machine, the ahead thread gets its turn before the commit ends.
        hand(requests)
        for req in requests:
            while req.has_ahead_work:
                time.sleep(0.001)

    monkeypatch.setattr(backend._ahead, "hand", hand_and_wait)
    results: dict[int, Object] = {}

    def create(i: int) -> None:
        results[i] = pods.create(f"/pods/ns/p{i}", pod("ns", f"p{i}", nodeName=f"n{i}"))

    paused = _commit_together(backend, monkeypatch, pods, [lambda i=i: create(i) for i in range(8)])
    assert paused.batches[-1] == 8
    # Each result is its own fresh decode of what was written, with its own revision.
    assert sorted(rv(obj) for obj in results.values()) == list(range(3, 11))
    for i, obj in results.items():
        assert obj["spec"] == {"nodeName": f"n{i}"}
        assert obj["metadata"]["name"] == f"p{i}"
    assert len({id(obj) for obj in results.values()}) == 8
    # Every write of the group was decoded once, on the ahead thread.
    assert len(codec.decoded_on) == 1 + 8
    assert all(name.startswith("kstore-lmdb-ahead") for name in codec.decoded_on[1:])


def test_a_group_write_that_cannot_be_decoded_is_corrupt_after_the_write(
    backend: LmdbBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Undecodable(JsonCodec):
        def decode(self, data: bytes) -> Object:
            raise ValueError("cannot decode")

    broken = backend.storage_for(
        ResourceStorageConfig(resource_prefix="/pods", codec=Undecodable(), get_attrs=pod_attrs)
    )
    pods = backend.storage_for(
        ResourceStorageConfig(resource_prefix="/pods", codec=JsonCodec(), get_attrs=pod_attrs)
    )
    errors: list[BaseException] = []

    def create(name: str) -> None:
        try:
            broken.create(f"/pods/ns/{name}", pod("ns", name))
        except BaseException as exc:
            errors.append(exc)

    _commit_together(backend, monkeypatch, pods, [lambda n=n: create(n) for n in ("a", "b")])
    assert len(errors) == 2 and all(isinstance(e, CorruptObject) for e in errors)
    assert pods.get("/pods/ns/a")["metadata"]["name"] == "a"
    assert pods.get("/pods/ns/b")["metadata"]["name"] == "b"
