"""Custom resources over HTTP on a real ``kstore serve``: what kube-apiserver answers for a
kind served from a CRD (media types, strategic merge patch, discovery, OpenAPI, storage)."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from tests.server.harness import RunningServer

GROUP = "rest.example.com"
BASE = f"/apis/{GROUP}/v1/namespaces/default/gizmos"
CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"gizmos.{GROUP}"},
    "spec": {
        "group": GROUP,
        "scope": "Namespaced",
        "names": {"plural": "gizmos", "kind": "Gizmo", "shortNames": ["gz"]},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {"type": "object", "properties": {"size": {"type": "integer"}}}
                        },
                    }
                },
            }
        ],
    },
}


@pytest.fixture(scope="module")
def crd(server: RunningServer) -> str:
    with server.client() as c:
        assert (
            c.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=CRD).status_code
            == 201
        )
        deadline = time.monotonic() + 5
        while c.get(BASE).status_code != 200:
            assert time.monotonic() < deadline, "the CRD was not served within 5 s"
            time.sleep(0.02)
        assert (
            c.post(
                BASE,
                json={
                    "apiVersion": f"{GROUP}/v1",
                    "kind": "Gizmo",
                    "metadata": {"name": "g"},
                    "spec": {"size": 1},
                },
            ).status_code
            == 201
        )
    return f"{BASE}/g"


def test_a_protobuf_body_is_415_and_a_protobuf_only_accept_406(
    client: httpx.Client, crd: str
) -> None:
    posted = client.post(
        BASE, content=b"k8s\x00", headers={"Content-Type": "application/vnd.kubernetes.protobuf"}
    )
    assert posted.status_code == 415
    assert posted.json()["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/yaml"
    )
    only = client.get(crd, headers={"Accept": "application/vnd.kubernetes.protobuf"})
    assert only.status_code == 406
    either = client.get(
        crd, headers={"Accept": "application/vnd.kubernetes.protobuf, application/json"}
    )
    assert either.status_code == 200
    assert either.headers["content-type"].startswith("application/json")
    assert either.json()["spec"] == {"size": 1}


def test_strategic_merge_patch_is_415(client: httpx.Client, crd: str) -> None:
    patched = client.patch(
        crd,
        content=b'{"spec":{"size":2}}',
        headers={"Content-Type": "application/strategic-merge-patch+json"},
    )
    assert patched.status_code == 415
    merged = client.patch(
        crd,
        content=b'{"spec":{"size":2}}',
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert merged.status_code == 200 and merged.json()["metadata"]["generation"] == 2


def test_discovery_and_openapi_list_the_kind(client: httpx.Client, crd: str) -> None:
    listing = client.get(f"/apis/{GROUP}/v1").json()
    gizmos = [r for r in listing["resources"] if r["name"] == "gizmos"]
    assert gizmos and gizmos[0]["kind"] == "Gizmo" and gizmos[0]["shortNames"] == ["gz"]
    assert gizmos[0]["namespaced"] is True
    groups = client.get("/apis").json()["groups"]
    assert GROUP in [g["name"] for g in groups]
    index = client.get("/openapi/v3").json()["paths"]
    doc = client.get(index[f"apis/{GROUP}/v1"]["serverRelativeURL"]).json()
    schema = doc["components"]["schemas"]["com.example.rest.v1.Gizmo"]
    assert schema["properties"]["spec"]["properties"]["size"] == {"type": "integer"}
    assert schema["x-kubernetes-group-version-kind"] == [
        {"group": GROUP, "kind": "Gizmo", "version": "v1"}
    ]
    assert f"/apis/{GROUP}/v1/namespaces/{{namespace}}/gizmos/{{name}}" in doc["paths"]
