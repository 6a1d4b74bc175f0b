"""Conformance: watch from a revision, event kinds and objects, ordering, stop and expiry.

Ports of Kubernetes' ``RunTestWatch``, ``RunTestWatchFromZero``, ``RunTestDeleteTriggerWatch``,
``RunTestWatchFromNonZero``, ``RunTestDelayedWatchDelivery``, ``RunTestWatcherTimeout``,
``RunTestWatchDeleteEventObjectHaveLatestRV`` and ``RunTestWatchContextCancel`` (as stop), plus
kstore's rule for a start revision that was compacted: one ERROR event (410 Expired), then the
end of the watch, never a silent later start. A watch's resourceVersion is exclusive: events
after it are delivered, in order, exactly once.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import pytest

from kstore.api.gvk import Object
from kstore.api.selectors import FieldSelector, LabelSelector
from kstore.storage.interface import EventType, ListOptions
from kstore.testing.env import ConformanceEnv
from kstore.testing.objects import pod, pod_key, replace_with, rv_of, with_rv
from kstore.testing.watching import (
    EVENT_WAIT,
    expect_event,
    expect_no_event,
    expect_watch_ended,
    next_event,
    watching,
)

__all__ = ["TestWatch", "TestWatchDelivery", "TestWatchFromRevision"]

ADDED, MODIFIED, DELETED = EventType.ADDED, EventType.MODIFIED, EventType.DELETED


@dataclass(frozen=True)
class _Write:
    obj: Object | None  # None deletes
    event: EventType | None  # the event expected, None for none


def _base(labels: dict[str, str] | None = None, node: str = "") -> Object:
    return pod("foo", labels=labels, node_name=node)


_SELECTED = {"select": "true"}
_WATCH_CASES: dict[str, tuple[str, str, list[_Write]]] = {
    "create a key": ("", "", [_Write(_base(), ADDED)]),
    "key updated to match predicate": (
        "spec.nodeName=bar",
        "",
        [_Write(_base(), None), _Write(_base(node="bar"), ADDED)],
    ),
    "update": ("", "", [_Write(_base(), ADDED), _Write(_base(node="bar"), MODIFIED)]),
    "delete because of being filtered": (
        "spec.nodeName!=bar",
        "",
        [_Write(_base(), ADDED), _Write(_base(node="bar"), DELETED)],
    ),
    "filtering": (
        "",
        "select=true",
        [
            _Write(_base(_SELECTED), ADDED),
            _Write(_base(), DELETED),
            _Write(_base(_SELECTED), ADDED),
            _Write(_base(_SELECTED, node="bar"), MODIFIED),
            _Write(None, DELETED),
        ],
    ),
}


def _in_namespace(obj: Object, namespace: str) -> Object:
    return {**obj, "metadata": {**obj["metadata"], "namespace": namespace}}


class TestWatch:
    @pytest.mark.parametrize("recursive", [False, True], ids=["exact key", "recursive"])
    @pytest.mark.parametrize("case", list(_WATCH_CASES))
    def test_watch_transitions(
        self, conformance_env: ConformanceEnv, case: str, recursive: bool
    ) -> None:
        field, label, writes = _WATCH_CASES[case]
        pods = conformance_env.pods()
        namespace = "test-ns"
        key = f"/pods/{namespace}/foo"
        watch_key = f"/pods/{namespace}" if recursive else key
        field_selector, label_selector = FieldSelector.parse(field), LabelSelector.parse(label)
        start = pods.list(
            watch_key,
            ListOptions(
                recursive=recursive, field_selector=field_selector, label_selector=label_selector
            ),
        )
        opts = ListOptions(
            resource_version=str(start.resource_version),
            recursive=recursive,
            field_selector=field_selector,
            label_selector=label_selector,
        )
        watcher = pods.watch(watch_key, opts)
        try:
            # A Pod in another namespace (whose name shares the prefix) is never seen.
            other = _in_namespace(_base(), f"{namespace}-bad")
            pods.guaranteed_update(pod_key(other), lambda _: other, ignore_not_found=True)
            previous: Object | None = None
            for write in writes:
                if write.obj is None:
                    out = pods.delete(key)
                else:
                    obj = _in_namespace(write.obj, namespace)
                    out = pods.guaranteed_update(key, replace_with(obj), ignore_not_found=True)
                if write.event is DELETED:
                    assert previous is not None
                    expect_event(watcher, DELETED, with_rv(previous, rv_of(out)))
                elif write.event is not None:
                    expect_event(watcher, write.event, out)
                previous = out
            expect_no_event(watcher)
        finally:
            watcher.stop()
        expect_watch_ended(watcher)


class TestWatchFromRevision:
    def test_watch_from_zero_starts_with_the_current_state(
        self, conformance_env: ConformanceEnv
    ) -> None:
        env = conformance_env
        pods = env.pods()
        key = "/pods/test-ns/foo"
        stored = pods.create(key, pod("foo", "test-ns"))
        from_zero = ListOptions(resource_version="0", recursive=False)

        with watching(pods, key, from_zero) as watcher:
            expect_event(watcher, ADDED, stored)
            updated = pods.guaranteed_update(
                key, lambda _: pod("foo", "test-ns", annotations={"a": "1"})
            )
            expect_event(watcher, MODIFIED, updated)

        with watching(pods, key, from_zero) as watcher:
            expect_event(watcher, ADDED, updated)

        newest = pods.guaranteed_update(key, lambda _: pod("foo", "test-ns"))
        env.compact_and_bump(rv_of(newest))

        with watching(pods, key, from_zero) as watcher:
            expect_event(watcher, ADDED, newest)
        # A start below the compacted revision is an error event, never a later start.
        too_old = ListOptions(resource_version=str(rv_of(updated)), recursive=False)
        with watching(pods, key, too_old) as watcher:
            error = expect_event(watcher, EventType.ERROR)
            assert error.object.get("code") == 410, error.object
            assert error.object.get("reason") == "Expired", error.object
            expect_watch_ended(watcher)

    def test_watch_from_a_compacted_revision_is_expired(
        self, conformance_env: ConformanceEnv
    ) -> None:
        env = conformance_env
        pods = env.pods()
        first = pods.create("/pods/ns/a", pod("a", "ns"))
        second = pods.create("/pods/ns/b", pod("b", "ns"))
        env.compact_and_bump(rv_of(second))

        # Events after the compacted revision are still there: watching from it works.
        at_compaction = ListOptions(resource_version=str(rv_of(second)))
        with watching(pods, "/pods/ns", at_compaction) as watcher:
            third = pods.create("/pods/ns/c", pod("c", "ns"))
            expect_event(watcher, ADDED, third)

        before = ListOptions(resource_version=str(rv_of(first)))
        with watching(pods, "/pods/ns", before) as watcher:
            error = expect_event(watcher, EventType.ERROR)
            assert (error.object.get("code"), error.object.get("reason")) == (410, "Expired")
            assert error.object.get("kind") == "Status"
            expect_watch_ended(watcher)

    def test_delete_triggers_a_deleted_event(self, conformance_env: ConformanceEnv) -> None:
        pods = conformance_env.pods()
        stored = pods.create("/pods/test-ns/foo", pod("foo", "test-ns"))
        opts = ListOptions(resource_version=str(rv_of(stored)), recursive=False)
        with watching(pods, "/pods/test-ns/foo", opts) as watcher:
            pods.delete("/pods/test-ns/foo")
            expect_event(watcher, DELETED)

    def test_deleted_event_carries_the_object_returned_by_delete(
        self, conformance_env: ConformanceEnv
    ) -> None:
        pods = conformance_env.pods()
        stored = pods.create("/pods/test-ns/foo", pod("foo", "test-ns"))
        opts = ListOptions(resource_version=str(rv_of(stored)), recursive=False)
        with watching(pods, "/pods/test-ns/foo", opts) as watcher:
            deleted = pods.delete("/pods/test-ns/foo")
            assert rv_of(deleted) != rv_of(stored)
            event = expect_event(watcher, DELETED, deleted)
            assert event.resource_version == rv_of(deleted)

    def test_watch_from_the_object_revision_sees_the_update(
        self, conformance_env: ConformanceEnv
    ) -> None:
        pods = conformance_env.pods()
        stored = pods.create("/pods/test-ns/foo", pod("foo", "test-ns"))
        opts = ListOptions(resource_version=str(rv_of(stored)), recursive=False)
        with watching(pods, "/pods/test-ns/foo", opts) as watcher:
            updated = pods.guaranteed_update(
                "/pods/test-ns/foo", lambda _: pod("foo", "test-ns", annotations={"version": "2"})
            )
            expect_event(watcher, MODIFIED, updated)

    def test_watch_from_a_past_revision_replays_history_in_order(
        self, conformance_env: ConformanceEnv
    ) -> None:
        pods = conformance_env.pods()
        created = pods.create("/pods/test-ns/foo", pod("foo", "test-ns"))
        history: list[tuple[EventType, Object]] = []
        for version in ("2", "3"):
            history.append(
                (
                    MODIFIED,
                    pods.guaranteed_update(
                        "/pods/test-ns/foo",
                        replace_with(pod("foo", "test-ns", annotations={"v": version})),
                    ),
                )
            )
        other = pods.create("/pods/test-ns/bar", pod("bar", "test-ns"))
        deleted = pods.delete("/pods/test-ns/foo")
        history += [(ADDED, other), (DELETED, deleted)]

        with watching(
            pods, "/pods/test-ns", ListOptions(resource_version=str(rv_of(created)))
        ) as w:
            for type_, obj in history:
                expect_event(w, type_, obj)
            expect_no_event(w)


class TestWatchDelivery:
    def test_events_produced_while_nobody_reads_are_not_lost(
        self, conformance_env: ConformanceEnv
    ) -> None:
        pods = conformance_env.pods()
        start = pods.create("/pods/test-ns/foo", pod("foo", "test-ns"))
        total = 21
        opts = ListOptions(resource_version=str(rv_of(start)))
        with watching(pods, "/pods/test-ns", opts) as watcher:
            written = [
                pods.guaranteed_update(
                    f"/pods/test-ns/foo-{i}",
                    replace_with(pod(f"foo-{i}", "test-ns")),
                    ignore_not_found=True,
                )
                for i in range(total)
            ]
            time.sleep(1)  # nobody reads while the events pile up
            seen: list[Object] = []
            while len(seen) < total:
                event = watcher.next(timeout=EVENT_WAIT)
                if event is None:
                    break
                seen.append(event.object)
        assert seen == written[: len(seen)], "events out of order or altered"
        if len(seen) < total:
            assert conformance_env.capabilities.closes_slow_watchers, (
                f"only {len(seen)} of {total} events delivered"
            )
            # A slow watcher may be ended, never skipped over (Kubernetes: at least 11).
            assert len(seen) >= 11
            assert watcher.stopped

    def test_watchers_that_never_read_do_not_block_others(
        self, conformance_env: ConformanceEnv
    ) -> None:
        pods = conformance_env.pods()
        initial = pods.list("/pods/").resource_version
        opts = ListOptions(resource_version=str(initial))
        idle = [pods.watch("/pods/test-ns", opts) for _ in range(50)]
        try:
            with watching(pods, "/pods/test-ns", opts) as reader:
                started = time.monotonic()
                for i in range(22):
                    out = pods.create(f"/pods/test-ns/foo-{i}", pod(f"foo-{i}", "test-ns"))
                    expect_event(reader, ADDED, out)
                # Kubernetes' bound: 250ms per idle watcher.
                assert time.monotonic() - started < 12.5
        finally:
            for watcher in idle:
                watcher.stop()

    def test_stop_ends_the_watch(self, conformance_env: ConformanceEnv) -> None:
        pods = conformance_env.pods()
        watcher = pods.watch("/pods/not-existing", ListOptions(resource_version="0"))
        assert not watcher.stopped
        watcher.stop()
        watcher.stop()  # idempotent
        expect_watch_ended(watcher, timeout=1.0)
        pods.create("/pods/not-existing/foo", pod("foo", "not-existing"))
        assert watcher.next(timeout=0.2) is None

    def test_iteration_yields_events_until_the_watch_is_stopped(
        self, conformance_env: ConformanceEnv
    ) -> None:
        pods = conformance_env.pods()
        watcher = pods.watch("/pods/ns", ListOptions(resource_version="0"))
        seen: list[Object] = []

        def consume() -> None:
            for event in watcher:
                seen.append(event.object)
                if len(seen) == 2:
                    watcher.stop()

        consumer = threading.Thread(target=consume, daemon=True)
        consumer.start()
        created = [pods.create(f"/pods/ns/{n}", pod(n, "ns")) for n in ("a", "b", "c")]
        consumer.join(EVENT_WAIT)
        assert not consumer.is_alive(), "iteration did not end after stop()"
        assert seen == created[:2]

    def test_stop_during_a_blocked_next_returns_promptly(
        self, conformance_env: ConformanceEnv
    ) -> None:
        pods = conformance_env.pods()
        watcher = pods.watch("/pods/ns", ListOptions(resource_version="0"))
        timer = threading.Timer(0.2, watcher.stop)
        timer.start()
        started = time.monotonic()
        try:
            assert watcher.next(timeout=EVENT_WAIT) is None
        finally:
            timer.cancel()
        assert time.monotonic() - started < EVENT_WAIT - 1, "next() did not notice the stop"
        assert watcher.stopped

    def test_returned_objects_belong_to_the_caller(self, conformance_env: ConformanceEnv) -> None:
        if conformance_env.capabilities.shares_objects:
            pytest.skip("this implementation hands out shared, read-only objects")
        pods = conformance_env.pods()
        with watching(pods, "/pods/ns", ListOptions(resource_version="0")) as watcher:
            created = pods.create("/pods/ns/a", pod("a", "ns"))
            expected = with_rv(created, rv_of(created))
            created["metadata"]["labels"] = {"mutated": "by the caller"}
            event = next_event(watcher)
            assert event.object == expected
            event.object["metadata"]["labels"] = {"mutated": "by the caller"}
            got = pods.get("/pods/ns/a")
            assert got == expected
            got["metadata"]["labels"] = {"mutated": "by the caller"}
            listed = pods.list("/pods/ns").items
            assert listed == [expected]
            listed[0]["metadata"]["labels"] = {"mutated": "by the caller"}
        assert pods.get("/pods/ns/a") == expected
