"""Writes through ``kstore serve`` resume within 3 s when the etcd leader freezes or dies.

A three-member etcd with etcd's default timing (100 ms heartbeat, 1 s election timeout, what
kube-apiserver users run) and one ``kstore serve`` on it; writer threads count through
ConfigMaps with resourceVersion preconditions and create ConfigMaps
(:mod:`tests.etcd.counter_writers`). Once the load runs, the leader is frozen (SIGSTOP, a
SIGCONT later) or killed (SIGKILL, restarted later). Each run asserts:

- the first write acknowledged after the fault (invoked after it) came within 3 s of it;
- nothing acknowledged is lost and nothing applied twice: each counter's stored value equals
  the number of times etcd changed its key (its ``version`` less the create), so no increment
  was applied twice, and every acknowledged increment and create is stored.

Two runs of each fault by default, ten each with ``KSTORE_LONG=1``. Each run prints its gap and
the load average, as the timing depends on the shared machine.
"""

from __future__ import annotations

import base64
import json
import os
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from kstore.testing.etcd_cluster import EtcdCluster
from tests.etcd.counter_writers import CMS, CounterWriters
from tests.server.harness import RunningServer, start_server

pytestmark = [pytest.mark.etcd, pytest.mark.fault]

LONG = os.environ.get("KSTORE_LONG") == "1"
RUNS = 10 if LONG else 2
#: The acceptance limit of the fail-over, from a fault to the first write acknowledged after.
RESUME_WITHIN = 3.0
#: Healthy load before the fault, and how long the fault lasts at least.
LOAD_BEFORE = 1.5
FAULT_SECONDS = 4.0
PREFIX = f"/failover-{os.getpid()}"


@pytest.fixture(scope="module")
def server(
    etcd_trio: EtcdCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningServer]:
    running = start_server(
        tmp_path_factory.mktemp("failover") / "data",
        "--storage-backend",
        "etcd",
        "--etcd-servers",
        ",".join(etcd_trio.endpoints),
        "--etcd-prefix",
        PREFIX,
    )
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def trio(etcd_trio: EtcdCluster) -> Iterator[EtcdCluster]:
    """The module's cluster with every member running; restored after the test."""
    etcd_trio.wait_healthy(timeout=30)
    yield etcd_trio
    for index, member in enumerate(etcd_trio.members):
        if member.paused:
            etcd_trio.resume(index)
        if not member.running:
            etcd_trio.restart(index, wait=False)
    etcd_trio.wait_healthy(timeout=30)


def _key_version(cluster: EtcdCluster, key: str) -> int:
    """etcd's ``version`` of ``key`` (how many times it was written since its creation),
    through a member's JSON gateway."""
    leader = cluster.members[cluster.leader()]
    body = json.dumps({"key": base64.b64encode(key.encode()).decode()}).encode()
    request = urllib.request.Request(leader.client_url + "/v3/kv/range", data=body)
    with urllib.request.urlopen(request, timeout=5) as response:
        answer = json.loads(response.read())
    kvs = answer.get("kvs", [])
    assert len(kvs) == 1, f"{key} not in etcd: {answer}"
    return int(kvs[0]["version"])


def _check_nothing_lost_or_doubled(
    writers: CounterWriters, server: RunningServer, cluster: EtcdCluster
) -> None:
    ops = writers.ops
    with server.client() as client:
        for counter in writers.counters:
            stored = client.get(f"{CMS}/{counter}")
            assert stored.status_code == 200, stored.text
            value = int(stored.json()["data"]["n"])
            version = _key_version(cluster, f"{PREFIX}/configmaps/default/{counter}")
            assert version - 1 == value, (
                f"{counter}: {version - 1} writes changed it but it counts {value}: "
                "an increment was applied twice"
            )
            acked = [op.value for op in ops if op.name == counter and op.acknowledged]
            assert acked == sorted(set(acked)), f"{counter}: acknowledged out of order {acked}"
            assert not acked or acked[-1] <= value, f"{counter}: acknowledged {acked[-1]} > {value}"
        for op in ops:
            if op.kind == "create" and op.acknowledged:
                found = client.get(f"{CMS}/{op.name}")
                assert found.status_code == 200, f"acknowledged create of {op.name} lost"


def _run_fault(
    cluster: EtcdCluster, server: RunningServer, fault: str, run: int
) -> tuple[float, str]:
    writers = CounterWriters(server.url, f"{fault}-{run}-{int(time.time() * 1000) % 10**8}")
    writers.start()
    try:
        time.sleep(LOAD_BEFORE)
        leader = cluster.leader()
        began = time.monotonic()
        if fault == "freeze":
            cluster.pause(leader)
        else:
            cluster.kill(leader)
        load = Path("/proc/loadavg").read_text().split()[0]
        deadline = began + FAULT_SECONDS + 6.0
        while writers.first_ack_after(began) == float("inf") and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(max(0.0, began + FAULT_SECONDS - time.monotonic()))
        if fault == "freeze":
            cluster.resume(leader)
        else:
            cluster.restart(leader, wait=False)
        cluster.wait_healthy(timeout=30)
        time.sleep(1.0)
    finally:
        writers.stop()
    assert not writers.crashes, writers.crashes
    gap = writers.first_ack_after(began)
    acked = sum(op.acknowledged for op in writers.ops)
    print(
        f"\nfailover {fault} run {run}: writes resumed {gap:.2f} s after, load {load}, "
        f"{acked} writes acknowledged"
    )
    _check_nothing_lost_or_doubled(writers, server, cluster)
    assert acked > 20, f"too little load to mean anything: {acked} acknowledged"
    return gap, load


@pytest.mark.parametrize("run", range(RUNS))
@pytest.mark.parametrize("fault", ["freeze", "kill"])
def test_writes_resume_within_3s_of_losing_the_leader(
    trio: EtcdCluster, server: RunningServer, fault: str, run: int
) -> None:
    gap, load = _run_fault(trio, server, fault, run)
    assert gap <= RESUME_WITHIN, (
        f"writes resumed {gap:.2f} s after the leader's {fault} (load {load})"
    )
