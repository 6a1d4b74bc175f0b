"""Two servers on one etcd, each running the APIService availability controller: they agree on
the condition, and once it is written neither writes again (no write ping-pong)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from kstore.api.kinds import builtin_scheme
from kstore.controllers.apiservice_controller import APIServiceAvailabilityController
from kstore.registry.interface import CreateOptions, RequestContext
from kstore.registry.registry import RegistryConfig, StoreRegistry, build_registry
from kstore.storage.etcd import EtcdBackend
from kstore.storage.interface import EventType, ListOptions
from kstore.testing.etcd_cluster import EtcdCluster
from tests.conftest_etcd import make_backend
from tests.registry.objects import ctx, hub, wait_for

pytestmark = pytest.mark.etcd

_NAME = "v1beta1.metrics.k8s.io"
_API = "apiregistration.k8s.io/v1"


@pytest.fixture
def servers(etcd_single: EtcdCluster, etcd_backend: EtcdBackend) -> Iterator[list[StoreRegistry]]:
    other = make_backend(etcd_single, prefix=etcd_backend.config.prefix)
    registries = [
        build_registry(builtin_scheme(), backend, RegistryConfig())
        for backend in (etcd_backend, other)
    ]
    controllers = [APIServiceAvailabilityController(r, resync_seconds=0.5) for r in registries]
    for controller in controllers:
        controller.start()
    try:
        yield registries
    finally:
        for controller in controllers:
            controller.stop()
        for registry in registries:
            registry.close()
        other.close()


def _api_service() -> dict[str, Any]:
    return {
        "apiVersion": _API,
        "kind": "APIService",
        "metadata": {"name": _NAME},
        "spec": {
            "group": "metrics.k8s.io",
            "version": "v1beta1",
            "groupPriorityMinimum": 100,
            "versionPriority": 100,
            "service": {"namespace": "kube-system", "name": "metrics-server"},
        },
    }


def _reason(registry: StoreRegistry) -> str:
    obj = registry.store("apiregistration.k8s.io", "apiservices").get(ctx("", _API), _NAME)
    conditions = obj["status"].get("conditions") or [{}]
    return str(conditions[0].get("reason", ""))


def test_two_servers_agree_on_the_condition_and_stop_writing(
    servers: list[StoreRegistry],
) -> None:
    first, second = servers
    scheme = builtin_scheme()
    store = first.store("apiregistration.k8s.io", "apiservices")
    created = store.create(ctx("", _API), hub(scheme, _api_service()), CreateOptions()).object
    watcher = second.store("apiregistration.k8s.io", "apiservices").watch(
        RequestContext(),
        ListOptions(resource_version=created["metadata"]["resourceVersion"]),
    )
    try:
        assert wait_for(lambda: _reason(second) == "ServiceNotFound", timeout=10)
        service = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "metrics-server", "namespace": "kube-system"},
            "spec": {"ports": [{"name": "https", "port": 443}]},
        }
        second.store("", "services").create(
            ctx("kube-system"), hub(scheme, service), CreateOptions()
        )
        assert wait_for(lambda: _reason(first) == "EndpointsNotFound", timeout=10)
        # Several resyncs of both servers later, nothing more has been written.
        time.sleep(2.0)
        writes: list[str] = []
        event = watcher.next(timeout=0.5)
        while event is not None:
            assert event.type is EventType.MODIFIED
            writes.append(str(event.object["status"]["conditions"][0]["reason"]))
            event = watcher.next(timeout=0.5)
    finally:
        watcher.stop()
    # One write per change of the condition; any redundant write repeats the same answer.
    assert writes[0] == "ServiceNotFound"
    assert writes[-1] == "EndpointsNotFound"
    assert len(writes) <= 4, writes
    assert _reason(first) == _reason(second) == "EndpointsNotFound"
