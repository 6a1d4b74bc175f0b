"""The watch cache keeps objects as compact JSON and decodes them on read: what readers get is
equal to what the cache was fed, each read is the reader's own, and values JSON cannot carry
unchanged are kept as they are."""

from __future__ import annotations

import copy
import secrets
from typing import Any

import orjson

from kstore.api.selectors import FieldSelector, LabelSelector
from kstore.benchmarks.storage import sample_pod
from kstore.cache.compact import (
    DictPacked,
    LazyObjects,
    Packed,
    compact,
    expand,
    structure_dictionary,
)
from kstore.cache.watch_cache import WatchCache
from kstore.storage.interface import EventType
from kstore.testing.objects import pod, pod_attrs, with_rv

EVERYTHING = {"label_selector": LabelSelector.everything(), "field_selector": FieldSelector()}


def fed() -> list[dict[str, Any]]:
    return [
        with_rv(pod(f"p{i}", "ns", labels={"app": "a" if i % 2 else "b"}, node_name="n1"), i + 2)
        for i in range(6)
    ]


def filled() -> WatchCache:
    cache = WatchCache(resource_prefix="/pods/", get_attrs=pod_attrs)
    cache.replace(copy.deepcopy(fed()), revision=10)
    return cache


def test_lazily_decoded_objects_equal_the_objects_fed() -> None:
    cache = filled()
    listed = cache.list("/pods/", recursive=True, **EVERYTHING)
    assert isinstance(listed.objects, LazyObjects)
    assert list(listed.objects) == fed()
    assert listed.objects == fed() and fed() == listed.objects
    assert listed.objects[1:3] == fed()[1:3]
    entry, _ = cache.get("/pods/ns/p3")
    assert entry is not None and entry.object == fed()[3]


def test_every_read_is_a_new_object_a_reader_may_change() -> None:
    cache = filled()
    entry, _ = cache.get("/pods/ns/p0")
    assert entry is not None
    first = entry.object
    first["metadata"]["name"] = "changed"
    first["spec"].clear()
    assert entry.object == fed()[0]
    listed = cache.list("/pods/ns/", recursive=True, **EVERYTHING).objects
    listed[0]["metadata"]["labels"]["app"] = "changed"
    assert listed[0] == fed()[0]


def test_selectors_read_the_kept_attributes_not_the_bytes() -> None:
    cache = filled()
    only_a = cache.list(
        "/pods/",
        recursive=True,
        label_selector=LabelSelector.parse("app=a"),
        field_selector=FieldSelector(),
    )
    assert list(only_a.objects) == [o for o in fed() if o["metadata"]["labels"]["app"] == "a"]


def test_entries_hold_exact_size_json_bytes() -> None:
    obj = fed()[0]
    body = compact(obj)
    assert isinstance(body, bytes)
    assert body == orjson.dumps(obj)
    assert expand(body) == obj and expand(body) is not expand(body)


def test_larger_bodies_are_kept_compressed_when_that_saves_and_read_back_equal() -> None:
    # A ~5 KiB Pod: its keys and structure repeat, so LZ4 keeps a fraction of its JSON.
    big = sample_pod("ns", "big")
    body = compact(big)
    assert isinstance(body, Packed)
    assert len(body) < len(orjson.dumps(big)) // 2
    assert expand(body) == big and expand(body) is not expand(body)
    # Small bodies, and bodies LZ4 cannot shrink by an eighth, stay plain JSON.
    small = fed()[0]
    assert type(compact(small)) is bytes
    noise = {"kind": "ConfigMap", "data": {"k": secrets.token_urlsafe(3_000)}}
    kept = compact(noise)
    assert type(kept) is bytes and kept == orjson.dumps(noise)
    # Through the cache, a packed entry reads and lists as what it was fed.
    cache = WatchCache(resource_prefix="/pods/", get_attrs=pod_attrs)
    cache.replace([with_rv(big, 5)], revision=5)
    entry, _ = cache.get("/pods/ns/big")
    assert entry is not None and entry.object == with_rv(big, 5)
    assert list(cache.list("/pods/", recursive=True, **EVERYTHING).objects) == [with_rv(big, 5)]


def small_configmap(i: int) -> dict[str, Any]:
    """A ~0.6 KiB ConfigMap as a server keeps it: most of its bytes are structure."""
    name = f"settings-{i:05d}"
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": "team-a",
            "uid": f"0b7a9c1e-1111-4111-8111-{i:012d}",
            "resourceVersion": str(100 + i),
            "creationTimestamp": "2026-12-06T19:48:16Z",
            "labels": {"app": "billing", "run": f"r{i % 7}"},
            "managedFields": [
                {
                    "manager": "kubectl-client-side-apply",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": "2026-12-06T19:48:16Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {
                        "f:data": {"f:app.conf": {}},
                        "f:metadata": {"f:labels": {"f:app": {}, "f:run": {}}},
                    },
                }
            ],
        },
        "data": {"app.conf": f"port = {8000 + i}\nreplicas = {i % 5}\n{secrets.token_hex(16)}"},
    }


