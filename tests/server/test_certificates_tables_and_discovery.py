"""certificates.k8s.io at the REST edge: the CertificateSigningRequest discovery entry (short
name csr, approval and status subresources) and the table kubectl prints."""

from __future__ import annotations

from typing import Any

import orjson

from kstore.api.kinds import builtin_scheme
from kstore.server.discovery import Discovery
from kstore.server.openapi import OpenAPIV3
from kstore.server.table import build_table


def test_discovery_lists_certificate_signing_requests() -> None:
    discovery = Discovery(builtin_scheme())
    groups = orjson.loads(discovery.aggregated_groups.body)
    group = next(g for g in groups["items"] if g["metadata"]["name"] == "certificates.k8s.io")
    assert [v["version"] for v in group["versions"]] == ["v1"]
    resources = {r["resource"]: r for r in group["versions"][0]["resources"]}
    csr = resources["certificatesigningrequests"]
    assert csr["scope"] == "Cluster"
    assert csr["shortNames"] == ["csr"]
    subresources = {s["subresource"]: s["verbs"] for s in csr["subresources"]}
    assert subresources == {
        "approval": ["get", "patch", "update"],
        "status": ["get", "patch", "update"],
    }


def _cells(spec: dict[str, Any], status: dict[str, Any] | None = None) -> list[Any]:
    obj = {"metadata": {"name": "alice"}, "spec": spec, "status": status or {}}
    table = build_table(
        [obj], kind="CertificateSigningRequest", group="certificates.k8s.io", meta_version="v1"
    )
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name",
        "Age",
        "SignerName",
        "Requestor",
        "RequestedDuration",
        "Condition",
    ]
    cells: list[Any] = table["rows"][0]["cells"]
    return [cells[0], *cells[2:]]


def test_csr_rows_as_kubectl_prints_them() -> None:
    assert _cells({"username": "alice"}) == ["alice", "<none>", "alice", "<none>", "Pending"]
    spec = {"signerName": "example.com/s", "username": "bob", "expirationSeconds": 86400}
    conditions = [{"type": "Approved"}, {"type": "Failed"}]
    assert _cells(spec, {"conditions": conditions, "certificate": "Ag=="}) == [
        "alice",
        "example.com/s",
        "bob",
        "24h",
        "Approved,Failed,Issued",
    ]
    denied = {"conditions": [{"type": "Approved"}, {"type": "Denied"}]}
    assert _cells(spec, denied)[-1] == "Denied"


def test_openapi_document_of_certificates_v1() -> None:
    doc = OpenAPIV3(builtin_scheme(), "v1.36.0").document("apis/certificates.k8s.io/v1")
    assert doc is not None
    body = orjson.loads(doc.body)
    base = "/apis/certificates.k8s.io/v1/certificatesigningrequests/{name}"
    approval = body["paths"][f"{base}/approval"]
    assert {"get", "put", "patch"} <= set(approval)
    assert f"{base}/status" in body["paths"]
    schemas = body["components"]["schemas"]
    spec = schemas["io.k8s.api.certificates.v1.CertificateSigningRequestSpec"]
    assert sorted(spec["required"]) == ["request", "signerName"]
    assert spec["properties"]["extra"]["additionalProperties"]["type"] == "array"
    conditions = schemas["io.k8s.api.certificates.v1.CertificateSigningRequestStatus"][
        "properties"
    ]["conditions"]
    assert conditions["x-kubernetes-list-type"] == "map"
