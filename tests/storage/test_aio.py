"""Any storage's verbs as coroutines: the threaded face :func:`as_async` gives the embedded
LMDB store (the etcd backend's native one is tested in tests/etcd)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from kstore.api.gvk import Object
from kstore.errors import AlreadyExists, NotFound
from kstore.storage.aio import ThreadedAsyncStorage, as_async
from kstore.storage.interface import ListOptions, Storage
from tests.storage.conftest import pod, rv


def test_lmdb_storage_gets_the_threaded_face(pods: Storage) -> None:
    aio = as_async(pods)
    assert isinstance(aio, ThreadedAsyncStorage)
    assert aio.storage is pods


def test_every_verb_round_trips_and_keeps_its_errors(pods: Storage) -> None:
    aio = as_async(pods)
    loop_threads: set[threading.Thread] = set()

    def relabel(current: Object) -> Object:
        loop_threads.add(threading.current_thread())
        return {**current, "metadata": {**current["metadata"], "labels": {"a": "b"}}}

    async def scenario() -> None:
        created = await aio.create("/pods/ns/a", pod("ns", "a"))
        with pytest.raises(AlreadyExists):
            await aio.create("/pods/ns/a", pod("ns", "a"))
        assert await aio.get("/pods/ns/a") == created
        updated = await aio.guaranteed_update("/pods/ns/a", relabel)
        assert updated["metadata"]["labels"] == {"a": "b"} and rv(updated) > rv(created)
        listed = await aio.list("/pods/ns", ListOptions(recursive=True))
        assert listed.items == [updated]
        deleted = await aio.delete("/pods/ns/a")
        assert rv(deleted) > rv(updated)
        with pytest.raises(NotFound):
            await aio.get("/pods/ns/a")

    asyncio.run(scenario())
    # The blocking verbs ran in worker threads: the loop was never blocked by a commit.
    assert threading.main_thread() not in loop_threads


def test_concurrent_creates_share_commits(pods: Storage) -> None:
    aio = as_async(pods)

    async def scenario() -> list[Object]:
        return await asyncio.gather(
            *(aio.create(f"/pods/ns/p{i}", pod("ns", f"p{i}")) for i in range(32))
        )

    created = asyncio.run(scenario())
    assert len({rv(obj) for obj in created}) == 32
