"""Encryption at rest on a real LMDB store, through the storage interface: what lands on disk,
reads and writes through every provider, unreadable values as CorruptObject, and a key
rotation finished by the rewrite."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kstore.api.gvk import Object
from kstore.errors import CorruptObject
from kstore.storage.encryption import EncryptionConfig, RewriteTarget, rewrite
from kstore.storage.interface import (
    EventType,
    IdentityTransformer,
    ListOptions,
    ResourceStorageConfig,
    Storage,
    ValueTransformer,
)
from kstore.storage.lmdb import LmdbBackend, LmdbConfig
from tests.encryption.configs import KEY1, KEY2, KEY3, provider, secrets_with
from tests.storage.conftest import JsonCodec, pod_attrs

MARKER = "plaintext-marker-7f3a9c"


class RawCodec:
    """Stored bytes as they are, so tests can look at what was written."""

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


def secrets(backend: LmdbBackend, transformer: ValueTransformer) -> Storage:
    return backend.storage_for(
        ResourceStorageConfig(
            resource_prefix="/secrets",
            codec=JsonCodec(),
            get_attrs=pod_attrs,
            transformer=transformer,
        )
    )


def with_config(backend: LmdbBackend, cfg: EncryptionConfig) -> Storage:
    return secrets(backend, cfg.transformer_for("", "secrets"))


def raw(backend: LmdbBackend, key: str) -> bytes:
    storage = backend.storage_for(
        ResourceStorageConfig(
            resource_prefix="/secrets",
            codec=RawCodec(),
            get_attrs=lambda o: ({}, {}),
            transformer=IdentityTransformer(),
        )
    )
    data = storage.get(key)["raw"]
    assert isinstance(data, bytes)
    return data


def secret(name: str, value: str = MARKER, namespace: str = "default") -> Object:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace},
        "stringData": {"password": value},
    }


def rv(obj: Object) -> int:
    return int(obj["metadata"]["resourceVersion"])


def target(storage: Storage) -> RewriteTarget:
    return RewriteTarget(
        group="", resource="secrets", storage=storage, resource_prefix="/secrets", namespaced=True
    )


PROVIDERS = {
    "aescbc": provider("aescbc", ("key1", KEY1)),
    "aesgcm": provider("aesgcm", ("key1", KEY1)),
    "secretbox": provider("secretbox", ("key1", KEY1)),
}


@pytest.mark.parametrize("kind", list(PROVIDERS))
def test_stored_values_carry_the_provider_prefix_and_no_plaintext(
    backend: LmdbBackend, kind: str
) -> None:
    store = with_config(backend, secrets_with(PROVIDERS[kind]))
    store.create("/secrets/default/db", secret("db"))
    stored = raw(backend, "/secrets/default/db")
    assert stored.startswith(f"k8s:enc:{kind}:v1:key1:".encode())
    assert MARKER.encode() not in stored
    assert b'"kind"' not in stored


def test_nothing_readable_reaches_the_disk(tmp_path: Path) -> None:
    path = tmp_path / "lmdb"
    backend = LmdbBackend(LmdbConfig(path=path, compaction_interval_s=0))
    try:
        store = with_config(backend, secrets_with(PROVIDERS["aesgcm"]))
        for i in range(20):
            store.create(f"/secrets/default/s{i}", secret(f"s{i}"))
        store.guaranteed_update("/secrets/default/s0", lambda o: {**o, "type": "Opaque"})
    finally:
        backend.close()
    image = b"".join(p.read_bytes() for p in path.iterdir() if p.is_file())
    assert image.count(b"k8s:enc:aesgcm:v1:key1:") >= 20
    assert MARKER.encode() not in image


@pytest.mark.parametrize("kind", list(PROVIDERS))
def test_every_storage_operation_reads_through_the_provider(
    backend: LmdbBackend, kind: str
) -> None:
    store = with_config(backend, secrets_with(PROVIDERS[kind]))
    created = store.create("/secrets/default/a", secret("a"))
    assert created["stringData"] == {"password": MARKER}
    watcher = store.watch("/secrets", ListOptions(resource_version=str(rv(created))))
    try:
        assert store.get("/secrets/default/a")["stringData"] == {"password": MARKER}
        updated = store.guaranteed_update(
            "/secrets/default/a", lambda o: {**o, "stringData": {"password": "second"}}
        )
        assert [o["metadata"]["name"] for o in store.list("/secrets").items] == ["a"]
        assert store.get("/secrets/default/a")["stringData"] == {"password": "second"}
        event = watcher.next(timeout=5)
        assert event is not None and event.type is EventType.MODIFIED
        assert event.object["stringData"] == {"password": "second"}
        deleted = store.delete("/secrets/default/a")
        assert deleted["stringData"] == {"password": "second"}
        assert rv(deleted) > rv(updated)
    finally:
        watcher.stop()


@pytest.mark.parametrize("kind", list(PROVIDERS))
def test_a_wrong_key_is_a_corrupt_object_not_a_crash(backend: LmdbBackend, kind: str) -> None:
    with_config(backend, secrets_with(PROVIDERS[kind])).create("/secrets/default/a", secret("a"))
    wrong = with_config(backend, secrets_with(provider(kind, ("key1", KEY2))))
    for attempt in (
        lambda: wrong.get("/secrets/default/a"),
        lambda: wrong.list("/secrets"),
        lambda: wrong.guaranteed_update("/secrets/default/a", lambda o: o),
    ):
        with pytest.raises(CorruptObject) as info:
            attempt()
        assert info.value.code == 500
        # aescbc cannot tell a wrong key from garbage: the padding check or the decoder fails.
        assert 'unable to transform key "/secrets/default/a"' in info.value.message or (
            kind == "aescbc" and 'unable to decode key "/secrets/default/a"' in info.value.message
        )
    # The store is still usable, and the value is intact for the right key.
    wrong.create("/secrets/default/b", secret("b"))
    right = with_config(backend, secrets_with(PROVIDERS[kind]))
    assert right.get("/secrets/default/a")["stringData"] == {"password": MARKER}


def test_a_watch_that_meets_an_unreadable_value_ends_with_an_error_event(
    backend: LmdbBackend,
) -> None:
    writer = with_config(backend, secrets_with(PROVIDERS["aesgcm"]))
    first = writer.create("/secrets/default/a", secret("a"))
    wrong = with_config(backend, secrets_with(provider("aesgcm", ("key1", KEY2))))
    watcher = wrong.watch("/secrets", ListOptions(resource_version=str(rv(first))))
    try:
        writer.create("/secrets/default/b", secret("b"))
        event = watcher.next(timeout=5)
        assert event is not None and event.type is EventType.ERROR
        assert event.object["code"] == 500
        assert "message authentication failed" in event.object["message"]
    finally:
        watcher.stop()


def test_aesgcm_values_copied_to_another_key_do_not_decrypt(backend: LmdbBackend) -> None:
    store = with_config(backend, secrets_with(PROVIDERS["aesgcm"]))
    store.create("/secrets/default/a", secret("a"))
    copier = backend.storage_for(
        ResourceStorageConfig(
            resource_prefix="/secrets",
            codec=RawCodec(),
            get_attrs=lambda o: ({}, {}),
            transformer=IdentityTransformer(),
        )
    )
    copier.create("/secrets/default/copy", {"raw": raw(backend, "/secrets/default/a")})
    with pytest.raises(CorruptObject, match="message authentication failed"):
        store.get("/secrets/default/copy")


def test_key_rotation_old_data_is_stale_until_rewritten(backend: LmdbBackend) -> None:
    old = secrets_with(provider("aescbc", ("key1", KEY1)))
    rotating = secrets_with(provider("aescbc", ("key2", KEY2), ("key1", KEY1)))
    after = secrets_with(provider("aescbc", ("key2", KEY2)))
    first = with_config(backend, old)
    for name in ("a", "b", "c"):
        first.create(f"/secrets/default/{name}", secret(name))

    store = with_config(backend, rotating)
    before = store.get("/secrets/default/a")
    assert before["stringData"] == {"password": MARKER}
    # Old data reads, and is reported stale.
    stored = raw(backend, "/secrets/default/a")
    assert stored.startswith(b"k8s:enc:aescbc:v1:key1:")
    plain, stale = rotating.transformer_for("", "secrets").from_storage(
        stored, "/secrets/default/a"
    )
    assert stale is True
    assert MARKER.encode() in plain
    # An update that changes nothing still writes, because the value was stale...
    rewritten = store.guaranteed_update("/secrets/default/a", lambda o: o)
    assert rv(rewritten) > rv(before)
    assert raw(backend, "/secrets/default/a").startswith(b"k8s:enc:aescbc:v1:key2:")
    # ...and once written with the first key it is not stale: no write the second time.
    assert rv(store.guaranteed_update("/secrets/default/a", lambda o: o)) == rv(rewritten)

    results = rewrite([target(store)], page_size=2)
    assert [(r.examined, r.rewritten, r.gone) for r in results] == [(3, 2, 0)]
    for name in ("a", "b", "c"):
        assert raw(backend, f"/secrets/default/{name}").startswith(b"k8s:enc:aescbc:v1:key2:")
    assert rewrite([target(store)])[0].rewritten == 0

    final = with_config(backend, after)
    assert [o["stringData"]["password"] for o in final.list("/secrets").items] == [MARKER] * 3
    with pytest.raises(CorruptObject, match="no matching key was found"):
        with_config(backend, old).get("/secrets/default/b")


def test_rewrite_moves_data_between_providers(backend: LmdbBackend) -> None:
    with_config(backend, secrets_with(PROVIDERS["aescbc"])).create(
        "/secrets/x/a", secret("a", namespace="x")
    )
    with_config(backend, secrets_with(PROVIDERS["secretbox"])).create(
        "/secrets/y/b", secret("b", namespace="y")
    )
    now = secrets_with(
        provider("aesgcm", ("new", KEY3)), PROVIDERS["aescbc"], PROVIDERS["secretbox"]
    )
    store = with_config(backend, now)
    assert rewrite([target(store)])[0].rewritten == 2
    for key in ("/secrets/x/a", "/secrets/y/b"):
        assert raw(backend, key).startswith(b"k8s:enc:aesgcm:v1:new:")
    only_new = with_config(backend, secrets_with(provider("aesgcm", ("new", KEY3))))
    assert len(only_new.list("/secrets").items) == 2


def test_rewrite_stops_at_an_unreadable_object(backend: LmdbBackend) -> None:
    with_config(backend, secrets_with(PROVIDERS["aesgcm"])).create(
        "/secrets/d/a", secret("a", namespace="d")
    )
    wrong = with_config(backend, secrets_with(provider("aesgcm", ("key1", KEY2))))
    with pytest.raises(CorruptObject):
        rewrite([target(wrong)])


def test_turning_encryption_on_rewrites_plain_data(backend: LmdbBackend) -> None:
    plain = secrets(backend, IdentityTransformer())
    plain.create("/secrets/default/a", secret("a"))
    assert raw(backend, "/secrets/default/a").startswith(b"{")
    store = with_config(
        backend, secrets_with(provider("secretbox", ("key1", KEY1)), provider("identity"))
    )
    assert store.get("/secrets/default/a")["stringData"] == {"password": MARKER}
    assert rewrite([target(store)])[0].rewritten == 1
    assert raw(backend, "/secrets/default/a").startswith(b"k8s:enc:secretbox:v1:key1:")
