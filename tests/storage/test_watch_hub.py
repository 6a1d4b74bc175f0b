"""The backend-agnostic watch machinery: hand-over from history to live without gaps or
duplicates, selector transitions, bounded queues, stop and progress bookmarks."""

from __future__ import annotations

import threading
from collections.abc import Callable

import orjson
import pytest

from kstore.api.gvk import Object
from kstore.api.selectors import FieldSelector, LabelSelector
from kstore.errors import CorruptObject, Expired
from kstore.storage._watch_hub import (
    HubWatcher,
    RawEvent,
    StartPlan,
    WatchHub,
    error_watcher,
)
from kstore.storage.interface import INITIAL_EVENTS_END_ANNOTATION, EventType, WatchEvent

from .conftest import pod_attrs


class FakeStore:
    """A committed log plus a hub: what a backend's writer does, in memory."""

    def __init__(self, queue_limit: int = 1000) -> None:
        self.hub = WatchHub(queue_limit=queue_limit)
        self.log: list[RawEvent] = []
        self.state: dict[str, tuple[int, bytes]] = {}
        self.revision = 0
        self.compacted = 0
        self._lock = threading.Lock()

    def write(self, key: str, obj: Object | None, *, publish: bool = True) -> RawEvent:
        with self._lock:
            self.revision += 1
            prev = self.state.get(key)
            value = None if obj is None else orjson.dumps(obj)
            event = RawEvent(key, self.revision, value, prev[1] if prev else None)
            if value is None:
                self.state.pop(key, None)
            else:
                self.state[key] = (self.revision, value)
            self.log.append(event)
            if publish:
                self.hub.publish([event], self.revision)
            return event

    # HistorySource
    def read_state(
        self, key: str, recursive: bool, revision: int, after: str | None, limit: int
    ) -> tuple[list[tuple[str, int, bytes]], bool]:
        if revision < self.compacted:
            raise Expired("too old")
        state: dict[str, tuple[int, bytes]] = {}
        for event in self.log:
            if event.revision > revision:
                break
            if event.value is None:
                state.pop(event.key, None)
            else:
                state[event.key] = (event.revision, event.value)
        keys = sorted(
            k
            for k in state
            if (k.startswith(key) if recursive else k == key) and (after is None or k > after)
        )
        chosen = keys[:limit]
        return [(k, *state[k]) for k in chosen], len(keys) > limit

    def read_events(
        self, key: str, recursive: bool, after_revision: int, upto_revision: int, limit: int
    ) -> tuple[list[RawEvent], int]:
        if after_revision < self.compacted:
            raise Expired(f"too old resource version: {after_revision} ({self.compacted})")
        window = [e for e in self.log if after_revision < e.revision <= upto_revision][:limit]
        scanned = window[-1].revision if len(window) == limit else upto_revision
        matching = [e for e in window if (e.key.startswith(key) if recursive else e.key == key)]
        return matching, scanned

    def watch(
        self,
        key: str,
        *,
        plan: StartPlan,
        start: int = 0,
        recursive: bool = True,
        labels: str = "",
        fields: str = "",
        bookmark: bool = False,
        progress: float | None = None,
    ) -> HubWatcher:
        subscription = self.hub.subscribe(key, recursive)
        return HubWatcher(
            hub=self.hub,
            subscription=subscription,
            source=self,
            decode=lambda _key, data: orjson.loads(data),
            get_attrs=pod_attrs,
            label_selector=LabelSelector.parse(labels),
            field_selector=FieldSelector.parse(fields),
            plan=plan,
            start_revision=start if plan is StartPlan.REPLAY else subscription.start_revision,
            initial_events_bookmark=bookmark,
            progress_notify_interval=progress,
        )


def obj(name: str, **labels: str) -> Object:
    return {"metadata": {"name": name, "namespace": "ns", "labels": labels}}


