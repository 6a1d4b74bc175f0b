"""Conformance: initial events, the initial-events-end bookmark, and bookmarks in general.

Ports of Kubernetes' ``RunWatchSemantics`` (all 18 scenarios), ``RunWatchSemanticInitialEvents
Extended``, ``RunWatchListMatchSingle``, ``RunSendInitialEventsBackwardCompatibility``,
``RunTestWatchDispatchBookmarkEvents``, ``RunTestOptionalWatchBookmarksWithCorrectResource
Version`` and ``RunOptionalTestProgressNotify``. The rules: initial ADDED events come for
``send_initial_events`` True, for the legacy mode (None) with RV "" or "0", and from history
for an old RV; exactly one BOOKMARK annotated ``k8s.io/initial-events-end: "true"`` follows
them iff ``send_initial_events`` and ``allow_bookmarks``, with an RV not older than the last
initial event (the global revision when nothing narrower is known); a bookmark carries nothing
but its metadata; bookmark RVs never go back and data event RVs always go up.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import pytest

from kstore.api.gvk import Object
from kstore.api.selectors import FieldSelector
from kstore.storage.interface import (
    INITIAL_EVENTS_END_ANNOTATION,
    EventType,
    ListOptions,
    ResourceVersionMatch,
    WatchEvent,
)
from kstore.testing.env import ConformanceEnv
from kstore.testing.objects import pod, pod_key, rv_of
from kstore.testing.watching import (
    EVENT_WAIT,
    QUIET_WAIT,
    bookmark_view,
    event_summary,
    expect_event,
    expect_no_event,
    next_event,
    watching,
)

__all__ = ["TestBookmarks", "TestWatchList", "TestWatchSemantics"]

ADDED, BOOKMARK = EventType.ADDED, EventType.BOOKMARK


def _initial_events_end(rv: int) -> Object:
    return {
        "metadata": {
            "resourceVersion": str(rv),
            "annotations": {INITIAL_EVENTS_END_ANNOTATION: "true"},
        }
    }


def _expect_initial_events_end(event: WatchEvent, min_rv: int, exact: bool = False) -> None:
    assert event.type is BOOKMARK, f"expected the initial-events-end bookmark, got {event.type}"
    assert event.resource_version >= min_rv
    if exact:
        assert event.resource_version == min_rv, "the bookmark must carry the global revision"
    assert bookmark_view(event) == _initial_events_end(event.resource_version)


@dataclass(frozen=True)
class _Scenario:
    allow_bookmarks: bool = False
    send_initial_events: bool | None = None
    rv: str = ""  # "", "0", "1", or "current"
    initial_events: bool = False
    end_bookmark: bool = False


def _scenarios() -> dict[str, _Scenario]:
    out: dict[str, _Scenario] = {}
    for rv_name, rv in (("unset", ""), ("0", "0"), ("1", "1"), ("useCurrentRV", "current")):
        for bookmarks in (True, False):
            for send in (True, False):
                name = f"allowWatchBookmarks={str(bookmarks).lower()}, "
                name += f"sendInitialEvents={str(send).lower()}, RV={rv_name}"
                out[name] = _Scenario(
                    allow_bookmarks=bookmarks,
                    send_initial_events=send,
                    rv=rv,
                    # RV "1" replays history even without sendInitialEvents.
                    initial_events=send or rv == "1",
                    end_bookmark=send and bookmarks,
                )
    out["legacy, RV=0"] = _Scenario(rv="0", initial_events=True)
    out["legacy, RV=unset"] = _Scenario(rv="", initial_events=True)
    return out


_SCENARIOS = _scenarios()
assert len(_SCENARIOS) == 18


class TestWatchSemantics:
    @pytest.mark.parametrize("scenario", list(_SCENARIOS))
    def test_watch_semantics(self, conformance_env: ConformanceEnv, scenario: str) -> None:
        sc = _SCENARIOS[scenario]
        env = conformance_env
        pods = env.pods()
        env.bump_revision()  # so that RV "1" is before every Pod, whatever the first revision
        initial = [pods.create(f"/pods/ns/pod-{i}", pod(f"pod-{i}", "ns")) for i in (1, 2, 3)]
        # A list not older than the last create: a cache has then seen every initial Pod.
        synced = ListOptions(
            resource_version=str(rv_of(initial[-1])),
            resource_version_match=ResourceVersionMatch.NOT_OLDER_THAN,
        )
        assert len(pods.list("/pods/ns", synced).items) == 3
        rv = str(pods.current_revision()) if sc.rv == "current" else sc.rv

        opts = ListOptions(
            resource_version=rv,
            send_initial_events=sc.send_initial_events,
            allow_bookmarks=sc.allow_bookmarks,
        )
        with watching(pods, "/pods/ns", opts) as watcher:
            if sc.initial_events:
                for obj in initial:
                    expect_event(watcher, ADDED, obj)
            if sc.end_bookmark:
                _expect_initial_events_end(next_event(watcher), rv_of(initial[-1]))
            later = [pods.create(f"/pods/ns/pod-{i}", pod(f"pod-{i}", "ns")) for i in (4, 5)]
            for obj in later:
                event = next_event(watcher)
                while event.type is BOOKMARK:
                    event = next_event(watcher)
                assert (event.type, event.object) == (ADDED, obj), event_summary(event)
            expect_no_event(watcher, ignore_bookmarks=True)


class TestWatchList:
    def test_initial_events_end_carries_the_global_revision(
        self, conformance_env: ConformanceEnv
    ) -> None:
        pods = conformance_env.pods()
        initial = [
            pods.create(f"/pods/ns-foo/pod-{i}", pod(f"pod-{i}", "ns-foo")) for i in range(5)
        ]
        # A write outside the watched namespace moves the global revision.
        other = pods.create("/pods/other-ns-foo/pod-1", pod("pod-1", "other-ns-foo"))
        opts = ListOptions(send_initial_events=True, allow_bookmarks=True)
        with watching(pods, "/pods/ns-foo", opts) as watcher:
            for obj in initial:
                expect_event(watcher, ADDED, obj)
            _expect_initial_events_end(next_event(watcher), rv_of(other), exact=True)
            expect_no_event(watcher)

    def test_watch_list_with_a_single_object_selector(
        self, conformance_env: ConformanceEnv
    ) -> None:
        pods = conformance_env.pods()
        expected = pods.create("/pods/ns-foo/pod-1", pod("pod-1", "ns-foo"))
        last = expected
        for i in (2, 3, 4, 5):
            last = pods.create(f"/pods/ns-foo/pod-{i}", pod(f"pod-{i}", "ns-foo"))
        opts = ListOptions(
            field_selector=FieldSelector.parse("metadata.name=pod-1"),
            send_initial_events=True,
            allow_bookmarks=True,
        )
        with watching(pods, "/pods/", opts) as watcher:
            expect_event(watcher, ADDED, expected)
            _expect_initial_events_end(next_event(watcher), rv_of(last), exact=True)
            expect_no_event(watcher)

    def test_send_initial_events_without_bookmarks_is_accepted(
        self, conformance_env: ConformanceEnv
    ) -> None:
        pods = conformance_env.pods()
        stored = pods.create("/pods/ns/a", pod("a", "ns"))
        with watching(pods, "/pods/", ListOptions(send_initial_events=True)) as watcher:
            expect_event(watcher, ADDED, stored)
            expect_no_event(watcher)

    def test_initial_events_honour_selectors_and_prefix(
        self, conformance_env: ConformanceEnv
    ) -> None:
        pods = conformance_env.pods()
        pods.create("/pods/ns/a", pod("a", "ns", node_name="n1"))
        b = pods.create("/pods/ns/b", pod("b", "ns", node_name="n2"))
        pods.create("/pods/nsx/b", pod("b", "nsx", node_name="n2"))
        opts = ListOptions(
            resource_version="0", field_selector=FieldSelector.parse("spec.nodeName=n2")
        )
        with watching(pods, "/pods/ns", opts) as watcher:
            expect_event(watcher, ADDED, b)
            expect_no_event(watcher)


class TestBookmarks:
    def test_bookmarks_only_when_allowed(self, conformance_env: ConformanceEnv) -> None:
        interval = conformance_env.capabilities.bookmark_interval
        pods = conformance_env.pods()
        stored = pods.create("/pods/test-ns/foo", pod("foo", "test-ns"))
        for index, allow in enumerate((False, True)):
            opts = ListOptions(
                resource_version=str(rv_of(stored)), recursive=False, allow_bookmarks=allow
            )
            with watching(pods, "/pods/test-ns/foo", opts) as watcher:
                # Writes elsewhere move the revision but are not events of this watch.
                pods.create(f"/pods/other-ns-{index}/foo", pod("foo", f"other-ns-{index}"))
                if allow and interval is not None:
                    event = next_event(watcher, timeout=interval + EVENT_WAIT)
                    assert event.type is BOOKMARK, event_summary(event)
                    assert bookmark_view(event) == {
                        "metadata": {"resourceVersion": str(event.resource_version)}
                    }
                elif allow:
                    expect_no_event(watcher, timeout=1.0, ignore_bookmarks=True)
                else:
                    expect_no_event(watcher, timeout=1.0)

    def test_bookmark_and_event_revisions_are_monotonic(
        self, conformance_env: ConformanceEnv
    ) -> None:
        interval = conformance_env.capabilities.bookmark_interval
        pods = conformance_env.pods()
        start = pods.list("/pods/").resource_version
        opts = ListOptions(resource_version=str(start), allow_bookmarks=True)
        # Long enough to see a bookmark where the implementation sends them.
        duration = 1.0 if interval is None else interval + 1.0
        done = threading.Event()
        created: list[Object] = []

        def create_steadily() -> None:
            deadline = time.monotonic() + duration
            i = 0
            while time.monotonic() < deadline and not done.is_set():
                obj = pod(f"foo-{i}", "test-ns")
                created.append(pods.create(pod_key(obj), obj))
                i += 1
                time.sleep(0.01)

        with watching(pods, "/pods/test-ns", opts) as watcher:
            writer = threading.Thread(target=create_steadily, daemon=True)
            writer.start()
            events: list[WatchEvent] = []
            try:
                silent_since = time.monotonic()
                while writer.is_alive() or sum(e.type is ADDED for e in events) < len(created):
                    event = watcher.next(timeout=0.2)
                    if event is None:
                        assert time.monotonic() - silent_since < EVENT_WAIT, (
                            f"the watch fell silent after {len(events)} events while "
                            f"{len(created)} objects were created (stopped={watcher.stopped})"
                        )
                        continue
                    silent_since = time.monotonic()
                    events.append(event)
            finally:
                done.set()
                writer.join(EVENT_WAIT)

        last = start
        for event in events:
            if event.type is BOOKMARK:
                assert event.resource_version >= last, "a bookmark went back in time"
            else:
                assert event.resource_version > last, "an event did not move forward"
            last = event.resource_version
        assert [e.object for e in events if e.type is ADDED] == created
        if interval is not None:
            assert any(e.type is BOOKMARK for e in events), "no bookmark while watching"

    def test_progress_notify_sends_bookmarks(self, conformance_env: ConformanceEnv) -> None:
        if not conformance_env.capabilities.progress_notify:
            pytest.skip("this implementation sends no progress notifications")
        env = conformance_env
        pods = env.pods()
        stored = pods.create("/pods/test-ns/name", pod("name", "test-ns"))
        # Move the revision past the watch start, or there is no progress to notify.
        env.bump_revision()
        opts = ListOptions(
            resource_version=str(rv_of(stored)), recursive=False, progress_notify=True
        )
        with watching(pods, "/pods/test-ns/name", opts) as watcher:
            event = next_event(watcher, timeout=EVENT_WAIT + QUIET_WAIT)
        assert event.type is BOOKMARK, event_summary(event)
        assert event.resource_version >= rv_of(stored)
        assert bookmark_view(event) == {
            "metadata": {"resourceVersion": str(event.resource_version)}
        }
