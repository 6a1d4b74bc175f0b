"""apiregistration.k8s.io APIService through the generic store: cluster scope, its key, the
local condition set on create, and what spec and status writes keep."""

from __future__ import annotations

from typing import Any

import pytest

from kstore.api.scheme import Scheme
from kstore.errors import Invalid
from kstore.registry.interface import CreateOptions, UpdateOptions
from kstore.registry.registry import StoreRegistry, resource_prefix
from tests.registry.objects import changed, ctx, hub

API = "apiregistration.k8s.io/v1"


def _api_service(name: str = "v1beta1.metrics.k8s.io", *, local: bool = False) -> dict[str, Any]:
    group, version = name.split(".", 1)[1], name.split(".", 1)[0]
    spec: dict[str, Any] = {
        "group": group,
        "version": version,
        "groupPriorityMinimum": 100,
        "versionPriority": 100,
        "service": None if local else {"namespace": "kube-system", "name": "metrics-server"},
    }
    return {"apiVersion": API, "kind": "APIService", "metadata": {"name": name}, "spec": spec}


def _create(registry: StoreRegistry, scheme: Scheme, obj: dict[str, Any]) -> dict[str, Any]:
    store = registry.store("apiregistration.k8s.io", "apiservices")
    return store.create(ctx("", API), hub(scheme, obj), CreateOptions()).object


def test_a_service_backed_api_service_starts_without_conditions_and_port_443(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    obj = _create(registry, scheme, _api_service())
    assert "namespace" not in obj["metadata"]
    assert "generation" not in obj["metadata"]
    assert obj["spec"]["service"]["port"] == 443
    assert obj["status"] == {}
    # Kept under its group, as kube-aggregator's storage keeps it.
    assert resource_prefix("apiregistration.k8s.io", "apiservices") == (
        "/apiregistration.k8s.io/apiservices"
    )


def test_a_local_api_service_is_available_at_once(registry: StoreRegistry, scheme: Scheme) -> None:
    obj = _create(registry, scheme, _api_service("v1.example.com", local=True))
    [condition] = obj["status"]["conditions"]
    assert condition["lastTransitionTime"]
    assert {k: v for k, v in condition.items() if k != "lastTransitionTime"} == {
        "type": "Available",
        "status": "True",
        "reason": "Local",
        "message": "Local APIServices are always available",
    }


def test_spec_writes_keep_status_and_status_writes_keep_spec_and_labels(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    _create(registry, scheme, _api_service())
    store = registry.store("apiregistration.k8s.io", "apiservices")
    request = ctx("", API)
    name = "v1beta1.metrics.k8s.io"
    condition = {"type": "Available", "status": "False", "reason": "ServiceNotFound"}

    def set_status(o: dict[str, Any]) -> None:
        o["status"] = {"conditions": [condition]}
        o["spec"]["versionPriority"] = 7
        o["metadata"]["labels"] = {"changed": "yes"}

    written = store.update(
        request, name, changed(set_status), UpdateOptions(subresource="status")
    ).object
    assert written["status"] == {"conditions": [condition]}
    assert written["spec"]["versionPriority"] == 100
    assert "labels" not in written["metadata"]

    def set_spec(o: dict[str, Any]) -> None:
        o["status"] = {}
        o["spec"]["versionPriority"] = 7

    updated = store.update(request, name, changed(set_spec), UpdateOptions()).object
    assert updated["spec"]["versionPriority"] == 7
    assert updated["status"] == {"conditions": [condition]}
    assert "generation" not in updated["metadata"]


def test_a_mismatched_name_is_refused(registry: StoreRegistry, scheme: Scheme) -> None:
    obj = _api_service()
    obj["metadata"]["name"] = "metrics"
    with pytest.raises(Invalid) as caught:
        _create(registry, scheme, obj)
    assert 'must be `spec.version+"."+spec.group`: "v1beta1.metrics.k8s.io"' in (
        caught.value.message
    )