def drain(watcher: HubWatcher, timeout: float = 0.05) -> list[WatchEvent]:
    events = []
    while (event := watcher.next(timeout)) is not None:
        events.append(event)
    return events


def summary(events: list[WatchEvent]) -> list[tuple[str, str, int]]:
    return [
        (e.type.value, e.object["metadata"].get("name", ""), e.resource_version) for e in events
    ]


def test_replay_then_live_hands_over_without_gap_or_duplicate() -> None:
    store = FakeStore()
    for i in range(5):
        store.write(f"/pods/ns/p{i}", obj(f"p{i}"))
    watcher = store.watch("/pods/", plan=StartPlan.REPLAY, start=2)
    for i in range(5, 8):
        store.write(f"/pods/ns/p{i}", obj(f"p{i}"))
    revisions = [e.resource_version for e in drain(watcher)]
    assert revisions == [3, 4, 5, 6, 7, 8]


def test_changes_committed_but_unpublished_at_subscribe_come_live_not_twice() -> None:
    store = FakeStore()
    store.write("/pods/ns/a", obj("a"))
    # Committed (in the log) but not yet published when the watch subscribes.
    late = store.write("/pods/ns/b", obj("b"), publish=False)
    watcher = store.watch("/pods/", plan=StartPlan.REPLAY, start=0)
    store.hub.publish([late], late.revision)
    assert [e.resource_version for e in drain(watcher)] == [1, 2]


def test_concurrent_writes_during_replay_arrive_exactly_once_in_order() -> None:
    store = FakeStore(queue_limit=100_000)
    for i in range(300):
        store.write(f"/pods/ns/k{i % 7}", obj(f"k{i % 7}", n=str(i)))
    done = threading.Event()

    def writer() -> None:
        for i in range(300, 900):
            store.write(f"/pods/ns/k{i % 7}", obj(f"k{i % 7}", n=str(i)))
        done.set()

    watcher = store.watch("/pods/", plan=StartPlan.REPLAY, start=10)
    thread = threading.Thread(target=writer)
    thread.start()
    seen: list[int] = []
    while len(seen) < 890:
        event = watcher.next(5.0)
        assert event is not None
        seen.append(event.resource_version)
    thread.join()
    assert seen == list(range(11, 901))
    assert watcher.next(0.05) is None


def test_initial_state_then_bookmark_then_live() -> None:
    store = FakeStore()
    store.write("/pods/ns/a", obj("a"))
    store.write("/pods/ns/b", obj("b"))
    store.write("/pods/ns/a", None)
    store.write("/other/x", obj("x"))
    watcher = store.watch("/pods/", plan=StartPlan.INITIAL_STATE, bookmark=True)
    store.write("/pods/ns/c", obj("c"))
    events = drain(watcher)
    assert summary(events) == [("ADDED", "b", 2), ("BOOKMARK", "", 4), ("ADDED", "c", 5)]
    bookmark = events[1].object
    assert bookmark["metadata"]["annotations"] == {INITIAL_EVENTS_END_ANNOTATION: "true"}
    assert bookmark["metadata"]["resourceVersion"] == "4"


def test_selector_transitions_follow_kubernetes_rules() -> None:
    store = FakeStore()
    watcher = store.watch("/pods/", plan=StartPlan.REPLAY, start=0, labels="select=true")
    store.write("/pods/ns/a", obj("a", select="false"))  # not matching: nothing
    store.write("/pods/ns/a", obj("a", select="true"))  # starts matching: ADDED
    store.write("/pods/ns/a", obj("a", select="true", x="1"))  # still matching: MODIFIED
    store.write("/pods/ns/a", obj("a", select="false"))  # stops matching: DELETED(old)
    store.write("/pods/ns/a", obj("a", select="true"))  # ADDED again
    store.write("/pods/ns/a", None)  # real delete: DELETED(old)
    events = drain(watcher)
    assert summary(events) == [
        ("ADDED", "a", 2),
        ("MODIFIED", "a", 3),
        ("DELETED", "a", 4),
        ("ADDED", "a", 5),
        ("DELETED", "a", 6),
    ]
    # The DELETED of a transition carries the old (last matching) object at the event's RV.
    assert events[2].object["metadata"]["labels"] == {"select": "true", "x": "1"}
    assert events[2].object["metadata"]["resourceVersion"] == "4"


