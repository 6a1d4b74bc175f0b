"""kstore and Kubernetes on one etcd: objects Kubernetes serialized (the protobuf fixtures of
k8s.io/api) put by ``etcdctl`` under their Kubernetes keys are read, listed and watched by
kstore with the protobuf storage media type; what kstore writes there is, byte for byte, what
kube-apiserver writes (the fixture without resourceVersion and selfLink, which Kubernetes
never stores)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from google.protobuf.message_factory import GetMessageClass

from kstore.api.gvk import Object
from kstore.api.kinds import builtin_scheme
from kstore.api.pb import runtime_pb2
from kstore.api.proto_schema import message_for_gvk
from kstore.codec.protobuf import MEDIA_TYPE_PROTOBUF, PROTOBUF_MAGIC
from kstore.codec.versioning import storage_codec
from kstore.storage.etcd import EtcdBackend, kubernetes_resource_prefix
from kstore.storage.interface import EventType, ListOptions, ResourceStorageConfig, Storage
from kstore.testing.etcd_cluster import EtcdCluster
from kstore.testing.objects import rv_of
from tests.conftest_etcd import RawEtcd, make_backend
from tests.fixtures_path import fixture_files, fixture_name

pytestmark = [pytest.mark.etcd, pytest.mark.fixtures]


@dataclass(frozen=True)
class Kind:
    group: str
    resource: str
    namespaced: bool
    message: Any  # the generated protobuf message class
    storage_version: bool  # the version Kubernetes stores the kind in


def _served_kinds() -> dict[str, Kind]:
    """Every group/version/kind kstore serves in protobuf, by its fixtures' file stem (a kind
    stored as JSON only, as CustomResourceDefinitions are here, has no protobuf form to share
    with Kubernetes; a fixture of a kind without a message fails the codec's fixture tests)."""
    kinds = {}
    for served in builtin_scheme().resources():
        descriptor = message_for_gvk(served.gvk)
        if descriptor is None:
            continue
        definition = served.definition
        kinds[fixture_name(served.gvk)] = Kind(
            group=served.gvk.group,
            resource=served.info.plural,
            namespaced=served.info.namespaced,
            message=GetMessageClass(descriptor),
            storage_version=served.group_version == definition.storage_group_version,
        )
    return kinds


KINDS = _served_kinds()
#: Fixtures in the version Kubernetes stores their kind in (the others are read, not written).
STORAGE_VERSIONS = {name for name, kind in KINDS.items() if kind.storage_version}

PB_FIXTURES = [p for p in fixture_files(".pb") if p.name.removesuffix(".pb") in KINDS]


def _fixture_id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def _attrs(obj: Object) -> tuple[dict[str, str], dict[str, str]]:
    meta = obj.get("metadata") or {}
    fields = {
        "metadata.name": meta.get("name", ""),
        "metadata.namespace": meta.get("namespace", ""),
    }
    return dict(meta.get("labels") or {}), fields


def _config(kind: Kind) -> ResourceStorageConfig:
    return ResourceStorageConfig(
        resource_prefix=kubernetes_resource_prefix(kind.group, kind.resource),
        codec=storage_codec(builtin_scheme(), MEDIA_TYPE_PROTOBUF),
        get_attrs=_attrs,
        namespaced=kind.namespaced,
    )


def _key(kind: Kind, obj: Object) -> str:
    meta = obj["metadata"]
    prefix = kubernetes_resource_prefix(kind.group, kind.resource)
    if kind.namespaced:
        return f"{prefix}/{meta['namespace']}/{meta['name']}"
    return f"{prefix}/{meta['name']}"


def _without_server_fields(obj: Object) -> Object:
    """What Kubernetes stores of an object: no resourceVersion, no selfLink."""
    meta = {k: v for k, v in obj["metadata"].items() if k not in ("resourceVersion", "selfLink")}
    return {**obj, "metadata": meta}


