"""Bad CRDs and bad custom objects on a real ``kstore serve``: each refused with a 4xx Status
in Kubernetes' words, and the server unharmed afterwards."""

from __future__ import annotations

import time
from typing import Any

import httpx
import orjson
import pytest

from kstore.codec.json import loads as _loads

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def loads(data: bytes | str) -> Any:
    # What the server answers: its managedFields may nest past the 10,000 levels of a body.
    return _loads(data, max_depth=None)


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


def test_a_custom_object_nested_1000_levels_deep_is_stored_and_one_past_go_s_limit_refused(
    client: httpx.Client,
) -> None:
    # kube-apiserver's only depth limit is Go's JSON scanner (10,000 levels): a 1,000-level
    # object is stored, read back, and its managedFields (about as deep) with it.
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    assert client.post(CRDS, json=_crd("deep", schema)).status_code == 201
    path = "/apis/bad.example.com/v1/namespaces/default/deeps"
    deadline = time.monotonic() + 10
    while client.get(path).status_code != 200:
        assert time.monotonic() < deadline
        time.sleep(0.05)

    def body(name: str, depth: int) -> bytes:
        head = b'{"apiVersion":"bad.example.com/v1","kind":"Deep","metadata":{"name":"%s"},"spec":'
        below = depth - 2  # the root and spec count too
        return head % name.encode() + b'{"a":' * below + b"{}" + b"}" * below + b"}"

    created = client.post(
        path, content=body("d", 1000), headers={"Content-Type": "application/json"}
    )
    assert created.status_code == 201, created.text
    read = client.get(f"{path}/d")
    assert read.status_code == 200
    spec = loads(read.content)["spec"]  # deeper than the stdlib parser's default stack
    for _ in range(998):
        spec = spec["a"]
    assert spec == {}
    listed = loads(client.get(path).content)
    assert [item["metadata"]["name"] for item in listed["items"]] == ["d"]

    answer = client.post(
        path, content=body("e", 10_001), headers={"Content-Type": "application/json"}
    )
    assert answer.status_code == 400
    assert answer.json()["message"] == (
        "the object provided is unrecognized (must be of type Deep): couldn't get "
        "version/kind; json parse error: invalid character '{' exceeded max depth "
        '({"apiVersion":"bad.example.com ...)'
    )
    shallow = {
        "apiVersion": "bad.example.com/v1",
        "kind": "Deep",
        "metadata": {"name": "s"},
        "spec": {"a": {"b": {"c": 1}}},
    }
    assert client.post(path, json=shallow).status_code == 201
