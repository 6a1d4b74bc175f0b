"""The apiregistration.k8s.io group at the REST edge: its discovery entry, the table kubectl
prints, the OpenAPI document."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from kstore.api.kinds import builtin_scheme
from kstore.server.discovery import Discovery
from kstore.server.openapi import OpenAPIV3
from kstore.server.table import build_table

_PREFIX = "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1"


def test_discovery_lists_api_services_as_cluster_scoped_api_extensions() -> None:
    groups = orjson.loads(Discovery(builtin_scheme()).aggregated_groups.body)
    group = next(g for g in groups["items"] if g["metadata"]["name"] == "apiregistration.k8s.io")
    assert [v["version"] for v in group["versions"]] == ["v1"]
    [resource] = group["versions"][0]["resources"]
    assert resource["resource"] == "apiservices"
    assert resource["scope"] == "Cluster"
    assert resource["categories"] == ["api-extensions"]
    assert "shortNames" not in resource
    assert [s["subresource"] for s in resource["subresources"]] == ["status"]


def test_the_table_names_the_service_and_the_availability() -> None:
    created = (datetime.now(UTC) - timedelta(seconds=90)).strftime("%Y-%m-%dT%H:%M:%SZ")
    remote = {
        "metadata": {"name": "v1beta1.metrics.k8s.io", "creationTimestamp": created},
        "spec": {"service": {"namespace": "kube-system", "name": "metrics-server"}},
        "status": {
            "conditions": [{"type": "Available", "status": "False", "reason": "ServiceNotFound"}]
        },
    }
    local = {
        "metadata": {"name": "v1.example.com", "creationTimestamp": created},
        "spec": {"service": None},
        "status": {"conditions": [{"type": "Available", "status": "True", "reason": "Local"}]},
    }
    table: dict[str, Any] = build_table(
        [remote, local], kind="APIService", group="apiregistration.k8s.io", meta_version="v1"
    )
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name",
        "Service",
        "Available",
        "Age",
    ]
    assert [r["cells"] for r in table["rows"]] == [
        ["v1beta1.metrics.k8s.io", "kube-system/metrics-server", "False (ServiceNotFound)", "90s"],
        ["v1.example.com", "Local", "True", "90s"],
    ]


def test_openapi_describes_api_services_as_the_python_client_reads_them() -> None:
    doc = OpenAPIV3(builtin_scheme(), "v1.36.0").document("apis/apiregistration.k8s.io/v1")
    assert doc is not None
    body = orjson.loads(doc.body)
    assert "/apis/apiregistration.k8s.io/v1/apiservices/{name}/status" in body["paths"]
    schemas = body["components"]["schemas"]
    assert schemas[f"{_PREFIX}.APIServiceSpec"]["required"] == [
        "groupPriorityMinimum",
        "versionPriority",
    ]
    assert schemas[f"{_PREFIX}.APIServiceCondition"]["required"] == ["status", "type"]
    conditions = schemas[f"{_PREFIX}.APIServiceStatus"]["properties"]["conditions"]
    assert conditions["x-kubernetes-patch-merge-key"] == "type"
    assert f"{_PREFIX}.ServiceReference" in schemas
