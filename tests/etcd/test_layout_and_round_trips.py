"""What the etcd backend puts in etcd, and how many round trips each write costs.

The conformance suite checks the storage contract; these tests check the etcd side of it:
Kubernetes' keys and values, resourceVersion = mod_revision, one transaction per write in the
common case, and leases shared as Kubernetes' lease manager shares them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import grpc
import orjson
import pytest
from etcd3 import etcdrpc

from kstore.api.gvk import Object
from kstore.errors import Conflict
from kstore.storage.etcd import EtcdBackend, kubernetes_resource_prefix
from kstore.storage.interface import IdentityTransformer, Preconditions, Storage
from kstore.testing.etcd_cluster import EtcdCluster
from kstore.testing.objects import pod, pod_codec, pod_config, rv_of
from tests.conftest_etcd import RawEtcd, make_backend

pytestmark = pytest.mark.etcd


@pytest.fixture
def raw(etcd_single: EtcdCluster) -> Iterator[RawEtcd]:
    client = RawEtcd(etcd_single.endpoints[0])
    yield client
    client.close()


@pytest.fixture
def registry(etcd_single: EtcdCluster, raw: RawEtcd) -> Iterator[EtcdBackend]:
    """A backend with Kubernetes' default prefix, wiped afterwards."""
    backend = make_backend(etcd_single, prefix="/registry")
    yield backend
    backend.close()
    raw.delete_prefix(b"/registry/")


def _pods(backend: EtcdBackend) -> Storage:
    return backend.storage_for(pod_config(IdentityTransformer()))


class _Calls:
    """Counts the RPCs a backend's client makes."""

    def __init__(self, backend: EtcdBackend, monkeypatch: pytest.MonkeyPatch) -> None:
        self.counts = {"txn": 0, "range": 0}
        client = backend._client
        # Writes send their transactions already encoded: those are transactions too.
        for method, name in (("txn", "txn"), ("txn_encoded", "txn"), ("range", "range")):
            monkeypatch.setattr(client, method, self._counting(name, getattr(client, method)))

    def _counting(self, name: str, call: Callable[..., Any]) -> Callable[..., Any]:
        def counted(request: Any, *args: Any, **kwargs: Any) -> Any:
            self.counts[name] += 1
            return call(request, *args, **kwargs)

        return counted

    def reset(self) -> None:
        for name in self.counts:
            self.counts[name] = 0


def _label(value: str) -> Callable[[Object], Object]:
    def update(current: Object) -> Object:
        return {**current, "metadata": {**current["metadata"], "labels": {"v": value}}}

    return update


def test_objects_live_under_kubernetes_keys_with_mod_revision_as_resource_version(
    registry: EtcdBackend, raw: RawEtcd
) -> None:
    out = _pods(registry).create("/pods/default/nginx", pod("nginx", "default"))

    kv = raw.get(b"/registry/pods/default/nginx")
    assert kv is not None
    assert kv.mod_revision == rv_of(out)
    # The value is the storage encoding without the resourceVersion (JSON, Pod v1).
    assert kv.value == pod_codec().encode(pod("nginx", "default"))
    assert "resourceVersion" not in orjson.loads(kv.value)["metadata"]


def test_other_groups_keep_their_group_in_the_key(registry: EtcdBackend, raw: RawEtcd) -> None:
    config = pod_config(IdentityTransformer())
    widgets = registry.storage_for(replace(config, resource_prefix="/example.com/widgets"))
    widgets.create("/example.com/widgets/ns1/w1", pod("w1", "ns1"))
    assert raw.get(b"/registry/example.com/widgets/ns1/w1") is not None


@pytest.mark.parametrize("prefix", ["registry", "/registry/", "//registry"])
def test_the_prefix_is_normalised_as_kubernetes_does(
    etcd_single: EtcdCluster, raw: RawEtcd, prefix: str
) -> None:
    backend = make_backend(etcd_single, prefix=prefix)
    try:
        _pods(backend).create("/pods/ns/a", pod("a", "ns"))
        assert raw.get(b"/registry/pods/ns/a") is not None
    finally:
        backend.close()
        raw.delete_prefix(b"/registry/")


def test_objects_written_by_another_client_are_read_with_their_mod_revision(
    registry: EtcdBackend, raw: RawEtcd
) -> None:
    written = pod_codec().encode(pod("external", "default", labels={"from": "raw"}))
    revision = raw.put(b"/registry/pods/default/external", written)

    got = _pods(registry).get("/pods/default/external")

    assert rv_of(got) == revision
    assert got["metadata"]["labels"] == {"from": "raw"}


