"""Edge cases of the etcd backend that the conformance suite cannot reach: a lease revoked
behind kstore's back, etcd's request size limit, and a watch whose only member stays down."""

from __future__ import annotations

import time

import grpc
import pytest
from etcd3 import etcdrpc

from kstore.errors import RequestEntityTooLarge
from kstore.storage.etcd import EtcdBackend, EtcdConfig
from kstore.storage.interface import EventType, IdentityTransformer, ListOptions
from kstore.testing.etcd_cluster import EtcdCluster
from kstore.testing.objects import pod, pod_config, rv_of
from tests.conftest_etcd import RawEtcd, require_etcd

pytestmark = pytest.mark.etcd


def test_a_lease_revoked_behind_kstores_back_is_replaced(
    etcd_single: EtcdCluster, etcd_backend: EtcdBackend
) -> None:
    pods = etcd_backend.storage_for(pod_config(IdentityTransformer()))
    pods.create("/pods/ns/a", pod("a", "ns"), ttl_seconds=600)
    raw = RawEtcd(etcd_single.endpoints[0])
    try:
        key = (etcd_backend.config.prefix + "/pods/ns/a").encode()
        lease = raw.get(key).lease
        channel = grpc.insecure_channel(etcd_single.endpoints[0])
        etcdrpc.LeaseStub(channel).LeaseRevoke(etcdrpc.LeaseRevokeRequest(ID=lease), timeout=10)
        channel.close()
        assert raw.get(key) is None  # revoking a lease deletes its keys

        # The backend would reuse the revoked lease: the put fails, a new lease is granted.
        out = pods.create("/pods/ns/b", pod("b", "ns"), ttl_seconds=600)
        stored = raw.get((etcd_backend.config.prefix + "/pods/ns/b").encode())
        assert stored.mod_revision == rv_of(out)
        assert stored.lease not in (0, lease)
    finally:
        raw.close()


def test_an_object_over_etcds_request_limit_is_413(etcd_backend: EtcdBackend) -> None:
    pods = etcd_backend.storage_for(pod_config(IdentityTransformer()))
    big = pod("big", "ns", annotations={"blob": "x" * (2 * 1024 * 1024)})
    with pytest.raises(RequestEntityTooLarge, match="too large"):
        pods.create("/pods/ns/big", big)


def test_a_watch_that_cannot_resume_in_time_ends_with_503() -> None:
    require_etcd()
    with EtcdCluster(1) as cluster:
        backend = EtcdBackend(
            EtcdConfig(
                endpoints=tuple(cluster.endpoints),
                request_timeout=2.0,
                watch_idle_timeout=0.5,
                watch_reconnect_timeout=1.5,
                compaction_interval=0,
            )
        )
        try:
            pods = backend.storage_for(pod_config(IdentityTransformer()))
            created = pods.create("/pods/ns/a", pod("a", "ns"))
            watcher = pods.watch("/pods/ns", ListOptions(resource_version="0"))
            event = watcher.next(timeout=5)
            assert event is not None and event.resource_version == rv_of(created)

            cluster.kill(0)
            started = time.monotonic()
            event = watcher.next(timeout=10)
            waited = time.monotonic() - started

            assert event is not None and event.type is EventType.ERROR
            assert event.object["code"] == 503, event.object
            assert waited < 5.0, f"the watch took {waited:.1f}s to give up"
            assert watcher.next(timeout=0.2) is None and watcher.stopped
        finally:
            backend.close()


def test_an_object_over_etcds_own_limit_but_under_grpcs_is_413_too(
    etcd_backend: EtcdBackend,
) -> None:
    # Between etcd's --max-request-bytes (1.5 MiB) and gRPC's limit (2 MiB): etcd refuses it.
    pods = etcd_backend.storage_for(pod_config(IdentityTransformer()))
    big = pod("big", "ns", annotations={"blob": "x" * (1800 * 1024)})
    with pytest.raises(RequestEntityTooLarge, match="request is too large"):
        pods.create("/pods/ns/big", big)
