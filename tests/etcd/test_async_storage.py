"""The etcd backend's asyncio verbs beyond the conformance suite (which runs through them in
``tests/conformance/test_etcd_async_conformance.py``): many calls in flight from one loop,
several loops at once, leases, fail-over between members, and closing."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator

import pytest

from kstore.api.gvk import Object
from kstore.errors import AlreadyExists, BadRequest, NotFound, TooLargeResourceVersion, Unavailable
from kstore.storage._etcd_aio import AsyncEtcdClient
from kstore.storage.aio import AsyncStorage, as_async
from kstore.storage.etcd import EtcdAsyncStorage, EtcdBackend
from kstore.storage.interface import GetOptions, ListOptions, Preconditions
from kstore.testing.env import STORAGE_PREFIX_BYTES
from kstore.testing.objects import pod, pod_config, rv_of
from kstore.testing.transformers import PrefixTransformer
from tests.conftest_etcd import RawEtcd, etcd_backend, etcd_single, make_backend  # noqa: F401

pytestmark = pytest.mark.etcd


@pytest.fixture
def pods(etcd_backend: EtcdBackend) -> AsyncStorage:  # noqa: F811
    aio = as_async(etcd_backend.storage_for(pod_config(PrefixTransformer(STORAGE_PREFIX_BYTES))))
    assert isinstance(aio, EtcdAsyncStorage)
    return aio


def _key(name: str) -> str:
    return f"/pods/ns/{name}"


def _with_count(count: int) -> Object:
    return pod("counter", "ns", annotations={"count": str(count)})


def test_many_creates_in_flight_from_one_loop_each_get_their_own_revision(
    pods: AsyncStorage,
) -> None:
    async def scenario() -> list[Object]:
        return await asyncio.gather(
            *(pods.create(_key(f"p{i}"), pod(f"p{i}", "ns")) for i in range(64))
        )

    created = asyncio.run(scenario())
    revisions = [rv_of(obj) for obj in created]
    assert len(set(revisions)) == 64
    for i, obj in enumerate(created):
        assert obj["metadata"]["name"] == f"p{i}"
    listed = asyncio.run(pods.list("/pods/ns", ListOptions(recursive=True)))
    assert sorted(rv_of(obj) for obj in listed.items) == sorted(revisions)


def test_concurrent_updates_from_one_loop_lose_nothing(pods: AsyncStorage) -> None:
    def add_one(current: Object) -> Object:
        count = int(current["metadata"]["annotations"]["count"])
        return _with_count(count + 1)

    async def scenario() -> Object:
        await pods.create(_key("counter"), _with_count(0))
        results = await asyncio.gather(
            *(pods.guaranteed_update(_key("counter"), add_one) for _ in range(16))
        )
        assert len({rv_of(obj) for obj in results}) == 16
        return await pods.get(_key("counter"))

    final = asyncio.run(scenario())
    assert final["metadata"]["annotations"]["count"] == "16"


def test_errors_are_the_blocking_verbs_errors(pods: AsyncStorage) -> None:
    async def scenario() -> None:
        created = await pods.create(_key("a"), pod("a", "ns"))
        with pytest.raises(AlreadyExists):
            await pods.create(_key("a"), pod("a", "ns"))
        with pytest.raises(BadRequest):
            await pods.create(_key("b"), created)  # carries a resourceVersion
        with pytest.raises(NotFound):
            await pods.get(_key("missing"))
        assert await pods.get(_key("missing"), GetOptions(ignore_not_found=True)) == {}
        with pytest.raises(TooLargeResourceVersion):
            await pods.get(_key("a"), GetOptions(resource_version=str(rv_of(created) + 1000)))
        with pytest.raises(NotFound):
            await pods.delete(_key("missing"))
        deleted = await pods.delete(
            _key("a"), preconditions=Preconditions(resource_version=str(rv_of(created)))
        )
        assert rv_of(deleted) > rv_of(created)

    asyncio.run(scenario())


def test_a_ttl_create_is_attached_to_a_lease(
    pods: AsyncStorage,
    etcd_backend: EtcdBackend,  # noqa: F811
) -> None:
    asyncio.run(pods.create(_key("short"), pod("short", "ns"), ttl_seconds=30))
    raw = RawEtcd(etcd_backend.config.endpoints[0])
    try:
        stored = raw.get(f"{etcd_backend.config.prefix}/pods/ns/short".encode())
    finally:
        raw.close()
    assert stored is not None and stored.lease != 0


def test_several_loops_share_one_backend(pods: AsyncStorage) -> None:
    failures: list[BaseException] = []

    def loop_in_thread(index: int) -> None:
        async def creates() -> None:
            for i in range(20):
                await pods.create(_key(f"t{index}-{i}"), pod(f"t{index}-{i}", "ns"))

        try:
            asyncio.run(creates())
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=loop_in_thread, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not failures
    listed = asyncio.run(pods.list("/pods/ns", ListOptions(recursive=True)))
    assert len(listed.items) == 80


def test_clients_of_ended_loops_are_dropped_when_a_new_loop_comes(
    pods: AsyncStorage,
    etcd_backend: EtcdBackend,  # noqa: F811
) -> None:
    for i in range(5):
        asyncio.run(pods.create(_key(f"r{i}"), pod(f"r{i}", "ns")))
    (last,) = etcd_backend._client.loop_clients  # only the last loop's is left
    assert last.is_closed()


def _unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def backend_behind_a_dead_member(etcd_single: object) -> Iterator[EtcdBackend]:  # noqa: F811
    dead = f"http://127.0.0.1:{_unused_port()}"
    live = etcd_single.endpoints[0]  # type: ignore[attr-defined]
    backend = make_backend(etcd_single, endpoints=(dead, live))  # type: ignore[arg-type]
    backend._client._current = 0  # start on the dead member
    try:
        yield backend
    finally:
        backend.close()


def test_calls_fail_over_to_a_member_that_answers(
    backend_behind_a_dead_member: EtcdBackend,
) -> None:
    backend = backend_behind_a_dead_member
    pods = as_async(backend.storage_for(pod_config(PrefixTransformer(STORAGE_PREFIX_BYTES))))
    created = asyncio.run(pods.create(_key("moved"), pod("moved", "ns")))
    assert backend.current_endpoint == backend.config.endpoints[1].removeprefix("http://")
    assert asyncio.run(pods.get(_key("moved"))) == created


def test_closing_the_backend_ends_its_asyncio_calls(
    pods: AsyncStorage,
    etcd_backend: EtcdBackend,  # noqa: F811
) -> None:
    async def scenario() -> None:
        await pods.create(_key("before"), pod("before", "ns"))
        clients = list(etcd_backend._client.loop_clients.values())
        assert len(clients) == 1 and isinstance(clients[0], AsyncEtcdClient)
        etcd_backend.close()
        with pytest.raises(Unavailable):
            await pods.create(_key("after"), pod("after", "ns"))
        await asyncio.sleep(0.05)  # the channels' close, scheduled on this loop, runs

    asyncio.run(scenario())
