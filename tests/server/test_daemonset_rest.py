"""DaemonSets over HTTP: create with defaults, the template generation annotation as Kubernetes
shows it, template rollouts, the ``status`` subresource, tables (``kubectl get ds``), discovery."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import orjson

from kstore.server.table import build_table

DS = "/apis/apps/v1/namespaces/default/daemonsets"
MERGE = {"Content-Type": "application/merge-patch+json"}
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
GENERATION = "deprecated.daemonset.template.generation"


def _daemon_set(name: str) -> dict[str, object]:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "nodeSelector": {"kubernetes.io/os": "linux", "disk": "ssd"},
                    "containers": [
                        {"name": "agent", "image": "fluent-bit:3.2"},
                        {"name": "sidecar", "image": "busybox:1.37"},
                    ],
                },
            },
        },
    }


def _create(client: httpx.Client, name: str) -> dict[str, object]:
    r = client.post(DS, content=orjson.dumps(_daemon_set(name)))
    assert r.status_code == 201, r.text
    created: dict[str, object] = r.json()
    return created


def test_create_shows_defaults_zero_status_and_the_template_generation(
    client: httpx.Client,
) -> None:
    created = _create(client, "ds1")
    meta, spec = created["metadata"], created["spec"]
    assert isinstance(meta, dict) and isinstance(spec, dict)
    assert meta["generation"] == 1
    assert meta["annotations"] == {GENERATION: "1"}
    assert "templateGeneration" not in spec
    assert spec["updateStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0},
    }
    assert spec["revisionHistoryLimit"] == 10
    assert created["status"] == {
        "currentNumberScheduled": 0,
        "numberMisscheduled": 0,
        "desiredNumberScheduled": 0,
        "numberReady": 0,
    }
    assert client.get(f"{DS}/ds1").json() == created


def test_a_template_change_is_a_new_template_generation(client: httpx.Client) -> None:
    _create(client, "ds2")
    # What kubectl rollout restart sends.
    restart = {
        "spec": {
            "template": {
                "metadata": {
                    "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z"}
                }
            }
        }
    }
    r = client.patch(
        f"{DS}/ds2",
        content=orjson.dumps(restart),
        headers={"Content-Type": "application/strategic-merge-patch+json"},
    )
    assert r.status_code == 200, r.text
    rolled = r.json()
    assert rolled["metadata"]["generation"] == 2
    assert rolled["metadata"]["annotations"] == {GENERATION: "2"}

    # An annotation a client sets itself is the server's to decide.
    forged = {"metadata": {"annotations": {GENERATION: "9"}}, "spec": {"minReadySeconds": 5}}
    r = client.patch(f"{DS}/ds2", content=orjson.dumps(forged), headers=MERGE)
    assert r.status_code == 200, r.text
    assert r.json()["metadata"]["annotations"] == {GENERATION: "2"}
    assert r.json()["metadata"]["generation"] == 3


def test_invalid_daemon_sets_get_kubernetes_messages(client: httpx.Client) -> None:
    body = _daemon_set("ds-bad")
    body["spec"]["updateStrategy"] = {"type": "Surge"}  # type: ignore[index]
    body["spec"]["template"]["spec"]["restartPolicy"] = "Never"  # type: ignore[index]
    r = client.post(DS, content=orjson.dumps(body))
    assert r.status_code == 422
    assert r.json()["message"] == (
        'DaemonSet.apps "ds-bad" is invalid: [spec.template.spec.restartPolicy: Unsupported '
        'value: "Never": supported values: "Always", spec.updateStrategy: Unsupported value: '
        '{"Type":"Surge","RollingUpdate":null}: supported values: "RollingUpdate", "OnDelete"]'
    )
    _create(client, "ds3")
    patch = {"spec": {"selector": {"matchLabels": {"app": "ds3", "x": "y"}}}}
    r = client.patch(f"{DS}/ds3", content=orjson.dumps(patch), headers=MERGE)
    assert r.status_code == 422
    causes = [c["field"] for c in r.json()["details"]["causes"]]
    assert causes == ["spec.template.metadata.labels"] * 2 + ["spec.selector"]


def test_status_subresource_and_table_rows(client: httpx.Client) -> None:
    _create(client, "ds4")
    status = {
        "status": {
            "desiredNumberScheduled": 3,
            "currentNumberScheduled": 3,
            "numberReady": 2,
            "updatedNumberScheduled": 3,
            "numberAvailable": 1,
        },
        "spec": {"minReadySeconds": 99},
    }
    r = client.patch(f"{DS}/ds4/status", content=orjson.dumps(status), headers=MERGE)
    assert r.status_code == 200, r.text
    assert r.json()["spec"].get("minReadySeconds") is None
    table = client.get(f"{DS}/ds4", headers=TABLE).json()
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name",
        "Desired",
        "Current",
        "Ready",
        "Up-to-date",
        "Available",
        "Node Selector",
        "Age",
        "Containers",
        "Images",
        "Selector",
    ]
    assert [c["priority"] for c in table["columnDefinitions"]] == [0] * 8 + [1] * 3
    cells = table["rows"][0]["cells"]
    assert cells[:7] == ["ds4", 3, 3, 2, 3, 1, "disk=ssd,kubernetes.io/os=linux"]
    assert cells[8:] == ["agent,sidecar", "fluent-bit:3.2,busybox:1.37", "app=ds4"]


def test_table_cells_of_a_bare_daemon_set() -> None:
    created = (datetime.now(UTC) - timedelta(hours=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    ds = {"metadata": {"name": "d", "creationTimestamp": created}}
    table = build_table([ds], kind="DaemonSet", group="apps", meta_version="v1")
    assert table["rows"][0]["cells"] == ["d", 0, 0, 0, 0, 0, "<none>", "5h", "", "", "<none>"]


def test_discovery_lists_short_names_categories_and_the_status_subresource(
    client: httpx.Client,
) -> None:
    resources = {r["name"]: r for r in client.get("/apis/apps/v1").json()["resources"]}
    ds = resources["daemonsets"]
    assert (ds["kind"], ds["namespaced"], ds["shortNames"], ds["categories"]) == (
        "DaemonSet",
        True,
        ["ds"],
        ["all"],
    )
    assert resources["daemonsets/status"]["kind"] == "DaemonSet"
    assert "daemonsets/scale" not in resources
    assert client.get(f"{DS}/missing/scale").status_code == 404
