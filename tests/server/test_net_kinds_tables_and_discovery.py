"""NetworkPolicy, PriorityClass, RuntimeClass and EndpointSlice at the REST edge: discovery
entries (scope, short names, no category, no subresource), the tables kubectl prints, the meta
kinds of their group versions."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from kstore.api.gvk import GroupVersionKind
from kstore.api.kinds import builtin_scheme
from kstore.server.discovery import Discovery
from kstore.server.table import build_table


def _resources(group_name: str) -> dict[str, Any]:
    groups = orjson.loads(Discovery(builtin_scheme()).aggregated_groups.body)
    group = next(g for g in groups["items"] if g["metadata"]["name"] == group_name)
    assert [v["version"] for v in group["versions"]] == ["v1"]
    return {r["resource"]: r for r in group["versions"][0]["resources"]}


@pytest.mark.parametrize(
    ("group", "resource", "scope", "short_names"),
    [
        ("networking.k8s.io", "networkpolicies", "Namespaced", ["netpol"]),
        ("scheduling.k8s.io", "priorityclasses", "Cluster", ["pc"]),
        ("node.k8s.io", "runtimeclasses", "Cluster", None),
        ("discovery.k8s.io", "endpointslices", "Namespaced", None),
    ],
)
def test_discovery(group: str, resource: str, scope: str, short_names: list[str] | None) -> None:
    entry = _resources(group)[resource]
    assert entry["scope"] == scope
    assert entry.get("shortNames") == short_names
    assert "categories" not in entry
    assert not entry.get("subresources")


@pytest.mark.parametrize("group", ["scheduling.k8s.io", "node.k8s.io", "discovery.k8s.io"])
@pytest.mark.parametrize("kind", ["WatchEvent", "DeleteOptions", "ListOptions"])
def test_the_new_group_versions_accept_the_meta_kinds(group: str, kind: str) -> None:
    assert builtin_scheme().recognizes(GroupVersionKind(group, "v1", kind))


def _table(kind: str, group: str, obj: dict[str, Any]) -> tuple[list[str], list[Any]]:
    obj = {"metadata": {"name": "x", "creationTimestamp": "2026-01-01T00:00:00Z"}, **obj}
    table = build_table([obj], kind=kind, group=group, meta_version="v1")
    names = [c["name"] for c in table["columnDefinitions"]]
    return names, table["rows"][0]["cells"]


def test_network_policy_rows() -> None:
    selector = {
        "matchLabels": {"app": "web"},
        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}],
    }
    names, cells = _table("NetworkPolicy", "networking.k8s.io", {"spec": {"podSelector": selector}})
    assert names == ["Name", "Pod-Selector", "Age"]
    assert cells[:2] == ["x", "app=web,tier in (a,b)"]
    assert _table("NetworkPolicy", "networking.k8s.io", {"spec": {"podSelector": {}}})[1][1] == (
        "<none>"
    )


def test_priority_class_rows() -> None:
    names, cells = _table(
        "PriorityClass", "scheduling.k8s.io", {"value": 100, "preemptionPolicy": "Never"}
    )
    assert names == ["Name", "Value", "Global-Default", "Age", "PreemptionPolicy"]
    assert [cells[i] for i in (0, 1, 2, 4)] == ["x", 100, False, "Never"]
    _, unset = _table("PriorityClass", "scheduling.k8s.io", {"value": 0, "globalDefault": True})
    assert [unset[i] for i in (1, 2, 4)] == [0, True, "<unset>"]


def test_runtime_class_rows() -> None:
    names, cells = _table("RuntimeClass", "node.k8s.io", {"handler": "runsc"})
    assert names == ["Name", "Handler", "Age"]
    assert cells[:2] == ["x", "runsc"]


def test_endpoint_slice_rows() -> None:
    endpoints = [{"addresses": ["10.0.0.1", "10.0.0.2"]}, {"addresses": ["10.0.0.3", "10.0.0.4"]}]
    ports = [{"port": 80}, {"name": "dns"}, {}, {"port": 9}]
    names, cells = _table(
        "EndpointSlice",
        "discovery.k8s.io",
        {"addressType": "IPv4", "endpoints": endpoints, "ports": ports},
    )
    assert names == ["Name", "AddressType", "Ports", "Endpoints", "Age"]
    assert cells[:4] == [
        "x",
        "IPv4",
        "80,dns,* + 1 more...",
        "10.0.0.1,10.0.0.2,10.0.0.3 + 1 more...",
    ]
    _, empty = _table("EndpointSlice", "discovery.k8s.io", {"addressType": "FQDN"})
    assert empty[1:4] == ["FQDN", "<unset>", "<unset>"]
