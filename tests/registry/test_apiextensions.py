"""apiextensions.k8s.io CustomResourceDefinition through the generic store: Kubernetes'
customresourcedefinition strategy (status on create, generation, storedVersions, the status
subresource) and where it is stored."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from kstore.api.scheme import Scheme
from kstore.codec.protobuf import MEDIA_TYPE_PROTOBUF
from kstore.errors import Invalid
from kstore.registry.interface import CreateOptions, UpdateOptions
from kstore.registry.registry import StoreRegistry
from kstore.storage.lmdb import LmdbBackend
from tests.registry.conftest import make_registry
from tests.registry.objects import changed, ctx, hub
from tests.registry.test_storage_layout import _raw

V1 = "apiextensions.k8s.io/v1"
STATUS = UpdateOptions(subresource="status")
PREFIX = "/apiextensions.k8s.io/customresourcedefinitions"


def _version(name: str, *, storage: bool) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"spec": {"type": "object"}}}
    return {"name": name, "served": True, "storage": storage, "schema": {"openAPIV3Schema": schema}}


def _crd() -> dict[str, Any]:
    return {
        "apiVersion": V1,
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.org"},
        "spec": {
            "group": "example.org",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [_version("v1", storage=True)],
        },
        # A client may not set status on create.
        "status": {"storedVersions": ["v0"], "conditions": [{"type": "Established"}]},
    }


def _create(registry: StoreRegistry, scheme: Scheme) -> dict[str, Any]:
    store = registry.store("apiextensions.k8s.io", "customresourcedefinitions")
    return store.create(ctx("", V1), hub(scheme, _crd()), CreateOptions()).object


def test_create_clears_status_and_records_the_storage_version(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    crd = _create(registry, scheme)
    assert crd["metadata"]["generation"] == 1
    assert "namespace" not in crd["metadata"]
    assert crd["status"] == {
        "conditions": None,
        "acceptedNames": {"plural": "", "kind": ""},
        "storedVersions": ["v1"],
    }
    assert crd["spec"]["names"]["singular"] == "widget"
    assert crd["spec"]["conversion"] == {"strategy": "None"}


def test_a_new_storage_version_joins_stored_versions(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    _create(registry, scheme)
    store = registry.store("apiextensions.k8s.io", "customresourcedefinitions")
    request = ctx("", V1)

    def add_v2(o: dict[str, Any]) -> None:
        o["spec"]["versions"] = [_version("v1", storage=False), _version("v2", storage=True)]

    updated = store.update(request, "widgets.example.org", changed(add_v2), UpdateOptions()).object
    assert updated["metadata"]["generation"] == 2
    assert updated["status"]["storedVersions"] == ["v1", "v2"]
    relabelled = store.update(
        request,
        "widgets.example.org",
        changed(lambda o: o["metadata"].update(labels={"a": "b"})),
        UpdateOptions(),
    ).object
    assert relabelled["metadata"]["generation"] == 2

    def drop_v1(o: dict[str, Any]) -> None:
        o["spec"]["versions"] = [_version("v2", storage=True)]

    with pytest.raises(Invalid) as caught:
        store.update(request, "widgets.example.org", changed(drop_v1), UpdateOptions())
    assert (
        'status.storedVersions[0]: Invalid value: "v1": missing from spec.versions'
        in caught.value.message
    )


def test_status_writes_keep_the_spec(registry: StoreRegistry, scheme: Scheme) -> None:
    _create(registry, scheme)
    store = registry.store("apiextensions.k8s.io", "customresourcedefinitions")

    def set_status(o: dict[str, Any]) -> None:
        o["status"]["acceptedNames"] = {"plural": "widgets", "kind": "Widget"}
        o["spec"]["scope"] = "Cluster"  # ignored by a status write

    stored = store.update(ctx("", V1), "widgets.example.org", changed(set_status), STATUS).object
    assert stored["status"]["acceptedNames"] == {"plural": "widgets", "kind": "Widget"}
    assert stored["spec"]["scope"] == "Namespaced"
    assert stored["metadata"]["generation"] == 1


def test_an_update_needs_a_resource_version(registry: StoreRegistry, scheme: Scheme) -> None:
    _create(registry, scheme)
    store = registry.store("apiextensions.k8s.io", "customresourcedefinitions")

    def unconditional(current: dict[str, Any]) -> dict[str, Any]:
        obj = orjson.loads(orjson.dumps(current))
        del obj["metadata"]["resourceVersion"]
        return dict(obj)

    with pytest.raises(Invalid) as caught:
        store.update(ctx("", V1), "widgets.example.org", unconditional, UpdateOptions())
    assert "metadata.resourceVersion" in caught.value.message


def test_crds_are_stored_under_their_group_in_the_storage_media_type(
    scheme: Scheme, backend: LmdbBackend
) -> None:
    registry = make_registry(scheme, backend, storage_media_type=MEDIA_TYPE_PROTOBUF)
    try:
        created = _create(registry, scheme)
    finally:
        registry.close()
    raw = _raw(backend, PREFIX, f"{PREFIX}/widgets.example.org")
    assert raw.startswith(b"k8s\x00")
    registry = make_registry(scheme, backend)
    try:
        store = registry.store("apiextensions.k8s.io", "customresourcedefinitions")
        read = store.get(ctx("", V1), "widgets.example.org")
    finally:
        registry.close()
    assert read["spec"] == created["spec"]
    assert read["status"] == created["status"]
