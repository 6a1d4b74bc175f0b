"""The autoscaling group at the REST edge: its discovery entry, the HorizontalPodAutoscaler
table kubectl prints, its OpenAPI document and the meta kinds every group version accepts."""

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


def test_discovery_lists_horizontal_pod_autoscalers() -> None:
    discovery = Discovery(builtin_scheme())
    groups = orjson.loads(discovery.aggregated_groups.body)
    autoscaling = next(g for g in groups["items"] if g["metadata"]["name"] == "autoscaling")
    versions = [v["version"] for v in autoscaling["versions"]]
    assert versions == ["v2", "v1"]
    resources = {r["resource"]: r for r in autoscaling["versions"][0]["resources"]}
    assert set(resources) == {"horizontalpodautoscalers"}
    hpas = resources["horizontalpodautoscalers"]
    assert hpas["shortNames"] == ["hpa"]
    assert hpas["categories"] == ["all"]
    assert hpas["scope"] == "Namespaced"
    assert [s["subresource"] for s in hpas["subresources"]] == ["status"]
    legacy = discovery.group("autoscaling")
    assert legacy is not None
    assert orjson.loads(legacy.body)["preferredVersion"]["groupVersion"] == "autoscaling/v2"


@pytest.mark.parametrize("version", ["v2", "v1"])
@pytest.mark.parametrize("kind", ["WatchEvent", "DeleteOptions", "ListOptions", "PatchOptions"])
def test_autoscaling_accepts_the_meta_kinds(version: str, kind: str) -> None:
    assert builtin_scheme().recognizes(GroupVersionKind("autoscaling", version, kind))


def _hpa(metrics: list[Any], current: list[Any], **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "web", "creationTimestamp": _ago(120)},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "maxReplicas": 10,
            "metrics": metrics,
            **spec,
        },
        "status": {"currentReplicas": 3, "desiredReplicas": 3, "currentMetrics": current},
    }


def _resource(name: str, target: dict[str, Any]) -> dict[str, Any]:
    return {"type": "Resource", "resource": {"name": name, "target": target}}


def test_horizontal_pod_autoscaler_table() -> None:
    cpu = _resource("cpu", {"type": "Utilization", "averageUtilization": 80})
    memory = _resource("memory", {"type": "AverageValue", "averageValue": "1Gi"})
    external = {
        "type": "External",
        "external": {
            "metric": {"name": "queue"},
            "target": {"type": "AverageValue", "averageValue": "30"},
        },
    }
    pods = {
        "type": "Pods",
        "pods": {
            "metric": {"name": "qps"},
            "target": {"type": "AverageValue", "averageValue": "5"},
        },
    }
    cpu_now = {
        "type": "Resource",
        "resource": {"name": "cpu", "current": {"averageUtilization": 42}},
    }
    table = build_table(
        [
            _hpa([cpu], [cpu_now], minReplicas=2),
            _hpa([cpu], []),
            _hpa([memory, external, pods], []),
            _hpa([], []),
        ],
        kind="HorizontalPodAutoscaler",
        group="autoscaling",
        meta_version="v1",
    )
    columns = [(c["name"], c["type"], c["priority"]) for c in table["columnDefinitions"]]
    assert columns == [
        ("Name", "string", 0),
        ("Reference", "string", 0),
        ("Targets", "string", 0),
        ("MinPods", "string", 0),
        ("MaxPods", "string", 0),
        ("Replicas", "string", 0),
        ("Age", "string", 0),
    ]
    assert [row["cells"] for row in table["rows"]] == [
        ["web", "Deployment/web", "cpu: 42%/80%", "2", 10, 3, "2m"],
        ["web", "Deployment/web", "cpu: <unknown>/80%", "<unset>", 10, 3, "2m"],
        [
            "web",
            "Deployment/web",
            "memory: <unknown>/1Gi, <unknown>/30 (avg) + 1 more...",
            "<unset>",
            10,
            3,
            "2m",
        ],
        ["web", "Deployment/web", "<none>", "<unset>", 10, 3, "2m"],
    ]


def test_openapi_document_of_autoscaling_v2() -> None:
    openapi = OpenAPIV3(builtin_scheme(), "v1.36.0")
    doc = openapi.document("apis/autoscaling/v2")
    assert doc is not None
    body = orjson.loads(doc.body)
    paths = body["paths"]
    assert (
        "/apis/autoscaling/v2/namespaces/{namespace}/horizontalpodautoscalers/{name}/status"
        in paths
    )
    assert "/apis/autoscaling/v2/horizontalpodautoscalers" in paths
    schemas = body["components"]["schemas"]
    status = schemas["io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerStatus"]
    assert status["required"] == ["desiredReplicas"]
    conditions = status["properties"]["conditions"]
    assert conditions["x-kubernetes-patch-merge-key"] == "type"
    assert conditions["x-kubernetes-list-type"] == "map"
    spec = schemas["io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerSpec"]
    assert sorted(spec["required"]) == ["maxReplicas", "scaleTargetRef"]


def test_a_v1_autoscaler_prints_as_its_hub_form() -> None:
    v1 = {
        "apiVersion": "autoscaling/v1",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "old", "creationTimestamp": _ago(30)},
        "spec": {
            "scaleTargetRef": {"kind": "Deployment", "name": "old"},
            "minReplicas": 1,
            "maxReplicas": 3,
            "targetCPUUtilizationPercentage": 55,
        },
        "status": {
            "currentReplicas": 1,
            "desiredReplicas": 1,
            "currentCPUUtilizationPercentage": 7,
        },
    }
    table = build_table(
        [v1], kind="HorizontalPodAutoscaler", group="autoscaling", meta_version="v1"
    )
    assert table["rows"][0]["cells"] == ["old", "Deployment/old", "cpu: 7%/55%", "1", 3, 1, "30s"]


def test_openapi_document_of_autoscaling_v1() -> None:
    doc = OpenAPIV3(builtin_scheme(), "v1.36.0").document("apis/autoscaling/v1")
    assert doc is not None
    schemas = orjson.loads(doc.body)["components"]["schemas"]
    status = schemas["io.k8s.api.autoscaling.v1.HorizontalPodAutoscalerStatus"]
    assert status["required"] == ["currentReplicas", "desiredReplicas"]
    spec = schemas["io.k8s.api.autoscaling.v1.HorizontalPodAutoscalerSpec"]
    assert "targetCPUUtilizationPercentage" in spec["properties"]
