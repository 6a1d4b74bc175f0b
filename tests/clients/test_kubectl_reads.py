"""kubectl discovery and reads against a real ``kstore serve`` (clients.md §6, scenarios 1, 2,
4 and 5), on LMDB and on etcd."""

from __future__ import annotations

import json

import yaml
from kubernetes import client

from tests.clients.kubectl import KUBECTL_VERSION, Kubectl
from tests.clients.manifests import configmap


def _rows(table: str) -> list[list[str]]:
    return [line.split() for line in table.splitlines() if line.strip()]


# --------------------------------------------------------------------- 1. discovery/version


def test_api_versions_lists_the_core_and_apps_versions(kubectl: Kubectl) -> None:
    versions = kubectl.ok("api-versions").split()
    assert "v1" in versions
    assert "apps/v1" in versions


def test_api_resources_have_short_names_kinds_and_scope(kubectl: Kubectl) -> None:
    rows = _rows(kubectl.ok("api-resources"))
    assert rows[0] == ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
    assert ["configmaps", "cm", "v1", "true", "ConfigMap"] in rows
    assert ["deployments", "deploy", "apps/v1", "true", "Deployment"] in rows
    assert ["namespaces", "ns", "v1", "false", "Namespace"] in rows


def test_explain_shows_fields_types_and_required_ones(kubectl: Kubectl) -> None:
    out = kubectl.ok("explain", "pods.spec.containers")
    assert "FIELD: containers <[]Container>" in out
    rows = _rows(out)
    assert ["image", "<string>"] in rows
    assert ["name", "<string>", "-required-"] in rows
    assert ["ports", "<[]ContainerPort>"] in rows
    spec = _rows(kubectl.ok("explain", "deployments.spec", "--api-version", "apps/v1"))
    assert ["template", "<PodTemplateSpec>", "-required-"] in spec
    assert ["replicas", "<integer>"] in spec
    recursive = kubectl.ok("explain", "configmaps", "--recursive")
    assert "binaryData\t<map[string]string>" in recursive


def test_version_names_client_and_server(kubectl: Kubectl) -> None:
    out = kubectl.ok("version")
    assert f"Client Version: {KUBECTL_VERSION}" in out
    assert "Server Version: v1." in out
    # One minor apart at most: kubectl warns about version skew otherwise.
    assert "WARNING" not in out


def test_server_flag_without_a_kubeconfig(kubectl: Kubectl) -> None:
    # The README's way: no kubeconfig at all, the URL on the command line.
    result = kubectl.run(
        "--server", kubectl.server_url, "get", "namespaces", "-o", "name",
        env={"KUBECONFIG": str(kubectl.home / "absent-kubeconfig")},
    )  # fmt: skip
    assert result.code == 0, result
    assert {"namespace/default", "namespace/kube-system"} <= set(result.stdout.split())


# ------------------------------------------------------------------------- 2. empty list


def test_empty_list_says_no_resources_found(k: Kubectl, namespace: str) -> None:
    for resource in ("configmaps", "cm", "deployments.apps", "deploy"):
        result = k.run("get", resource)
        assert result.code == 0, result
        assert result.stdout == ""
        assert result.stderr.strip() == f"No resources found in {namespace} namespace."


# ------------------------------------------------------------------------- 4. get forms


def test_get_forms(k: Kubectl, namespace: str) -> None:
    k.write("cm1.yaml", configmap("cm1", {"a": "1"}, labels={"app": "demo"}))
    assert k.ok("create", "-f", "cm1.yaml").strip() == "configmap/cm1 created"

    rows = _rows(k.ok("get", "cm"))
    assert rows[0][0] == "NAME"
    assert [row[0] for row in rows[1:]] == ["cm1"]

    assert k.ok("get", "cm", "cm1", "-o", "jsonpath={.data.a}") == "1"
    assert k.ok("get", "cm", "-o", "name").split() == ["configmap/cm1"]

    everywhere = _rows(k.ok("get", "cm", "-A"))
    assert everywhere[0][:2] == ["NAMESPACE", "NAME"]
    assert [namespace, "cm1"] in [row[:2] for row in everywhere[1:]]

    labelled = _rows(k.ok("get", "cm", "--show-labels"))
    assert labelled[0][-1] == "LABELS"
    assert labelled[1][0] == "cm1" and labelled[1][-1] == "app=demo"
    column = _rows(k.ok("get", "cm", "-L", "app"))
    assert column[0][-1] == "APP" and column[1][-1] == "demo"

    obj = yaml.safe_load(k.ok("get", "cm", "cm1", "-o", "yaml"))
    meta = obj["metadata"]
    assert obj["kind"] == "ConfigMap" and obj["apiVersion"] == "v1"
    assert meta["resourceVersion"].isdigit()
    assert meta["uid"] and meta["creationTimestamp"].endswith("Z")
    assert meta["namespace"] == namespace

    listed = json.loads(k.ok("get", "cm", "-o", "json"))
    assert listed["kind"] == "List"
    assert [item["metadata"]["name"] for item in listed["items"]] == ["cm1"]


def test_get_wide_and_custom_printers_of_a_deployment(
    k: Kubectl, api_client: client.ApiClient, namespace: str
) -> None:
    apps = client.AppsV1Api(api_client)
    apps.create_namespaced_deployment(
        namespace,
        {
            "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {
                "replicas": 3,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]},
                },
            },
        },
    )
    rows = _rows(k.ok("get", "deploy", "-o", "wide"))
    header = rows[0]
    assert header[:5] == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    row = dict(zip(header, rows[1], strict=True))
    assert row["NAME"] == "web"
    assert row["READY"] == "0/3"
    assert row["IMAGES"] == "nginx:1.27"
    assert row["SELECTOR"] == "app=web"
    # Deployments are in the "all" category; ConfigMaps are not.
    everything = _rows(k.ok("get", "all"))
    assert [row[0] for row in everything[1:]] == ["deployment.apps/web"]


# -------------------------------------------------------------------------- 5. NotFound


def test_missing_object_is_not_found(k: Kubectl, namespace: str) -> None:
    result = k.fails("get", "cm", "nope")
    assert result.stderr.strip() == 'Error from server (NotFound): configmaps "nope" not found'
    raw = k.fails("get", "--raw", f"/api/v1/namespaces/{namespace}/configmaps/nope")
    assert raw.stderr.strip() == 'Error from server (NotFound): configmaps "nope" not found'


def test_unknown_resource_type_is_reported_by_kubectl(k: Kubectl) -> None:
    result = k.fails("get", "widgets")
    assert 'the server doesn\'t have a resource type "widgets"' in result.stderr
