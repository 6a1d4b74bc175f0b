"""Two kstore processes on one etcd, as several kube-apiservers share one cluster: what one
writes, the other's watches and reads see, with the same resourceVersions; their
compare-and-swap loops on one object lose no update."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from kstore.storage.etcd import EtcdBackend
from kstore.storage.interface import EventType, IdentityTransformer, ListOptions, Storage
from kstore.testing.etcd_cluster import EtcdCluster
from kstore.testing.objects import pod, pod_config, rv_of
from tests.etcd.instance import NAMESPACE, increment
from tests.fixtures_path import REPO_ROOT

pytestmark = pytest.mark.etcd


def _instance(cluster: EtcdCluster, backend: EtcdBackend, *args: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "tests.etcd.instance", cluster.endpoints[0]]
    return subprocess.Popen(
        [*command, backend.config.prefix, *args],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _lines(process: subprocess.Popen[str], timeout: float = 60) -> list[dict[str, Any]]:
    out, err = process.communicate(timeout=timeout)
    assert process.returncode == 0, f"the other instance failed:\n{err}"
    return [json.loads(line) for line in out.splitlines()]


@pytest.fixture
def pods(etcd_backend: EtcdBackend) -> Iterator[Storage]:
    yield etcd_backend.storage_for(pod_config(IdentityTransformer()))


def test_writes_of_the_other_instance_reach_this_ones_watch_and_reads(
    etcd_single: EtcdCluster, etcd_backend: EtcdBackend, pods: Storage
) -> None:
    start = etcd_backend.current_revision()
    watcher = pods.watch(f"/pods/{NAMESPACE}", ListOptions(resource_version=str(start)))
    try:
        writes = _lines(_instance(etcd_single, etcd_backend, "write", "5"))
        assert len(writes) == 11
        events = []
        for _ in writes:
            event = watcher.next(timeout=10)
            assert event is not None, f"only {len(events)} of {len(writes)} events arrived"
            events.append(event)
    finally:
        watcher.stop()

    expected_types = {
        "create": EventType.ADDED,
        "update": EventType.MODIFIED,
        "delete": EventType.DELETED,
    }
    assert [(e.type, e.object["metadata"]["name"], e.resource_version) for e in events] == [
        (expected_types[w["op"]], w["name"], w["rv"]) for w in writes
    ]
    listed = pods.list(f"/pods/{NAMESPACE}")
    last_writes = {w["name"]: w["rv"] for w in writes if w["op"] == "update" and w["name"] != "b0"}
    assert {o["metadata"]["name"]: rv_of(o) for o in listed.items} == last_writes
    assert listed.resource_version >= writes[-1]["rv"]
    assert pods.get(f"/pods/{NAMESPACE}/b1")["metadata"]["labels"] == {"by": "b"}


def test_writes_of_this_instance_reach_the_other_ones_watch(
    etcd_single: EtcdCluster, etcd_backend: EtcdBackend, pods: Storage
) -> None:
    start = etcd_backend.current_revision()
    other = _instance(etcd_single, etcd_backend, "watch", str(start), "3")
    assert other.stdout is not None
    ready = json.loads(other.stdout.readline() or "{}")
    assert ready == {"ready": True}, other.stderr.read() if other.stderr else ""
    created = pods.create(f"/pods/{NAMESPACE}/a", pod("a", NAMESPACE))
    updated = pods.guaranteed_update(
        f"/pods/{NAMESPACE}/a",
        lambda cur: {**cur, "metadata": {**cur["metadata"], "labels": {"by": "a"}}},
    )
    deleted = pods.delete(f"/pods/{NAMESPACE}/a")

    seen = _lines(other)

    assert [(e["type"], e["name"], e["rv"]) for e in seen] == [
        ("ADDED", "a", rv_of(created)),
        ("MODIFIED", "a", rv_of(updated)),
        ("DELETED", "a", rv_of(deleted)),
    ]
    assert seen[1]["labels"] == {"by": "a"}


def test_concurrent_guaranteed_updates_from_both_instances_lose_nothing(
    etcd_single: EtcdCluster, etcd_backend: EtcdBackend, pods: Storage
) -> None:
    rounds = 40
    other = _instance(etcd_single, etcd_backend, "increment", str(rounds))
    revisions = []
    for _ in range(rounds):
        out = pods.guaranteed_update(f"/pods/{NAMESPACE}/counter", increment, ignore_not_found=True)
        revisions.append(rv_of(out))
    assert _lines(other) == [{"done": True}]

    final = pods.get(f"/pods/{NAMESPACE}/counter")
    assert final["metadata"]["annotations"]["count"] == str(2 * rounds)
    assert revisions == sorted(revisions)
