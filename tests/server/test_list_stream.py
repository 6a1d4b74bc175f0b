"""A streamed JSON list is byte for byte the list built whole: the envelope (resourceVersion,
continue token, remaining count), every item, memoized or not, from the cache or not."""

from __future__ import annotations

from typing import Any

import pytest

from kstore.api.gvk import GroupVersion
from kstore.api.kinds import builtin_scheme
from kstore.cache.caching_object import CachedListResult, Encodings
from kstore.cache.compact import LazyObjects
from kstore.cache.watch_cache import Entry
from kstore.server.encoding import ResponseEncoder
from kstore.server.list_stream import (
    CHUNK_BYTES,
    STREAM_MIN_ITEMS,
    json_list_chunks,
    streams_list,
)
from kstore.server.negotiation import negotiate
from kstore.storage.interface import ListResult

SCHEME = builtin_scheme()
ENCODER = ResponseEncoder(SCHEME)
V1 = GroupVersion("", "v1")
JSON = negotiate("application/json", transforms=True)


def hub_configmap(i: int) -> dict[str, Any]:
    external = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": f"cm-{i:05d}",
            "namespace": "ns",
            "resourceVersion": str(100 + i),
            "labels": {"i": str(i)},
        },
        "data": {"value": "x" * (i % 300), "unicode": "é✓"},
    }
    return SCHEME.to_hub(external)


def cached_result(count: int, **kwargs: Any) -> CachedListResult:
    entries = [Entry(f"/cm/ns/{i}", hub_configmap(i), {}, {}, 100 + i) for i in range(count)]
    return CachedListResult(
        items=LazyObjects(entries),
        item_encodings=[e.encodings for e in entries],
        resource_version=5000,
        **kwargs,
    )


def streamed(result: ListResult) -> bytes:
    return b"".join(json_list_chunks(ENCODER, result, V1, "ConfigMapList", JSON))


@pytest.mark.parametrize(
    "envelope",
    [
        {},
        {"continue_token": "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ", "remaining_item_count": 42},
        {"continue_token": "token-without-count"},
    ],
)
def test_streamed_list_equals_the_whole_list_byte_for_byte(envelope: dict[str, Any]) -> None:
    result = cached_result(STREAM_MIN_ITEMS + 137, **envelope)
    whole = ENCODER.list(result, V1, "ConfigMapList", JSON)
    assert streamed(result) == whole
    assert whole.endswith(b"]}\n")


def test_memoized_items_are_used_and_none_are_added() -> None:
    result = cached_result(STREAM_MIN_ITEMS + 10)
    key = ("item", "v1", "application/json")
    memos = result.item_encodings
    # Some items already memoized (a small list served them before): their bytes are reused.
    for i in range(0, len(memos), 7):
        ENCODER.list(
            CachedListResult(
                items=result.items[i : i + 1],
                item_encodings=[memos[i]],
                resource_version=1,
            ),
            V1,
            "ConfigMapList",
            JSON,
        )
    before = [memo.has(key) for memo in memos]
    assert sum(before) == len(range(0, len(memos), 7))
    assert streamed(result) == ENCODER.list(cached_result(len(memos)), V1, "ConfigMapList", JSON)
    # Streaming left the memos as they were (the whole list, built above, has its own).
    assert [memo.has(key) for memo in memos] == before


def test_a_memo_is_taken_as_it_is() -> None:
    # A memo that says something else shows that the stream reads it rather than re-encoding.
    result = cached_result(STREAM_MIN_ITEMS + 1)
    memo: Encodings = result.item_encodings[3]
    memo.get(("item", "v1", "application/json"), lambda: b'{"memoized":true}')
    assert b',{"memoized":true},' in streamed(result)


def test_a_list_from_storage_streams_the_same_bytes() -> None:
    items = [hub_configmap(i) for i in range(STREAM_MIN_ITEMS + 3)]
    plain = ListResult(items=items, resource_version=77, continue_token="c", remaining_item_count=3)
    assert streamed(plain) == ENCODER.list(plain, V1, "ConfigMapList", JSON)


def test_chunks_are_bounded_and_many() -> None:
    result = cached_result(2000)
    chunks = list(json_list_chunks(ENCODER, result, V1, "ConfigMapList", JSON))
    assert len(chunks) > 3
    # A chunk ends at the first group of items (100) that takes it past CHUNK_BYTES; these
    # items are under 1 KiB each.
    assert all(len(c) <= CHUNK_BYTES + 100 * 1024 for c in chunks)


def test_only_large_plain_json_lists_stream() -> None:
    large = cached_result(STREAM_MIN_ITEMS + 1)
    small = cached_result(STREAM_MIN_ITEMS)
    assert streams_list(large, JSON, conversion_blocks=False)
    assert not streams_list(small, JSON, conversion_blocks=False)
    assert not streams_list(large, JSON, conversion_blocks=True)
    for accept in (
        "application/vnd.kubernetes.protobuf",
        "application/yaml",
        "application/json;as=Table;v=v1;g=meta.k8s.io",
        "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
    ):
        assert not streams_list(large, negotiate(accept, transforms=True), conversion_blocks=False)
