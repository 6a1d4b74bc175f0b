"""``pods/binding`` over HTTP against a real server: what a scheduler posts, answered as
kube-apiserver answers it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.server.harness import RunningServer, start_server

NS = "binding"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    running = start_server(tmp_path_factory.mktemp("binding") / "data")
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


def _pod(api: httpx.Client, name: str, **spec: Any) -> dict[str, Any]:
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "x"}], **spec},
    }
    r = api.post(f"/api/v1/namespaces/{NS}/pods", json=body)
    assert r.status_code == 201, r.text
    return dict(r.json())


def _bind(api: httpx.Client, name: str, node: str = "node-1", **meta: Any) -> httpx.Response:
    return api.post(
        f"/api/v1/namespaces/{NS}/pods/{name}/binding",
        json={
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name, **meta},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        },
    )


def test_binding_puts_the_pod_on_the_node(api: httpx.Client) -> None:
    created = _pod(api, "web")
    r = _bind(api, "web", annotations={"scheduled-by": "test"})
    assert r.status_code == 201, r.text
    assert r.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}
    pod = api.get(f"/api/v1/namespaces/{NS}/pods/web").json()
    assert pod["spec"]["nodeName"] == "node-1"
    assert pod["metadata"]["annotations"] == {"scheduled-by": "test"}
    assert pod["metadata"]["generation"] == created["metadata"]["generation"]
    scheduled = [c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled"]
    assert len(scheduled) == 1
    assert scheduled[0]["status"] == "True"
    assert scheduled[0]["lastTransitionTime"]


def test_binding_a_bound_pod_is_a_conflict(api: httpx.Client) -> None:
    _pod(api, "taken", nodeName="node-a")
    r = _bind(api, "taken", "node-b")
    assert r.status_code == 409
    body = r.json()
    assert body["message"] == (
        'Operation cannot be fulfilled on pods/binding "taken": pod taken is already assigned '
        'to node "node-a"'
    )
    assert body["reason"] == "Conflict"
    assert body["details"] == {"name": "taken", "kind": "pods/binding"}


def test_binding_a_gated_pod_is_a_conflict(api: httpx.Client) -> None:
    _pod(api, "gated", schedulingGates=[{"name": "example.com/wait"}])
    r = _bind(api, "gated")
    assert r.status_code == 409
    assert r.json()["message"].endswith("pod gated has non-empty .spec.schedulingGates")


def test_binding_preconditions_and_validation(api: httpx.Client) -> None:
    _pod(api, "checked")
    r = _bind(api, "checked", uid="not-the-uid")
    assert r.status_code == 409
    r = api.post(
        f"/api/v1/namespaces/{NS}/pods/checked/binding",
        json={"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "checked"}, "target": {}},
    )
    assert r.status_code == 500
    assert r.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "target.name: Required value",
        "code": 500,
    }
    r = api.post(
        f"/api/v1/namespaces/{NS}/pods/checked/binding",
        json={"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "other"}},
    )
    assert r.status_code == 400
    assert r.json()["message"] == "name in URL does not match name in Binding object"
    r = _bind(api, "absent")
    assert r.status_code == 404
    assert api.get(f"/api/v1/namespaces/{NS}/pods/checked").json()["spec"].get("nodeName") is None


def test_dry_run_binding_writes_nothing(api: httpx.Client) -> None:
    _pod(api, "dry")
    r = api.post(
        f"/api/v1/namespaces/{NS}/pods/dry/binding?dryRun=All",
        json={
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": "dry"},
            "target": {"name": "node-1"},
        },
    )
    assert r.status_code == 201, r.text
    assert api.get(f"/api/v1/namespaces/{NS}/pods/dry").json()["spec"].get("nodeName") is None


def test_discovery_lists_pods_binding(api: httpx.Client) -> None:
    resources = api.get("/api/v1").json()["resources"]
    entry = next(r for r in resources if r["name"] == "pods/binding")
    assert entry == {
        "name": "pods/binding",
        "singularName": "",
        "namespaced": True,
        "kind": "Binding",
        "verbs": ["create"],
    }