def _etcdctl_put(cluster: EtcdCluster, key: str, value: bytes) -> None:
    etcdctl = shutil.which("etcdctl")
    if etcdctl is None:
        pytest.skip("etcdctl is not installed (scripts/install-etcd installs etcd-client)")
    subprocess.run(
        [etcdctl, "--endpoints", cluster.members[0].client_url, "put", key],
        input=value,
        check=True,
        capture_output=True,
        timeout=30,
        env={"ETCDCTL_API": "3", "PATH": "/usr/bin:/bin"},
    )


@pytest.fixture
def registry(etcd_single: EtcdCluster) -> Iterator[EtcdBackend]:
    """A backend with Kubernetes' prefix ``/registry`` (wiped afterwards)."""
    backend = make_backend(etcd_single, prefix="/registry")
    yield backend
    backend.close()
    raw = RawEtcd(etcd_single.endpoints[0])
    raw.delete_prefix(b"/registry/")
    raw.close()


def _expected_hub(fixture: Path, revision: int) -> Object:
    """The fixture's JSON form as kstore reads it from storage: what is stored (selfLink
    included, as Kubernetes' decoder leaves it), with the revision as resourceVersion."""
    obj = storage_codec(builtin_scheme()).decode(fixture.with_suffix(".json").read_bytes())
    obj["metadata"]["resourceVersion"] = str(revision)
    return obj


@pytest.mark.parametrize("fixture", PB_FIXTURES, ids=_fixture_id)
def test_kubernetes_written_objects_are_read_listed_and_watched(
    fixture: Path, etcd_single: EtcdCluster, registry: EtcdBackend
) -> None:
    kind = KINDS[fixture.name.removesuffix(".pb")]
    storage: Storage = registry.storage_for(_config(kind))
    written = orjson.loads(fixture.with_suffix(".json").read_bytes())
    key = _key(kind, written)
    start = registry.current_revision()
    watch_key = key.rsplit("/", 1)[0]
    watcher = storage.watch(watch_key, ListOptions(resource_version=str(start)))
    try:
        _etcdctl_put(etcd_single, "/registry" + key, fixture.read_bytes())

        got = storage.get(key)
        expected = _expected_hub(fixture, rv_of(got))
        assert got == expected
        assert storage.list(watch_key).items == [expected]
        event = watcher.next(timeout=10)
        assert event is not None and event.type is EventType.ADDED
        assert event.object == expected
    finally:
        watcher.stop()


def _kubernetes_bytes(fixture: Path, kind: Kind) -> bytes:
    """The bytes kube-apiserver stores for the fixture's object: the fixture itself, with the
    two fields it clears before writing set to "" at the protobuf level (Go's generated
    marshalling writes ObjectMeta's strings even when empty)."""
    data = fixture.read_bytes()
    assert data.startswith(PROTOBUF_MAGIC)
    envelope = runtime_pb2.Unknown()
    envelope.ParseFromString(data[len(PROTOBUF_MAGIC) :])
    message = kind.message()
    message.ParseFromString(envelope.raw)
    message.metadata.resourceVersion = ""
    message.metadata.selfLink = ""
    envelope.raw = message.SerializeToString(deterministic=True)
    return PROTOBUF_MAGIC + envelope.SerializeToString(deterministic=True)


@pytest.mark.parametrize(
    "fixture",
    [p for p in PB_FIXTURES if p.name.removesuffix(".pb") in STORAGE_VERSIONS],
    ids=_fixture_id,
)
def test_what_kstore_writes_is_what_kubernetes_writes(
    fixture: Path, etcd_single: EtcdCluster, registry: EtcdBackend
) -> None:
    kind = KINDS[fixture.name.removesuffix(".pb")]
    storage = registry.storage_for(_config(kind))
    external = _without_server_fields(orjson.loads(fixture.with_suffix(".json").read_bytes()))
    hub = builtin_scheme().to_hub(external)

    created = storage.create(_key(kind, external), hub)

    raw = RawEtcd(etcd_single.endpoints[0])
    try:
        stored = raw.get(("/registry" + _key(kind, external)).encode())
    finally:
        raw.close()
    assert stored is not None and stored.mod_revision == rv_of(created)
    assert stored.value == _kubernetes_bytes(fixture, kind)
