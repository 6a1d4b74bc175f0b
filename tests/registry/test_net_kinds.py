"""NetworkPolicy, PriorityClass, RuntimeClass and EndpointSlice through the generic store:
scope, generation as their Kubernetes strategies keep it, the system priority classes created
at start and kept from deletion, EndpointSlice's deprecated topology."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kstore.api.scheme import Scheme
from kstore.errors import Forbidden, Invalid, NotFound
from kstore.registry.interface import (
    CreateOptions,
    DeleteOptions,
    RequestContext,
    UpdateOptions,
)
from kstore.registry.registry import StoreRegistry
from kstore.storage.lmdb import LmdbBackend, LmdbConfig
from tests.registry.conftest import make_registry
from tests.registry.objects import changed, ctx, hub

NETWORKING = "networking.k8s.io/v1"
SCHEDULING = "scheduling.k8s.io/v1"
NODE = "node.k8s.io/v1"
DISCOVERY = "discovery.k8s.io/v1"
SYSTEM = ("system-node-critical", "system-cluster-critical")


def _policy() -> dict[str, Any]:
    return {
        "apiVersion": NETWORKING,
        "kind": "NetworkPolicy",
        "metadata": {"name": "deny-all"},
        "spec": {"podSelector": {}},
    }


def test_network_policies_are_namespaced_defaulted_and_track_generation(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    store = registry.store("networking.k8s.io", "networkpolicies")
    created = store.create(ctx("default", NETWORKING), hub(scheme, _policy()), CreateOptions())
    obj = created.object
    assert obj["metadata"]["namespace"] == "default"
    assert obj["metadata"]["generation"] == 1
    assert obj["spec"] == {"podSelector": {}, "policyTypes": ["Ingress"]}
    assert "status" not in obj
    relabelled = store.update(
        ctx("default", NETWORKING),
        "deny-all",
        changed(lambda o: o["metadata"].update(labels={"a": "b"})),
        UpdateOptions(),
    ).object
    assert relabelled["metadata"]["generation"] == 1
    rules = [{"from": [{"ipBlock": {"cidr": "10.0.0.0/8"}}]}]
    updated = store.update(
        ctx("default", NETWORKING),
        "deny-all",
        changed(lambda o: o["spec"].update(ingress=rules)),
        UpdateOptions(),
    ).object
    assert updated["metadata"]["generation"] == 2
    with pytest.raises(Invalid) as caught:
        store.update(
            ctx("default", NETWORKING),
            "deny-all",
            changed(lambda o: o["spec"].update(policyTypes=["Up"])),
            UpdateOptions(),
        )
    assert 'spec.policyTypes[0]: Unsupported value: "Up"' in caught.value.message


def test_the_system_priority_classes_exist_and_cannot_be_deleted(
    registry: StoreRegistry,
) -> None:
    store = registry.store("scheduling.k8s.io", "priorityclasses")
    for name, value in zip(SYSTEM, (2000001000, 2000000000), strict=True):
        obj = store.get(ctx("", SCHEDULING), name)
        assert obj["value"] == value
        assert obj["preemptionPolicy"] == "PreemptLowerPriority"
        assert obj["metadata"]["generation"] == 1
        assert "globalDefault" not in obj
        with pytest.raises(Forbidden) as caught:
            store.delete(ctx("", SCHEDULING), name, DeleteOptions())
        assert caught.value.message == (
            f'priorityclasses.scheduling.k8s.io "{name}" is forbidden: this is a system '
            "priority class and cannot be deleted"
        )
        assert store.get(ctx("", SCHEDULING), name)["value"] == value


def test_system_classes_are_created_once_and_kept_as_they_are(
    scheme: Scheme, backend: LmdbBackend
) -> None:
    first = make_registry(scheme, backend)
    try:
        store = first.store("scheduling.k8s.io", "priorityclasses")
        described = store.update(
            ctx("", SCHEDULING),
            "system-node-critical",
            changed(lambda o: o.update(description="ours")),
            UpdateOptions(),
        ).object
        rv = described["metadata"]["resourceVersion"]
    finally:
        first.close()
    second = make_registry(scheme, backend)
    try:
        store = second.store("scheduling.k8s.io", "priorityclasses")
        again = store.get(ctx("", SCHEDULING), "system-node-critical")
        assert (again["description"], again["metadata"]["resourceVersion"]) == ("ours", rv)
    finally:
        second.close()


def test_system_classes_can_be_left_out(scheme: Scheme, tmp_path: Path) -> None:
    backend = LmdbBackend(LmdbConfig(path=tmp_path / "bare", durable=False))
    bare = make_registry(scheme, backend, system_priority_classes=False)
    try:
        store = bare.store("scheduling.k8s.io", "priorityclasses")
        with pytest.raises(NotFound):
            store.get(ctx("", SCHEDULING), "system-cluster-critical")
    finally:
        bare.close()
        backend.close()


def test_user_priority_classes_keep_generation_one(registry: StoreRegistry, scheme: Scheme) -> None:
    store = registry.store("scheduling.k8s.io", "priorityclasses")
    body = {
        "apiVersion": SCHEDULING,
        "kind": "PriorityClass",
        "metadata": {"name": "batch-low"},
        "value": -10,
    }
    created = store.create(ctx("", SCHEDULING), hub(scheme, body), CreateOptions()).object
    assert (created["metadata"]["generation"], created["preemptionPolicy"]) == (
        1,
        "PreemptLowerPriority",
    )
    updated = store.update(
        ctx("", SCHEDULING),
        "batch-low",
        changed(lambda o: o.update(description="low", globalDefault=True)),
        UpdateOptions(),
    ).object
    assert updated["metadata"]["generation"] == 1
    with pytest.raises(Invalid) as caught:
        store.update(
            ctx("", SCHEDULING), "batch-low", changed(lambda o: o.update(value=5)), UpdateOptions()
        )
    assert "value: Forbidden: may not be changed in an update." in caught.value.message
    store.delete(ctx("", SCHEDULING), "batch-low", DeleteOptions())
    with pytest.raises(NotFound):
        store.get(ctx("", SCHEDULING), "batch-low")


def test_runtime_classes_have_no_generation_and_an_immutable_handler(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    store = registry.store("node.k8s.io", "runtimeclasses")
    assert store.strategy.allow_create_on_update
    body = {"apiVersion": NODE, "kind": "RuntimeClass", "metadata": {"name": "gvisor"}}
    with pytest.raises(Invalid) as caught:
        store.create(ctx("", NODE), hub(scheme, body), CreateOptions())
    assert 'handler: Invalid value: ""' in caught.value.message
    body["handler"] = "runsc"
    created = store.create(ctx("", NODE), hub(scheme, body), CreateOptions()).object
    assert "namespace" not in created["metadata"]
    assert "generation" not in created["metadata"]
    with pytest.raises(Invalid) as immutable:
        store.update(
            ctx("", NODE), "gvisor", changed(lambda o: o.update(handler="kata")), UpdateOptions()
        )
    assert 'handler: Invalid value: "kata": field is immutable' in immutable.value.message
    assert store.get(ctx("", NODE), "gvisor")["handler"] == "runsc"


def _endpoint_slice() -> dict[str, Any]:
    return {
        "apiVersion": DISCOVERY,
        "kind": "EndpointSlice",
        "metadata": {"name": "web-1", "labels": {"kubernetes.io/service-name": "web"}},
        "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.1.0.5"], "deprecatedTopology": {"rack": "r1"}}],
        "ports": [{"port": 80}],
    }


def test_endpoint_slices_generation_and_deprecated_topology(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    store = registry.store("discovery.k8s.io", "endpointslices")
    created = store.create(
        ctx("default", DISCOVERY), hub(scheme, _endpoint_slice()), CreateOptions()
    ).object
    assert created["metadata"]["generation"] == 1
    # Not writable through v1: dropped on create.
    assert created["endpoints"] == [{"addresses": ["10.1.0.5"]}]
    assert created["ports"] == [{"port": 80, "name": "", "protocol": "TCP"}]
    annotated = store.update(
        ctx("default", DISCOVERY),
        "web-1",
        changed(lambda o: o["metadata"].update(annotations={"a": "b"})),
        UpdateOptions(),
    ).object
    assert annotated["metadata"]["generation"] == 1
    relabelled = store.update(
        ctx("default", DISCOVERY),
        "web-1",
        changed(lambda o: o["metadata"]["labels"].update(extra="x")),
        UpdateOptions(),
    ).object
    assert relabelled["metadata"]["generation"] == 2
    moved = store.update(
        ctx("default", DISCOVERY),
        "web-1",
        changed(lambda o: o.update(endpoints=[{"addresses": ["10.1.0.6"], "zone": "a"}])),
        UpdateOptions(),
    ).object
    assert moved["metadata"]["generation"] == 3
    with pytest.raises(Invalid) as caught:
        store.update(
            ctx("default", DISCOVERY),
            "web-1",
            changed(lambda o: o.update(addressType="IPv6")),
            UpdateOptions(),
        )
    assert 'addressType: Invalid value: "IPv6": field is immutable' in caught.value.message


def test_endpoint_slice_topology_is_kept_by_writes_that_speak_no_version(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    store = registry.store("discovery.k8s.io", "endpointslices")
    internal = RequestContext(namespace="default")
    created = store.create(internal, hub(scheme, _endpoint_slice()), CreateOptions()).object
    assert created["endpoints"][0]["deprecatedTopology"] == {"rack": "r1"}
    # A v1 update that leaves the endpoints as they are keeps it too.
    kept = store.update(
        ctx("default", DISCOVERY),
        "web-1",
        changed(lambda o: o.update(ports=[{"port": 81, "name": "", "protocol": "TCP"}])),
        UpdateOptions(),
    ).object
    assert kept["endpoints"][0]["deprecatedTopology"] == {"rack": "r1"}
