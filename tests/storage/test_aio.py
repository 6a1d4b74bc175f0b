"""The storage verbs as coroutines on the embedded LMDB store (:mod:`kstore.storage._lmdb_aio`)
and the threaded face any other storage gets; the etcd backend's native face is tested in
tests/etcd, and both run the whole conformance suite in tests/conformance."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from kstore.api.gvk import Object
from kstore.errors import AlreadyExists, BadRequest, NotFound
from kstore.storage._lmdb_aio import LmdbAsyncStorage
from kstore.storage._lmdb_writes import PutRequest, _wake_loops
from kstore.storage.aio import ThreadedAsyncStorage, as_async
from kstore.storage.interface import ListOptions, Storage
from kstore.storage.lmdb import LmdbBackend
from tests.storage.conftest import PausedWriter, pod, rv


class _Wrapped:
    """A storage of an embedder's own, without an ``aio`` face (delegates to ``inner``)."""

    def __init__(self, inner: Storage) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        if name == "aio":
            raise AttributeError(name)
        return getattr(self._inner, name)


def test_lmdb_storage_gets_its_native_face(pods: Storage) -> None:
    aio = as_async(pods)
    assert isinstance(aio, LmdbAsyncStorage)
    assert aio.storage is pods


def test_every_verb_round_trips_and_keeps_its_errors(pods: Storage) -> None:
    aio = as_async(pods)

    def relabel(current: Object) -> Object:
        return {**current, "metadata": {**current["metadata"], "labels": {"a": "b"}}}

    async def scenario() -> None:
        created = await aio.create("/pods/ns/a", pod("ns", "a"))
        with pytest.raises(AlreadyExists):
            await aio.create("/pods/ns/a", pod("ns", "a"))
        with pytest.raises(BadRequest):
            await aio.create("/pods/ns/b", created)  # carries a resourceVersion
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


