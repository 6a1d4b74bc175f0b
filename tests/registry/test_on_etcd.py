"""The registry on a real etcd: the same semantics as on LMDB, Kubernetes' etcd layout, event
expiry through etcd leases, and namespace deletion end to end."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kstore.api.scheme import Scheme
from kstore.errors import Conflict, NotFound
from kstore.registry.interface import CreateOptions, DeleteOptions, UpdateOptions
from kstore.registry.registry import StoreRegistry
from kstore.storage.etcd import EtcdBackend
from kstore.storage.interface import ListOptions
from tests.conftest_etcd import RawEtcd, etcd_backend, etcd_single
from tests.registry.conftest import make_registry
from tests.registry.objects import changed, config_map, ctx, deployment, hub, replace_with, wait_for

__all__ = ["etcd_backend", "etcd_single"]

pytestmark = pytest.mark.etcd


@pytest.fixture(params=[False, True], ids=["backend", "watch-cache"])
def on_etcd(
    request: pytest.FixtureRequest, scheme: Scheme, etcd_backend: EtcdBackend
) -> Iterator[StoreRegistry]:
    registry = make_registry(scheme, etcd_backend, watch_cache=request.param, event_ttl_seconds=1)
    try:
        yield registry
    finally:
        registry.close()


def test_create_update_conflict_and_delete_on_etcd(on_etcd: StoreRegistry, scheme: Scheme) -> None:
    store = on_etcd.store("apps", "deployments")
    apps = ctx("default", "apps/v1")
    first = store.create(apps, hub(scheme, deployment()), CreateOptions()).object
    scaled = store.update(
        apps, "web", changed(lambda o: o["spec"].update(replicas=2)), UpdateOptions()
    ).object
    assert scaled["metadata"]["generation"] == 2
    with pytest.raises(Conflict):
        store.update(apps, "web", replace_with(first), UpdateOptions())
    assert store.delete(apps, "web", DeleteOptions()).deleted is True
    with pytest.raises(NotFound):
        store.get(apps, "web")


def test_objects_use_kubernetes_keys_on_etcd(
    on_etcd: StoreRegistry, scheme: Scheme, etcd_backend: EtcdBackend, etcd_single: object
) -> None:
    on_etcd.store("", "configmaps").create(ctx(), hub(scheme, config_map("c")), CreateOptions())
    prefix = etcd_backend.config.prefix
    raw = RawEtcd(etcd_backend.config.endpoints[0])
    try:
        assert raw.get(f"{prefix}/configmaps/default/c".encode()) is not None
        assert raw.get(f"{prefix}/namespaces/kube-system".encode()) is not None
    finally:
        raw.close()


def test_events_expire_through_etcd_leases(on_etcd: StoreRegistry, scheme: Scheme) -> None:
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "e"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
    }
    events = on_etcd.store("", "events")
    events.create(ctx(), hub(scheme, event), CreateOptions())

    def gone() -> bool:
        try:
            events.get(ctx(), "e")
        except NotFound:
            return True
        return False

    assert wait_for(gone, timeout=8.0)


def test_namespace_deletion_on_etcd(on_etcd: StoreRegistry, scheme: Scheme) -> None:
    namespaces = on_etcd.store("", "namespaces")
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}
    namespaces.create(ctx(""), hub(scheme, ns), CreateOptions())
    on_etcd.store("", "configmaps").create(
        ctx("team"), hub(scheme, config_map("c")), CreateOptions()
    )
    namespaces.delete(ctx(""), "team", DeleteOptions())

    def gone() -> bool:
        try:
            namespaces.get(ctx(""), "team")
        except NotFound:
            return True
        return False

    assert wait_for(gone, timeout=8.0)
    assert on_etcd.store("", "configmaps").list(ctx("team"), ListOptions()).items == []
