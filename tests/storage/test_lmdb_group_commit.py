"""Group commit: one writer thread, many waiters, one revision per change, isolated failures."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

import kstore.storage.lmdb as lmdb_backend
from kstore.api.gvk import Object
from kstore.errors import AlreadyExists, CorruptObject, InternalError, KStoreError
from kstore.storage._lmdb_writes import PutRequest
from kstore.storage.interface import ListOptions, ResourceStorageConfig, Storage
from kstore.storage.lmdb import LmdbBackend

from .conftest import JsonCodec, PausedWriter, pod, pod_attrs, rv


def _submit_all(
    calls: list[tuple[str, object]],
) -> tuple[list[threading.Thread], dict[str, object]]:
    results: dict[str, object] = {}

    def run(name: str, fn: object) -> None:
        try:
            results[name] = fn()  # type: ignore[operator]
        except KStoreError as exc:
            results[name] = exc

    threads = [threading.Thread(target=run, args=call) for call in calls]
    for thread in threads:
        thread.start()
    return threads, results


def test_concurrent_writes_share_commits_with_consecutive_revisions(
    backend: LmdbBackend, pods: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    commits = backend.write_commits
    paused = PausedWriter(backend, monkeypatch)
    blocker, _ = _submit_all([("blocker", lambda: pods.create("/pods/ns/x", pod("ns", "x")))])
    paused.entered.wait(10.0)
    threads, results = _submit_all(
        [
            (f"p{i}", lambda i=i: pods.create(f"/pods/ns/p{i}", pod("ns", f"p{i}")))
            for i in range(16)
        ]
    )
    paused.wait_queued(16)
    paused.release()
    for thread in [*blocker, *threads]:
        thread.join(10.0)
    revisions = sorted(rv(obj) for obj in results.values())  # type: ignore[arg-type]
    assert revisions == list(range(3, 19))
    # The blocker was alone; the 16 queued behind it were committed as one group.
    assert paused.batches == [1, 16]
    assert backend.current_revision() == 18
    assert backend.write_commits - commits == 2


def test_a_failing_request_does_not_fail_its_batch_mates(
    backend: LmdbBackend, pods: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    paused = PausedWriter(backend, monkeypatch)
    blocker, _ = _submit_all(
        [("blocker", lambda: pods.create("/pods/ns/blocker", pod("ns", "blocker")))]
    )
    paused.entered.wait(10.0)
    threads, results = _submit_all(
        [
            ("a1", lambda: pods.create("/pods/ns/a", pod("ns", "a"))),
        ]
    )
    paused.wait_queued(1)
    more, more_results = _submit_all(
        [
            ("a2", lambda: pods.create("/pods/ns/a", pod("ns", "a"))),
            ("b", lambda: pods.create("/pods/ns/b", pod("ns", "b"))),
        ]
    )
    paused.wait_queued(3)
    paused.release()
    for thread in [*blocker, *threads, *more]:
        thread.join(10.0)
    results.update(more_results)
    assert isinstance(results["a1"], dict)
    assert isinstance(results["a2"], AlreadyExists)
    assert isinstance(results["b"], dict)
    assert sorted(rv(results[k]) for k in ("a1", "b")) == [3, 4]  # type: ignore[arg-type]
    assert paused.batches == [1, 3]


def test_a_request_that_breaks_the_transaction_fails_alone(
    backend: LmdbBackend, pods: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    paused = PausedWriter(backend, monkeypatch)
    blocker, _ = _submit_all([("blocker", lambda: pods.create("/pods/ns/x", pod("ns", "x")))])
    paused.entered.wait(10.0)
    # Longer than LMDB's key limit: its put fails inside the transaction, after the puts of
    # the requests before it.
    bad = PutRequest("/pods/ns/" + "x" * 600, b"{}", expected=0)
    threads, results = _submit_all(
        [
            ("good1", lambda: pods.create("/pods/ns/g1", pod("ns", "g1"))),
            ("bad", lambda: backend.submit(bad)),
            ("good2", lambda: pods.create("/pods/ns/g2", pod("ns", "g2"))),
        ]
    )
    paused.wait_queued(3)
    paused.release()
    for thread in [*blocker, *threads]:
        thread.join(10.0)
    assert isinstance(results["bad"], InternalError)
    assert isinstance(results["good1"], dict) and isinstance(results["good2"], dict)
    assert [o["metadata"]["name"] for o in pods.list("/pods").items] == ["g1", "g2", "x"]
    # The failed request took no revision: revisions stay dense.
    assert sorted(rv(results[k]) for k in ("good1", "good2")) == [3, 4]  # type: ignore[arg-type]


def test_many_threads_updating_one_object_lose_no_update(pods: Storage) -> None:
    pods.create("/pods/ns/counter", {**pod("ns", "counter"), "count": 0})
    seen: list[list[int]] = [[] for _ in range(8)]

    def bump(obj: Object) -> Object:
        return {**obj, "count": obj["count"] + 1}

    def worker(slot: int) -> None:
        for _ in range(25):
            seen[slot].append(rv(pods.guaranteed_update("/pods/ns/counter", bump)))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30.0)
    final = pods.get("/pods/ns/counter")
    assert final["count"] == 200
    for revisions in seen:
        assert revisions == sorted(revisions) and len(set(revisions)) == len(revisions)
    everything = sorted(r for revisions in seen for r in revisions)
    assert len(set(everything)) == 200
    assert rv(final) == everything[-1]


def test_every_change_in_a_group_is_its_own_watch_event(
    backend: LmdbBackend, pods: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    watcher = pods.watch("/pods", ListOptions(resource_version="1"))
    paused = PausedWriter(backend, monkeypatch)
    blocker, _ = _submit_all([("blocker", lambda: pods.create("/pods/ns/x", pod("ns", "x")))])
    paused.entered.wait(10.0)
    threads, _ = _submit_all(
        [(f"p{i}", lambda i=i: pods.create(f"/pods/ns/p{i}", pod("ns", f"p{i}"))) for i in range(5)]
    )
    paused.wait_queued(5)
    paused.release()
    for thread in [*blocker, *threads]:
        thread.join(10.0)
    assert paused.batches == [1, 5]
    events = [watcher.next(2.0) for _ in range(6)]
    assert [e.resource_version for e in events if e is not None] == list(range(2, 8))
    watcher.stop()


def test_writers_of_one_commit_share_the_next_one(
    backend: LmdbBackend, pods: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Four writers committed together come back for a second write each: the writer gives
    # them up to one commit's time (here made long) to come back, and commits the four in one
    # transaction rather than the first one back alone.
    monkeypatch.setattr(lmdb_backend, "_MAX_GATHER_S", 5.0)
    original = backend._run_batch

    def slow_commit(batch: list[Any]) -> None:
        if len(batch) == 4:
            time.sleep(1.0)  # counted in the commit's duration, so the gather may wait as long
        original(batch)

    monkeypatch.setattr(backend, "_run_batch", slow_commit)
    paused = PausedWriter(backend, monkeypatch)
    blocker, _ = _submit_all([("blocker", lambda: pods.create("/pods/ns/x", pod("ns", "x")))])
    paused.entered.wait(10.0)

    def twice(i: int) -> Object:
        pods.create(f"/pods/ns/a{i}", pod("ns", f"a{i}"))
        return pods.create(f"/pods/ns/b{i}", pod("ns", f"b{i}"))

    threads, results = _submit_all([(f"w{i}", lambda i=i: twice(i)) for i in range(4)])
    paused.wait_queued(4)
    paused.release()
    for thread in [*blocker, *threads]:
        thread.join(20.0)
    assert all(isinstance(r, dict) for r in results.values())
    assert paused.batches == [1, 4, 4]


def test_a_lone_writer_never_waits_for_company(
    backend: LmdbBackend, pods: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    # After a group of writers, a writer left alone is committed once the gather window (at
    # most one commit's time) has passed, and at once from then on.
    monkeypatch.setattr(lmdb_backend, "_MAX_GATHER_S", 0.2)
    paused = PausedWriter(backend, monkeypatch)
    blocker, _ = _submit_all([("blocker", lambda: pods.create("/pods/ns/x", pod("ns", "x")))])
    paused.entered.wait(10.0)
    threads, _ = _submit_all(
        [(f"p{i}", lambda i=i: pods.create(f"/pods/ns/p{i}", pod("ns", f"p{i}"))) for i in range(4)]
    )
    paused.wait_queued(4)
    paused.release()
    for thread in [*blocker, *threads]:
        thread.join(10.0)
    started = time.monotonic()
    for i in range(20):
        pods.create(f"/pods/ns/alone{i}", pod("ns", f"alone{i}"))
    # One gather wait of at most 0.2 s, not one per write.
    assert time.monotonic() - started < 2.0
    assert paused.batches == [1, 4] + [1] * 20


class _UndecodableCodec(JsonCodec):
    """Encodes as JSON, refuses to decode: a write succeeds, its result cannot be read."""

    def decode(self, data: bytes) -> Object:
        raise ValueError("cannot decode")


def _undecodable(backend: LmdbBackend) -> Storage:
    return backend.storage_for(
        ResourceStorageConfig(
            resource_prefix="/pods", codec=_UndecodableCodec(), get_attrs=pod_attrs
        )
    )


@pytest.mark.parametrize("lone", [True, False])
def test_a_written_object_that_cannot_be_decoded_is_corrupt_after_the_write(
    backend: LmdbBackend, pods: Storage, monkeypatch: pytest.MonkeyPatch, lone: bool
) -> None:
    # Whether the result is decoded before the write is queued (a lone writer) or after it is
    # committed, the write happens and its error wins over the decode failure.
    monkeypatch.setattr(backend, "_lone_writes", lone)
    broken = _undecodable(backend)
    with pytest.raises(CorruptObject):
        broken.create("/pods/ns/a", pod("ns", "a"))
    assert pods.get("/pods/ns/a")["metadata"]["name"] == "a"
    monkeypatch.setattr(backend, "_lone_writes", lone)
    with pytest.raises(AlreadyExists):
        broken.create("/pods/ns/a", pod("ns", "a"))


def test_lone_writes_says_whether_the_last_commit_carried_one_write(
    backend: LmdbBackend, pods: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert backend.lone_writes
    paused = PausedWriter(backend, monkeypatch)
    blocker, _ = _submit_all([("blocker", lambda: pods.create("/pods/ns/x", pod("ns", "x")))])
    paused.entered.wait(10.0)
    threads, _ = _submit_all(
        [(f"p{i}", lambda i=i: pods.create(f"/pods/ns/p{i}", pod("ns", f"p{i}"))) for i in range(3)]
    )
    paused.wait_queued(3)
    paused.release()
    for thread in [*blocker, *threads]:
        thread.join(10.0)
    assert paused.batches == [1, 3]
    assert not backend.lone_writes
    pods.create("/pods/ns/alone", pod("ns", "alone"))
    assert backend.lone_writes
