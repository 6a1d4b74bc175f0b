"""Watches served by the cache: transitions, replay, bookmarks, slow watchers, fan-out sharing,
blocking and asyncio consumers."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

import pytest

from kstore.api.selectors import FieldSelector, LabelSelector
from kstore.cache import CachedWatchEvent, CacheWatcher, encoded_object
from kstore.cache.dispatcher import HOLD, SinkRounds
from kstore.cache.watcher import SinkMemo
from kstore.errors import TooManyRequests
from kstore.storage.interface import (
    INITIAL_EVENTS_END_ANNOTATION,
    EventType,
    ListOptions,
    Watcher,
    WatchEvent,
)
from kstore.testing.objects import pod, rv_of
from tests.cache.conftest import MakeCache

ADDED, MODIFIED, DELETED = EventType.ADDED, EventType.MODIFIED, EventType.DELETED
BOOKMARK, ERROR = EventType.BOOKMARK, EventType.ERROR


def take(watcher: Watcher, timeout: float = 5.0) -> WatchEvent:
    event = watcher.next(timeout)
    assert event is not None, "no event"
    return event


def labelled(value: str, name: str = "foo") -> dict[str, object]:
    return pod(name, "ns", labels={"app": value})


def test_selector_transitions_become_added_modified_deleted(make_cache: MakeCache) -> None:
    cache, storage = make_cache()
    start = str(storage.revision)
    watcher = cache.watch(
        "/pods/ns", ListOptions(resource_version=start, label_selector=LabelSelector.parse("app=a"))
    )
    update = lambda obj: lambda _: obj  # noqa: E731
    a1 = storage.create("/pods/ns/foo", labelled("a"))
    storage.create("/pods/ns/other", labelled("b", "other"))  # never matches: no event
    still_a = pod("foo", "ns", labels={"app": "a", "v": "2"})
    a2 = storage.guaranteed_update("/pods/ns/foo", update(still_a))
    b3 = storage.guaranteed_update("/pods/ns/foo", update(labelled("b")))
    a4 = storage.guaranteed_update("/pods/ns/foo", update(labelled("a")))
    gone = storage.delete("/pods/ns/foo")

    got = [take(watcher) for _ in range(5)]
    assert [(e.type, e.resource_version) for e in got] == [
        (ADDED, rv_of(a1)),
        (MODIFIED, rv_of(a2)),
        (DELETED, rv_of(b3)),
        (ADDED, rv_of(a4)),
        (DELETED, rv_of(gone)),
    ]
    # Leaving the selector: the previous content, stamped with the event's revision.
    assert got[2].object["metadata"]["labels"] == {"app": "a", "v": "2"}
    assert rv_of(got[2].object) == rv_of(b3)
    assert got[4].object == gone
    assert watcher.next(0.2) is None
    watcher.stop()


def test_history_replay_then_live_events_without_gap_or_duplicate(make_cache: MakeCache) -> None:
    cache, storage = make_cache()
    first = storage.create("/pods/ns/a", pod("a", "ns"))
    second = storage.create("/pods/ns/b", pod("b", "ns"))
    cache.list("/pods/")  # a consistent read: the cache has seen both
    watcher = cache.watch("/pods/ns", ListOptions(resource_version=str(rv_of(first))))
    third = storage.create("/pods/ns/c", pod("c", "ns"))
    assert [take(watcher).object for _ in range(2)] == [second, third]
    assert watcher.next(0.2) is None
    watcher.stop()


def test_watch_from_before_the_window_is_an_expired_error_event(make_cache: MakeCache) -> None:
    cache, storage = make_cache(history_lower_bound=2, history_upper_bound=2)
    for index in range(4):
        storage.create(f"/pods/ns/p{index}", pod(f"p{index}", "ns"))
    cache.list("/pods/")
    watcher = cache.watch("/pods/ns", ListOptions(resource_version="1"))
    error = take(watcher)
    assert error.type is ERROR
    assert (error.object["code"], error.object["reason"]) == (410, "Expired")
    assert error.object["message"].startswith("too old resource version: 1 (")
    assert watcher.next(0.1) is None and watcher.stopped


def test_initial_events_then_the_end_bookmark_then_live(make_cache: MakeCache) -> None:
    cache, storage = make_cache()
    a = storage.create("/pods/ns/a", pod("a", "ns"))
    b = storage.create("/pods/ns/b", pod("b", "ns"))
    opts = ListOptions(send_initial_events=True, allow_bookmarks=True)
    watcher = cache.watch("/pods/ns", opts)
    assert [take(watcher).object for _ in range(2)] == [a, b]
    bookmark = take(watcher)
    assert bookmark.type is BOOKMARK
    assert bookmark.resource_version >= rv_of(b)
    assert bookmark.object == {
        "metadata": {
            "resourceVersion": str(bookmark.resource_version),
            "annotations": {INITIAL_EVENTS_END_ANNOTATION: "true"},
        }
    }
    c = storage.create("/pods/ns/c", pod("c", "ns"))
    event = take(watcher)
    assert (event.type, event.object) == (ADDED, c)
    watcher.stop()


def test_legacy_watch_from_zero_lists_then_follows(make_cache: MakeCache) -> None:
    cache, storage = make_cache()
    a = storage.create("/pods/ns/a", pod("a", "ns"))
    cache.list("/pods/")
    watcher = cache.watch("/pods/ns", ListOptions(resource_version="0"))
    assert take(watcher).object == a
    b = storage.create("/pods/ns/b", pod("b", "ns"))
    assert take(watcher).object == b
    watcher.stop()
    quiet = cache.watch("/pods/ns", ListOptions(resource_version="0", send_initial_events=False))
    assert quiet.next(0.2) is None  # no initial events: it starts now
    quiet.stop()


def test_slow_watcher_is_closed_with_an_error_and_others_get_everything(
    make_cache: MakeCache,
) -> None:
    cache, storage = make_cache(watcher_buffer_size=5)
    start = ListOptions(resource_version=str(storage.revision))
    slow = cache.watch("/pods/ns", start)
    fast = cache.watch("/pods/ns", start)
    received: list[WatchEvent] = []

    def read_fast() -> None:
        while len(received) < 12:
            event = fast.next(5.0)
            if event is None:
                return
            received.append(event)

    reader = threading.Thread(target=read_fast)
    reader.start()
    written = []
    for index in range(12):
        written.append(storage.create(f"/pods/ns/p{index:02d}", pod(f"p{index:02d}", "ns")))
        time.sleep(0.01)  # let the reader keep up: it is the fast one
    reader.join(10)
    assert [e.object for e in received] == written

    buffered = [take(slow) for _ in range(5)]
    assert [e.object for e in buffered] == written[:5]  # what it held, in order
    error = take(slow)
    assert error.type is ERROR
    assert (error.object["code"], error.object["reason"]) == (429, "TooManyRequests")
    assert error.object["details"]["retryAfterSeconds"] == 1
    assert slow.next(0.1) is None and slow.stopped
    assert cache.dispatcher.closed_slow == 1
    fast.stop()


def test_take_batch_hands_out_what_take_would_in_batches(make_cache: MakeCache) -> None:
    cache, storage = make_cache(watcher_buffer_size=4)
    a = storage.create("/pods/ns/a", pod("a", "ns"))
    opts = ListOptions(send_initial_events=True, allow_bookmarks=True)
    watcher = cache.watch("/pods/ns", opts)
    assert isinstance(watcher, CacheWatcher)
    replay = watcher.take_batch(10)  # the initial events, then their end bookmark
    assert [(e.type, e.object == a) for e in replay] == [(ADDED, True), (BOOKMARK, False)]
    written = [storage.create(f"/pods/ns/p{i}", pod(f"p{i}", "ns")) for i in range(6)]
    deadline = time.monotonic() + 5
    while not watcher.closed and time.monotonic() < deadline:  # the fifth push overflows
        time.sleep(0.01)
    first = watcher.take_batch(3)
    assert [e.object for e in first] == written[:3]
    rest = watcher.take_batch(10)
    assert [e.object for e in rest[:-1]] == written[3:4]
    assert rest[-1].type is ERROR and rest[-1].object["code"] == 429
    assert watcher.stopped and watcher.take_batch(10) == []


def test_every_watcher_gets_the_same_shared_event_encoded_once(make_cache: MakeCache) -> None:
    cache, storage = make_cache()
    start = ListOptions(resource_version=str(storage.revision))
    watchers = [cache.watch("/pods/ns", start) for _ in range(50)]
    created = storage.create("/pods/ns/a", pod("a", "ns"))
    events = [take(w) for w in watchers]
    assert all(e is events[0] for e in events)
    assert isinstance(events[0], CachedWatchEvent)
    calls = []

    def encode(obj: dict[str, object]) -> bytes:
        calls.append(obj)
        return repr(obj).encode()

    encoded = {encoded_object(e, ("v1", "application/json"), encode) for e in events}
    assert len(encoded) == 1 and len(calls) == 1
    # The list serves the same object version with the same memo: no second encoding.
    listed = cache.list("/pods/ns", ListOptions(resource_version="0"))
    assert listed.items == [created]
    # The same version (the cache decodes a new object per read; the memo is what is shared).
    assert listed.items[0] == events[0].object
    encoded_object(events[0], ("v1", "application/json"), encode)
    assert listed.item_encodings[0] is events[0].object_encodings  # type: ignore[attr-defined]
    assert len(calls) == 1
    for watcher in watchers:
        watcher.stop()


def test_stop_returns_a_blocked_next_and_ends_delivery(make_cache: MakeCache) -> None:
    cache, storage = make_cache()
    watcher = cache.watch("/pods/ns", ListOptions(resource_version=str(storage.revision)))
    timer = threading.Timer(0.1, watcher.stop)
    timer.start()
    started = time.monotonic()
    assert watcher.next(5.0) is None
    assert time.monotonic() - started < 2.0 and watcher.stopped

    stopped = cache.watch("/pods/ns", ListOptions(resource_version=str(storage.revision)))
    for i in range(3):
        storage.create(f"/pods/ns/d{i}", pod(f"d{i}", "ns"))
    deadline = time.monotonic() + 5
    while len(stopped.queue) < 3 and time.monotonic() < deadline:  # type: ignore[attr-defined]
        time.sleep(0.01)
    stopped.stop()
    assert list(stopped) == []  # buffered events are dropped: the consumer asked to stop


def test_a_watch_ended_by_the_cache_still_delivers_what_it_buffered(
    make_cache: MakeCache,
) -> None:
    cache, storage = make_cache(relist_backoff_seconds=0.05)
    watcher = cache.watch("/pods/ns", ListOptions(resource_version=str(storage.revision)))
    written = [storage.create(f"/pods/ns/d{i}", pod(f"d{i}", "ns")) for i in range(3)]
    deadline = time.monotonic() + 5
    while len(watcher.queue) < 3 and time.monotonic() < deadline:  # type: ignore[attr-defined]
        time.sleep(0.01)
    storage.fail_watches()  # the cache re-lists and ends its watches
    assert [e.object for e in watcher] == written
    assert watcher.stopped


def test_periodic_bookmarks_only_when_allowed(make_cache: MakeCache) -> None:
    cache, storage = make_cache(bookmark_interval_seconds=0.2)
    start = ListOptions(resource_version=str(storage.revision))
    allowed = ListOptions(resource_version=start.resource_version, allow_bookmarks=True)
    with_bookmarks = cache.watch("/pods/ns", allowed)
    without = cache.watch("/pods/ns", start)
    created = storage.create("/pods/other/x", pod("x", "other"))  # moves the cache, no event here
    event = take(with_bookmarks, timeout=3.0)
    assert event.type is BOOKMARK
    assert event.object == {"metadata": {"resourceVersion": str(event.resource_version)}}
    deadline = time.monotonic() + 3
    while event.resource_version < rv_of(created) and time.monotonic() < deadline:
        event = take(with_bookmarks, timeout=3.0)
        assert event.type is BOOKMARK
    assert event.resource_version == rv_of(created)
    assert without.next(0.5) is None
    with_bookmarks.stop()
    without.stop()


def test_namespace_scoped_watchers_only_see_their_namespace(make_cache: MakeCache) -> None:
    cache, storage = make_cache()
    rv = str(storage.revision)
    by_key = cache.watch("/pods/ns1", ListOptions(resource_version=rv))
    by_field = cache.watch(
        "/pods/",
        ListOptions(
            resource_version=rv, field_selector=FieldSelector.parse("metadata.namespace=ns2")
        ),
    )
    everywhere = cache.watch("/pods/", ListOptions(resource_version=rv))
    one = storage.create("/pods/ns1/a", pod("a", "ns1"))
    two = storage.create("/pods/ns2/a", pod("a", "ns2"))
    assert take(by_key).object == one and by_key.next(0.2) is None
    assert take(by_field).object == two and by_field.next(0.2) is None
    assert [take(everywhere).object for _ in range(2)] == [one, two]
    for watcher in (by_key, by_field, everywhere):
        watcher.stop()


def test_asyncio_consumers_get_every_event(make_cache: MakeCache) -> None:
    cache, storage = make_cache()
    rv = str(storage.revision)
    watchers = [cache.watch("/pods/ns", ListOptions(resource_version=rv)) for _ in range(20)]
    total = 30

    async def consume(watcher: CacheWatcher) -> list[int]:
        seen = []
        async for event in watcher:
            seen.append(event.resource_version)
            if len(seen) == total:
                break
        return seen

    async def main() -> list[list[int]]:
        tasks = [asyncio.create_task(consume(w)) for w in watchers]  # type: ignore[arg-type]
        loop = asyncio.get_running_loop()

        def write() -> list[int]:
            return [
                rv_of(storage.create(f"/pods/ns/p{i}", pod(f"p{i}", "ns"))) for i in range(total)
            ]

        written = await loop.run_in_executor(None, write)
        results = await asyncio.wait_for(asyncio.gather(*tasks), 10)
        assert all(r == written for r in results)
        return results

    asyncio.run(main())
    for watcher in watchers:
        watcher.stop()


def test_asyncio_next_with_timeout_and_stop(make_cache: MakeCache) -> None:
    cache, storage = make_cache()
    watcher = cache.watch("/pods/ns", ListOptions(resource_version=str(storage.revision)))
    assert isinstance(watcher, CacheWatcher)

    async def main() -> None:
        started = time.monotonic()
        assert await watcher.next_async(0.2) is None
        assert time.monotonic() - started >= 0.2
        asyncio.get_running_loop().call_later(0.1, watcher.stop)
        assert await watcher.next_async() is None
        assert watcher.stopped

    asyncio.run(main())


def test_watch_waits_for_readiness_then_refuses_with_429(make_cache: MakeCache) -> None:
    from tests.cache.fake_storage import FakeStorage

    fake = FakeStorage()
    fake.create("/pods/ns/a", pod("a", "ns"))
    fake.fail_initial_list = True
    cache, _ = make_cache(fake, wait=False, ready_timeout_seconds=0.2)
    assert not cache.wait_first_sync(5.0)
    with pytest.raises(TooManyRequests):
        cache.watch("/pods/ns", ListOptions())


def test_node_watchers_see_pods_move_between_nodes(make_cache: MakeCache) -> None:
    # The dispatcher indexes exact spec.nodeName watches (Kubernetes' indexed trigger): a pod
    # moving from n1 to n2 must still be a DELETED for n1's watch and an ADDED for n2's.
    cache, storage = make_cache(trigger_field="spec.nodeName")
    rv = str(storage.revision)

    def on(node: str) -> Watcher:
        selector = FieldSelector.parse(f"spec.nodeName={node}")
        return cache.watch("/pods/", ListOptions(resource_version=rv, field_selector=selector))

    nodes = {node: on(node) for node in ("n1", "n2", "n3")}
    everything = cache.watch("/pods/", ListOptions(resource_version=rv))
    placed = storage.create("/pods/ns/p", pod("p", "ns", node_name="n1"))
    moved = storage.guaranteed_update("/pods/ns/p", lambda _: pod("p", "ns", node_name="n2"))
    assert (take(nodes["n1"]).type, take(nodes["n1"]).type) == (ADDED, DELETED)
    event = take(nodes["n2"])
    assert (event.type, event.object) == (ADDED, moved)
    assert nodes["n3"].next(0.2) is None
    assert [take(everything).object for _ in range(2)] == [placed, moved]
    for watcher in (*nodes.values(), everything):
        watcher.stop()


def test_a_slow_sink_round_holds_the_next_back_and_gathers_what_comes_meanwhile() -> None:
    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        rounds = SinkRounds(loop)
        calls: list[tuple[str, float, int]] = []

        def sink(name: str, busy: float = 0.0) -> Callable[[SinkMemo], None]:
            def call(memo: SinkMemo) -> None:
                calls.append((name, loop.time(), id(memo)))
                time.sleep(busy)  # a round of many streams

            return call

        rounds.submit([sink("slow", busy=0.05)])
        ended = loop.time()
        rounds.submit([sink("a")])  # held back after the slow round...
        rounds.submit([sink("b")])  # ...and joined by what is due meanwhile
        assert [name for name, _, _ in calls] == ["slow"]
        deadline = loop.time() + 5
        while len(calls) < 3 and loop.time() < deadline:
            await asyncio.sleep(0.01)
        _, (_, a_at, a_memo), (_, _, b_memo) = calls
        assert [name for name, _, _ in calls] == ["slow", "a", "b"]
        # Held back HOLD times as long as the slow round took (call_at may fire within the
        # clock's resolution).
        assert a_at >= ended + HOLD * 0.05 - 0.005
        assert a_memo == b_memo  # one round: one memo
        rounds.submit([sink("c")])  # after a quick round: at once
        assert [name for name, _, _ in calls][-1] == "c"

    asyncio.run(scenario())
