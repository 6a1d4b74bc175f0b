"""Encryption at rest through ``build_registry`` on a real LMDB store: the per-resource
transformer factory, a full key rotation (new first key, update, rewrite, old key removed),
turning encryption off, and an unreadable value as a 500."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kstore.api.gvk import Object
from kstore.api.scheme import Scheme
from kstore.errors import CorruptObject, KStoreError, NotFound, to_status
from kstore.registry.interface import CreateOptions, Registry, UpdateOptions
from kstore.registry.registry import RegistryConfig, StoreRegistry, build_registry
from kstore.storage.encryption import EncryptionConfig, RewriteResult, RewriteTarget, rewrite
from kstore.storage.interface import (
    Backend,
    IdentityTransformer,
    ListOptions,
    ResourceStorageConfig,
)
from kstore.storage.lmdb import LmdbBackend, LmdbConfig
from tests.encryption.configs import KEY1, KEY2, config, provider
from tests.registry.objects import (
    changed,
    config_map,
    ctx,
    deployment,
    hub,
    registry_scheme,
    wait_for,
)

MARKER = "registry-plaintext-5d1e"


class RawCodec:
    def encode(self, obj: Object) -> bytes:
        data = obj["raw"]
        assert isinstance(data, bytes)
        return data

    def decode(self, data: bytes) -> Object:
        return {"raw": data, "metadata": {}}


@pytest.fixture
def backend(tmp_path: Path) -> Iterator[LmdbBackend]:
    b = LmdbBackend(LmdbConfig(path=tmp_path / "lmdb", durable=False, compaction_interval_s=0))
    try:
        yield b
    finally:
        b.close()


@pytest.fixture
def scheme() -> Scheme:
    return registry_scheme()


@pytest.fixture(params=[False, True], ids=["backend", "watch-cache"])
def watch_cache(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


def open_registry(
    scheme: Scheme,
    backend: Backend,
    cfg: EncryptionConfig | None,
    watch_cache: bool,
    event_ttl_seconds: int = 3600,
) -> StoreRegistry:
    return build_registry(
        scheme,
        backend,
        RegistryConfig(
            watch_cache=watch_cache,
            namespace_retry_seconds=0.05,
            event_ttl_seconds=event_ttl_seconds,
            transformer_for=cfg.transformer_for if cfg is not None else None,
        ),
    )


def raw(backend: LmdbBackend, prefix: str, key: str) -> bytes:
    storage = backend.storage_for(
        ResourceStorageConfig(
            resource_prefix=prefix,
            codec=RawCodec(),
            get_attrs=lambda o: ({}, {}),
            transformer=IdentityTransformer(),
        )
    )
    data = storage.get(key)["raw"]
    assert isinstance(data, bytes)
    return data


def secret(name: str) -> Object:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name},
        "stringData": {"password": MARKER},
    }


def create(registry: Registry, scheme: Scheme, group: str, plural: str, obj: Object) -> Object:
    version = obj["apiVersion"]
    return (
        registry.store(group, plural)
        .create(ctx("default", version), hub(scheme, obj), CreateOptions())
        .object
    )


def rewrite_targets(registry: StoreRegistry, cfg: EncryptionConfig) -> list[RewriteTarget]:
    """What ``kstore encryption rewrite`` rewrites: every served resource a rule names."""
    return registry.rewrite_targets(cfg.covers)


def counts(results: list[RewriteResult]) -> dict[str, tuple[int, int]]:
    return {
        f"{r.resource}.{r.group}" if r.group else r.resource: (r.examined, r.rewritten)
        for r in results
    }


SECRETS_AND_APPS_KEY1 = [(["secrets", "*.apps"], [provider("aescbc", ("key1", KEY1))])]
ROTATING = [
    (
        ["secrets", "*.apps"],
        [provider("aescbc", ("key2", KEY2), ("key1", KEY1))],
    )
]
KEY2_ONLY = [(["secrets", "*.apps"], [provider("aescbc", ("key2", KEY2))])]


def test_only_the_named_resources_are_encrypted(
    scheme: Scheme, backend: LmdbBackend, watch_cache: bool
) -> None:
    registry = open_registry(scheme, backend, config(*SECRETS_AND_APPS_KEY1), watch_cache)
    try:
        create(registry, scheme, "", "secrets", secret("db"))
        create(registry, scheme, "", "configmaps", config_map("settings", note=MARKER))
        create(registry, scheme, "apps", "deployments", deployment("web"))
        stored = raw(backend, "/secrets", "/secrets/default/db")
        assert stored.startswith(b"k8s:enc:aescbc:v1:key1:")
        assert MARKER.encode() not in stored
        assert raw(backend, "/deployments", "/deployments/default/web").startswith(
            b"k8s:enc:aescbc:v1:key1:"
        )
        assert raw(backend, "/configmaps", "/configmaps/default/settings").startswith(b"{")
        got = registry.store("", "secrets").get(ctx(), "db")
        assert got["data"]["password"]  # stringData was folded into base64 data
        assert registry.store("", "configmaps").get(ctx(), "settings")["data"] == {"note": MARKER}
    finally:
        registry.close()


def test_key_rotation_new_key_update_rewrite_then_old_key_removed(
    scheme: Scheme, backend: LmdbBackend, watch_cache: bool
) -> None:
    names = [f"s{i}" for i in range(5)]
    registry = open_registry(scheme, backend, config(*SECRETS_AND_APPS_KEY1), watch_cache)
    try:
        for name in names:
            create(registry, scheme, "", "secrets", secret(name))
        create(registry, scheme, "apps", "deployments", deployment("web"))
        data = registry.store("", "secrets").get(ctx(), "s0")["data"]
    finally:
        registry.close()

    # 1. A new first key: old data still reads; an update writes with the new key.
    rotating = config(*ROTATING)
    registry = open_registry(scheme, backend, rotating, watch_cache)
    try:
        secrets = registry.store("", "secrets")
        assert [o["data"] for o in secrets.list(ctx(), ListOptions()).items] == [data] * 5

        def label(obj: Object) -> None:
            obj["metadata"].setdefault("labels", {})["rotated"] = "yes"

        secrets.update(ctx(), "s0", changed(label), UpdateOptions())
        assert raw(backend, "/secrets", "/secrets/default/s0").startswith(
            b"k8s:enc:aescbc:v1:key2:"
        )
        assert raw(backend, "/secrets", "/secrets/default/s1").startswith(
            b"k8s:enc:aescbc:v1:key1:"
        )
        # 2. The rewrite re-encrypts everything else with the new key.
        results = rewrite(rewrite_targets(registry, rotating), page_size=2)
        # Every apps resource is covered (*.apps); only the Deployment has an object.
        empty_apps = {"daemonsets.apps": (0, 0), "replicasets.apps": (0, 0)}
        assert counts(results) == {"secrets": (5, 4), "deployments.apps": (1, 1), **empty_apps}
        for name in names:
            assert raw(backend, "/secrets", f"/secrets/default/{name}").startswith(
                b"k8s:enc:aescbc:v1:key2:"
            )
        assert raw(backend, "/deployments", "/deployments/default/web").startswith(
            b"k8s:enc:aescbc:v1:key2:"
        )
        assert counts(rewrite(rewrite_targets(registry, rotating))) == {
            "secrets": (5, 0),
            "deployments.apps": (1, 0),
            **empty_apps,
        }
    finally:
        registry.close()

    # 3. The old key removed: everything still reads.
    registry = open_registry(scheme, backend, config(*KEY2_ONLY), watch_cache)
    try:
        items = registry.store("", "secrets").list(ctx(), ListOptions()).items
        assert [o["data"] for o in items] == [data] * 5
        assert items[0]["metadata"]["labels"] == {"rotated": "yes"}
        assert registry.store("apps", "deployments").get(ctx(), "web")["spec"]["replicas"] == 1
    finally:
        registry.close()


def test_identity_first_reads_encrypted_data_and_the_rewrite_decrypts_it(
    scheme: Scheme, backend: LmdbBackend, watch_cache: bool
) -> None:
    registry = open_registry(scheme, backend, config(*SECRETS_AND_APPS_KEY1), watch_cache)
    try:
        create(registry, scheme, "", "secrets", secret("old"))
    finally:
        registry.close()

    decrypting = config(
        (["secrets", "*.apps"], [provider("identity"), provider("aescbc", ("key1", KEY1))])
    )
    registry = open_registry(scheme, backend, decrypting, watch_cache)
    try:
        assert registry.store("", "secrets").get(ctx(), "old")["data"]
        create(registry, scheme, "", "secrets", secret("new"))
        assert raw(backend, "/secrets", "/secrets/default/new").startswith(b"{")
        assert raw(backend, "/secrets", "/secrets/default/old").startswith(b"k8s:enc:aescbc:")
        assert counts(rewrite(rewrite_targets(registry, decrypting)))["secrets"] == (2, 1)
        assert raw(backend, "/secrets", "/secrets/default/old").startswith(b"{")
    finally:
        registry.close()

    # Encryption fully off: a registry with no transformer factory reads everything.
    registry = open_registry(scheme, backend, None, watch_cache)
    try:
        items = registry.store("", "secrets").list(ctx(), ListOptions()).items
        assert [o["metadata"]["name"] for o in items] == ["new", "old"]
    finally:
        registry.close()


def test_a_value_under_a_removed_key_is_a_500_not_a_crash(
    scheme: Scheme, backend: LmdbBackend, watch_cache: bool
) -> None:
    registry = open_registry(scheme, backend, config(*SECRETS_AND_APPS_KEY1), watch_cache)
    try:
        create(registry, scheme, "", "secrets", secret("db"))
    finally:
        registry.close()
    # With the watch cache, its initial list fails too and it keeps re-listing (logged);
    # reads are answered by the storage meanwhile, with the same error.
    registry = open_registry(scheme, backend, config(*KEY2_ONLY), watch_cache)
    try:
        secrets = registry.store("", "secrets")
        for attempt in (
            lambda: secrets.get(ctx(), "db"),
            lambda: secrets.list(ctx(), ListOptions()),
        ):
            with pytest.raises(KStoreError) as info:
                attempt()
            assert isinstance(info.value, CorruptObject)
            status = to_status(info.value)
            assert status["code"] == 500
            assert (
                "no matching key was found for the provided AES transformer" in (status["message"])
            )
        # Other objects of the resource are still written and read.
        create(registry, scheme, "", "secrets", secret("fresh"))
        assert registry.store("", "secrets").get(ctx(), "fresh")["data"]
    finally:
        registry.close()


def test_rewritten_events_keep_expiring(scheme: Scheme, backend: LmdbBackend) -> None:
    """An update stores its own TTL, so the rewrite passes the resource's: a rewritten Event
    still expires."""
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "e"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
        "reason": "Started",
        "message": MARKER,
        "type": "Normal",
    }
    old = config((["events"], [provider("aesgcm", ("key1", KEY1))]))
    rotating = config((["events"], [provider("aesgcm", ("key2", KEY2), ("key1", KEY1))]))
    registry = open_registry(scheme, backend, old, False, event_ttl_seconds=2)
    try:
        create(registry, scheme, "", "events", event)
    finally:
        registry.close()
    registry = open_registry(scheme, backend, rotating, False, event_ttl_seconds=2)
    try:
        assert counts(rewrite(rewrite_targets(registry, rotating))) == {"events": (1, 1)}
        assert raw(backend, "/events", "/events/default/e").startswith(b"k8s:enc:aesgcm:v1:key2:")

        def gone() -> bool:
            try:
                registry.store("", "events").get(ctx(), "e")
            except NotFound:
                return True
            return False

        assert wait_for(gone, timeout=8.0)
    finally:
        registry.close()
