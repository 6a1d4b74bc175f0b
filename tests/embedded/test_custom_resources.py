"""CustomResourceDefinitions through ``kstore.open``: a CRD created in-process is served
in-process (no HTTP), its objects are stored where kube-apiserver stores custom resources, and
a second client of the store finds the CRDs already served when it opens."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import orjson
import pytest

import kstore
from kstore.api.gvk import Object
from kstore.errors import NotFound
from kstore.storage.interface import ResourceStorageConfig
from kstore.storage.lmdb import LmdbBackend, LmdbConfig

GROUP = "gateway.networking.k8s.io"  # a *.k8s.io group: still stored under the group


def _crd() -> dict[str, Any]:
    return {
        "metadata": {
            "name": f"gateways.{GROUP}",
            # Kubernetes requires this annotation of CRDs in *.k8s.io groups.
            "annotations": {
                "api-approved.kubernetes.io": "https://github.com/kubernetes-sigs/gateway-api/pull/1"
            },
        },
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": "gateways", "kind": "Gateway"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": True,
                        }
                    },
                }
            ],
        },
    }


def _served(client: kstore.Client, timeout: float = 5.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        try:
            return client.resource(f"{GROUP}/v1", "gateways", namespace="default")
        except NotFound:
            assert time.monotonic() < deadline, "the CRD was not served in time"
            time.sleep(0.02)


class _Raw:
    def encode(self, obj: Object) -> bytes:
        raise AssertionError("read only")

    def decode(self, data: bytes) -> Object:
        return {"raw": data, "metadata": {}}


def test_a_crd_created_in_process_is_served_and_stored_as_kubernetes_stores_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "store"
    with kstore.open(f"lmdb://{path}") as client:
        crds = client.resource("apiextensions.k8s.io/v1", "customresourcedefinitions")
        crds.create(_crd())
        gateways = _served(client)
        made = gateways.create({"metadata": {"name": "gw"}, "spec": {"listeners": []}})
        assert made["apiVersion"] == f"{GROUP}/v1"
        assert gateways.get("gw")["spec"] == {"listeners": []}
        established = crds.get(f"gateways.{GROUP}")
        types = {c["type"]: c["status"] for c in established["status"]["conditions"]}
        assert types == {"NamesAccepted": "True", "Established": "True"}

    # A second opener serves the stored CRD before its first request.
    with kstore.open(f"lmdb://{path}") as again:
        assert again.resource(f"{GROUP}/v1", "gateways", namespace="default").get("gw")

    backend = LmdbBackend(LmdbConfig(path=path))
    try:
        raw = backend.storage_for(
            ResourceStorageConfig(
                resource_prefix=f"/{GROUP}/gateways", codec=_Raw(), get_attrs=lambda o: ({}, {})
            )
        ).get(f"/{GROUP}/gateways/default/gw")["raw"]
    finally:
        backend.close()
    stored = orjson.loads(raw)
    assert stored["apiVersion"] == f"{GROUP}/v1" and stored["kind"] == "Gateway"
    assert "resourceVersion" not in stored["metadata"]


def test_deleting_the_crd_stops_serving_it(tmp_path: Path) -> None:
    with kstore.open(f"lmdb://{tmp_path / 'store'}") as client:
        crds = client.resource("apiextensions.k8s.io/v1", "customresourcedefinitions")
        crds.create(_crd())
        _served(client).create({"metadata": {"name": "gw"}})
        crds.delete(f"gateways.{GROUP}")
        deadline = time.monotonic() + 5
        while True:
            try:
                client.resource(f"{GROUP}/v1", "gateways", namespace="default")
            except NotFound:
                break
            assert time.monotonic() < deadline
            time.sleep(0.02)
        with pytest.raises(NotFound):
            crds.get(f"gateways.{GROUP}")