def test_exact_key_watch_ignores_longer_keys() -> None:
    store = FakeStore()
    watcher = store.watch("/pods/ns/foo", plan=StartPlan.REPLAY, start=0, recursive=False)
    store.write("/pods/ns/foobar", obj("foobar"))
    store.write("/pods/ns/foo", obj("foo"))
    assert summary(drain(watcher)) == [("ADDED", "foo", 2)]


def test_slow_watcher_overflows_into_an_error_and_others_are_unaffected() -> None:
    store = FakeStore(queue_limit=5)
    slow = store.watch("/pods/", plan=StartPlan.REPLAY, start=0)
    fast = store.watch("/pods/", plan=StartPlan.REPLAY, start=0)
    for i in range(20):
        store.write(f"/pods/ns/p{i}", obj(f"p{i}"))
        assert fast.next(1.0) is not None
    event = slow.next(1.0)
    assert event is not None and event.type is EventType.ERROR
    assert event.object["code"] == 500
    assert "fell 5 events behind" in event.object["message"]
    assert slow.next(0.01) is None
    assert slow.stopped
    store.write("/pods/ns/late", obj("late"))
    late = fast.next(1.0)
    assert late is not None and late.resource_version == 21


def test_stop_ends_delivery_at_once_even_with_events_queued() -> None:
    store = FakeStore()
    watcher = store.watch("/pods/", plan=StartPlan.REPLAY, start=0)
    for i in range(3):
        store.write(f"/pods/ns/p{i}", obj(f"p{i}"))
    first = watcher.next(1.0)
    assert first is not None and first.resource_version == 1
    watcher.stop()
    assert watcher.stopped
    assert watcher.next(0.05) is None
    assert list(watcher) == []
    watcher.stop()  # idempotent
    assert not store.hub.has_subscribers()


def test_stop_during_initial_events_ends_at_once() -> None:
    store = FakeStore()
    for i in range(5):
        store.write(f"/pods/ns/p{i}", obj(f"p{i}"))
    watcher = store.watch("/pods/", plan=StartPlan.INITIAL_STATE)
    assert watcher.next(1.0) is not None
    watcher.stop()
    assert watcher.next(0.05) is None


def next_while_blocked(watcher: HubWatcher, wake: Callable[[], None]) -> WatchEvent | None:
    """What ``watcher.next(None)``, blocked in another thread, returns once ``wake`` ran."""
    result: list[WatchEvent | None] = []
    consumer = threading.Thread(target=lambda: result.append(watcher.next(None)))
    consumer.start()
    wake()
    consumer.join(5.0)
    assert not consumer.is_alive()
    assert len(result) == 1
    return result[0]


def test_stop_unblocks_a_waiting_consumer() -> None:
    store = FakeStore()
    watcher = store.watch("/pods/", plan=StartPlan.REPLAY, start=0)
    assert next_while_blocked(watcher, watcher.stop) is None


def test_iteration_ends_when_the_hub_closes() -> None:
    store = FakeStore()
    watcher = store.watch("/pods/", plan=StartPlan.REPLAY, start=0)
    store.write("/pods/ns/a", obj("a"))
    store.hub.close()
    assert [e.resource_version for e in watcher] == [1]


def test_expired_replay_becomes_one_error_event() -> None:
    store = FakeStore()
    for i in range(4):
        store.write(f"/pods/ns/p{i}", obj(f"p{i}"))
    watcher = store.watch("/pods/", plan=StartPlan.REPLAY, start=1)
    store.compacted = 3
    events = drain(watcher)
    assert [e.type for e in events] == [EventType.ERROR]
    assert events[0].object["code"] == 410
    assert events[0].object["reason"] == "Expired"


