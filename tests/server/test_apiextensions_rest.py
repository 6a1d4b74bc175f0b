"""apiextensions.k8s.io/v1 CustomResourceDefinitions over HTTP against ``kstore serve``: create,
read, discovery, the default table (NAME, CREATED AT) and Kubernetes' Invalid status."""

from __future__ import annotations

from typing import Any

import httpx
import orjson

from kstore.api.kinds import builtin_scheme
from kstore.server.openapi import OpenAPIV3

BASE = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def _crd(name: str = "gadgets.example.org", plural: str = "gadgets") -> dict[str, Any]:
    schema = {"type": "object", "properties": {"spec": {"type": "object"}}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": name},
        "spec": {
            "group": "example.org",
            "scope": "Namespaced",
            "names": {"plural": plural, "kind": "Gadget", "shortNames": ["gd"]},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                }
            ],
        },
    }


def test_create_and_read_a_crd(client: httpx.Client) -> None:
    created = client.post(BASE, json=_crd())
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["status"]["storedVersions"] == ["v1"]
    assert body["spec"]["names"]["listKind"] == "GadgetList"
    assert body["metadata"]["generation"] == 1
    got = client.get(f"{BASE}/gadgets.example.org").json()
    assert got["metadata"]["uid"] == body["metadata"]["uid"]
    listed = client.get(BASE).json()
    assert listed["kind"] == "CustomResourceDefinitionList"
    assert [i["metadata"]["name"] for i in listed["items"]] == ["gadgets.example.org"]
    table = client.get(BASE, headers={"Accept": TABLE}).json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Created At"]
    assert table["rows"][0]["cells"][0] == "gadgets.example.org"


def test_an_invalid_crd_is_refused_with_its_causes(client: httpx.Client) -> None:
    refused = client.post(BASE, json=_crd(name="gizmos.example.org", plural="gadgetz"))
    assert refused.status_code == 422
    status = refused.json()
    assert status["reason"] == "Invalid"
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "gizmos.example.org": '
            'must be spec.names.plural+"."+spec.group',
            "field": "metadata.name",
        }
    ]


def test_discovery_lists_the_crd_resource(client: httpx.Client) -> None:
    resources = client.get("/apis/apiextensions.k8s.io/v1").json()["resources"]
    by_name = {r["name"]: r for r in resources}
    crds = by_name["customresourcedefinitions"]
    assert crds["namespaced"] is False
    assert crds["kind"] == "CustomResourceDefinition"
    assert crds["shortNames"] == ["crd", "crds"]
    assert crds["categories"] == ["api-extensions"]
    assert "customresourcedefinitions/status" in by_name


def test_openapi_document_of_apiextensions_v1() -> None:
    doc = OpenAPIV3(builtin_scheme(), "v1.36.0").document("apis/apiextensions.k8s.io/v1")
    assert doc is not None
    body = orjson.loads(doc.body)
    assert "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}/status" in body["paths"]
    schemas = body["components"]["schemas"]
    # Named after the Go package path, k8s.io/apiextensions-apiserver.
    prefix = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1."
    crd = schemas[prefix + "CustomResourceDefinition"]
    assert crd["x-kubernetes-group-version-kind"] == [
        {"group": "apiextensions.k8s.io", "kind": "CustomResourceDefinition", "version": "v1"}
    ]
    validation = schemas[prefix + "CustomResourceValidation"]["properties"]["openAPIV3Schema"]
    assert validation == {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    conditions = schemas[prefix + "CustomResourceDefinitionStatus"]["properties"]["conditions"]
    assert conditions["x-kubernetes-list-type"] == "map"
    assert conditions["x-kubernetes-list-map-keys"] == ["type"]


def test_strict_field_validation_looks_inside_schemas(client: httpx.Client) -> None:
    crd = _crd(name="doodads.example.org", plural="doodads")
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["typo"] = True
    schema["properties"]["spec"]["properties"] = {"size": {"type": "integer", "maxLenght": 3}}
    refused = client.post(f"{BASE}?fieldValidation=Strict", json=crd)
    assert refused.status_code == 400, refused.text
    message = refused.json()["message"]
    assert 'unknown field "spec.versions[0].schema.openAPIV3Schema.typo"' in message
    assert (
        'unknown field "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[size]'
        '.maxLenght"'
    ) in message
    # Warn (kubectl's default is Strict; other clients' Warn) drops them, as a Go decode does.
    created = client.post(f"{BASE}?fieldValidation=Warn", json=crd)
    assert created.status_code == 201, created.text
    stored = created.json()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert "typo" not in stored
    assert stored["properties"]["spec"]["properties"]["size"] == {"type": "integer"}
    assert len(created.headers.get_list("warning")) == 2
