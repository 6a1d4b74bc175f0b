"""Encryption at rest on a real etcd: the values carry Kubernetes' prefix and authenticate the
full etcd key (so they read the same in kube-apiserver with the same key and ``--etcd-prefix``),
and a key rotation finished by the rewrite works on etcd's compare-and-swap."""

from __future__ import annotations

import pytest

from kstore.api.gvk import Object
from kstore.api.scheme import Scheme
from kstore.registry.interface import CreateOptions
from kstore.storage.encryption import rewrite
from kstore.storage.etcd import EtcdBackend
from kstore.storage.interface import ListOptions
from tests.conftest_etcd import RawEtcd, etcd_backend, etcd_single
from tests.encryption import reference_crypto as ref
from tests.encryption.configs import KEY1, KEY2, config, provider
from tests.encryption.test_registry_encryption import open_registry, rewrite_targets
from tests.registry.objects import ctx, hub, registry_scheme

__all__ = ["etcd_backend", "etcd_single"]

pytestmark = pytest.mark.etcd

MARKER = "etcd-plaintext-91c2"


@pytest.fixture
def scheme() -> Scheme:
    return registry_scheme()


def secret(name: str) -> Object:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name},
        "stringData": {"password": MARKER},
    }


def test_values_on_etcd_authenticate_the_full_etcd_key(
    scheme: Scheme, etcd_backend: EtcdBackend, etcd_single: object
) -> None:
    cfg = config((["secrets"], [provider("aesgcm", ("key1", KEY1))]))
    registry = open_registry(scheme, etcd_backend, cfg, False)
    raw = RawEtcd(etcd_backend.config.endpoints[0])
    try:
        created = registry.store("", "secrets").create(
            ctx(), hub(scheme, secret("db")), CreateOptions()
        )
        etcd_key = f"{etcd_backend.config.prefix}/secrets/default/db".encode()
        value = bytes(raw.get(etcd_key).value)
        prefix = b"k8s:enc:aesgcm:v1:key1:"
        assert value.startswith(prefix)
        nonce, sealed = value[len(prefix) : len(prefix) + 12], value[len(prefix) + 12 :]
        plain = ref.gcm_decrypt(KEY1, nonce, sealed, etcd_key)
        assert b'"name":"db"' in plain and created.object["metadata"]["uid"].encode() in plain
    finally:
        raw.close()
        registry.close()


@pytest.mark.parametrize("watch_cache", [False, True], ids=["backend", "watch-cache"])
def test_key_rotation_and_rewrite_on_etcd(
    scheme: Scheme, etcd_backend: EtcdBackend, etcd_single: object, watch_cache: bool
) -> None:
    old = config((["secrets"], [provider("secretbox", ("key1", KEY1))]))
    rotating = config((["secrets"], [provider("secretbox", ("key2", KEY2), ("key1", KEY1))]))
    new = config((["secrets"], [provider("secretbox", ("key2", KEY2))]))
    backend = etcd_backend
    registry = open_registry(scheme, backend, old, watch_cache)
    try:
        for name in ("a", "b", "c"):
            registry.store("", "secrets").create(ctx(), hub(scheme, secret(name)), CreateOptions())
    finally:
        registry.close()
    registry = open_registry(scheme, backend, rotating, watch_cache)
    try:
        results = rewrite(rewrite_targets(registry, rotating))
        assert [(r.examined, r.rewritten) for r in results] == [(3, 3)]
        assert rewrite(rewrite_targets(registry, rotating))[0].rewritten == 0
    finally:
        registry.close()
    raw = RawEtcd(backend.config.endpoints[0])
    try:
        for name in ("a", "b", "c"):
            value = bytes(raw.get(f"{backend.config.prefix}/secrets/default/{name}".encode()).value)
            assert value.startswith(b"k8s:enc:secretbox:v1:key2:")
    finally:
        raw.close()
    registry = open_registry(scheme, backend, new, watch_cache)
    try:
        items = registry.store("", "secrets").list(ctx(), ListOptions()).items
        assert [o["metadata"]["name"] for o in items] == ["a", "b", "c"]
    finally:
        registry.close()
