"""The networking.k8s.io group at the REST edge: its discovery entry, the Ingress table kubectl
prints and the meta kinds every group version accepts."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from kstore.api.gvk import GroupVersionKind
from kstore.api.kinds import builtin_scheme
from kstore.server.discovery import Discovery
from kstore.server.table import build_table


def test_discovery_lists_ingresses() -> None:
    discovery = Discovery(builtin_scheme())
    groups = orjson.loads(discovery.aggregated_groups.body)
    group = next(g for g in groups["items"] if g["metadata"]["name"] == "networking.k8s.io")
    assert [v["version"] for v in group["versions"]] == ["v1"]
    resources = {r["resource"]: r for r in group["versions"][0]["resources"]}
    ingresses = resources["ingresses"]
    assert ingresses["scope"] == "Namespaced"
    assert ingresses["shortNames"] == ["ing"]
    assert "categories" not in ingresses
    assert [s["subresource"] for s in ingresses["subresources"]] == ["status"]


@pytest.mark.parametrize("kind", ["WatchEvent", "DeleteOptions", "ListOptions"])
def test_networking_v1_accepts_the_meta_kinds(kind: str) -> None:
    assert builtin_scheme().recognizes(GroupVersionKind("networking.k8s.io", "v1", kind))


def _cells(spec: dict[str, Any], status: dict[str, Any] | None = None) -> list[Any]:
    obj = {"metadata": {"name": "web"}, "spec": spec, "status": status or {}}
    table = build_table([obj], kind="Ingress", group="networking.k8s.io", meta_version="v1")
    cells: list[Any] = table["rows"][0]["cells"]
    return cells[:5]


def test_ingress_table_columns() -> None:
    table = build_table([], kind="Ingress", group="networking.k8s.io", meta_version="v1")
    columns = [(c["name"], c["priority"]) for c in table["columnDefinitions"]]
    assert columns == [
        ("Name", 0),
        ("Class", 0),
        ("Hosts", 0),
        ("Address", 0),
        ("Ports", 0),
        ("Age", 0),
    ]


def test_ingress_rows_as_kubectl_prints_them() -> None:
    assert _cells({"defaultBackend": {}}) == ["web", "<none>", "*", "", "80"]
    hosts = [{"host": h} for h in ("a.example.com", "", "b.example.com")]
    spec = {"ingressClassName": "nginx", "rules": hosts, "tls": [{"secretName": "t"}]}
    lb = {"loadBalancer": {"ingress": [{"hostname": "lb.example.com"}, {"ip": "192.0.2.1"}]}}
    assert _cells(spec, lb) == [
        "web",
        "nginx",
        "a.example.com,b.example.com",
        "192.0.2.1,lb.example.com",
        "80, 443",
    ]
    many = {"rules": [{"host": f"h{i}.example.com"} for i in range(5)]}
    assert _cells(many)[2] == "h0.example.com,h1.example.com,h2.example.com + 2 more..."


def test_discovery_lists_ingress_classes_as_cluster_scoped() -> None:
    discovery = Discovery(builtin_scheme())
    groups = orjson.loads(discovery.aggregated_groups.body)
    group = next(g for g in groups["items"] if g["metadata"]["name"] == "networking.k8s.io")
    resources = {r["resource"]: r for r in group["versions"][0]["resources"]}
    assert resources["ingressclasses"]["scope"] == "Cluster"
    assert (
        "subresources" not in resources["ingressclasses"]
        or not (resources["ingressclasses"]["subresources"])
    )


def test_ingress_class_rows_as_kubectl_prints_them() -> None:
    def row(spec: dict[str, Any]) -> list[Any]:
        obj = {"metadata": {"name": "nginx"}, "spec": spec}
        table = build_table(
            [obj], kind="IngressClass", group="networking.k8s.io", meta_version="v1"
        )
        assert [c["name"] for c in table["columnDefinitions"]] == [
            "Name",
            "Controller",
            "Parameters",
            "Age",
        ]
        cells: list[Any] = table["rows"][0]["cells"]
        return cells[:3]

    assert row({"controller": "k8s.io/ingress-nginx"}) == [
        "nginx",
        "k8s.io/ingress-nginx",
        "<none>",
    ]
    params = {"apiGroup": "k8s.example.com", "kind": "Params", "name": "p", "scope": "Cluster"}
    assert row({"controller": "a.io/b", "parameters": params})[2] == "Params.k8s.example.com/p"
    del params["apiGroup"]
    assert row({"controller": "a.io/b", "parameters": params})[2] == "Params/p"
