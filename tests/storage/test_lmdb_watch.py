"""Watch on LMDB: replay from history, initial events, bookmarks, hand-over under concurrent
writes, and slow watchers that never hold writers back."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from kstore.api.selectors import FieldSelector
from kstore.errors import BadRequest, TooLargeResourceVersion
from kstore.storage import _watch_hub
from kstore.storage.interface import (
    INITIAL_EVENTS_END_ANNOTATION,
    EventType,
    ListOptions,
    Storage,
    Watcher,
    WatchEvent,
)
from kstore.storage.lmdb import LmdbBackend

from .conftest import open_backend, pod, pod_config, rv


def take(watcher: Watcher, count: int, timeout: float = 5.0) -> list[WatchEvent]:
    events = []
    for _ in range(count):
        event = watcher.next(timeout)
        assert event is not None, f"only {len(events)} of {count} events arrived"
        events.append(event)
    return events


def kinds(events: list[WatchEvent]) -> list[tuple[str, str, int]]:
    return [
        (e.type.value, e.object["metadata"].get("name", ""), e.resource_version) for e in events
    ]


def test_watch_from_a_revision_replays_history_then_follows_live(pods: Storage) -> None:
    a = pods.create("/pods/ns/a", pod("ns", "a"))
    pods.guaranteed_update("/pods/ns/a", lambda o: {**o, "spec": {"nodeName": "n"}})
    pods.create("/pods/other/b", pod("other", "b"))
    watcher = pods.watch("/pods/ns", ListOptions(resource_version=str(rv(a) - 1)))
    deleted = pods.delete("/pods/ns/a")
    events = take(watcher, 3)
    assert kinds(events) == [
        ("ADDED", "a", rv(a)),
        ("MODIFIED", "a", rv(a) + 1),
        ("DELETED", "a", rv(deleted)),
    ]
    assert events[2].object == deleted
    assert watcher.next(0.1) is None
    watcher.stop()


def test_legacy_watch_from_now_starts_with_the_current_state(pods: Storage) -> None:
    pods.create("/pods/ns/a", pod("ns", "a"))
    pods.create("/pods/ns/b", pod("ns", "b"))
    pods.delete("/pods/ns/b")
    for resource_version, initial in (("", ["a"]), ("0", ["a", "c"])):
        watcher = pods.watch("/pods", ListOptions(resource_version=resource_version))
        events = take(watcher, len(initial))
        assert [e.type for e in events] == [EventType.ADDED] * len(initial)
        assert [e.object["metadata"]["name"] for e in events] == initial
        name = "c" if resource_version == "" else "d"
        created = pods.create(f"/pods/ns/{name}", pod("ns", name))
        assert kinds(take(watcher, 1)) == [("ADDED", name, rv(created))]
        assert watcher.next(0.05) is None
        watcher.stop()


def test_send_initial_events_ends_with_the_annotated_bookmark_at_the_global_revision(
    backend: LmdbBackend, pods: Storage
) -> None:
    for i in range(3):
        pods.create(f"/pods/ns-foo/p{i}", pod("ns-foo", f"p{i}"))
    other = pods.create("/pods/other-ns/x", pod("other-ns", "x"))
    watcher = pods.watch(
        "/pods/ns-foo",
        ListOptions(
            send_initial_events=True, allow_bookmarks=True, resource_version_match="NotOlderThan"
        ),  # type: ignore[arg-type]
    )
    events = take(watcher, 4)
    assert [e.type for e in events] == [EventType.ADDED] * 3 + [EventType.BOOKMARK]
    bookmark = events[3]
    assert bookmark.resource_version == rv(other)
    assert bookmark.object["metadata"] == {
        "resourceVersion": str(rv(other)),
        "annotations": {INITIAL_EVENTS_END_ANNOTATION: "true"},
    }
    assert watcher.next(0.05) is None
    watcher.stop()


def test_send_initial_events_without_bookmarks_sends_no_bookmark(pods: Storage) -> None:
    pods.create("/pods/ns/a", pod("ns", "a"))
    watcher = pods.watch("/pods", ListOptions(send_initial_events=True))
    assert kinds(take(watcher, 1)) == [("ADDED", "a", 2)]
    assert watcher.next(0.05) is None
    watcher.stop()


def test_send_initial_events_false_from_now_sends_only_new_changes(pods: Storage) -> None:
    pods.create("/pods/ns/a", pod("ns", "a"))
    watcher = pods.watch("/pods", ListOptions(send_initial_events=False))
    assert watcher.next(0.05) is None
    pods.create("/pods/ns/b", pod("ns", "b"))
    assert kinds(take(watcher, 1)) == [("ADDED", "b", 3)]
    watcher.stop()


def test_send_initial_events_from_a_future_revision_is_too_large(pods: Storage) -> None:
    with pytest.raises(TooLargeResourceVersion):
        pods.watch("/pods", ListOptions(send_initial_events=True, resource_version="99"))


def test_watch_from_a_future_revision_waits_for_it(pods: Storage) -> None:
    watcher = pods.watch("/pods", ListOptions(resource_version="3"))
    for name in ("a", "b", "c"):
        pods.create(f"/pods/ns/{name}", pod("ns", name))
    assert kinds(take(watcher, 1)) == [("ADDED", "c", 4)]
    watcher.stop()


def test_invalid_watch_revision_is_bad_request(pods: Storage) -> None:
    with pytest.raises(BadRequest):
        pods.watch("/pods", ListOptions(resource_version="x"))


def test_selector_transitions_on_the_backend(pods: Storage) -> None:
    watcher = pods.watch(
        "/pods",
        ListOptions(resource_version="1", field_selector=FieldSelector.parse("spec.nodeName=bar")),
    )
    pods.create("/pods/ns/a", pod("ns", "a", nodeName="foo"))
    pods.guaranteed_update("/pods/ns/a", lambda o: {**o, "spec": {"nodeName": "bar"}})
    pods.guaranteed_update("/pods/ns/a", lambda o: {**o, "spec": {"nodeName": "baz"}})
    events = take(watcher, 2)
    assert kinds(events) == [("ADDED", "a", 3), ("DELETED", "a", 4)]
    assert events[1].object["spec"] == {"nodeName": "bar"}
    watcher.stop()


def test_hand_over_under_concurrent_writers_is_exactly_once(
    backend: LmdbBackend, pods: Storage
) -> None:
    for i in range(100):
        pods.create(f"/pods/ns/p{i}", pod("ns", f"p{i}"))
    stop = threading.Event()
    written: list[int] = []

    def writer(slot: int) -> None:
        n = 0
        while not stop.is_set() and n < 150:
            out = pods.guaranteed_update(f"/pods/ns/p{slot}", lambda o, n=n: {**o, "n": n})
            written.append(rv(out))
            n += 1

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    time.sleep(0.05)
    start = 50
    watcher = pods.watch("/pods", ListOptions(resource_version=str(start)))
    for thread in threads:
        thread.join(30.0)
    final = backend.current_revision()
    seen = [e.resource_version for e in take(watcher, final - start, timeout=10.0)]
    assert seen == list(range(start + 1, final + 1))
    assert watcher.next(0.1) is None
    watcher.stop()


def test_initial_state_larger_than_a_chunk_under_concurrent_writes(
    pods: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_watch_hub, "STATE_CHUNK", 7)
    for i in range(40):
        pods.create(f"/pods/ns/p{i:02d}", pod("ns", f"p{i:02d}"))
    watcher = pods.watch("/pods", ListOptions(resource_version=""))
    first = take(watcher, 3)
    # Changes after the watch started: never mixed into the initial state.
    pods.guaranteed_update("/pods/ns/p39", lambda o: {**o, "n": 1})
    pods.delete("/pods/ns/p00")
    rest = take(watcher, 37 + 2)
    initial = first + rest[:37]
    assert [e.type for e in initial] == [EventType.ADDED] * 40
    assert [e.object["metadata"]["name"] for e in initial] == [f"p{i:02d}" for i in range(40)]
    assert "n" not in initial[-1].object
    assert kinds(rest[37:]) == [("MODIFIED", "p39", 42), ("DELETED", "p00", 43)]
    watcher.stop()


def test_slow_watcher_never_blocks_writers_and_is_closed_with_an_error(tmp_path: Path) -> None:
    store = open_backend(tmp_path / "s", watch_queue_limit=10)
    try:
        pods = store.storage_for(pod_config())
        slow = pods.watch("/pods", ListOptions(resource_version="1"))
        fast = pods.watch("/pods", ListOptions(resource_version="1"))
        received: list[int] = []

        def consume() -> None:
            for event in fast:
                received.append(event.resource_version)

        consumer = threading.Thread(target=consume)
        consumer.start()
        started = time.monotonic()
        for i in range(100):
            pods.create(f"/pods/ns/p{i}", pod("ns", f"p{i}"))
            if i % 5 == 4:
                # The fast watcher keeps up (a consumer starved of CPU for 10 writes would be
                # cut off too, rightly): every 5 writes, let it catch up.
                caught_up = time.monotonic() + 10
                while len(received) < i + 1 and time.monotonic() < caught_up:
                    time.sleep(0.001)
        assert time.monotonic() - started < 30
        error = slow.next(1.0)
        assert error is not None and error.type is EventType.ERROR
        assert slow.next(0.05) is None
        deadline = time.monotonic() + 10
        while len(received) < 100 and time.monotonic() < deadline:
            time.sleep(0.01)
        fast.stop()
        consumer.join(5.0)
        assert received == list(range(2, 102))
    finally:
        store.close()


def test_progress_notify_sends_a_bookmark_when_idle(tmp_path: Path) -> None:
    store = open_backend(tmp_path / "s", progress_notify_interval_s=0.05)
    try:
        pods = store.storage_for(pod_config())
        created = pods.create("/pods/ns/a", pod("ns", "a"))
        watcher = pods.watch(
            "/pods/ns", ListOptions(resource_version=str(rv(created)), progress_notify=True)
        )
        pods.create("/pods/other/b", pod("other", "b"))
        event = watcher.next(2.0)
        assert event is not None and event.type is EventType.BOOKMARK
        assert event.resource_version == rv(created) + 1
        watcher.stop()
    finally:
        store.close()


def test_no_bookmarks_without_progress_notify(pods: Storage) -> None:
    created = pods.create("/pods/ns/a", pod("ns", "a"))
    watcher = pods.watch(
        "/pods/ns", ListOptions(resource_version=str(rv(created)), allow_bookmarks=True)
    )
    pods.create("/pods/other/b", pod("other", "b"))
    assert watcher.next(0.3) is None
    watcher.stop()
