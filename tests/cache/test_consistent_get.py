"""Consistent GETs answered from the watch cache on the real LMDB backend: every GET without
resourceVersion returns the latest write made before it, whether the cache had caught up
(memory) or not (the backend), while writes to another resource move the revision
meanwhile."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kstore.api.gvk import Object
from kstore.cache import CacheConfig, Cacher
from kstore.storage.aio import as_async
from kstore.storage.interface import (
    GetOptions,
    IdentityTransformer,
    ListOptions,
    ResourceStorageConfig,
    ResourceVersionMatch,
    WouldWait,
)
from kstore.storage.lmdb import LmdbBackend, LmdbConfig
from kstore.testing.objects import pod, pod_attrs, pod_codec, pod_config, rv_of


@pytest.fixture
def backend(tmp_path: Path) -> Iterator[LmdbBackend]:
    store = LmdbBackend(LmdbConfig(path=tmp_path / "lmdb", durable=False, compaction_interval_s=0))
    try:
        yield store
    finally:
        store.close()


@pytest.fixture
def cacher(backend: LmdbBackend) -> Iterator[Cacher]:
    config = pod_config(IdentityTransformer())
    cache = Cacher(
        CacheConfig(
            storage=backend.storage_for(config), resource=config, consistent_gets_from_cache=True
        )
    )
    try:
        assert cache.wait_ready(5.0)
        yield cache
    finally:
        cache.stop()


def _counted(count: int) -> Object:
    return pod("counter", "ns", annotations={"count": str(count)})


def test_each_get_sees_the_write_before_it(cacher: Cacher, backend: LmdbBackend) -> None:
    others = backend.storage_for(
        ResourceStorageConfig(resource_prefix="/others", codec=pod_codec(), get_attrs=pod_attrs)
    )
    stop = threading.Event()

    def write_elsewhere() -> None:
        for i in range(5_000):
            if stop.is_set():
                return
            others.create(f"/others/ns/o{i}", pod(f"o{i}", "ns"))

    noise = threading.Thread(target=write_elsewhere, daemon=True)
    noise.start()
    try:
        cacher.create("/pods/ns/counter", _counted(0))
        for count in range(1, 300):
            written = cacher.guaranteed_update(
                "/pods/ns/counter", lambda _current, c=count: _counted(c)
            )
            got = cacher.get("/pods/ns/counter")
            assert rv_of(got) == rv_of(written)
            assert got["metadata"]["annotations"]["count"] == str(count)
    finally:
        stop.set()
        noise.join(10)


def test_gets_come_from_memory_once_the_cache_is_current(
    cacher: Cacher, backend: LmdbBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    created = cacher.create("/pods/ns/a", pod("a", "ns"))
    cacher.list("/pods/")  # a consistent list: the cache has reached the current revision
    reads: list[str] = []
    storage = cacher._storage
    original = storage.get

    def counted_get(*args: Any, **kwargs: Any) -> Object:
        reads.append("backend")
        return original(*args, **kwargs)

    monkeypatch.setattr(storage, "get", counted_get)
    assert rv_of(cacher.get("/pods/ns/a")) == rv_of(created)
    assert reads == []


def test_a_create_through_the_caches_coroutines_awaits_the_backends_commit_on_the_loop(
    cacher: Cacher, backend: LmdbBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Writes go straight to the backend: as_async(cacher).create is LMDB's native create
    # (no worker thread), and the cache then serves what it wrote.
    submitted: list[int] = []
    native = backend.submit_async

    async def counted(request: Any) -> Any:
        submitted.append(threading.get_ident())
        return await native(request)

    monkeypatch.setattr(backend, "submit_async", counted)
    created = asyncio.run(as_async(cacher).create("/pods/ns/aio", pod("aio", "ns")))
    assert submitted == [threading.get_ident()]
    assert rv_of(created) > 0
    assert cacher.get("/pods/ns/aio", GetOptions(resource_version=str(rv_of(created)))) == created


def test_gets_and_lists_come_from_memory_while_other_resources_are_written(
    cacher: Cacher, backend: LmdbBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The backend's revision runs ahead of this cache (writes elsewhere), but nothing under
    # /pods/ changed since the cache applied its last event: memory is the current state.
    others = backend.storage_for(
        ResourceStorageConfig(resource_prefix="/others", codec=pod_codec(), get_attrs=pod_attrs)
    )
    created = cacher.create("/pods/ns/a", pod("a", "ns"))
    cacher.get("/pods/ns/a", GetOptions(resource_version=str(rv_of(created))))  # caught up
    for i in range(50):
        others.create(f"/others/ns/o{i}", pod(f"o{i}", "ns"))
    assert backend.current_revision() > cacher.resource_version
    reads: list[str] = []
    storage = cacher._storage
    for verb in ("get", "list"):
        original = getattr(storage, verb)

        def counted(*args: Any, _verb: str = verb, _original: Any = original, **kw: Any) -> Any:
            reads.append(_verb)
            return _original(*args, **kw)

        monkeypatch.setattr(storage, verb, counted)
    assert rv_of(cacher.get("/pods/ns/a")) == rv_of(created)
    assert [rv_of(p) for p in cacher.list_now("/pods/").items] == [rv_of(created)]
    assert reads == []
    # A write to the resource itself sends readers to the backend until the cache has it.
    updated = cacher.guaranteed_update(
        "/pods/ns/a", lambda current: pod("a", "ns", annotations={"n": "1"})
    )
    got = cacher.get("/pods/ns/a")
    assert rv_of(got) == rv_of(updated)
    assert [rv_of(p) for p in cacher.list_now("/pods/").items] == [rv_of(updated)]


def test_a_list_that_must_not_wait_answers_from_memory_or_says_so(
    cacher: Cacher, backend: LmdbBackend
) -> None:
    # wait=False (a list on the event loop's thread): the answer is the current state from
    # memory, or WouldWait with nothing read, never an older state.
    others = backend.storage_for(
        ResourceStorageConfig(resource_prefix="/others", codec=pod_codec(), get_attrs=pod_attrs)
    )
    cacher.create("/pods/ns/counter", _counted(0))
    answered = 0
    for count in range(1, 200):
        written = cacher.guaranteed_update(
            "/pods/ns/counter", lambda _current, c=count: _counted(c)
        )
        others.create(f"/others/ns/o{count}", pod(f"o{count}", "ns"))
        try:
            found = cacher.list("/pods/", ListOptions(limit=10, wait=False))
        except WouldWait:
            continue
        answered += 1
        assert [rv_of(p) for p in found.items] == [rv_of(written)]
        assert found.resource_version >= rv_of(written)
    assert answered > 0
    # A list at a revision the cache has not reached would wait: it says so instead.
    ahead = str(backend.current_revision() + 1_000)
    with pytest.raises(WouldWait):
        cacher.list(
            "/pods/",
            ListOptions(
                resource_version=ahead,
                resource_version_match=ResourceVersionMatch.NOT_OLDER_THAN,
                wait=False,
            ),
        )
