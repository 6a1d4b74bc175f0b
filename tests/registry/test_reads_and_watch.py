"""Reads, watches and concurrent updates through the registry, with and without the watch
cache in front of LMDB."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from kstore.api.scheme import Scheme
from kstore.api.selectors import FieldSelector, LabelSelector
from kstore.errors import NotFound
from kstore.registry.interface import CreateOptions, DeleteOptions, UpdateOptions
from kstore.registry.registry import StoreRegistry
from kstore.storage.interface import ListOptions
from kstore.storage.lmdb import LmdbBackend
from tests.registry.conftest import make_registry
from tests.registry.objects import changed, config_map, ctx, hub, pod


@pytest.fixture
def any_registry(
    scheme: Scheme, backend: LmdbBackend, watch_cache: bool
) -> Iterator[StoreRegistry]:
    registry = make_registry(scheme, backend, watch_cache=watch_cache)
    try:
        yield registry
    finally:
        registry.close()


def test_read_your_writes(any_registry: StoreRegistry, scheme: Scheme) -> None:
    store = any_registry.store("", "configmaps")
    for i in range(20):
        created = store.create(ctx(), hub(scheme, config_map(f"c{i}")), CreateOptions()).object
        assert store.get(ctx(), f"c{i}") == created
        assert len(store.list(ctx(), ListOptions()).items) == i + 1


def test_get_of_a_missing_object_names_the_resource(any_registry: StoreRegistry) -> None:
    with pytest.raises(NotFound) as caught:
        any_registry.store("", "pods").get(ctx(), "nope")
    assert caught.value.message == 'pods "nope" not found'
    assert (caught.value.kind, caught.value.name) == ("pods", "nope")


def test_list_is_scoped_to_the_request_namespace(
    any_registry: StoreRegistry, scheme: Scheme
) -> None:
    store = any_registry.store("", "configmaps")
    store.create(ctx("default"), hub(scheme, config_map("a")), CreateOptions())
    store.create(ctx("kube-system"), hub(scheme, config_map("b")), CreateOptions())
    names = [o["metadata"]["name"] for o in store.list(ctx("default"), ListOptions()).items]
    assert names == ["a"]
    everywhere = store.list(ctx(""), ListOptions()).items
    assert [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in everywhere] == [
        ("default", "a"),
        ("kube-system", "b"),
    ]


def test_list_filters_by_labels_and_fields(any_registry: StoreRegistry, scheme: Scheme) -> None:
    store = any_registry.store("", "pods")
    for name, node, app in (("a", "n1", "x"), ("b", "n2", "x"), ("c", "n1", "y")):
        obj = pod(name, nodeName=node)
        obj["metadata"]["labels"] = {"app": app}
        store.create(ctx(), hub(scheme, obj), CreateOptions())
    opts = ListOptions(
        label_selector=LabelSelector.parse("app=x"),
        field_selector=FieldSelector.parse("spec.nodeName=n1"),
    )
    assert [o["metadata"]["name"] for o in store.list(ctx(), opts).items] == ["a"]
    by_name = ListOptions(field_selector=FieldSelector.parse("metadata.name=c"))
    assert [o["metadata"]["name"] for o in store.list(ctx(), by_name).items] == ["c"]


def test_watch_sees_every_change_in_order(any_registry: StoreRegistry, scheme: Scheme) -> None:
    store = any_registry.store("", "configmaps")
    start = store.list(ctx(), ListOptions()).resource_version
    watcher = store.watch(ctx(), ListOptions(resource_version=str(start)))
    try:
        store.create(ctx(), hub(scheme, config_map("w", k="1")), CreateOptions())
        store.update(ctx(), "w", changed(lambda o: o["data"].update(k="2")), UpdateOptions())
        store.delete(ctx(), "w", DeleteOptions())
        events = [watcher.next(timeout=5.0) for _ in range(3)]
    finally:
        watcher.stop()
    assert [(e.type, e.object["data"]["k"]) for e in events if e is not None] == [
        ("ADDED", "1"),
        ("MODIFIED", "2"),
        ("DELETED", "2"),
    ]


def test_concurrent_read_modify_write_updates_lose_nothing(
    any_registry: StoreRegistry, scheme: Scheme
) -> None:
    store = any_registry.store("", "configmaps")
    store.create(ctx(), hub(scheme, config_map("counter", n="0")), CreateOptions())

    def bump(o: dict[str, object]) -> None:
        data = o["data"]
        assert isinstance(data, dict)
        data["n"] = str(int(data["n"]) + 1)

    def worker() -> None:
        for _ in range(10):
            store.update(ctx(), "counter", changed(bump), UpdateOptions())

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert store.get(ctx(), "counter")["data"]["n"] == "40"
