"""The Available condition of APIServices, as kube-aggregator's availability controllers write
it when no backend answers: the decision for each case, and the loop over a real registry
(which follows Services appearing and disappearing)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kstore.api.kinds import builtin_scheme
from kstore.controllers.apiservice_controller import APIServiceAvailabilityController, availability
from kstore.registry.interface import CreateOptions, DeleteOptions, UpdateOptions
from kstore.registry.registry import StoreRegistry
from kstore.storage.lmdb import LmdbBackend, LmdbConfig
from tests.registry.conftest import make_registry
from tests.registry.objects import changed, ctx, hub, wait_for


def _api_service(local: bool = False, port: int | None = None) -> dict[str, Any]:
    ref: dict[str, Any] | None = {"namespace": "kube-system", "name": "metrics-server"}
    if local:
        ref = None
    elif port is not None:
        assert ref is not None
        ref["port"] = port
    return {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": "v1beta1.metrics.k8s.io"},
        "spec": {
            "group": "metrics.k8s.io",
            "version": "v1beta1",
            "groupPriorityMinimum": 100,
            "versionPriority": 100,
            "service": ref,
        },
    }


def _service(port: int = 443, name: str = "https", kind: str = "ClusterIP") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "metrics-server", "namespace": "kube-system"},
        "spec": {"type": kind, "ports": [{"name": name, "port": port}]},
    }


def _slice(ready: bool | None, port_name: str = "https") -> dict[str, Any]:
    conditions = {} if ready is None else {"ready": ready}
    return {
        "metadata": {"labels": {"kubernetes.io/service-name": "metrics-server"}},
        "endpoints": [{"addresses": ["10.0.0.9"], "conditions": conditions}],
        "ports": [{"name": port_name, "port": 10250}],
    }


def test_a_local_api_service_is_available() -> None:
    assert availability(_api_service(local=True), None, None) == {
        "type": "Available",
        "status": "True",
        "reason": "Local",
        "message": "Local APIServices are always available",
    }


@pytest.mark.parametrize(
    ("service", "slices", "reason", "message"),
    [
        (None, None, "ServiceNotFound", 'service/metrics-server in "kube-system" is not present'),
        (
            _service(port=8443),
            None,
            "ServicePortError",
            'service/metrics-server in "kube-system" is not listening on port 443',
        ),
        (
            _service(),
            None,
            "EndpointsNotFound",
            'cannot find endpointslices for service/metrics-server in "kube-system"',
        ),
        (
            _service(),
            [_slice(False)],
            "MissingEndpoints",
            'endpointslices for service/metrics-server in "kube-system" have no addresses '
            'with port name "https"',
        ),
        (
            _service(),
            [_slice(True, port_name="other")],
            "MissingEndpoints",
            'endpointslices for service/metrics-server in "kube-system" have no addresses '
            'with port name "https"',
        ),
        (
            _service(),
            [_slice(None)],
            "FailedDiscoveryCheck",
            "failing or missing response from "
            "https://metrics-server.kube-system.svc:443/apis/metrics.k8s.io/v1beta1: "
            "kstore proxies no aggregated APIs",
        ),
        (
            _service(port=1, kind="ExternalName"),
            None,
            "FailedDiscoveryCheck",
            "failing or missing response from "
            "https://metrics-server.kube-system.svc:443/apis/metrics.k8s.io/v1beta1: "
            "kstore proxies no aggregated APIs",
        ),
    ],
)
def test_a_service_backed_api_service_is_unavailable_for_the_first_failed_check(
    service: Any, slices: Any, reason: str, message: str
) -> None:
    got = availability(_api_service(port=443), service, slices)
    assert got == {"type": "Available", "status": "False", "reason": reason, "message": message}


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[StoreRegistry]:
    backend = LmdbBackend(
        LmdbConfig(path=tmp_path / "lmdb", durable=False, compaction_interval_s=0)
    )
    r = make_registry(builtin_scheme(), backend)
    try:
        yield r
    finally:
        r.close()
        backend.close()


def _condition(registry: StoreRegistry) -> dict[str, Any]:
    obj = registry.store("apiregistration.k8s.io", "apiservices").get(
        ctx("", "apiregistration.k8s.io/v1"), "v1beta1.metrics.k8s.io"
    )
    [condition] = obj["status"]["conditions"]
    return dict(condition)


def test_the_loop_follows_the_service_it_names(registry: StoreRegistry) -> None:
    scheme = builtin_scheme()
    api_services = registry.store("apiregistration.k8s.io", "apiservices")
    api_services.create(
        ctx("", "apiregistration.k8s.io/v1"), hub(scheme, _api_service()), CreateOptions()
    )
    controller = APIServiceAvailabilityController(registry, resync_seconds=60)
    controller.start()
    try:
        # start() brings the condition up to date before it returns.
        first = _condition(registry)
        assert (first["status"], first["reason"]) == ("False", "ServiceNotFound")
        stored = api_services.get(ctx("", "apiregistration.k8s.io/v1"), "v1beta1.metrics.k8s.io")
        writers = [
            (m["manager"], m.get("subresource")) for m in stored["metadata"]["managedFields"]
        ]
        assert ("kube-apiserver", "status") in writers
        services = registry.store("", "services")
        services.create(ctx("kube-system"), hub(scheme, _service()), CreateOptions())
        assert wait_for(lambda: _condition(registry)["reason"] == "EndpointsNotFound")
        # Still False: the transition time stays.
        assert _condition(registry)["lastTransitionTime"] == first["lastTransitionTime"]
        services.delete(ctx("kube-system"), "metrics-server", DeleteOptions())
        assert wait_for(lambda: _condition(registry)["reason"] == "ServiceNotFound")

        # A status write that claims availability is corrected.
        def claim(o: dict[str, Any]) -> None:
            o["status"] = {"conditions": [{"type": "Available", "status": "True"}]}

        api_services.update(
            ctx("", "apiregistration.k8s.io/v1"),
            "v1beta1.metrics.k8s.io",
            changed(claim),
            UpdateOptions(subresource="status"),
        )
        assert wait_for(lambda: _condition(registry).get("reason") == "ServiceNotFound")
    finally:
        controller.stop()