def test_small_objects_compress_against_their_resource_structure_and_read_back_equal() -> None:
    sample = small_configmap(0)
    number = structure_dictionary(sample)
    assert number is not None
    # Made of structure alone: none of the sample's values is in it; and equal structures
    # share one dictionary.
    assert structure_dictionary(small_configmap(1)) == number
    others = [small_configmap(i) for i in range(1, 50)]
    plain = [len(orjson.dumps(obj)) for obj in others]
    alone = [len(compact(obj)) for obj in others]
    against = [compact(obj, number) for obj in others]
    assert all(type(body) is DictPacked for body in against)
    assert sum(map(len, against)) < 0.75 * min(sum(alone), sum(plain))
    assert [expand(body) for body in against] == others
    # A custom object thousands of levels deep gives a dictionary of its first levels.
    deep: dict[str, Any] = {"leaf": "x"}
    for _ in range(5_000):
        deep = {"d": deep}
    assert structure_dictionary({"kind": "Deep", "spec": deep}) is not None
    # Through a cache: its entries read and list as what it was fed.
    cache = WatchCache(
        resource_prefix="/configmaps/",
        get_attrs=lambda obj: ({}, {"metadata.name": obj["metadata"]["name"]}),
        key_func=lambda obj: "/configmaps/" + obj["metadata"]["name"],
    )
    cache.replace(copy.deepcopy(others), revision=500)
    assert list(cache.list("/configmaps/", recursive=True, **EVERYTHING).objects) == others


def test_values_json_cannot_carry_unchanged_are_kept_as_they_are() -> None:
    big = 2**70  # orjson refuses integers beyond 64 bits
    odd: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "odd", "namespace": "ns", "resourceVersion": "11"},
        "spec": {"ports": (1, 2)},  # a tuple decodes as a list: not equal
    }
    huge: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "huge", "namespace": "ns", "resourceVersion": "12"},
        "spec": {"n": big},
    }
    assert compact(odd) is odd and compact(huge) is huge
    cache = filled()
    cache.apply(EventType.ADDED, odd, 11)
    cache.apply(EventType.ADDED, huge, 12)
    # The lists around them still decode the others and hand these out unchanged.
    listed = cache.list("/pods/ns/", recursive=True, **EVERYTHING).objects
    assert [o["metadata"]["name"] for o in listed] == ["huge", "odd", *(f"p{i}" for i in range(6))]
    assert listed[0]["spec"]["n"] == big
    assert listed[1]["spec"]["ports"] == (1, 2)
    assert list(listed)[2:] == fed()


def test_a_list_over_a_removed_entry_keeps_its_snapshot() -> None:
    cache = filled()
    listed = cache.list("/pods/ns/", recursive=True, **EVERYTHING).objects
    cache.apply(EventType.DELETED, fed()[0], 11)
    cache.apply(EventType.MODIFIED, with_rv(pod("p1", "ns", labels={"app": "z"}), 12), 12)
    # Decoding happens on read, but from the entries the list was taken from.
    assert list(listed) == fed()
    now = cache.list("/pods/ns/", recursive=True, **EVERYTHING).objects
    assert [o["metadata"]["name"] for o in now] == [f"p{i}" for i in range(1, 6)]
    assert now[0]["metadata"]["labels"] == {"app": "z"}


def test_history_events_are_released_after_dispatch_and_rebuilt_equal() -> None:
    cache = filled()
    event = cache.apply(EventType.MODIFIED, with_rv(pod("p2", "ns", labels={"app": "q"}), 11), 11)
    assert event is not None
    first = event.modified()
    assert event.modified() is first  # shared while the batch is dispatched
    event.release()
    again = event.modified()
    assert again is not first and again == first
    assert again.object_encodings is first.object_encodings  # the entry's memo, still shared


def test_an_event_dispatched_at_once_carries_the_object_it_was_fed_until_released() -> None:
    cache = filled()
    fed_object = with_rv(pod("p9", "ns", labels={"app": "q"}), 11)
    event = cache.apply(EventType.ADDED, fed_object, 11)
    assert event is not None
    # Not decoded again from the entry's bytes: the object the cache was fed, shared.
    assert event.added().object is fed_object
    assert event.modified().object is fed_object
    event.release()
    # Rebuilt from the entry afterwards: the history holds no decoded object.
    again = event.added()
    assert again.object is not fed_object and again.object == fed_object


def test_free_heap_pages_go_back_to_the_system_on_glibc() -> None:
    import platform

    from kstore.cache.heap import return_free_memory

    assert return_free_memory() is (platform.libc_ver()[0] == "glibc")
