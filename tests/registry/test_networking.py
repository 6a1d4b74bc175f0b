"""networking.k8s.io Ingress through the generic store: generation, and the status subresource
of Kubernetes' ingress strategy."""

from __future__ import annotations

from typing import Any

import pytest

from kstore.api.scheme import Scheme
from kstore.errors import Invalid
from kstore.registry.interface import CreateOptions, UpdateOptions
from kstore.registry.registry import StoreRegistry
from tests.registry.objects import changed, ctx, hub

NETWORKING = "networking.k8s.io/v1"
STATUS = UpdateOptions(subresource="status")
LOAD_BALANCER = {"loadBalancer": {"ingress": [{"ip": "192.0.2.10"}]}}


def _ingress() -> dict[str, Any]:
    backend = {"service": {"name": "web", "port": {"number": 80}}}
    return {
        "apiVersion": NETWORKING,
        "kind": "Ingress",
        "metadata": {"name": "web"},
        "spec": {
            "rules": [
                {
                    "host": "www.example.com",
                    "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend}]},
                }
            ]
        },
        "status": LOAD_BALANCER,
    }


def _create(registry: StoreRegistry, scheme: Scheme) -> dict[str, Any]:
    store = registry.store("networking.k8s.io", "ingresses")
    return store.create(ctx("default", NETWORKING), hub(scheme, _ingress()), CreateOptions()).object


def test_create_starts_generation_at_one_and_clears_status(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    ingress = _create(registry, scheme)
    assert ingress["metadata"]["generation"] == 1
    assert ingress["status"] == {}


def test_generation_follows_the_spec_and_status_writes_keep_it(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    _create(registry, scheme)
    store = registry.store("networking.k8s.io", "ingresses")
    request = ctx("default", NETWORKING)
    relabelled = store.update(
        request, "web", changed(lambda o: o["metadata"].update(labels={"a": "b"})), UpdateOptions()
    ).object
    assert relabelled["metadata"]["generation"] == 1
    updated = store.update(
        request,
        "web",
        changed(lambda o: o["spec"].update(ingressClassName="nginx")),
        UpdateOptions(),
    ).object
    assert updated["metadata"]["generation"] == 2

    def set_status(o: dict[str, Any]) -> None:
        o["status"] = LOAD_BALANCER
        o["spec"]["ingressClassName"] = "other"  # ignored by a status write

    stored = store.update(request, "web", changed(set_status), STATUS).object
    assert stored["status"] == LOAD_BALANCER
    assert stored["spec"]["ingressClassName"] == "nginx"
    assert stored["metadata"]["generation"] == 2
    # The main resource never writes status.
    again = store.update(
        request, "web", changed(lambda o: o.update(status={})), UpdateOptions()
    ).object
    assert again["status"] == LOAD_BALANCER


def test_status_writes_check_the_load_balancer(registry: StoreRegistry, scheme: Scheme) -> None:
    _create(registry, scheme)
    store = registry.store("networking.k8s.io", "ingresses")
    bad = {"loadBalancer": {"ingress": [{"hostname": "192.0.2.10"}]}}
    with pytest.raises(Invalid) as caught:
        store.update(
            ctx("default", NETWORKING), "web", changed(lambda o: o.update(status=bad)), STATUS
        )
    assert (
        'status.loadBalancer.ingress[0].hostname: Invalid value: "192.0.2.10": must be a DNS '
        "name, not an IP address"
    ) in caught.value.message


def test_an_invalid_spec_is_refused_on_create(registry: StoreRegistry, scheme: Scheme) -> None:
    body = _ingress()
    body["spec"] = {}
    store = registry.store("networking.k8s.io", "ingresses")
    with pytest.raises(Invalid) as caught:
        store.create(ctx("default", NETWORKING), hub(scheme, body), CreateOptions())
    assert "either `defaultBackend` or `rules` must be specified" in caught.value.message


def test_ingress_classes_are_cluster_scoped_and_track_generation(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    store = registry.store("networking.k8s.io", "ingressclasses")
    body = {
        "apiVersion": NETWORKING,
        "kind": "IngressClass",
        "metadata": {"name": "nginx"},
        "spec": {"controller": "k8s.io/ingress-nginx"},
    }
    created = store.create(ctx("", NETWORKING), hub(scheme, body), CreateOptions()).object
    assert "namespace" not in created["metadata"]
    assert created["metadata"]["generation"] == 1
    params = {"kind": "Params", "name": "p", "scope": "Cluster"}
    updated = store.update(
        ctx("", NETWORKING),
        "nginx",
        changed(lambda o: o["spec"].update(parameters=params)),
        UpdateOptions(),
    ).object
    assert updated["metadata"]["generation"] == 2
    with pytest.raises(Invalid) as caught:
        store.update(
            ctx("", NETWORKING),
            "nginx",
            changed(lambda o: o["spec"].update(controller="example.com/other")),
            UpdateOptions(),
        )
    assert 'spec.controller: Invalid value: "example.com/other": field is immutable' in (
        caught.value.message
    )
