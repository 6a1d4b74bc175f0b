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
from kstore.errors import MethodNotAllowed, NotFound
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


def _versioned_crd(storage: str) -> dict[str, Any]:
    schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    return {
        "metadata": {"name": "dials.versions.example.com"},
        "spec": {
            "group": "versions.example.com",
            "scope": "Cluster",
            "names": {"plural": "dials", "kind": "Dial"},
            "versions": [
                {"name": "v1", "served": True, "storage": storage == "v1", "schema": schema},
                {"name": "v2", "served": True, "storage": storage == "v2", "schema": schema},
            ],
        },
    }


def _dials(client: kstore.Client, version: str) -> Any:
    deadline = time.monotonic() + 5
    while True:
        try:
            return client.resource(f"versions.example.com/{version}", "dials")
        except NotFound:
            assert time.monotonic() < deadline, "the CRD was not served in time"
            time.sleep(0.02)


def test_versions_convert_and_the_storage_version_may_change(tmp_path: Path) -> None:
    # v1 says "level"; the hub (v2, the later storage version) says "value".
    def v1_to_hub(obj: Object) -> Object:
        spec = dict(obj.get("spec") or {})
        if "level" in spec:
            spec["value"] = spec.pop("level")
        return {**obj, "spec": spec}

    def hub_to_v1(obj: Object) -> Object:
        spec = dict(obj.get("spec") or {})
        if "value" in spec:
            spec["level"] = spec.pop("value")
        return {**obj, "spec": spec}

    conversions = {("versions.example.com/v1", "Dial"): (v1_to_hub, hub_to_v1)}
    with kstore.open(f"lmdb://{tmp_path / 'store'}", conversions=conversions) as client:
        crds = client.resource("apiextensions.k8s.io/v1", "customresourcedefinitions")
        crds.create(_versioned_crd("v1"))
        _dials(client, "v1").create({"metadata": {"name": "old"}, "spec": {"level": 1}})
        assert _dials(client, "v2").get("old")["spec"] == {"value": 1}

        # A patch, not get-then-update: the CRD's status controller may still be writing
        # its conditions after the create.
        crds.patch("dials.versions.example.com", {"spec": _versioned_crd("v2")["spec"]})
        deadline = time.monotonic() + 5
        while client.scheme.definition("versions.example.com", "Dial").storage_version != "v2":
            assert time.monotonic() < deadline, "the new storage version was not served"
            time.sleep(0.02)
        _dials(client, "v2").create({"metadata": {"name": "new"}, "spec": {"value": 2}})
        # Objects stored in either version read in both.
        assert _dials(client, "v1").get("new")["spec"] == {"level": 2}
        assert _dials(client, "v2").get("old")["spec"] == {"value": 1}
        stored = crds.get("dials.versions.example.com")["status"]["storedVersions"]
        assert stored == ["v1", "v2"]


def test_a_terminating_crd_refuses_creates_until_its_objects_are_gone(tmp_path: Path) -> None:
    with kstore.open(f"lmdb://{tmp_path / 'store'}") as client:
        crds = client.resource("apiextensions.k8s.io/v1", "customresourcedefinitions")
        crds.create(_crd())
        gateways = _served(client)
        gateways.create({"metadata": {"name": "kept", "finalizers": ["example.com/keep"]}})
        crds.delete(f"gateways.{GROUP}")  # waits for its objects: one holds a finalizer
        deadline = time.monotonic() + 5
        while True:
            try:
                _served(client).create({"metadata": {"name": f"late{time.monotonic_ns()}"}})
            except MethodNotAllowed as refused:
                assert refused.code == 405
                assert refused.message == (
                    "create not allowed while custom resource definition is terminating"
                )
                break
            assert time.monotonic() < deadline, "creates were still allowed"
            time.sleep(0.02)
        kept = _served(client).get("kept")
        kept["metadata"]["finalizers"] = []
        _served(client).update(kept)
        deadline = time.monotonic() + 10
        while True:
            try:
                crds.get(f"gateways.{GROUP}")
            except NotFound:
                break
            assert time.monotonic() < deadline, "the CRD did not go once its objects went"
            time.sleep(0.05)
