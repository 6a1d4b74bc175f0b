"""Table cells, ages, discovery documents and metrics rendering (pure functions)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import orjson
import pytest

from kstore.api.kinds import builtin_scheme
from kstore.server.discovery import Discovery, version_priority, wants_aggregated
from kstore.server.durations import human_duration, translate_timestamp_since
from kstore.server.metrics import Metrics, RequestLabels
from kstore.server.openapi import OpenAPIV3
from kstore.server.table import build_table


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (-5, "<invalid>"),
        (-0.5, "0s"),
        (0, "0s"),
        (119, "119s"),
        (120, "2m"),
        (310, "5m10s"),
        (3 * 3600 - 1, "179m"),
        (3 * 3600, "3h"),
        (5 * 3600 + 60 * 7, "5h7m"),
        (30 * 3600, "30h"),
        (50 * 3600, "2d2h"),
        (10 * 86400, "10d"),
        (3 * 365 * 86400 + 12 * 86400, "3y12d"),
        (9 * 365 * 86400, "9y"),
    ],
)
def test_human_duration_matches_kubernetes(seconds: float, text: str) -> None:
    assert human_duration(seconds) == text


def test_unknown_timestamp_age() -> None:
    assert translate_timestamp_since(None, datetime.now(UTC)) == "<unknown>"


def test_configmap_table_has_name_data_age_and_row_metadata() -> None:
    created = (datetime.now(UTC) - timedelta(seconds=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm1", "namespace": "default", "creationTimestamp": created},
        "data": {"a": "1", "b": "2"},
    }
    table = build_table([cm], kind="ConfigMap", group="", meta_version="v1")
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Data", "Age"]
    cells = table["rows"][0]["cells"]
    assert cells[0] == "cm1" and cells[1] == 2 and cells[2].endswith("s")
    assert table["rows"][0]["object"]["metadata"]["namespace"] == "default"


def test_unknown_kind_gets_name_and_created_at() -> None:
    table = build_table(
        [{"metadata": {"name": "w", "creationTimestamp": "2026-01-01T00:00:00Z"}}],
        kind="Widget",
        group="example.com",
        meta_version="v1",
    )
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Created At"]
    assert table["rows"][0]["cells"] == ["w", "2026-01-01T00:00:00Z"]


def test_pod_status_column_reports_waiting_reason_and_readiness() -> None:
    pod = {
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
        "status": {
            "phase": "Pending",
            "containerStatuses": [
                {"name": "a", "ready": True, "restartCount": 1, "state": {"running": {}}},
                {
                    "name": "b",
                    "ready": False,
                    "restartCount": 2,
                    "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                },
            ],
        },
    }
    cells = build_table([pod], kind="Pod", group="", meta_version="v1")["rows"][0]["cells"]
    assert cells[1:4] == ["1/2", "CrashLoopBackOff", "3"]


def test_version_priority_prefers_ga_then_beta_then_alpha() -> None:
    versions = ["v1beta1", "v1alpha1", "v2", "v1", "v1beta2"]
    assert sorted(versions, key=version_priority) == ["v2", "v1", "v1beta2", "v1beta1", "v1alpha1"]


def test_aggregated_discovery_is_asked_by_kubectls_accept() -> None:
    accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
    assert wants_aggregated(accept)
    assert not wants_aggregated("application/json, */*")


def test_discovery_documents_list_builtin_resources() -> None:
    discovery = Discovery(builtin_scheme())
    core = orjson.loads(discovery.aggregated_core.body)
    assert core["kind"] == "APIGroupDiscoveryList"
    resources = {r["resource"]: r for r in core["items"][0]["versions"][0]["resources"]}
    assert resources["configmaps"]["shortNames"] == ["cm"]
    assert resources["configmaps"]["scope"] == "Namespaced"
    assert resources["namespaces"]["scope"] == "Cluster"
    groups = orjson.loads(discovery.aggregated_groups.body)
    apps = next(g for g in groups["items"] if g["metadata"]["name"] == "apps")
    assert apps["versions"][0]["version"] == "v1"
    legacy = orjson.loads(discovery.group_list.body)
    assert all(g["name"] for g in legacy["groups"])  # the core group is never in /apis
    deployments = next(
        r for r in apps["versions"][0]["resources"] if r["resource"] == "deployments"
    )
    assert [s["subresource"] for s in deployments["subresources"]] == ["status", "scale"]


def test_openapi_patch_operations_declare_field_validation() -> None:
    openapi = OpenAPIV3(builtin_scheme(), "v1.36.0")
    index = orjson.loads(openapi.index)
    url = index["paths"]["api/v1"]["serverRelativeURL"]
    doc = openapi.document("api/v1")
    assert doc is not None and url.endswith(doc.hash)
    paths = orjson.loads(doc.body)["paths"]
    op = paths["/api/v1/namespaces/{namespace}/configmaps/{name}"]["patch"]
    assert op["x-kubernetes-group-version-kind"] == {
        "group": "",
        "version": "v1",
        "kind": "ConfigMap",
    }
    assert "fieldValidation" in [p["name"] for p in op["parameters"]]


def test_openapi_documents_publish_each_kinds_schema() -> None:
    openapi = OpenAPIV3(builtin_scheme(), "v1.36.0")
    for key in ("api/v1", "apis/apps/v1"):
        doc = openapi.document(key)
        assert doc is not None
        schemas = orjson.loads(doc.body)["components"]["schemas"]
        # Every reference names a schema of the same document.
        refs = re.findall(rb'"\$ref":"#/components/schemas/([^"]+)"', doc.body)
        assert refs and {r.decode() for r in refs} <= set(schemas)
    core_doc = openapi.document("api/v1")
    assert core_doc is not None
    core = orjson.loads(core_doc.body)["components"]["schemas"]
    pod = core["io.k8s.api.core.v1.Pod"]
    assert pod["x-kubernetes-group-version-kind"] == [{"group": "", "kind": "Pod", "version": "v1"}]
    containers = core["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
    assert containers["x-kubernetes-patch-merge-key"] == "name"
    assert containers["x-kubernetes-list-map-keys"] == ["name"]
    assert core["io.k8s.api.core.v1.PodSpec"]["required"] == ["containers"]
    assert core["io.k8s.apimachinery.pkg.apis.meta.v1.Time"]["format"] == "date-time"
    labels = core["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]["properties"]["labels"]
    assert labels == {"type": "object", "additionalProperties": {"type": "string"}}


def _published_schemas() -> dict[str, dict[str, object]]:
    openapi = OpenAPIV3(builtin_scheme(), "v1.36.0")
    schemas: dict[str, dict[str, object]] = {}
    for key in orjson.loads(openapi.index)["paths"]:
        doc = openapi.document(key)
        assert doc is not None
        schemas.update(orjson.loads(doc.body).get("components", {}).get("schemas", {}))
    return schemas


@pytest.mark.parametrize(
    ("schema", "required"),
    [
        # +optional without omitempty: not required.
        ("io.k8s.api.core.v1.Event", ["involvedObject", "metadata"]),
        ("io.k8s.api.core.v1.GRPCAction", ["port"]),
        ("io.k8s.api.core.v1.TypedLocalObjectReference", ["kind", "name"]),
        ("io.k8s.api.core.v1.ProjectedVolumeSource", []),
        ("io.k8s.api.rbac.v1.Role", []),
        ("io.k8s.api.rbac.v1.ClusterRole", []),
        # +required with omitempty: required.
        ("io.k8s.api.core.v1.PodCertificateProjection", ["keyType", "signerName"]),
        ("io.k8s.api.core.v1.ContainerRestartRule", ["action"]),
        # No omitempty and no marker: required.
        ("io.k8s.api.rbac.v1.RoleRef", ["apiGroup", "kind", "name"]),
        ("io.k8s.api.apps.v1.DeploymentCondition", ["status", "type"]),
        # omitempty: optional.
        ("io.k8s.api.apps.v1.Deployment", []),
    ],
)
def test_openapi_required_fields_follow_the_optional_and_required_markers(
    schema: str, required: list[str]
) -> None:
    assert _published_schemas()[schema].get("required", []) == required


def test_openapi_required_fields_agree_with_the_python_clients_models() -> None:
    """The kubernetes Python client's models are generated from Kubernetes' published
    schemas: a model field without a default is a required one."""
    models = pytest.importorskip("kubernetes.client.models")
    # Where the client's models differ from Kubernetes' own documents (its generator's
    # choices, not the API's): the workload kinds' spec is optional there (+optional), and
    # DeploymentCondition's type and status and RoleRef.apiGroup are required (no omitempty).
    client_quirks = {
        "io.k8s.api.apps.v1.DaemonSet",
        "io.k8s.api.apps.v1.Deployment",
        "io.k8s.api.apps.v1.ReplicaSet",
        "io.k8s.api.apps.v1.StatefulSet",
        "io.k8s.api.apps.v1.DeploymentCondition",
        "io.k8s.api.rbac.v1.RoleRef",
    }
    compared = 0
    for name, schema in _published_schemas().items():
        group, version, kind = name.split(".")[-3:]
        model = None
        for candidate in (
            f"{version.capitalize()}{kind}",
            f"{group.capitalize()}{version.capitalize()}{kind}",
        ):
            fields = getattr(getattr(models, candidate, None), "model_fields", None)
            if fields and {f.serialization_alias or f.alias or n for n, f in fields.items()} == set(
                schema.get("properties", {})  # type: ignore[arg-type]
            ):
                model = fields
                break
        if model is None or name in client_quirks:
            continue
        theirs = sorted(
            f.serialization_alias or f.alias or n for n, f in model.items() if f.is_required()
        )
        assert schema.get("required", []) == theirs, name
        compared += 1
    assert compared > 150


def test_metrics_render_counts_and_histograms() -> None:
    metrics = Metrics()
    labels = RequestLabels("GET", "", "v1", "configmaps", "", "resource")
    metrics.observe(labels, 200, 0.003)
    metrics.observe(labels, 404, 0.03)
    text = metrics.render().decode()
    assert 'apiserver_request_total{verb="GET",group="",version="v1",resource="configmaps"' in text
    assert 'code="404"} 1' in text
    assert 'le="0.005"} 1' in text
    assert 'le="+Inf"} 2' in text
