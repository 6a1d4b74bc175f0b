"""Ratcheting over HTTP on a real ``kstore serve``: objects written before their CRD's schema
was tightened can still be updated through every update path (PUT, merge and JSON patch,
server-side apply, the status subresource) as long as the offending values stay unchanged;
changing them, or creating such an object, is refused; CEL failures of unchanged values come
back as ``Warning`` headers; a CRD's defaults must pass their CEL rules."""

from __future__ import annotations

import copy
import time
from typing import Any

import httpx
import pytest

from tests.server.harness import RunningServer

GROUP = "ratchet.example.com"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
BASE = f"/apis/{GROUP}/v1/namespaces/default/widgets"
MERGE = {"Content-Type": "application/merge-patch+json"}


def _schema(tight: bool) -> dict[str, Any]:
    name: dict[str, Any] = {"type": "string"}
    mode: dict[str, Any] = {"type": "string"}
    code: dict[str, Any] = {"type": "string"}
    if tight:
        name["maxLength"] = 3
        mode["enum"] = ["a", "b"]
        code["x-kubernetes-validations"] = [
            {"rule": "self.startsWith('x')", "message": "must start with x"}
        ]
    return {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "name": name,
                    "mode": mode,
                    "code": code,
                    "count": {"type": "integer"},
                },
            },
            "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
        },
    }


def _crd(tight: bool) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {"openAPIV3Schema": _schema(tight)},
                }
            ],
        },
    }


def _widget(name: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Widget",
        "metadata": {"name": name},
        "spec": {"name": "toolong", "mode": "zz", "code": "yy", "count": 1},
    }


def _wait(check: Any, what: str) -> None:
    deadline = time.monotonic() + 5
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


@pytest.fixture(scope="module")
def widgets(server: RunningServer) -> list[str]:
    """Widgets stored under a loose schema, which is then tightened."""
    names = ["w1", "w2", "w3", "w4", "w5", "w6"]
    with server.client() as c:
        assert c.post(CRDS, json=_crd(False)).status_code == 201
        _wait(lambda: c.get(BASE).status_code == 200, "the CRD was not served within 5 s")
        for name in names:
            assert c.post(BASE, json=_widget(name)).status_code == 201
        stored = c.get(f"{CRDS}/widgets.{GROUP}").json()
        tight = _crd(True)
        tight["metadata"] = stored["metadata"]
        assert c.put(f"{CRDS}/widgets.{GROUP}", json=tight).status_code == 200
        _wait(
            lambda: (
                c.post(BASE, json=_widget("probe"), params={"dryRun": "All"}).status_code == 422
            ),
            "the tightened schema was not in force within 5 s",
        )
    return names


TOO_LONG = "spec.name: Too long: may not be more than 3 bytes"
CEL_WARNING = '299 - "spec.code: Invalid value: \\"yy\\": must start with x"'


def test_a_create_breaking_the_schema_is_refused(client: httpx.Client, widgets: list[str]) -> None:
    refused = client.post(BASE, json=_widget("new"))
    assert refused.status_code == 422
    body = refused.json()
    assert body["reason"] == "Invalid"
    messages = [f"{c['field']}: {c['message']}" for c in body["details"]["causes"]]
    assert TOO_LONG in messages
    assert 'spec.mode: Unsupported value: "zz": supported values: "a", "b"' in messages


def test_put_of_other_fields_is_ratcheted_with_a_cel_warning(
    client: httpx.Client, widgets: list[str]
) -> None:
    current = client.get(f"{BASE}/w1").json()
    current["spec"]["count"] = 2
    replaced = client.put(f"{BASE}/w1", json=current)
    assert replaced.status_code == 200, replaced.text
    assert replaced.json()["spec"]["count"] == 2
    assert replaced.headers.get_list("Warning") == [CEL_WARNING]


def test_merge_patch_of_other_fields_is_ratcheted(client: httpx.Client, widgets: list[str]) -> None:
    patched = client.patch(f"{BASE}/w2", content=b'{"spec":{"count":3}}', headers=MERGE)
    assert patched.status_code == 200, patched.text
    assert patched.headers.get_list("Warning") == [CEL_WARNING]


def test_json_patch_of_other_fields_is_ratcheted(client: httpx.Client, widgets: list[str]) -> None:
    patched = client.patch(
        f"{BASE}/w3",
        content=b'[{"op":"replace","path":"/spec/count","value":4}]',
        headers={"Content-Type": "application/json-patch+json"},
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["spec"]["count"] == 4


def test_server_side_apply_of_other_fields_is_ratcheted(
    client: httpx.Client, widgets: list[str]
) -> None:
    applied = client.patch(
        f"{BASE}/w4",
        params={"fieldManager": "tester", "force": "true"},
        json={
            "apiVersion": f"{GROUP}/v1",
            "kind": "Widget",
            "metadata": {"name": "w4"},
            "spec": {"count": 5},
        },
        headers={"Content-Type": "application/apply-patch+yaml"},
    )
    assert applied.status_code == 200, applied.text
    assert applied.json()["spec"] == {"name": "toolong", "mode": "zz", "code": "yy", "count": 5}


def test_status_update_is_ratcheted(client: httpx.Client, widgets: list[str]) -> None:
    current = client.get(f"{BASE}/w5").json()
    current["status"] = {"phase": "Ready"}
    replaced = client.put(f"{BASE}/w5/status", json=current)
    assert replaced.status_code == 200, replaced.text
    assert replaced.json()["status"] == {"phase": "Ready"}
    patched = client.patch(
        f"{BASE}/w5/status", content=b'{"status":{"phase":"Done"}}', headers=MERGE
    )
    assert patched.status_code == 200, patched.text


def test_changing_an_offending_value_is_refused(client: httpx.Client, widgets: list[str]) -> None:
    patched = client.patch(f"{BASE}/w6", content=b'{"spec":{"name":"longer"}}', headers=MERGE)
    assert patched.status_code == 422
    causes = patched.json()["details"]["causes"]
    assert [f"{c['field']}: {c['message']}" for c in causes] == [
        TOO_LONG,
        "<nil>: Invalid value: null: some validation rules were not checked because the object "
        "was invalid; correct the existing errors to complete validation",
    ]
    fixed = client.patch(
        f"{BASE}/w6", content=b'{"spec":{"name":"ok","mode":"a","code":"xy"}}', headers=MERGE
    )
    assert fixed.status_code == 200, fixed.text
    assert fixed.headers.get_list("Warning") == []


def test_a_crd_default_failing_its_cel_rule_is_refused(client: httpx.Client) -> None:
    crd = copy.deepcopy(_crd(True))
    crd["metadata"]["name"] = f"gadgets.{GROUP}"
    crd["spec"]["names"] = {"plural": "gadgets", "kind": "Gadget"}
    code = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    code["properties"]["code"]["default"] = "yy"
    refused = client.post(CRDS, json=crd)
    assert refused.status_code == 422
    assert refused.json()["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "yy": must start with x',
            "field": "spec.validation.openAPIV3Schema.properties[spec].properties[code].default",
        }
    ]
    code["properties"]["code"]["default"] = "xy"
    assert client.post(CRDS, json=crd).status_code == 201
