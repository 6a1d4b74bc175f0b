"""Lone writes committed on the writer's own thread, and how they fit with group commit."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from kstore.errors import AlreadyExists, NotFound
from kstore.storage.interface import ListOptions, Storage
from kstore.storage.lmdb import LmdbBackend

from .conftest import open_backend, pod, pod_config, rv

T = TypeVar("T")


def _on_thread(fn: Callable[[], T]) -> T:
    """``fn()`` run on a fresh (not main) thread; its result, or its exception re-raised."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["result"] = fn()
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(30.0)
    assert not thread.is_alive()
    if "error" in box:
        raise box["error"]
    result: T = box["result"]
    return result


class _CommitThreads:
    """Records which thread runs each write transaction, and how many writes it carried."""

    def __init__(self, backend: LmdbBackend, monkeypatch: pytest.MonkeyPatch) -> None:
        self.commits: list[tuple[int, int]] = []
        original = backend._run_batch

        def run_batch(batch: list[Any]) -> None:
            self.commits.append((threading.get_ident(), len(batch)))
            original(batch)

        monkeypatch.setattr(backend, "_run_batch", run_batch)


def test_a_lone_write_off_the_main_thread_commits_on_that_thread(
    backend: LmdbBackend, pods: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _CommitThreads(backend, monkeypatch)

    def create() -> tuple[int, int]:
        created = pods.create("/pods/ns/a", pod("ns", "a"))
        return threading.get_ident(), rv(created)

    worker, revision = _on_thread(create)
    assert seen.commits == [(worker, 1)]
    assert revision == 2
    assert rv(pods.get("/pods/ns/a")) == 2


def test_writes_from_the_main_thread_go_through_the_writer_thread(
    backend: LmdbBackend, pods: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The main thread is where KeyboardInterrupt lands: it never runs a write transaction.
    seen = _CommitThreads(backend, monkeypatch)
    pods.create("/pods/ns/a", pod("ns", "a"))
    pods.delete("/pods/ns/a")
    assert [length for _ident, length in seen.commits] == [1, 1]
    assert {ident for ident, _length in seen.commits} == {backend._writer.ident}


def test_lone_writes_take_consecutive_revisions_and_are_published_before_they_return(
    backend: LmdbBackend, pods: Storage
) -> None:
    watcher = pods.watch("/pods", ListOptions(resource_version="1"))

    def writes() -> list[int]:
        revisions = []
        for i in range(10):
            created = pods.create(f"/pods/ns/p{i}", pod("ns", f"p{i}"))
            # Every change up to an acknowledged revision has been dispatched to watchers.
            assert backend.hub.last_revision == rv(created)
            revisions.append(rv(created))
        updated = pods.guaranteed_update(
            "/pods/ns/p0", lambda obj: {**obj, "spec": {"nodeName": "n1"}}
        )
        revisions.append(rv(updated))
        deleted = pods.delete("/pods/ns/p1")
        assert backend.hub.last_revision == rv(deleted)
        revisions.append(rv(deleted))
        return revisions

    revisions = _on_thread(writes)
    assert revisions == list(range(2, 14))
    events = [watcher.next(5.0) for _ in range(12)]
    assert [(e.type, e.resource_version) for e in events if e is not None] == [
        *[("ADDED", r) for r in range(2, 12)],
        ("MODIFIED", 12),
        ("DELETED", 13),
    ]
    watcher.stop()


def test_a_lone_write_reports_its_own_failure(backend: LmdbBackend, pods: Storage) -> None:
    _on_thread(lambda: pods.create("/pods/ns/a", pod("ns", "a")))
    with pytest.raises(AlreadyExists):
        _on_thread(lambda: pods.create("/pods/ns/a", pod("ns", "a")))
    _on_thread(lambda: pods.delete("/pods/ns/a"))
    with pytest.raises(NotFound):
        _on_thread(lambda: pods.delete("/pods/ns/a"))
    # The failures took no revision.
    assert backend.current_revision() == 3


def test_writes_arriving_during_a_lone_commit_are_committed_together_next(
    backend: LmdbBackend, pods: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    inside = threading.Event()
    release = threading.Event()
    batches: list[int] = []
    original = backend._run_batch

    def run_batch(batch: list[Any]) -> None:
        batches.append(len(batch))
        if len(batches) == 1:
            inside.set()
            assert release.wait(10.0)
        original(batch)

    monkeypatch.setattr(backend, "_run_batch", run_batch)
    queued: list[object] = []
    put = backend._queue.put

    def counted_put(item: Any) -> None:
        queued.append(item)
        put(item)

    monkeypatch.setattr(backend._queue, "put", counted_put)
    results: dict[str, Any] = {}

    def create(name: str) -> None:
        results[name] = pods.create(f"/pods/ns/{name}", pod("ns", name))

    first = threading.Thread(target=create, args=("first",))
    first.start()
    assert inside.wait(10.0)
    # The commit lock is taken: these queue for the writer thread meanwhile.
    others = [threading.Thread(target=create, args=(f"p{i}",)) for i in range(6)]
    for thread in others:
        thread.start()
    deadline = time.monotonic() + 10.0
    while len(queued) < 6:
        assert time.monotonic() < deadline, "the writes did not queue"
        time.sleep(0.005)
    release.set()
    for thread in [first, *others]:
        thread.join(10.0)
    # Whatever the writer thread took while the lock was busy, and whatever queued after,
    # went into one commit.
    assert batches == [1, 6]
    assert sorted(rv(obj) for obj in results.values()) == list(range(2, 9))
    assert not backend.lone_writes


def test_close_waits_for_a_lone_commit_in_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = open_backend(tmp_path / "store")
    pods = backend.storage_for(pod_config())
    inside = threading.Event()
    release = threading.Event()
    original = backend._run_batch

    def run_batch(batch: list[Any]) -> None:
        inside.set()
        assert release.wait(10.0)
        original(batch)

    monkeypatch.setattr(backend, "_run_batch", run_batch)
    results: dict[str, Any] = {}
    writer = threading.Thread(
        target=lambda: results.update(obj=pods.create("/pods/ns/a", pod("ns", "a")))
    )
    writer.start()
    assert inside.wait(10.0)
    closer = threading.Thread(target=backend.close)
    closer.start()
    closer.join(0.3)
    assert closer.is_alive(), "close returned while a commit was running"
    release.set()
    writer.join(10.0)
    closer.join(10.0)
    assert not closer.is_alive()
    assert rv(results["obj"]) == 2
    with open_backend(tmp_path / "store") as reopened:
        assert rv(reopened.storage_for(pod_config()).get("/pods/ns/a")) == 2
