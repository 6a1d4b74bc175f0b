"""Server-side apply over HTTP records ownership as Kubernetes does, also when it creates.

An apply of a missing object is a create by the applier: one ``Apply`` entry in
``managedFields`` owning exactly the applied fields (no ``Update`` entry for the same manager,
which would make the applier conflict with itself and other appliers see two owners).
"""

from __future__ import annotations

import httpx
import orjson

CMS = "/api/v1/namespaces/default/configmaps"
APPLY = {"Content-Type": "application/apply-patch+yaml"}


def _apply(
    client: httpx.Client, name: str, data: dict[str, str], manager: str, **params: str
) -> httpx.Response:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}
    return client.patch(
        f"{CMS}/{name}",
        params={"fieldManager": manager, **params},
        content=orjson.dumps(body),
        headers=APPLY,
    )


def test_apply_that_creates_records_an_apply_entry_only(client: httpx.Client) -> None:
    r = _apply(client, "own1", {"x": "1"}, "kubectl")
    assert r.status_code == 201, r.text
    entries = r.json()["metadata"]["managedFields"]
    assert [(e["manager"], e["operation"]) for e in entries] == [("kubectl", "Apply")]
    assert entries[0]["fieldsV1"] == {"f:data": {"f:x": {}}}


def test_apply_conflicts_with_the_creating_applier_then_force_takes_over(
    client: httpx.Client,
) -> None:
    assert _apply(client, "own2", {"x": "1"}, "kubectl").status_code == 201
    assert _apply(client, "own2", {"x": "1"}, "kubectl").status_code == 200
    r = _apply(client, "own2", {"x": "2"}, "other")
    assert r.status_code == 409, r.text
    status = r.json()
    assert status["reason"] == "Conflict"
    assert status["message"] == 'Apply failed with 1 conflict: conflict with "kubectl": .data.x'
    assert [c["field"] for c in status["details"]["causes"]] == [".data.x"]

    r = _apply(client, "own2", {"x": "2"}, "other", force="true")
    assert r.status_code == 200, r.text
    entries = r.json()["metadata"]["managedFields"]
    assert [(e["manager"], e["operation"]) for e in entries] == [("other", "Apply")]


def test_dry_run_apply_of_a_missing_object_persists_nothing(client: httpx.Client) -> None:
    r = _apply(client, "own3", {"x": "1"}, "kubectl", dryRun="All")
    assert r.status_code == 201, r.text
    assert r.json()["data"] == {"x": "1"}
    assert client.get(f"{CMS}/own3").status_code == 404
