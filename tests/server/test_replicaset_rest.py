"""ReplicaSets over HTTP: CRUD with defaults, the ``scale`` subresource (what ``kubectl scale rs``
and autoscalers use), tables (``kubectl get rs``), discovery and field selectors."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import orjson

from kstore.server.table import build_table

RS = "/apis/apps/v1/namespaces/default/replicasets"
MERGE = {"Content-Type": "application/merge-patch+json"}
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}


def _replica_set(name: str, replicas: int | None = 2) -> dict[str, object]:
    spec: dict[str, object] = {
        "selector": {
            "matchLabels": {"app": name},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["web"]}],
        },
        "template": {
            "metadata": {"labels": {"app": name, "tier": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]},
        },
    }
    if replicas is not None:
        spec["replicas"] = replicas
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name}, "spec": spec}


def _create(client: httpx.Client, name: str, replicas: int | None = 2) -> dict[str, object]:
    r = client.post(RS, content=orjson.dumps(_replica_set(name, replicas)))
    assert r.status_code == 201, r.text
    created: dict[str, object] = r.json()
    return created


def test_create_defaults_and_rejects_a_template_the_selector_misses(client: httpx.Client) -> None:
    created = _create(client, "rs0", replicas=None)
    spec = created["spec"]
    assert isinstance(spec, dict)
    assert spec["replicas"] == 1
    assert spec["template"]["spec"]["restartPolicy"] == "Always"
    assert created["status"] == {"replicas": 0}
    assert created["metadata"]["generation"] == 1  # type: ignore[index]

    body = _replica_set("rs-bad")
    body["spec"]["template"]["metadata"]["labels"] = {"app": "other"}  # type: ignore[index]
    r = client.post(RS, content=orjson.dumps(body))
    assert r.status_code == 422
    status = r.json()
    assert status["message"] == (
        'ReplicaSet.apps "rs-bad" is invalid: spec.template.metadata.labels: Invalid value: '
        '{"app":"other"}: `selector` does not match template `labels`'
    )
    assert status["details"] == {
        "name": "rs-bad",
        "group": "apps",
        "kind": "ReplicaSet",
        "causes": [
            {
                "reason": "FieldValueInvalid",
                "message": 'Invalid value: {"app":"other"}: `selector` does not match template '
                "`labels`",
                "field": "spec.template.metadata.labels",
            }
        ],
    }


def test_get_scale_of_a_replica_set(client: httpx.Client) -> None:
    rs = _create(client, "rs1", replicas=3)
    meta = rs["metadata"]
    assert isinstance(meta, dict)
    client.patch(
        f"{RS}/rs1/status", content=b'{"status":{"replicas":2}}', headers=MERGE
    ).raise_for_status()
    scale = client.get(f"{RS}/rs1/scale").json()
    assert scale == {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": "rs1",
            "namespace": "default",
            "uid": meta["uid"],
            "resourceVersion": scale["metadata"]["resourceVersion"],
            "creationTimestamp": meta["creationTimestamp"],
        },
        "spec": {"replicas": 3},
        "status": {"replicas": 2, "selector": "app=rs1,tier in (web)"},
    }


def test_put_and_patch_scale_change_the_replicas_only(client: httpx.Client) -> None:
    _create(client, "rs2")
    scale = client.get(f"{RS}/rs2/scale").json()
    scale["spec"]["replicas"] = 5
    r = client.put(f"{RS}/rs2/scale", content=orjson.dumps(scale))
    assert r.status_code == 200, r.text
    assert r.json()["spec"] == {"replicas": 5}
    live = client.get(f"{RS}/rs2").json()
    assert (live["spec"]["replicas"], live["metadata"]["generation"]) == (5, 2)
    assert client.put(f"{RS}/rs2/scale", content=orjson.dumps(scale)).status_code == 409

    r = client.patch(f"{RS}/rs2/scale", content=b'{"spec":{"replicas":0}}', headers=MERGE)
    assert r.status_code == 200, r.text
    # ScaleSpec.replicas is omitempty: a ReplicaSet scaled to 0 has an empty Scale spec.
    assert r.json()["spec"] == {}
    live = client.get(f"{RS}/rs2").json()
    assert live["spec"]["replicas"] == 0
    assert live["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"

    negative = {"metadata": {"name": "rs2"}, "spec": {"replicas": -1}}
    r = client.put(f"{RS}/rs2/scale", content=orjson.dumps(negative))
    assert r.status_code == 422
    assert r.json()["message"] == (
        'Scale.autoscaling "rs2" is invalid: spec.replicas: Invalid value: -1: '
        "must be greater than or equal to 0"
    )


def test_selector_cannot_change(client: httpx.Client) -> None:
    _create(client, "rs3")
    patch = {
        "spec": {
            "selector": {"matchLabels": {"app": "rs3"}, "matchExpressions": None},
        }
    }
    r = client.patch(f"{RS}/rs3", content=orjson.dumps(patch), headers=MERGE)
    assert r.status_code == 422
    assert r.json()["message"] == (
        'ReplicaSet.apps "rs3" is invalid: spec.selector: Invalid value: '
        '{"matchLabels":{"app":"rs3"}}: field is immutable'
    )


def test_table_rows_and_field_selectors(client: httpx.Client) -> None:
    _create(client, "rs4", replicas=3)
    client.patch(
        f"{RS}/rs4/status",
        content=b'{"status":{"replicas":3,"readyReplicas":2}}',
        headers=MERGE,
    ).raise_for_status()
    table = client.get(RS, params={"fieldSelector": "status.replicas=3"}, headers=TABLE).json()
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name",
        "Desired",
        "Current",
        "Ready",
        "Age",
        "Containers",
        "Images",
        "Selector",
    ]
    assert [c["priority"] for c in table["columnDefinitions"]] == [0, 0, 0, 0, 0, 1, 1, 1]
    (row,) = table["rows"]
    assert row["cells"][:4] == ["rs4", 3, 3, 2]
    assert row["cells"][5:] == ["c", "nginx:1.27", "app=rs4,tier in (web)"]
    r = client.get(RS, params={"fieldSelector": "spec.replicas=3"})
    assert r.status_code == 400
    assert "spec.replicas" in r.json()["message"]


def test_table_cells_of_a_bare_replica_set() -> None:
    created = (datetime.now(UTC) - timedelta(minutes=3)).strftime("%Y-%m-%dT%H:%M:%SZ")
    rs = {"metadata": {"name": "r", "creationTimestamp": created}, "spec": {"replicas": 0}}
    table = build_table([rs], kind="ReplicaSet", group="apps", meta_version="v1")
    assert table["rows"][0]["cells"] == ["r", 0, 0, 0, "3m", "", "", "<none>"]


def test_discovery_lists_short_names_categories_and_subresources(client: httpx.Client) -> None:
    resources = {r["name"]: r for r in client.get("/apis/apps/v1").json()["resources"]}
    rs = resources["replicasets"]
    assert (rs["kind"], rs["namespaced"], rs["shortNames"], rs["categories"]) == (
        "ReplicaSet",
        True,
        ["rs"],
        ["all"],
    )
    scale = resources["replicasets/scale"]
    assert (scale["group"], scale["version"], scale["kind"]) == ("autoscaling", "v1", "Scale")
    assert resources["replicasets/status"]["kind"] == "ReplicaSet"
