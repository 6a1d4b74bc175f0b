"""A CRD with three versions of different shapes, and the conversion its webhook does.

``Backend`` of ``conversion.example.com``:

- ``v1alpha1``: ``spec.hostPort: "host:port"``;
- ``v1beta1``: ``spec.host`` and ``spec.port`` (an integer);
- ``v1`` (storage): ``spec.hostname`` (``host`` renamed) and ``spec.port``.

:func:`convert_review` answers a ConversionReview v1 as a well-behaved webhook does (every
version to every other, metadata untouched); tests wrap it to misbehave.
"""

from __future__ import annotations

from typing import Any

GROUP = "conversion.example.com"
PLURAL = "backends"
KIND = "Backend"
CRD_NAME = f"{PLURAL}.{GROUP}"
VERSIONS = ("v1alpha1", "v1beta1", "v1")


def _schema(spec_properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "openAPIV3Schema": {
            "type": "object",
            "properties": {
                "spec": {"type": "object", "properties": spec_properties},
                "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
            },
        }
    }


def backend_crd(
    client_config: dict[str, Any],
    *,
    group: str = GROUP,
    review_versions: list[str] | None = None,
) -> dict[str, Any]:
    """The CRD (in ``group``), converting through a webhook at ``client_config``."""
    port = {"type": "integer", "maximum": 65535}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{PLURAL}.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": PLURAL, "singular": "backend", "kind": KIND},
            "versions": [
                {
                    "name": "v1alpha1",
                    "served": True,
                    "storage": False,
                    "schema": _schema({"hostPort": {"type": "string"}}),
                },
                {
                    "name": "v1beta1",
                    "served": True,
                    "storage": False,
                    "schema": _schema({"host": {"type": "string"}, "port": port}),
                },
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": _schema({"hostname": {"type": "string"}, "port": port}),
                    "subresources": {"status": {}},
                },
            ],
            "conversion": {
                "strategy": "Webhook",
                "webhook": {
                    "clientConfig": client_config,
                    "conversionReviewVersions": review_versions or ["v1"],
                },
            },
        },
    }


def _to_parts(version: str, spec: dict[str, Any]) -> tuple[str | None, int | None]:
    if version == "v1alpha1":
        host_port = spec.get("hostPort")
        if not isinstance(host_port, str):
            return None, None
        host, _, port = host_port.rpartition(":")
        return host, int(port) if port.isdigit() else None
    host = spec.get("host") if version == "v1beta1" else spec.get("hostname")
    return host, spec.get("port")


def _from_parts(version: str, host: str | None, port: int | None) -> dict[str, Any]:
    if version == "v1alpha1":
        return {} if host is None else {"hostPort": f"{host}:{port}"}
    out: dict[str, Any] = {}
    if host is not None:
        out["host" if version == "v1beta1" else "hostname"] = host
    if port is not None:
        out["port"] = port
    return out


def convert_object(obj: dict[str, Any], api_version: str) -> dict[str, Any]:
    """``obj`` (a Backend of any version) in ``api_version``."""
    source = obj["apiVersion"].rpartition("/")[2]
    target = api_version.rpartition("/")[2]
    out = {**obj, "apiVersion": api_version}
    spec = obj.get("spec")
    if isinstance(spec, dict):
        host, port = _to_parts(source, spec)
        out["spec"] = _from_parts(target, host, port)
    return out


def convert_review(review: dict[str, Any]) -> dict[str, Any]:
    """The answer of a correct conversion webhook to a ConversionReview v1."""
    request = review["request"]
    desired = request["desiredAPIVersion"]
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "response": {
            "uid": request["uid"],
            "convertedObjects": [convert_object(o, desired) for o in request["objects"]],
            "result": {"status": "Success"},
        },
    }
