"""Protobuf as a resource's storage media type, on the LMDB backend.

Stored values carry Kubernetes' ``k8s\\x00`` envelope and are exactly the bytes Kubernetes would
store for the same object; reads, lists, updates and watches work as with JSON; JSON written
before a switch of media type stays readable (the storage decoder reads by content).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from kstore.api.gvk import Object
from kstore.api.kinds import builtin_scheme
from kstore.codec.protobuf import ProtobufSerializer
from kstore.codec.recognizer import MEDIA_TYPE_PROTOBUF, PROTOBUF_MAGIC
from kstore.codec.versioning import storage_codec
from kstore.storage.interface import ListOptions, ResourceStorageConfig, Storage, StorageCodec
from kstore.storage.lmdb import LmdbBackend, LmdbConfig
from tests.fixtures_path import k8s_testdata


class _Recording:
    """A transformer that keeps the last bytes written per key, to look at what is stored."""

    def __init__(self) -> None:
        self.stored: dict[str, bytes] = {}

    def to_storage(self, data: bytes, key: str) -> bytes:
        self.stored[key] = data
        return data

    def from_storage(self, data: bytes, key: str) -> tuple[bytes, bool]:
        return data, False


def _attrs(obj: Object) -> tuple[dict[str, str], dict[str, str]]:
    meta = obj.get("metadata") or {}
    fields = {
        "metadata.name": meta.get("name", ""),
        "metadata.namespace": meta.get("namespace", ""),
    }
    return dict(meta.get("labels") or {}), fields


def _storage(backend: LmdbBackend, prefix: str, codec: StorageCodec, rec: _Recording) -> Storage:
    config = ResourceStorageConfig(
        resource_prefix=prefix, codec=codec, get_attrs=_attrs, transformer=rec
    )
    return backend.storage_for(config)


@pytest.fixture
def backend(tmp_path: Path) -> Iterator[LmdbBackend]:
    store = LmdbBackend(LmdbConfig(path=tmp_path / "db", compaction_interval_s=0))
    yield store
    store.close()


def _hub(obj: dict[str, Any]) -> Object:
    return builtin_scheme().to_hub(obj)


def _deployment() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]},
            },
        },
    }


def test_values_are_stored_as_kubernetes_protobuf(backend: LmdbBackend) -> None:
    rec = _Recording()
    codec = storage_codec(builtin_scheme(), MEDIA_TYPE_PROTOBUF)
    deployments = _storage(backend, "/deployments", codec, rec)
    created = deployments.create("/deployments/default/web", _hub(_deployment()))
    stored = rec.stored["/deployments/default/web"]
    assert stored.startswith(PROTOBUF_MAGIC)
    as_v1 = ProtobufSerializer().decode(stored)
    assert as_v1["apiVersion"] == "apps/v1"
    assert as_v1["spec"]["replicas"] == 2
    got = deployments.get("/deployments/default/web")
    assert got["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    assert got["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"


def test_stored_bytes_equal_what_kubernetes_stores_for_the_fixture(backend: LmdbBackend) -> None:
    fixture = k8s_testdata() / "HEAD"
    rec = _Recording()
    codec = storage_codec(builtin_scheme(), MEDIA_TYPE_PROTOBUF)
    configmaps = _storage(backend, "/configmaps", codec, rec)
    obj = orjson.loads((fixture / "core.v1.ConfigMap.json").read_bytes())
    # Storage clears the fields it owns (resourceVersion, selfLink) before writing.
    obj["metadata"].pop("resourceVersion")
    obj["metadata"].pop("selfLink")
    key = f"/configmaps/{obj['metadata']['namespace']}/{obj['metadata']['name']}"
    configmaps.create(key, _hub(obj))
    assert rec.stored[key] == ProtobufSerializer().encode(obj)
    assert ProtobufSerializer().decode(rec.stored[key]) == obj


def test_update_list_and_watch_work_on_protobuf(backend: LmdbBackend) -> None:
    rec = _Recording()
    codec = storage_codec(builtin_scheme(), MEDIA_TYPE_PROTOBUF)
    deployments = _storage(backend, "/deployments", codec, rec)
    first = deployments.create("/deployments/default/web", _hub(_deployment()))
    watch = deployments.watch(
        "/deployments", ListOptions(resource_version=first["metadata"]["resourceVersion"])
    )
    try:

        def scale(current: Object) -> Object:
            return {**current, "spec": {**current["spec"], "replicas": 5}}

        updated = deployments.guaranteed_update("/deployments/default/web", scale)
        assert updated["spec"]["replicas"] == 5
        unchanged = deployments.guaranteed_update("/deployments/default/web", scale)
        assert unchanged["metadata"]["resourceVersion"] == updated["metadata"]["resourceVersion"]
        listed = deployments.list("/deployments")
        assert [o["spec"]["replicas"] for o in listed.items] == [5]
        event = watch.next(timeout=5)
        assert event is not None
        assert event.type == "MODIFIED"
        assert event.object["spec"]["replicas"] == 5
    finally:
        watch.stop()


def test_json_written_before_a_switch_stays_readable(backend: LmdbBackend) -> None:
    rec = _Recording()
    as_json = _storage(backend, "/deployments", storage_codec(builtin_scheme()), rec)
    as_json.create("/deployments/default/web", _hub(_deployment()))
    assert rec.stored["/deployments/default/web"].startswith(b"{")
    as_pb = _storage(
        backend, "/deployments", storage_codec(builtin_scheme(), MEDIA_TYPE_PROTOBUF), rec
    )
    assert as_pb.get("/deployments/default/web")["spec"]["replicas"] == 2

    def touch(current: Object) -> Object:
        labels = {**current["metadata"]["labels"], "touched": "yes"}
        return {**current, "metadata": {**current["metadata"], "labels": labels}}

    as_pb.guaranteed_update("/deployments/default/web", touch)
    assert rec.stored["/deployments/default/web"].startswith(PROTOBUF_MAGIC)
