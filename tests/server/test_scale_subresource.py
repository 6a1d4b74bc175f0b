"""The ``scale`` subresource of Deployments over HTTP (what ``kubectl scale`` and autoscalers
use): the Scale kind per version, conditional updates, patches, validation, discovery."""

from __future__ import annotations

import httpx
import orjson

DEPLOYS = "/apis/apps/v1/namespaces/default/deployments"
MERGE = {"Content-Type": "application/merge-patch+json"}


def _deployment(client: httpx.Client, name: str, replicas: int = 2) -> dict[str, object]:
    body = {
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {
                "matchLabels": {"app": name},
                "matchExpressions": [{"key": "tier", "operator": "In", "values": ["web"]}],
            },
            "template": {
                "metadata": {"labels": {"app": name, "tier": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]},
            },
        },
    }
    r = client.post(DEPLOYS, content=orjson.dumps(body))
    assert r.status_code == 201, r.text
    created: dict[str, object] = r.json()
    return created


def test_get_scale_per_version(client: httpx.Client) -> None:
    deployment = _deployment(client, "sc1", replicas=3)
    meta = deployment["metadata"]
    assert isinstance(meta, dict)
    scale = client.get(f"{DEPLOYS}/sc1/scale").json()
    assert scale == {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": "sc1",
            "namespace": "default",
            "uid": meta["uid"],
            "resourceVersion": meta["resourceVersion"],
            "creationTimestamp": meta["creationTimestamp"],
        },
        "spec": {"replicas": 3},
        "status": {"replicas": 0, "selector": "app=sc1,tier in (web)"},
    }
    beta = client.get("/apis/apps/v1beta2/namespaces/default/deployments/sc1/scale").json()
    assert beta["apiVersion"] == "apps/v1beta2"
    assert beta["status"] == {
        "replicas": 0,
        "selector": {"app": "sc1"},
        "targetSelector": "app=sc1,tier in (web)",
    }


def test_put_scale_changes_replicas_only_and_is_conditional(client: httpx.Client) -> None:
    _deployment(client, "sc2")
    scale = client.get(f"{DEPLOYS}/sc2/scale").json()
    scale["spec"]["replicas"] = 5
    scale["status"]["replicas"] = 99  # status of a Scale is read-only
    r = client.put(f"{DEPLOYS}/sc2/scale", content=orjson.dumps(scale))
    assert r.status_code == 200, r.text
    assert r.json()["spec"] == {"replicas": 5}
    live = client.get(f"{DEPLOYS}/sc2").json()
    assert live["spec"]["replicas"] == 5
    assert live["metadata"]["generation"] == 2
    assert live["status"].get("replicas") is None

    stale = client.put(f"{DEPLOYS}/sc2/scale", content=orjson.dumps(scale))
    assert stale.status_code == 409
    assert stale.json()["reason"] == "Conflict"

    negative = {"metadata": {"name": "sc2"}, "spec": {"replicas": -1}}
    r = client.put(f"{DEPLOYS}/sc2/scale", content=orjson.dumps(negative))
    assert r.status_code == 422
    assert r.json()["message"] == (
        'Scale.autoscaling "sc2" is invalid: spec.replicas: Invalid value: -1: '
        "must be greater than or equal to 0"
    )
    other = {"metadata": {"name": "nope"}, "spec": {"replicas": 1}}
    assert client.put(f"{DEPLOYS}/sc2/scale", content=orjson.dumps(other)).status_code == 400


def test_patch_scale_and_its_field_manager(client: httpx.Client) -> None:
    _deployment(client, "sc3")
    r = client.patch(
        f"{DEPLOYS}/sc3/scale",
        content=b'{"spec":{"replicas":4}}',
        headers={**MERGE, "User-Agent": "kubectl/v1.37.1 (linux/amd64) kubernetes/abc"},
    )
    assert r.status_code == 200, r.text
    assert r.json()["spec"] == {"replicas": 4}
    live = client.get(f"{DEPLOYS}/sc3").json()
    assert live["spec"]["replicas"] == 4
    scale_entries = [e for e in live["metadata"]["managedFields"] if e.get("subresource")]
    assert [(e["manager"], e["operation"], e["subresource"]) for e in scale_entries] == [
        ("kubectl", "Update", "scale")
    ]
    assert scale_entries[0]["fieldsV1"] == {"f:spec": {"f:replicas": {}}}

    r = client.patch(
        f"{DEPLOYS}/sc3/scale",
        content=b'[{"op":"replace","path":"/spec/replicas","value":1}]',
        headers={"Content-Type": "application/json-patch+json"},
    )
    assert r.status_code == 200 and r.json()["spec"] == {"replicas": 1}
    dry = client.patch(
        f"{DEPLOYS}/sc3/scale", params={"dryRun": "All"}, content=b'{"spec":{"replicas":7}}',
        headers=MERGE,
    )  # fmt: skip
    assert dry.status_code == 200 and dry.json()["spec"] == {"replicas": 7}
    assert client.get(f"{DEPLOYS}/sc3").json()["spec"]["replicas"] == 1
    strategic = client.patch(
        f"{DEPLOYS}/sc3/scale",
        content=b'{"spec":{"replicas":2}}',
        headers={"Content-Type": "application/strategic-merge-patch+json"},
    )
    assert strategic.status_code == 415
    assert client.patch(f"{DEPLOYS}/missing/scale", content=b"{}", headers=MERGE).status_code == 404


def test_scale_is_discoverable_with_its_kind(client: httpx.Client) -> None:
    resources = client.get("/apis/apps/v1").json()["resources"]
    entry = next(r for r in resources if r["name"] == "deployments/scale")
    assert (entry["group"], entry["version"], entry["kind"]) == ("autoscaling", "v1", "Scale")
    assert entry["verbs"] == ["get", "patch", "update"]
    aggregated = client.get(
        "/apis",
        headers={"Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"},
    ).json()
    apps = next(g for g in aggregated["items"] if g["metadata"]["name"] == "apps")
    v1 = next(v for v in apps["versions"] if v["version"] == "v1")
    deployments = next(r for r in v1["resources"] if r["resource"] == "deployments")
    subresources = {s["subresource"]: s["responseKind"] for s in deployments["subresources"]}
    assert subresources["scale"] == {"group": "autoscaling", "version": "v1", "kind": "Scale"}
    assert subresources["status"]["kind"] == "Deployment"


def test_scale_of_a_kind_without_one_is_not_found(client: httpx.Client) -> None:
    r = client.get("/api/v1/namespaces/default/configmaps/x/scale")
    assert r.status_code == 404
