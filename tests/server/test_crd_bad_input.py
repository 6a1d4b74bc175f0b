"""Bad CRDs and bad custom objects on a real ``kstore serve``: each refused with a 4xx Status
in Kubernetes' words, and the server unharmed afterwards."""

from __future__ import annotations

import time
from typing import Any

import httpx
import orjson
import pytest

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def _crd(name: str, spec_schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{name}s.bad.example.com"},
        "spec": {
            "group": "bad.example.com",
            "scope": "Namespaced",
            "names": {"plural": f"{name}s", "kind": name.capitalize()},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "properties": {"spec": spec_schema}}
                    },
                }
            ],
        },
    }


def _refused(client: httpx.Client, body: dict[str, Any], code: int = 422) -> dict[str, Any]:
    answer = client.post(CRDS, json=body)
    assert answer.status_code == code, answer.text
    status: dict[str, Any] = answer.json()
    assert status["kind"] == "Status" and status["code"] == code
    return status


@pytest.fixture(autouse=True)
def _unharmed(client: httpx.Client) -> Any:
    yield
    assert client.get("/readyz").status_code == 200
    assert client.get("/api/v1/namespaces/default").status_code == 200


def test_a_non_structural_schema_is_refused(client: httpx.Client) -> None:
    status = _refused(client, _crd("loose", {"properties": {"a": {"type": "string"}}}))
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueRequired",
            "message": "Required value: must not be empty for specified object fields",
            "field": "spec.validation.openAPIV3Schema.properties[spec].type",
        }
    ]


def test_a_rule_that_compares_a_field_with_the_wrong_type_is_refused(
    client: httpx.Client,
) -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {"replicas": {"type": "integer"}},
                "x-kubernetes-validations": [{"rule": "self.replicas == 'three'"}],
            }
        },
    }
    message = _refused(client, _crd("mistyped", schema))["message"]
    assert (
        "compilation failed: ERROR: <input>:1:15: found no matching overload for '_==_' "
        "applied to '(int, string)'" in message
    )


def test_a_rule_that_does_not_compile_is_refused_with_the_compilers_message(
    client: httpx.Client,
) -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "self.a <= self.b"}],
    }
    message = _refused(client, _crd("uncompiled", schema))["message"]
    assert "x-kubernetes-validations[0].rule: Invalid value: " in message
    assert "compilation failed: ERROR: <input>:1:15: undefined field 'b'" in message


def test_a_rule_over_the_cost_budget_is_refused(client: httpx.Client) -> None:
    schema = {
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"type": "string"}}},
        "x-kubernetes-validations": [
            {"rule": "self.items.all(x, self.items.all(y, self.items.all(z, x + y + z != '')))"}
        ],
    }
    message = _refused(client, _crd("costly", schema))["message"]
    assert (
        "x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by "
        "factor of more than 100x (try simplifying the rule, or adding maxItems, "
        "maxProperties, and maxLength where arrays, maps, and strings are declared)"
    ) in message


def test_a_schema_over_the_request_limit_is_413(client: httpx.Client) -> None:
    properties = {
        f"field{i:06d}": {"type": "string", "description": "x" * 200} for i in range(14_000)
    }
    body = orjson.dumps(_crd("huge", {"type": "object", "properties": properties}))
    assert len(body) > 3 * 1024 * 1024
    answer = client.post(CRDS, content=body, headers={"Content-Type": "application/json"})
    assert answer.status_code == 413
    assert answer.json()["reason"] == "RequestEntityTooLarge"


def test_a_large_schema_under_the_limit_is_served(client: httpx.Client) -> None:
    properties = {
        f"field{i:05d}": {"type": "string", "description": "x" * 200} for i in range(9_000)
    }
    body = _crd("large", {"type": "object", "properties": properties})
    assert 2 * 1024 * 1024 < len(orjson.dumps(body)) < 3 * 1024 * 1024
    assert client.post(CRDS, json=body).status_code == 201
    deadline = time.monotonic() + 20
    path = "/apis/bad.example.com/v1/namespaces/default/larges"
    while client.get(path).status_code != 200:
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_a_custom_object_nested_1000_levels_deep_is_refused(client: httpx.Client) -> None:
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    assert client.post(CRDS, json=_crd("deep", schema)).status_code == 201
    path = "/apis/bad.example.com/v1/namespaces/default/deeps"
    deadline = time.monotonic() + 10
    while client.get(path).status_code != 200:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    head = b'{"apiVersion":"bad.example.com/v1","kind":"Deep","metadata":{"name":"d"},"spec":'
    for depth, limit in ((1000, 254), (150, 100)):
        data = head + b'{"a":' * depth + b"{}" + b"}" * depth + b"}"
        answer = client.post(path, content=data, headers={"Content-Type": "application/json"})
        assert answer.status_code == 400
        assert answer.json()["message"] == (
            f"the object is nested deeper than the limit of {limit} levels"
        )
    shallow = {
        "apiVersion": "bad.example.com/v1",
        "kind": "Deep",
        "metadata": {"name": "d"},
        "spec": {"a": {"b": {"c": 1}}},
    }
    assert client.post(path, json=shallow).status_code == 201


def test_an_object_just_under_the_depth_limit_is_stored_and_read_back(
    client: httpx.Client,
) -> None:
    # Its managedFields nest about twice as deep as the object; reading it back (get, list,
    # the write's own answer) must not trip over them.
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    assert client.post(CRDS, json=_crd("nearlimit", schema)).status_code == 201
    path = "/apis/bad.example.com/v1/namespaces/default/nearlimits"
    deadline = time.monotonic() + 10
    while client.get(path).status_code != 200:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    depth = 98  # the object's root, spec and 98 levels below: 100 in all
    head = b'{"apiVersion":"bad.example.com/v1","kind":"Nearlimit","metadata":{"name":"n"},"spec":'
    data = head + b'{"a":' * depth + b"{}" + b"}" * depth + b"}"
    created = client.post(path, content=data, headers={"Content-Type": "application/json"})
    assert created.status_code == 201, created.text
    assert client.get(f"{path}/n").status_code == 200
    listed = client.get(path)
    assert listed.status_code == 200
    assert [item["metadata"]["name"] for item in listed.json()["items"]] == ["n"]
    too_deep = head.replace(b'"n"', b'"m"') + b'{"a":' * (depth + 1) + b"{}" + b"}" * (depth + 1)
    answer = client.post(
        path, content=too_deep + b"}", headers={"Content-Type": "application/json"}
    )
    assert answer.status_code == 400