def test_decode_failure_is_an_error_event_and_nothing_follows() -> None:
    store = FakeStore()
    subscription = store.hub.subscribe("/pods/", True)

    def decode(key: str, data: bytes) -> Object:
        raise CorruptObject(f'unable to transform key "{key}": bad')

    watcher = HubWatcher(
        hub=store.hub,
        subscription=subscription,
        source=store,
        decode=decode,
        get_attrs=pod_attrs,
        label_selector=LabelSelector.everything(),
        field_selector=FieldSelector.everything(),
        plan=StartPlan.REPLAY,
        start_revision=0,
    )
    store.write("/pods/ns/a", obj("a"))
    store.write("/pods/ns/b", obj("b"))
    events = drain(watcher)
    assert [e.type for e in events] == [EventType.ERROR]
    assert events[0].object["code"] == 500
    assert "unable to transform key" in events[0].object["message"]


def test_progress_bookmark_carries_the_hub_revision_once_idle() -> None:
    store = FakeStore()
    watcher = store.watch("/pods/", plan=StartPlan.REPLAY, start=0, progress=0.05)
    store.write("/pods/ns/a", obj("a"))
    store.write("/other/x", obj("x"))
    first = watcher.next(1.0)
    assert first is not None and first.type is EventType.ADDED
    bookmark = watcher.next(1.0)
    assert bookmark is not None and bookmark.type is EventType.BOOKMARK
    assert bookmark.resource_version == 2
    assert bookmark.object == {"metadata": {"resourceVersion": "2"}}
    # No new revision: no further bookmark.
    assert watcher.next(0.2) is None


def test_requested_progress_wakes_a_blocked_consumer_with_the_hub_revision() -> None:
    store = FakeStore()
    # No progress interval and no timeout: only the request can end this wait.
    watcher = store.watch("/pods/", plan=StartPlan.REPLAY, start=0)
    store.write("/other/x", obj("x"))
    bookmark = next_while_blocked(watcher, watcher.request_progress)
    assert bookmark is not None
    assert bookmark.type is EventType.BOOKMARK and bookmark.resource_version == 1
    # Answered once: nothing newer since, so the next wait times out.
    assert watcher.next(0.1) is None
    watcher.stop()


def test_requested_progress_comes_after_the_queued_changes() -> None:
    store = FakeStore()
    watcher = store.watch("/pods/", plan=StartPlan.REPLAY, start=0)
    store.write("/pods/ns/a", obj("a"))
    store.write("/other/x", obj("x"))
    watcher.request_progress()
    assert summary(drain(watcher)) == [("ADDED", "a", 1), ("BOOKMARK", "", 2)]


def test_requested_progress_without_a_newer_revision_sends_nothing() -> None:
    store = FakeStore()
    watcher = store.watch("/pods/", plan=StartPlan.REPLAY, start=0)
    store.write("/pods/ns/a", obj("a"))
    assert summary(drain(watcher)) == [("ADDED", "a", 1)]
    watcher.request_progress()
    assert watcher.next(0.1) is None


def test_error_watcher_delivers_its_error_once() -> None:
    watcher = error_watcher(Expired("too old resource version: 1 (5)"))
    event = watcher.next()
    assert event is not None and event.type is EventType.ERROR
    assert event.object["message"] == "too old resource version: 1 (5)"
    assert watcher.next() is None
    assert watcher.stopped
    assert list(watcher) == []


def test_hub_rejects_a_zero_queue_limit() -> None:
    with pytest.raises(ValueError):
        WatchHub(queue_limit=0)


def test_a_dropped_watcher_unsubscribes() -> None:
    store = FakeStore()
    watcher = store.watch("/pods/", plan=StartPlan.REPLAY, start=0)
    assert store.hub.has_subscribers()
    del watcher
    assert not store.hub.has_subscribers()
