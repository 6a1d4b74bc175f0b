"""Encode once: memos computed once per encoding, from any number of threads; cached events
and lists compare equal to the plain ones."""

from __future__ import annotations

import threading
import time

from kstore.cache import (
    CachedListResult,
    CachedWatchEvent,
    Encodings,
    encoded_frame,
    encoded_object,
)
from kstore.storage.interface import EventType, ListResult, WatchEvent


def test_an_encoding_is_computed_once_across_threads() -> None:
    memo = Encodings()
    calls: list[int] = []
    results: list[bytes] = []

    def produce() -> bytes:
        calls.append(1)
        time.sleep(0.05)  # slow: the other threads arrive while it runs
        return b"encoded"

    threads = [
        threading.Thread(target=lambda: results.append(memo.get("json", produce))) for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1
    assert len(results) == 8 and all(r is results[0] for r in results)
    assert memo.get("yaml", lambda: b"other") == b"other"
    assert len(memo) == 2


def test_plain_events_are_encoded_every_time_cached_ones_once() -> None:
    obj = {"metadata": {"name": "a", "resourceVersion": "3"}}
    calls: list[str] = []

    def encode(o: dict[str, object]) -> bytes:
        calls.append("object")
        return b"{}"

    def frame(event: WatchEvent) -> bytes:
        calls.append("frame")
        return b'{"type":"ADDED","object":' + encoded_object(event, "json", encode) + b"}"

    plain = WatchEvent(EventType.ADDED, obj, 3)
    cached = CachedWatchEvent(EventType.ADDED, obj, 3)
    for _ in range(3):
        encoded_frame(plain, "json", frame)
    assert calls.count("frame") == 3 and calls.count("object") == 3
    calls.clear()
    first = encoded_frame(cached, "json", frame)
    for _ in range(3):
        assert encoded_frame(cached, "json", frame) is first
    assert calls == ["frame", "object"]


def test_cached_values_equal_plain_values() -> None:
    obj = {"metadata": {"name": "a"}}
    assert CachedWatchEvent(EventType.ADDED, obj, 3) == WatchEvent(EventType.ADDED, obj, 3)
    assert WatchEvent(EventType.ADDED, obj, 3) == CachedWatchEvent(EventType.ADDED, obj, 3)
    assert CachedWatchEvent(EventType.ADDED, obj, 3) != WatchEvent(EventType.MODIFIED, obj, 3)
    cached = CachedListResult(items=[obj], resource_version=4, item_encodings=[Encodings()])
    assert cached == ListResult(items=[obj], resource_version=4)
    assert ListResult(items=[obj], resource_version=4) == cached
    assert cached != ListResult(items=[obj], resource_version=5)
