"""``pods/ephemeralcontainers`` and ``pods/resize`` over HTTP against a real server: each
writes its one part of the spec, keeps the rest, and is validated as Kubernetes does."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.server.harness import RunningServer, start_server

NS = "podsubs"
MERGE = {"Content-Type": "application/strategic-merge-patch+json"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    running = start_server(tmp_path_factory.mktemp("podsubs") / "data")
    try:
        with running.client() as client:
            r = client.post(
                "/api/v1/namespaces",
                json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
            )
            assert r.status_code == 201, r.text
        yield running
    finally:
        running.stop()


@pytest.fixture
def api(server: RunningServer) -> Iterator[httpx.Client]:
    with server.client() as client:
        yield client


def _pod(api: httpx.Client, name: str, resources: dict[str, Any] | None = None) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "app", "image": "nginx:1.27"}
    if resources is not None:
        container["resources"] = resources
    r = api.post(
        f"/api/v1/namespaces/{NS}/pods",
        json={
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "labels": {"a": "b"}},
            "spec": {"containers": [container]},
        },
    )
    assert r.status_code == 201, r.text
    return dict(r.json())


def _patch(api: httpx.Client, name: str, sub: str, body: dict[str, Any]) -> httpx.Response:
    return api.patch(f"/api/v1/namespaces/{NS}/pods/{name}/{sub}", json=body, headers=MERGE)


def test_ephemeral_container_is_added_and_nothing_else_changes(api: httpx.Client) -> None:
    created = _pod(api, "debug-me")
    debugger = {"name": "debugger", "image": "busybox", "targetContainerName": "app"}
    r = _patch(
        api,
        "debug-me",
        "ephemeralcontainers",
        {
            "metadata": {"labels": {"a": "changed"}},
            "spec": {"ephemeralContainers": [debugger], "activeDeadlineSeconds": 5},
        },
    )
    assert r.status_code == 200, r.text
    pod = r.json()
    added = pod["spec"]["ephemeralContainers"]
    assert [c["name"] for c in added] == ["debugger"]
    assert added[0]["targetContainerName"] == "app"
    assert added[0]["imagePullPolicy"] == "Always"
    assert added[0]["terminationMessagePolicy"] == "File"
    assert pod["metadata"]["labels"] == {"a": "b"}
    assert "activeDeadlineSeconds" not in pod["spec"]
    assert pod["metadata"]["generation"] == created["metadata"]["generation"] + 1
    assert api.get(f"/api/v1/namespaces/{NS}/pods/debug-me/ephemeralcontainers").json() == pod


def test_ephemeral_containers_are_validated(api: httpx.Client) -> None:
    _pod(api, "strict")
    bad = {
        "name": "app",
        "image": "busybox",
        "ports": [{"containerPort": 80}],
        "targetContainerName": "nope",
    }
    r = _patch(api, "strict", "ephemeralcontainers", {"spec": {"ephemeralContainers": [bad]}})
    assert r.status_code == 422, r.text
    assert r.json()["message"] == (
        'Pod "strict" is invalid: [spec.ephemeralContainers[0].name: Duplicate value: "app", '
        "spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container, "
        'spec.ephemeralContainers[0].targetContainerName: Not found: "nope"]'
    )
    good = {"name": "dbg", "image": "busybox"}
    r = _patch(api, "strict", "ephemeralcontainers", {"spec": {"ephemeralContainers": [good]}})
    assert r.status_code == 200, r.text
    pod = r.json()
    pod["spec"]["ephemeralContainers"] = []
    r = api.put(f"/api/v1/namespaces/{NS}/pods/strict/ephemeralcontainers", json=pod)
    assert r.status_code == 422
    assert r.json()["details"]["causes"] == [
        {
            "reason": "FieldValueForbidden",
            "message": 'Forbidden: existing ephemeral containers "dbg" may not be removed\n',
            "field": "spec.ephemeralContainers",
        }
    ]


def test_resize_changes_only_container_resources(api: httpx.Client) -> None:
    resources = {"requests": {"cpu": "100m"}, "limits": {"cpu": "200m"}}
    created = _pod(api, "sized", resources)
    r = _patch(
        api,
        "sized",
        "resize",
        {
            "metadata": {"labels": {"a": "changed"}},
            "spec": {
                "containers": [
                    {
                        "name": "app",
                        "image": "nginx:2",
                        "resources": {"requests": {"cpu": "150m"}, "limits": {"cpu": "300m"}},
                        "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"}],
                    }
                ]
            },
        },
    )
    assert r.status_code == 200, r.text
    container = r.json()["spec"]["containers"][0]
    assert container["resources"] == {"requests": {"cpu": "150m"}, "limits": {"cpu": "300m"}}
    assert container["resizePolicy"] == [{"resourceName": "cpu", "restartPolicy": "NotRequired"}]
    assert container["image"] == "nginx:1.27"
    assert r.json()["metadata"]["labels"] == {"a": "b"}
    assert r.json()["metadata"]["generation"] == created["metadata"]["generation"] + 1


def test_resize_may_not_change_the_qos_class(api: httpx.Client) -> None:
    _pod(api, "besteffort")
    r = _patch(
        api,
        "besteffort",
        "resize",
        {"spec": {"containers": [{"name": "app", "resources": {"requests": {"memory": "40Mi"}}}]}},
    )
    assert r.status_code == 422
    assert r.json()["message"] == (
        'Pod "besteffort" is invalid: spec: Invalid value: "BestEffort": Pod QOS Class may not '
        "change as a result of resizing"
    )


def test_discovery_lists_the_pod_subresources(api: httpx.Client) -> None:
    names = [r["name"] for r in api.get("/api/v1").json()["resources"]]
    pods = [n for n in names if n.startswith("pods/")]
    assert pods == [
        "pods/binding",
        "pods/ephemeralcontainers",
        "pods/eviction",
        "pods/resize",
        "pods/status",
    ]
    resources = api.get("/api/v1").json()["resources"]
    resize = next(r for r in resources if r["name"] == "pods/resize")
    assert resize == {
        "name": "pods/resize",
        "singularName": "",
        "namespaced": True,
        "kind": "Pod",
        "verbs": ["get", "patch", "update"],
    }


def test_aggregated_discovery_lists_the_subresources_and_their_kinds(api: httpx.Client) -> None:
    accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    doc = api.get("/api", headers={"Accept": accept}).json()
    (version,) = doc["items"][0]["versions"]
    resources = {r["resource"]: r for r in version["resources"]}
    subresources = {
        s["subresource"]: (s["responseKind"], s["verbs"]) for s in resources["pods"]["subresources"]
    }
    pod = {"group": "", "version": "v1", "kind": "Pod"}
    assert subresources == {
        "binding": ({"group": "", "version": "v1", "kind": "Binding"}, ["create"]),
        "ephemeralcontainers": (pod, ["get", "patch", "update"]),
        "eviction": ({"group": "policy", "version": "v1", "kind": "Eviction"}, ["create"]),
        "resize": (pod, ["get", "patch", "update"]),
        "status": (pod, ["get", "patch", "update"]),
    }
    (token,) = resources["serviceaccounts"]["subresources"]
    assert token == {
        "subresource": "token",
        "responseKind": {"group": "authentication.k8s.io", "version": "v1", "kind": "TokenRequest"},
        "verbs": ["create"],
    }
