"""The policy group at the REST edge: its discovery entry, the PodDisruptionBudget table kubectl
prints, its OpenAPI document and the meta kinds every group version accepts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pytest

from kstore.api.gvk import GroupVersionKind
from kstore.api.kinds import builtin_scheme
from kstore.server.discovery import Discovery
from kstore.server.openapi import OpenAPIV3
from kstore.server.table import build_table


def _ago(seconds: int) -> str:
    return (datetime.now(UTC) - timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_discovery_lists_pod_disruption_budgets() -> None:
    discovery = Discovery(builtin_scheme())
    groups = orjson.loads(discovery.aggregated_groups.body)
    policy = next(g for g in groups["items"] if g["metadata"]["name"] == "policy")
    assert [v["version"] for v in policy["versions"]] == ["v1"]
    resources = {r["resource"]: r for r in policy["versions"][0]["resources"]}
    assert set(resources) == {"poddisruptionbudgets"}
    pdbs = resources["poddisruptionbudgets"]
    assert pdbs["shortNames"] == ["pdb"]
    assert "categories" not in pdbs
    assert pdbs["scope"] == "Namespaced"
    assert [s["subresource"] for s in pdbs["subresources"]] == ["status"]
    legacy = discovery.group("policy")
    assert legacy is not None
    assert orjson.loads(legacy.body)["preferredVersion"]["groupVersion"] == "policy/v1"


@pytest.mark.parametrize("kind", ["WatchEvent", "DeleteOptions", "ListOptions", "PatchOptions"])
def test_policy_v1_accepts_the_meta_kinds(kind: str) -> None:
    assert builtin_scheme().recognizes(GroupVersionKind("policy", "v1", kind))


def _pdb(spec: dict[str, Any], allowed: int) -> dict[str, Any]:
    return {
        "metadata": {"name": "web", "creationTimestamp": _ago(300)},
        "spec": spec,
        "status": {"disruptionsAllowed": allowed},
    }


def test_pod_disruption_budget_table() -> None:
    table = build_table(
        [_pdb({"minAvailable": 2}, 1), _pdb({"maxUnavailable": "25%"}, 0), _pdb({}, 0)],
        kind="PodDisruptionBudget",
        group="policy",
        meta_version="v1",
    )
    columns = [(c["name"], c["type"]) for c in table["columnDefinitions"]]
    assert columns == [
        ("Name", "string"),
        ("Min Available", "string"),
        ("Max Unavailable", "string"),
        ("Allowed Disruptions", "integer"),
        ("Age", "string"),
    ]
    assert [row["cells"] for row in table["rows"]] == [
        ["web", "2", "N/A", 1, "5m"],
        ["web", "N/A", "25%", 0, "5m"],
        ["web", "N/A", "N/A", 0, "5m"],
    ]


def test_openapi_document_of_policy_v1() -> None:
    openapi = OpenAPIV3(builtin_scheme(), "v1.36.0")
    doc = openapi.document("apis/policy/v1")
    assert doc is not None
    body = orjson.loads(doc.body)
    paths = body["paths"]
    assert "/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets/{name}/status" in paths
    assert "/apis/policy/v1/poddisruptionbudgets" in paths
    schemas = body["components"]["schemas"]
    status = schemas["io.k8s.api.policy.v1.PodDisruptionBudgetStatus"]
    # The counters have no omitempty, yet are +optional: not required.
    assert "required" not in status
    conditions = status["properties"]["conditions"]
    assert conditions["x-kubernetes-patch-merge-key"] == "type"
    assert conditions["x-kubernetes-list-type"] == "map"
    assert "required" not in schemas["io.k8s.api.policy.v1.PodDisruptionBudgetSpec"]
