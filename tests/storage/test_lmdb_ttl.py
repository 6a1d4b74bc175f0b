"""TTL on LMDB: expired objects are never returned, and the reaper's removal is a DELETED event
with its own revision."""

from __future__ import annotations

import time

import pytest

from kstore.errors import BadRequest, NotFound
from kstore.storage.interface import EventType, ListOptions, Storage
from kstore.storage.lmdb import LmdbBackend

from .conftest import pod, rv


def _hold_reaper(backend: LmdbBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backend._housekeeper, "step", lambda *args: 60.0)


def test_expired_object_is_invisible_before_the_reaper_runs(
    backend: LmdbBackend, pods: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    _hold_reaper(backend, monkeypatch)
    pods.create("/pods/ns/keep", pod("ns", "keep"))
    created = pods.create("/pods/ns/short", pod("ns", "short"), ttl_seconds=1)
    exact = ListOptions(resource_version=str(rv(created)), resource_version_match="Exact")  # type: ignore[arg-type]
    assert len(pods.list("/pods", exact).items) == 2
    time.sleep(1.1)
    revision = backend.current_revision()
    with pytest.raises(NotFound):
        pods.get("/pods/ns/short")
    assert [o["metadata"]["name"] for o in pods.list("/pods").items] == ["keep"]
    assert [o["metadata"]["name"] for o in pods.list("/pods", exact).items] == ["keep"]
    assert pods.list("/pods/ns/short", ListOptions(recursive=False)).items == []
    assert pods.stats().object_count == 1
    with pytest.raises(NotFound):
        pods.delete("/pods/ns/short")
    # Nothing was reaped yet: the revision only moved for the delete's own expiry.
    assert backend.current_revision() <= revision + 1


def test_reaper_deletes_with_its_own_revision_and_a_deleted_event(
    backend: LmdbBackend, pods: Storage
) -> None:
    created = pods.create("/pods/ns/short", pod("ns", "short"), ttl_seconds=1)
    watcher = pods.watch("/pods", ListOptions(resource_version=str(rv(created))))
    event = watcher.next(5.0)
    assert event is not None and event.type is EventType.DELETED
    assert event.resource_version == rv(created) + 1
    assert event.object["metadata"]["name"] == "short"
    assert event.object["metadata"]["resourceVersion"] == str(rv(created) + 1)
    assert backend.current_revision() == rv(created) + 1
    watcher.stop()


def test_create_over_an_expired_object_first_deletes_it(
    backend: LmdbBackend, pods: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    _hold_reaper(backend, monkeypatch)
    old = pods.create("/pods/ns/a", pod("ns", "a", nodeName="old"), ttl_seconds=1)
    watcher = pods.watch("/pods", ListOptions(resource_version=str(rv(old))))
    time.sleep(1.1)
    new = pods.create("/pods/ns/a", pod("ns", "a", nodeName="new"))
    assert rv(new) == rv(old) + 2
    first, second = watcher.next(2.0), watcher.next(2.0)
    assert first is not None and second is not None
    assert (first.type, first.resource_version) == (EventType.DELETED, rv(old) + 1)
    assert first.object["spec"]["nodeName"] == "old"
    assert (second.type, second.resource_version) == (EventType.ADDED, rv(new))
    watcher.stop()


def test_update_without_ttl_removes_the_expiry(pods: Storage) -> None:
    pods.create("/pods/ns/a", pod("ns", "a"), ttl_seconds=1)
    pods.guaranteed_update("/pods/ns/a", lambda o: {**o, "spec": {"nodeName": "x"}})
    time.sleep(1.2)
    assert pods.get("/pods/ns/a")["spec"] == {"nodeName": "x"}


def test_update_with_ttl_creates_an_expiring_object(pods: Storage) -> None:
    created = pods.guaranteed_update(
        "/pods/ns/a", lambda o: pod("ns", "a"), ignore_not_found=True, ttl_seconds=1
    )
    watcher = pods.watch(
        "/pods/ns/a", ListOptions(resource_version=str(rv(created)), recursive=False)
    )
    event = watcher.next(5.0)
    assert event is not None and event.type is EventType.DELETED
    watcher.stop()


def test_expiry_survives_a_restart(tmp_path: object) -> None:
    from pathlib import Path

    from .conftest import open_backend, pod_config

    root = Path(str(tmp_path)) / "s"
    store = open_backend(root)
    store.storage_for(pod_config()).create("/pods/ns/a", pod("ns", "a"), ttl_seconds=1)
    store.close()
    time.sleep(1.1)
    store = open_backend(root)
    try:
        pods = store.storage_for(pod_config())
        with pytest.raises(NotFound):
            pods.get("/pods/ns/a")
        deadline = time.monotonic() + 5
        while store.current_revision() < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert store.current_revision() == 3  # the reaper removed it after the restart
    finally:
        store.close()


def test_negative_ttl_is_rejected(pods: Storage) -> None:
    with pytest.raises(BadRequest):
        pods.create("/pods/ns/a", pod("ns", "a"), ttl_seconds=-1)
