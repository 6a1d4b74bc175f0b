"""Compaction as kube-apiserver's compactor does it: a compare-and-swap on ``compact_rev_key``
decides which process compacts, to the revision seen one interval earlier."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from kstore.errors import Expired
from kstore.storage.etcd import EtcdBackend
from kstore.storage.interface import (
    IdentityTransformer,
    ListOptions,
    ResourceVersionMatch,
)
from kstore.testing.etcd_cluster import EtcdCluster
from kstore.testing.objects import pod, pod_config, rv_of
from tests.conftest_etcd import RawEtcd, make_backend, replace_shared_cluster

pytestmark = pytest.mark.etcd


@pytest.fixture
def compacting(
    request: pytest.FixtureRequest, etcd_single: EtcdCluster
) -> Iterator[tuple[EtcdCluster, RawEtcd]]:
    """The shared cluster, replaced after the test (its history is compacted)."""
    raw = RawEtcd(etcd_single.endpoints[0])
    yield etcd_single, raw
    raw.close()
    replace_shared_cluster(request.config)


def _exact(revision: int) -> ListOptions:
    return ListOptions(
        resource_version=str(revision), resource_version_match=ResourceVersionMatch.EXACT
    )


def test_only_the_winner_of_the_compare_and_swap_compacts(
    compacting: tuple[EtcdCluster, RawEtcd],
) -> None:
    cluster, raw = compacting
    first, second = make_backend(cluster), make_backend(cluster)
    try:
        pods = first.storage_for(pod_config(IdentityTransformer()))
        pods.create("/pods/ns/a", pod("a", "ns"))

        # Round 1 of the first process records where history stands; the second process
        # loses the compare-and-swap and only learns the key's version.
        assert first.compact() == 0
        seen_in_round_1 = int(raw.get(b"compact_rev_key").mod_revision)
        assert second.compact() == 0
        pods.create("/pods/ns/b", pod("b", "ns"))

        # Round 2: the first process wins again and compacts to what it saw in round 1.
        compacted = first.compact()
        assert compacted == seen_in_round_1
        # The second process loses again and reads the compacted revision from the key.
        assert second.compact() == compacted
        key = raw.get(b"compact_rev_key")
        assert key.version == 2
        assert int(key.value) == compacted

        with pytest.raises(Expired):
            pods.list("/pods/", _exact(compacted - 1))
        assert pods.list("/pods/", _exact(compacted)).resource_version == compacted
    finally:
        first.close()
        second.close()


def test_the_timer_keeps_about_one_interval_of_history(
    compacting: tuple[EtcdCluster, RawEtcd],
) -> None:
    cluster, raw = compacting
    backend = make_backend(cluster, compaction_interval=0.3)
    try:
        pods = backend.storage_for(pod_config(IdentityTransformer()))
        first = pods.create("/pods/ns/a", pod("a", "ns"))
        deadline = time.monotonic() + 10
        while backend.compacted_revision < rv_of(first):
            assert time.monotonic() < deadline, "the compactor did not compact within 10 s"
            pods.create(f"/pods/ns/x{time.monotonic_ns()}", pod("x", "ns"))
            time.sleep(0.1)
        with pytest.raises(Expired, match="too old"):
            pods.list("/pods/", _exact(backend.compacted_revision - 1))
        assert int(raw.get(b"compact_rev_key").value) == backend.compacted_revision
    finally:
        backend.close()


def test_compacting_again_below_the_compacted_revision_is_harmless(
    compacting: tuple[EtcdCluster, RawEtcd],
) -> None:
    cluster, _ = compacting
    backend = make_backend(cluster)
    try:
        pods = backend.storage_for(pod_config(IdentityTransformer()))
        out = [pods.create(f"/pods/ns/{n}", pod(n, "ns")) for n in ("a", "b", "c")]
        assert backend.compact(rv_of(out[2])) == rv_of(out[2])
        assert backend.compact(rv_of(out[0])) == rv_of(out[2])
        assert backend.compacted_revision == rv_of(out[2])
    finally:
        backend.close()


def test_a_backend_without_the_timer_never_compacts_by_itself(
    etcd_backend: EtcdBackend,
) -> None:
    pods = etcd_backend.storage_for(pod_config(IdentityTransformer()))
    first = pods.create("/pods/ns/a", pod("a", "ns"))
    time.sleep(0.3)
    assert pods.list("/pods/", _exact(rv_of(first))).resource_version == rv_of(first)
    assert etcd_backend.compacted_revision == 0
