"""What the registry writes: Kubernetes' key layout, the storage version and media type."""

from __future__ import annotations

from typing import Any

import pytest

from kstore.api.gvk import Object
from kstore.api.scheme import Scheme
from kstore.codec.protobuf import MEDIA_TYPE_PROTOBUF
from kstore.errors import BadRequest, NotFound
from kstore.registry.interface import CreateOptions
from kstore.registry.registry import RegistryConfig, resource_prefix
from kstore.storage.interface import ResourceStorageConfig
from kstore.storage.lmdb import LmdbBackend
from tests.registry.conftest import make_registry
from tests.registry.objects import config_map, ctx, deployment, hub, widget


class _RawCodec:
    """Stored bytes as they are, so tests can look at what the registry wrote."""

    def encode(self, obj: Object) -> bytes:
        data = obj["raw"]
        assert isinstance(data, bytes)
        return data

    def decode(self, data: bytes) -> Object:
        return {"raw": data, "metadata": {}}


def _raw(backend: LmdbBackend, prefix: str, key: str) -> bytes:
    storage = backend.storage_for(
        ResourceStorageConfig(
            resource_prefix=prefix, codec=_RawCodec(), get_attrs=lambda o: ({}, {})
        )
    )
    data = storage.get(key)["raw"]
    assert isinstance(data, bytes)
    return data


@pytest.mark.parametrize(
    ("group", "plural", "prefix"),
    [
        ("", "pods", "/pods"),
        ("", "services", "/services/specs"),
        ("apps", "deployments", "/deployments"),
        ("coordination.k8s.io", "leases", "/leases"),
        ("", "namespaces", "/namespaces"),
        ("example.com", "widgets", "/example.com/widgets"),
    ],
)
def test_resource_prefixes_follow_kube_apiserver(group: str, plural: str, prefix: str) -> None:
    assert resource_prefix(group, plural) == prefix


def _write_three(scheme: Scheme, backend: LmdbBackend, **config: Any) -> None:
    registry = make_registry(scheme, backend, **config)
    try:
        registry.store("apps", "deployments").create(
            ctx("default", "apps/v1beta1"), hub(scheme, deployment()), CreateOptions()
        )
        registry.store("", "configmaps").create(
            ctx(), hub(scheme, config_map("c")), CreateOptions()
        )
        registry.store("example.com", "widgets").create(
            ctx("default", "example.com/v1"), hub(scheme, widget()), CreateOptions()
        )
    finally:
        registry.close()


def test_objects_are_stored_as_json_in_their_storage_version(
    scheme: Scheme, backend: LmdbBackend
) -> None:
    _write_three(scheme, backend)
    stored = _raw(backend, "/deployments", "/deployments/default/web")
    assert stored.startswith(b"{") and b'"apiVersion":"apps/v1"' in stored
    assert b'"apiVersion":"v1"' in _raw(backend, "/configmaps", "/configmaps/default/c")
    widget_bytes = _raw(backend, "/example.com/widgets", "/example.com/widgets/default/w")
    assert b'"apiVersion":"example.com/v1"' in widget_bytes


def test_protobuf_storage_for_built_in_kinds_json_for_custom_ones(
    scheme: Scheme, backend: LmdbBackend
) -> None:
    _write_three(scheme, backend, storage_media_type=MEDIA_TYPE_PROTOBUF)
    assert _raw(backend, "/deployments", "/deployments/default/web").startswith(b"k8s\x00")
    assert _raw(backend, "/configmaps", "/configmaps/default/c").startswith(b"k8s\x00")
    assert _raw(backend, "/example.com/widgets", "/example.com/widgets/default/w").startswith(b"{")
    registry = make_registry(scheme, backend)
    try:
        back = registry.store("apps", "deployments").get(ctx(), "web")
        assert back["apiVersion"] == "apps/__internal" and back["spec"]["replicas"] == 1
    finally:
        registry.close()


def test_unknown_storage_media_type_is_refused() -> None:
    with pytest.raises(BadRequest):
        RegistryConfig(storage_media_type="application/xml")


def test_unserved_resources_have_no_store(scheme: Scheme, backend: LmdbBackend) -> None:
    registry = make_registry(scheme, backend)
    try:
        with pytest.raises(NotFound):
            registry.store("", "componentstatuses")
        plurals = {(s.definition.group, s.info.plural) for s in registry.stores()}
        assert {("", "pods"), ("apps", "deployments"), ("example.com", "widgets")} <= plurals
    finally:
        registry.close()
