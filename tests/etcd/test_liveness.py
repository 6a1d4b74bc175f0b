"""The liveness probe tells a frozen or dead etcd member from live ones, and the client moves
off a silent member, on a real three-member cluster."""

from __future__ import annotations

import queue
import time
from collections.abc import Iterator

import pytest

from kstore.storage._etcd_client import EtcdClient
from kstore.storage._etcd_config import EtcdConfig
from kstore.storage._etcd_liveness import PROBE_TIMEOUT, LivenessProbe
from kstore.testing.etcd_cluster import EtcdCluster

pytestmark = [pytest.mark.etcd, pytest.mark.fault]


@pytest.fixture
def trio(etcd_trio: EtcdCluster) -> Iterator[EtcdCluster]:
    etcd_trio.wait_healthy(timeout=30)
    yield etcd_trio
    for index, member in enumerate(etcd_trio.members):
        if member.paused:
            etcd_trio.resume(index)
        if not member.running:
            etcd_trio.restart(index, wait=False)
    etcd_trio.wait_healthy(timeout=30)


@pytest.fixture
def client(trio: EtcdCluster) -> Iterator[EtcdClient]:
    etcd_client = EtcdClient(EtcdConfig(endpoints=tuple(trio.endpoints), compaction_interval=0))
    yield etcd_client
    etcd_client.close()


def _probe_once(client: EtcdClient) -> tuple[list[int], list[int]]:
    reports: queue.Queue[tuple[list[int], list[int]]] = queue.Queue()
    probe = LivenessProbe(
        [ep.maintenance for ep in client.endpoints],
        lambda answered, silent: reports.put((answered, silent)),
    )
    began = time.monotonic()
    probe.suspect()
    report = reports.get(timeout=10)
    assert time.monotonic() - began < PROBE_TIMEOUT + 1.0, "a probe round outlasted its deadline"
    return report


def test_every_live_member_answers(client: EtcdClient) -> None:
    assert _probe_once(client) == ([0, 1, 2], [])


@pytest.mark.parametrize("fault", ["pause", "kill"])
def test_a_frozen_or_dead_member_is_silent(
    trio: EtcdCluster, client: EtcdClient, fault: str
) -> None:
    if fault == "pause":
        trio.pause(1)
    else:
        trio.kill(1)
    assert _probe_once(client) == ([0, 2], [1])


def test_the_client_leaves_a_silent_member_and_stops_avoiding_live_ones(
    client: EtcdClient,
) -> None:
    while client.current_endpoint().index != 1:
        client.endpoint_failed(client.current_endpoint())
    client.endpoints[0].failed_at = time.monotonic()  # a live member that timed out
    client.probed([0, 2], [1])
    assert client.current_endpoint().index == 2
    assert client.endpoints[0].failed_at == 0.0
    assert client.endpoints[1].failed_at > 0.0
    # The next failure of member 2 goes back to member 0, not to the silent member 1.
    client.endpoint_failed(client.endpoints[2])
    assert client.current_endpoint().index == 0


def test_a_burst_of_suspicions_makes_one_round(client: EtcdClient) -> None:
    rounds: list[tuple[list[int], list[int]]] = []
    probe = LivenessProbe(
        [ep.maintenance for ep in client.endpoints],
        lambda answered, silent: rounds.append((answered, silent)),
    )
    for _ in range(20):
        probe.suspect()
    time.sleep(PROBE_TIMEOUT + 0.5)
    assert rounds == [([0, 1, 2], [])]
