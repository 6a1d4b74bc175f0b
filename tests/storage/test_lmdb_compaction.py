"""Compaction on LMDB: 410 below the compacted revision, exact reads at or above it, history
purged in the background, on demand and on a schedule."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kstore.errors import Expired, TooLargeResourceVersion
from kstore.storage._lmdb_records import HIST
from kstore.storage.interface import EventType, ListOptions, ResourceVersionMatch, Storage
from kstore.storage.lmdb import LmdbBackend

from .conftest import open_backend, pod, pod_config, rv

EXACT = ResourceVersionMatch.EXACT


def _exact(revision: int, **kwargs: object) -> ListOptions:
    return ListOptions(resource_version=str(revision), resource_version_match=EXACT, **kwargs)  # type: ignore[arg-type]


def _wait_purged(backend: LmdbBackend) -> None:
    deadline = time.monotonic() + 10
    while backend._purge_pending:
        assert time.monotonic() < deadline
        time.sleep(0.01)


def _history_entries(backend: LmdbBackend) -> int:
    with backend._env.begin() as txn:
        cursor = txn.cursor()
        if not cursor.set_range(HIST):
            return 0
        return sum(1 for key in cursor.iternext(values=False) if key.startswith(HIST))


def test_reads_below_the_compacted_revision_are_expired(
    backend: LmdbBackend, pods: Storage
) -> None:
    a = pods.create("/pods/ns/a", pod("ns", "a"))
    b = pods.create("/pods/ns/b", pod("ns", "b"))
    assert backend.compact(rv(b)) == rv(b)
    assert backend.compacted_revision == rv(b)
    with pytest.raises(Expired) as caught:
        pods.list("/pods", _exact(rv(a)))
    assert caught.value.message == "The resourceVersion for the provided list is too old."
    assert [o["metadata"]["name"] for o in pods.list("/pods", _exact(rv(b))).items] == ["a", "b"]


def test_watch_below_the_compacted_revision_gets_one_410_error(
    backend: LmdbBackend, pods: Storage
) -> None:
    a = pods.create("/pods/ns/a", pod("ns", "a"))
    pods.create("/pods/ns/b", pod("ns", "b"))
    backend.compact(rv(a) + 1)
    watcher = pods.watch("/pods", ListOptions(resource_version=str(rv(a) - 1)))
    event = watcher.next(1.0)
    assert event is not None and event.type is EventType.ERROR
    assert event.object["code"] == 410
    assert event.object["reason"] == "Expired"
    assert event.object["message"] == f"too old resource version: {rv(a) - 1} ({rv(a) + 1})"
    assert watcher.next(0.1) is None
    # From the compacted revision itself the watch works.
    ok = pods.watch("/pods", ListOptions(resource_version=str(rv(a) + 1)))
    pods.create("/pods/ns/c", pod("ns", "c"))
    event = ok.next(2.0)
    assert event is not None and event.object["metadata"]["name"] == "c"
    ok.stop()


def test_continue_token_below_the_compacted_revision_hands_back_a_latest_token(
    backend: LmdbBackend, pods: Storage
) -> None:
    for name in ("a", "b", "c"):
        pods.create(f"/pods/ns/{name}", pod("ns", name))
    first = pods.list("/pods", ListOptions(limit=1))
    pods.guaranteed_update("/pods/ns/b", lambda o: {**o, "spec": {"nodeName": "n"}})
    backend.compact(backend.current_revision())
    with pytest.raises(Expired) as caught:
        pods.list("/pods", ListOptions(limit=1, continue_token=first.continue_token))
    assert caught.value.message.startswith("The provided continue parameter is too old ")
    assert caught.value.continue_token
    resumed = pods.list("/pods", ListOptions(limit=1, continue_token=caught.value.continue_token))
    assert [o["metadata"]["name"] for o in resumed.items] == ["b"]
    assert resumed.resource_version == backend.current_revision()
    assert resumed.items[0]["spec"] == {"nodeName": "n"}


def test_compaction_keeps_exact_state_at_and_after_the_compacted_revision(
    backend: LmdbBackend, pods: Storage
) -> None:
    pods.create("/pods/ns/a", pod("ns", "a", nodeName="1"))
    pods.create("/pods/ns/gone", pod("ns", "gone"))
    for n in range(2, 6):
        pods.guaranteed_update("/pods/ns/a", lambda o, n=n: {**o, "spec": {"nodeName": str(n)}})
    pods.delete("/pods/ns/gone")
    middle = backend.current_revision()
    snapshot = pods.list("/pods", _exact(middle)).items
    pods.guaranteed_update("/pods/ns/a", lambda o: {**o, "spec": {"nodeName": "after"}})
    before = _history_entries(backend)
    backend.compact(middle)
    _wait_purged(backend)
    # Superseded versions and deletes at or below the compacted revision are gone...
    assert _history_entries(backend) == 2
    assert before == 8
    # ...while the state at it, and every change after it, are intact.
    assert pods.list("/pods", _exact(middle)).items == snapshot
    watcher = pods.watch("/pods", ListOptions(resource_version=str(middle)))
    event = watcher.next(1.0)
    assert event is not None and event.type is EventType.MODIFIED
    assert event.object["spec"] == {"nodeName": "after"}
    watcher.stop()


def test_compaction_never_goes_backwards_or_into_the_future(
    backend: LmdbBackend, pods: Storage
) -> None:
    pods.create("/pods/ns/a", pod("ns", "a"))
    pods.create("/pods/ns/b", pod("ns", "b"))
    assert backend.compact(3) == 3
    assert backend.compact(2) == 3
    with pytest.raises(TooLargeResourceVersion):
        backend.compact(backend.current_revision() + 1)


def test_compacted_revision_and_purge_position_survive_restart(tmp_path: Path) -> None:
    store = open_backend(tmp_path / "s")
    pods = store.storage_for(pod_config())
    for n in range(50):
        pods.guaranteed_update(
            "/pods/ns/a", lambda o, n=n: {**pod("ns", "a"), "n": n}, ignore_not_found=True
        )
    store.compact(store.current_revision())
    store.close()
    store = open_backend(tmp_path / "s")
    try:
        assert store.compacted_revision == 51
        _wait_purged(store)
        assert _history_entries(store) == 1
        assert store.storage_for(pod_config()).get("/pods/ns/a")["n"] == 49
    finally:
        store.close()


def test_scheduled_compaction_keeps_the_retention_window(tmp_path: Path) -> None:
    store = open_backend(tmp_path / "s", compaction_interval_s=0.2, history_retention_s=0.2)
    try:
        pods = store.storage_for(pod_config())
        first = pods.create("/pods/ns/a", pod("ns", "a"))
        deadline = time.monotonic() + 10
        while store.compacted_revision < rv(first) and time.monotonic() < deadline:
            pods.guaranteed_update(
                "/pods/ns/a", lambda o: {**o, "n": time.monotonic()}, ignore_not_found=True
            )
            time.sleep(0.05)
        assert store.compacted_revision >= rv(first)
        assert store.compacted_revision < store.current_revision()
    finally:
        store.close()


def test_on_demand_compaction_without_a_revision_uses_the_retention_window(
    tmp_path: Path,
) -> None:
    store = open_backend(tmp_path / "s", history_retention_s=0.5)
    try:
        pods = store.storage_for(pod_config())
        assert store.compact() == 0  # nothing is old enough yet
        pods.create("/pods/ns/a", pod("ns", "a"))
        time.sleep(0.6)
        # The newest revision seen at least 0.5 s ago: the one before the create.
        assert store.compact() == 1
        store.compact()
        time.sleep(0.6)
        assert store.compact() == 2
    finally:
        store.close()


def test_revision_survives_a_restart_after_its_last_history_entry_was_purged(
    tmp_path: Path,
) -> None:
    # The store's revision is derived from its newest history entry on open; a delete at the
    # newest revision, compacted and purged, leaves no entry at that revision.
    store = open_backend(tmp_path / "s")
    pods = store.storage_for(pod_config())
    pods.create("/pods/ns/a", pod("ns", "a"))
    deleted = rv(pods.delete("/pods/ns/a"))
    store.compact(deleted)
    _wait_purged(store)
    assert _history_entries(store) == 0
    store.close()
    store = open_backend(tmp_path / "s")
    try:
        assert store.current_revision() == deleted
        pods = store.storage_for(pod_config())
        assert rv(pods.create("/pods/ns/b", pod("ns", "b"))) == deleted + 1
    finally:
        store.close()