def test_creates_from_one_loop_share_commits_and_the_loop_never_commits(
    backend: LmdbBackend, pods: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    paused = PausedWriter(backend, monkeypatch)
    monkeypatch.setattr(backend, "_inline_ok", True)  # a lone write could go inline: never here
    aio = as_async(pods)
    committers: set[str] = set()
    original = backend._run_batch

    def run_batch(batch: list[Any]) -> None:
        committers.add(threading.current_thread().name)
        original(batch)

    monkeypatch.setattr(backend, "_run_batch", run_batch)

    async def scenario() -> list[Object]:
        first = asyncio.ensure_future(aio.create("/pods/ns/p0", pod("ns", "p0")))
        await asyncio.to_thread(paused.entered.wait, 10.0)
        rest = [
            asyncio.ensure_future(aio.create(f"/pods/ns/p{i}", pod("ns", f"p{i}")))
            for i in range(1, 16)
        ]
        await asyncio.to_thread(paused.wait_queued, 15)
        paused.release()
        return await asyncio.gather(first, *rest)

    created = asyncio.run(scenario())
    assert len({rv(obj) for obj in created}) == 16
    assert paused.batches[:2] == [1, 15]
    assert threading.main_thread().name not in committers


def test_a_cancelled_create_is_still_written_and_the_writer_goes_on(
    backend: LmdbBackend, pods: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    paused = PausedWriter(backend, monkeypatch)
    aio = as_async(pods)

    async def scenario() -> None:
        task = asyncio.ensure_future(aio.create("/pods/ns/gone", pod("ns", "gone")))
        await asyncio.to_thread(paused.entered.wait, 10.0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        paused.release()
        # The write was queued before the cancel: it is committed all the same.
        later = await aio.create("/pods/ns/later", pod("ns", "later"))
        found = await aio.get("/pods/ns/gone")
        assert rv(found) < rv(later)

    asyncio.run(scenario())


def test_waking_a_closed_loop_is_harmless() -> None:
    loop = asyncio.new_event_loop()
    request = PutRequest("/pods/ns/x", b"{}", expected=0)
    future = request.attach_future(loop)
    loop.close()
    _wake_loops([future])  # the writer thread must not fail on it
    assert not future.done()


def test_a_storage_without_a_face_of_its_own_gets_the_threaded_one(pods: Storage) -> None:
    wrapped = _Wrapped(pods)
    aio = as_async(wrapped)  # type: ignore[arg-type]
    assert type(aio) is ThreadedAsyncStorage
    callers: set[threading.Thread] = set()

    def note_caller(current: Object) -> Object:
        callers.add(threading.current_thread())
        return {**current, "metadata": {**current["metadata"], "labels": {"x": "y"}}}

    async def scenario() -> None:
        await aio.create("/pods/ns/w", pod("ns", "w"))
        await aio.guaranteed_update("/pods/ns/w", note_caller)

    asyncio.run(scenario())
    assert threading.main_thread() not in callers


def test_concurrent_creates_each_get_their_own_revision(pods: Storage) -> None:
    aio = as_async(pods)

    async def scenario() -> list[Object]:
        return await asyncio.gather(
            *(aio.create(f"/pods/ns/p{i}", pod("ns", f"p{i}")) for i in range(32))
        )

    created = asyncio.run(scenario())
    assert len({rv(obj) for obj in created}) == 32


def test_updates_and_deletes_run_their_callbacks_on_the_loop_and_commit_off_it(
    backend: LmdbBackend, pods: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    aio = as_async(pods)
    callbacks: set[int] = set()
    committers: set[int] = set()
    original = backend._run_batch

    def run_batch(batch: list[Any]) -> None:
        committers.add(threading.get_ident())
        original(batch)

    monkeypatch.setattr(backend, "_run_batch", run_batch)

    def relabel(current: Object) -> Object:
        callbacks.add(threading.get_ident())
        return {**current, "metadata": {**current["metadata"], "labels": {"a": "b"}}}

    def allow(current: Object) -> None:
        callbacks.add(threading.get_ident())

    async def scenario() -> None:
        await aio.create("/pods/ns/u", pod("ns", "u"))
        await aio.guaranteed_update("/pods/ns/u", relabel)
        await aio.delete("/pods/ns/u", validate_deletion=allow)

    asyncio.run(scenario())
    assert callbacks == {threading.get_ident()}  # the loop's own thread, no worker
    assert threading.get_ident() not in committers


def test_concurrent_updates_of_one_object_from_tasks_lose_nothing(pods: Storage) -> None:
    # Every task reads, adds one and writes: conflicts are retried with the fresh value, so
    # the count ends at the number of updates and each update got its own revision.
    aio = as_async(pods)

    def add_one(current: Object) -> Object:
        count = int(current["metadata"].get("annotations", {}).get("count", "0"))
        meta = {**current["metadata"], "annotations": {"count": str(count + 1)}}
        return {**current, "metadata": meta}

    async def scenario() -> tuple[Object, list[Object]]:
        await aio.create("/pods/ns/c", pod("ns", "c"))
        updates = await asyncio.gather(
            *(aio.guaranteed_update("/pods/ns/c", add_one) for _ in range(40))
        )
        return await aio.get("/pods/ns/c"), updates

    final, updates = asyncio.run(scenario())
    assert final["metadata"]["annotations"]["count"] == "40"
    assert len({rv(obj) for obj in updates}) == 40


def test_a_delete_that_loses_a_race_to_an_update_checks_the_new_value(pods: Storage) -> None:
    # The delete starts from a stale copy; its precondition is checked again on the live value.
    aio = as_async(pods)

    async def scenario() -> None:
        created = await aio.create("/pods/ns/d", pod("ns", "d"))
        await aio.guaranteed_update(
            "/pods/ns/d",
            lambda cur: {**cur, "metadata": {**cur["metadata"], "labels": {"x": "y"}}},
        )
        deleted = await aio.delete("/pods/ns/d", cached_existing=created)
        assert deleted["metadata"]["labels"] == {"x": "y"}
        with pytest.raises(NotFound):
            await aio.delete("/pods/ns/d")

    asyncio.run(scenario())