def test_create_is_one_transaction(
    etcd_backend: EtcdBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    pods = _pods(etcd_backend)
    calls = _Calls(etcd_backend, monkeypatch)
    pods.create("/pods/ns/a", pod("a", "ns"))
    assert calls.counts == {"txn": 1, "range": 0}


def test_update_from_a_current_cached_object_is_one_transaction(
    etcd_backend: EtcdBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    pods = _pods(etcd_backend)
    current = pods.create("/pods/ns/a", pod("a", "ns"))
    calls = _Calls(etcd_backend, monkeypatch)

    updated = pods.guaranteed_update("/pods/ns/a", _label("1"), cached_existing=current)

    assert calls.counts == {"txn": 1, "range": 0}
    assert updated["metadata"]["labels"] == {"v": "1"}


def test_a_stale_cached_object_costs_one_more_transaction_and_no_read(
    etcd_backend: EtcdBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    pods = _pods(etcd_backend)
    stale = pods.create("/pods/ns/a", pod("a", "ns"))
    newer = pods.guaranteed_update("/pods/ns/a", _label("1"))
    calls = _Calls(etcd_backend, monkeypatch)
    seen: list[str] = []

    def bump(current: Object) -> Object:
        seen.append(current["metadata"]["resourceVersion"])
        return _label("2")(current)

    out = pods.guaranteed_update("/pods/ns/a", bump, cached_existing=stale)

    # The failed compare-and-swap returned the current value from its else-branch.
    assert calls.counts == {"txn": 2, "range": 0}
    assert seen == [str(rv_of(stale)), str(rv_of(newer))]
    assert out["metadata"]["labels"] == {"v": "2"}


def test_delete_from_a_current_cached_object_is_one_transaction(
    etcd_backend: EtcdBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    pods = _pods(etcd_backend)
    current = pods.create("/pods/ns/a", pod("a", "ns"))
    calls = _Calls(etcd_backend, monkeypatch)
    pods.delete("/pods/ns/a", cached_existing=current)
    assert calls.counts == {"txn": 1, "range": 0}


def test_a_failed_precondition_on_a_current_object_writes_nothing(
    etcd_backend: EtcdBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    pods = _pods(etcd_backend)
    current = pods.create("/pods/ns/a", pod("a", "ns"))
    before = etcd_backend.current_revision()
    with pytest.raises(Conflict):
        pods.guaranteed_update(
            "/pods/ns/a", _label("1"), preconditions=Preconditions(resource_version="1")
        )
    assert etcd_backend.current_revision() == before
    assert pods.get("/pods/ns/a") == current


def _lease_of(raw: RawEtcd, key: bytes) -> int:
    kv = raw.get(key)
    assert kv is not None
    return int(kv.lease)


def _granted_ttl(cluster: EtcdCluster, lease_id: int) -> int:
    channel = grpc.insecure_channel(cluster.endpoints[0])
    try:
        stub = etcdrpc.LeaseStub(channel)
        response = stub.LeaseTimeToLive(etcdrpc.LeaseTimeToLiveRequest(ID=lease_id), timeout=10)
        return int(response.grantedTTL)
    finally:
        channel.close()


def test_objects_with_close_ttls_share_one_lease(
    registry: EtcdBackend, raw: RawEtcd, etcd_single: EtcdCluster
) -> None:
    pods = _pods(registry)
    for name in ("a", "b", "c"):
        pods.create(f"/pods/ns/{name}", pod(name, "ns"), ttl_seconds=600)
    leases = {_lease_of(raw, f"/registry/pods/ns/{n}".encode()) for n in ("a", "b", "c")}
    assert len(leases) == 1
    (lease,) = leases
    # Granted for the TTL plus the reuse window: min(60 s, 5 % of 600 s) = 30 s.
    assert _granted_ttl(etcd_single, lease) == 630


def test_a_much_shorter_ttl_gets_its_own_lease(registry: EtcdBackend, raw: RawEtcd) -> None:
    pods = _pods(registry)
    pods.create("/pods/ns/long", pod("long", "ns"), ttl_seconds=600)
    pods.create("/pods/ns/short", pod("short", "ns"), ttl_seconds=100)
    assert _lease_of(raw, b"/registry/pods/ns/long") != _lease_of(raw, b"/registry/pods/ns/short")


def test_a_lease_holds_at_most_the_configured_number_of_objects(
    etcd_single: EtcdCluster, raw: RawEtcd
) -> None:
    backend = make_backend(etcd_single, prefix="/registry", lease_max_object_count=2)
    try:
        pods = _pods(backend)
        for name in ("a", "b", "c"):
            pods.create(f"/pods/ns/{name}", pod(name, "ns"), ttl_seconds=600)
        ids = [_lease_of(raw, f"/registry/pods/ns/{n}".encode()) for n in ("a", "b", "c")]
        assert ids[0] == ids[1] != ids[2]
    finally:
        backend.close()
        raw.delete_prefix(b"/registry/")


def test_an_update_without_ttl_detaches_the_lease(registry: EtcdBackend, raw: RawEtcd) -> None:
    pods = _pods(registry)
    pods.create("/pods/ns/a", pod("a", "ns"), ttl_seconds=600)
    assert _lease_of(raw, b"/registry/pods/ns/a") != 0
    pods.guaranteed_update("/pods/ns/a", _label("1"))
    assert _lease_of(raw, b"/registry/pods/ns/a") == 0


_CRDS = "apiextensions.k8s.io/customresourcedefinitions"


@pytest.mark.parametrize(
    ("group", "resource", "prefix"),
    [
        ("", "pods", "/pods"),
        ("apps", "deployments", "/deployments"),
        ("coordination.k8s.io", "leases", "/leases"),
        ("", "services", "/services/specs"),
        ("", "endpoints", "/services/endpoints"),
        ("", "nodes", "/minions"),
        ("", "replicationcontrollers", "/controllers"),
        ("networking.k8s.io", "ingresses", "/ingress"),
        ("apiextensions.k8s.io", "customresourcedefinitions", "/" + _CRDS),
        ("apiregistration.k8s.io", "apiservices", "/apiregistration.k8s.io/apiservices"),
        ("example.com", "widgets", "/example.com/widgets"),
    ],
)
def test_resource_prefixes_are_the_ones_kubernetes_uses(
    group: str, resource: str, prefix: str
) -> None:
    assert kubernetes_resource_prefix(group, resource) == prefix
