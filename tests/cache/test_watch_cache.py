"""The cache's state: key-ordered lists, indexes, revisions, waiting for freshness."""

from __future__ import annotations

import threading
import time

import pytest

from kstore.api.selectors import FieldSelector, LabelSelector
from kstore.cache.watch_cache import CacheUnavailable, WatchCache
from kstore.errors import TooLargeResourceVersion
from kstore.storage.interface import EventType
from kstore.testing.objects import pod, pod_attrs, with_rv

EVERYTHING = {"label_selector": LabelSelector.everything(), "field_selector": FieldSelector()}


def names(objects: list[dict[str, object]]) -> list[str]:
    return [o["metadata"]["name"] for o in objects]  # type: ignore[index]


def filled(**kwargs: object) -> WatchCache:
    cache = WatchCache(resource_prefix="/pods/", get_attrs=pod_attrs, **kwargs)  # type: ignore[arg-type]
    cache.replace(
        [
            with_rv(pod("foo", "ns", labels={"app": "a"}, node_name="n1"), 2),
            with_rv(pod("foobar", "ns", labels={"app": "b"}, node_name="n2"), 3),
            with_rv(pod("bar", "other", labels={"app": "a"}, node_name="n1"), 4),
        ],
        revision=5,
    )
    return cache


def test_list_is_in_key_order_and_a_prefix_ends_at_its_slash() -> None:
    cache = filled()
    everything = cache.list("/pods/", recursive=True, **EVERYTHING)
    assert names(everything.objects) == ["foo", "foobar", "bar"]  # /pods/ns/... < /pods/other/...
    assert everything.resource_version == 5
    assert names(cache.list("/pods/ns/", recursive=True, **EVERYTHING).objects) == [
        "foo",
        "foobar",
    ]
    exact = cache.list("/pods/ns/foo", recursive=False, **EVERYTHING)
    assert names(exact.objects) == ["foo"]
    assert cache.list("/pods/ns/fo", recursive=False, **EVERYTHING).objects == []


def test_list_limit_reports_more_and_the_last_key() -> None:
    cache = filled()
    page = cache.list("/pods/", recursive=True, limit=2, **EVERYTHING)
    assert names(page.objects) == ["foo", "foobar"]
    assert page.has_more and page.last_key == "/pods/ns/foobar" and page.total == 3
    assert not cache.list("/pods/", recursive=True, limit=3, **EVERYTHING).has_more


def test_selectors_filter_and_indexes_give_the_same_answer() -> None:
    plain = filled()
    indexed = filled(indexed_fields=("spec.nodeName",), indexed_labels=("app",))
    for labels, fields in [
        ("app=a", ""),
        ("", "spec.nodeName=n1"),
        ("app=b", "spec.nodeName=n2"),
        ("app=a", "spec.nodeName=n2"),
        ("", "metadata.namespace=ns"),
    ]:
        query = {
            "label_selector": LabelSelector.parse(labels),
            "field_selector": FieldSelector.parse(fields),
        }
        expected = names(plain.list("/pods/", recursive=True, **query).objects)
        assert names(indexed.list("/pods/", recursive=True, **query).objects) == expected


def test_updates_and_deletes_keep_indexes_and_order_current() -> None:
    cache = filled(indexed_fields=("spec.nodeName",))
    on_n1 = {
        "label_selector": LabelSelector.everything(),
        "field_selector": FieldSelector.parse("spec.nodeName=n1"),
    }
    moved = cache.apply(EventType.MODIFIED, with_rv(pod("foo", "ns", node_name="n2"), 6), 6)
    assert moved is not None and moved.prev is not None
    assert moved.prev.fields["spec.nodeName"] == "n1"
    assert names(cache.list("/pods/", recursive=True, **on_n1).objects) == ["bar"]
    cache.apply(EventType.DELETED, with_rv(pod("bar", "other", node_name="n1"), 7), 7)
    assert cache.list("/pods/", recursive=True, **on_n1).objects == []
    cache.apply(EventType.ADDED, with_rv(pod("aaa", "ns", node_name="n1"), 8), 8)
    assert names(cache.list("/pods/", recursive=True, **EVERYTHING).objects) == [
        "aaa",
        "foo",
        "foobar",
    ]
    assert names(cache.list("/pods/", recursive=True, **on_n1).objects) == ["aaa"]
    assert cache.resource_version == 8


def test_an_event_the_cache_already_reflects_is_ignored() -> None:
    cache = filled()
    assert cache.apply(EventType.ADDED, with_rv(pod("late", "ns"), 5), 5) is None
    assert cache.entry("/pods/ns/late") is None


def test_wait_fresh_times_out_with_too_large_resource_version() -> None:
    cache = filled()
    pokes: list[float] = []
    started = time.monotonic()
    with pytest.raises(TooLargeResourceVersion) as raised:
        cache.wait_fresh(9, timeout=0.3, poke=lambda: pokes.append(time.monotonic()))
    assert time.monotonic() - started >= 0.3
    error = raised.value
    assert (error.code, error.reason) == (504, "Timeout")
    assert error.message == "Too large resource version: 9, current: 5"
    assert [c.type for c in error.causes] == ["ResourceVersionTooLarge"]
    assert error.retry_after_seconds == 1
    assert len(pokes) >= 2  # asked for progress about every 100 ms


def test_wait_fresh_returns_once_the_cache_gets_there() -> None:
    cache = filled()

    def progress() -> None:
        time.sleep(0.1)
        cache.advance(9)
        cache.notify_fresh()

    thread = threading.Thread(target=progress)
    thread.start()
    cache.wait_fresh(9, timeout=3.0)
    thread.join()
    assert cache.resource_version == 9


def test_invalidate_releases_waiters() -> None:
    cache = filled()
    timer = threading.Timer(0.1, cache.invalidate)
    timer.start()
    started = time.monotonic()
    with pytest.raises(CacheUnavailable):
        cache.wait_fresh(99, timeout=3.0)
    assert time.monotonic() - started < 2.0
