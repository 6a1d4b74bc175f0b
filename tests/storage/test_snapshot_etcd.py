"""Snapshots of a real etcd: a save under concurrent writes is the prefix at one revision,
and snapshots move between LMDB and etcd both ways, keeping bytes and TTLs.

A restore into etcd compacts etcd at its last revision (older resourceVersions get 410), so
the tests that restore into the shared cluster have it replaced afterwards.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from kstore.errors import BadRequest, Expired
from kstore.storage.etcd import (
    EtcdBackend,
    EtcdConfig,
    EtcdSnapshotSource,
    EtcdSnapshotTarget,
)
from kstore.storage.interface import ListOptions, ResourceVersionMatch
from kstore.storage.lmdb import LmdbBackend, LmdbConfig, LmdbSnapshotSource, LmdbSnapshotTarget
from kstore.storage.snapshot import (
    InvalidSnapshot,
    SnapshotEntry,
    read_entries,
    restore_snapshot,
    save_snapshot,
    verify_snapshot,
)
from kstore.testing.etcd_cluster import EtcdCluster
from tests.conftest_etcd import RawEtcd, make_backend, replace_shared_cluster, shared_cluster
from tests.storage.conftest import pod, pod_config

pytestmark = pytest.mark.etcd

_BEFORE = 60


@pytest.fixture
def cluster(request: pytest.FixtureRequest) -> EtcdCluster:
    return shared_cluster(request.config)


@pytest.fixture
def backend(cluster: EtcdCluster) -> Iterator[EtcdBackend]:
    backend = make_backend(cluster)
    try:
        yield backend
    finally:
        backend.close()
        raw = RawEtcd(cluster.endpoints[0])
        try:
            raw.delete_prefix(backend.config.prefix.encode() + b"/")
        finally:
            raw.close()


@pytest.fixture
def compacts(request: pytest.FixtureRequest) -> Iterator[None]:
    """For a test that restores into the shared etcd: replace it afterwards. Listed first
    among a test's fixtures, so that it is torn down after the backend's own cleanup."""
    yield
    replace_shared_cluster(request.config)


def _config(backend: EtcdBackend, prefix: str | None = None) -> EtcdConfig:
    return EtcdConfig(
        endpoints=backend.config.endpoints,
        prefix=prefix or backend.config.prefix,
        compaction_interval=0,
    )


def _count(cluster: EtcdCluster, prefix: str) -> int:
    with EtcdSnapshotSource(
        EtcdConfig(endpoints=tuple(cluster.endpoints), prefix=prefix, compaction_interval=0)
    ) as source:
        _revision, entries = source.read()
        return sum(1 for _ in entries)


def test_save_under_writes_is_the_prefix_at_one_revision(
    backend: EtcdBackend, tmp_path: Path
) -> None:
    """A writer creates Pods and updates older ones, logging every acknowledged revision;
    the save reads 7-key pages meanwhile. Each key in the snapshot is at the last write
    acknowledged at or before the snapshot's revision, and no other key is there."""
    pods = backend.storage_for(pod_config())
    log: list[tuple[str, int]] = []
    errors: list[BaseException] = []
    save_done = threading.Event()
    may_save = threading.Event()

    def write() -> None:
        try:
            for i in range(3000):
                key = f"/pods/ns/p{i:04d}"
                log.append(
                    (
                        key,
                        int(
                            pods.create(key, pod("ns", f"p{i:04d}"))["metadata"]["resourceVersion"]
                        ),
                    )
                )
                if i >= 10:
                    older = f"/pods/ns/p{i - 10:04d}"
                    updated = pods.guaranteed_update(
                        older, lambda o, i=i: {**o, "spec": {"nodeName": f"n{i}"}}
                    )
                    log.append((older, int(updated["metadata"]["resourceVersion"])))
                if i == _BEFORE:
                    may_save.set()
                if save_done.is_set() and i > done_at + 20:
                    return
        except BaseException as exc:
            errors.append(exc)
            may_save.set()

    done_at = 10**9
    writer = threading.Thread(target=write)
    writer.start()
    assert may_save.wait(60)
    snapshot = tmp_path / "snap"
    with EtcdSnapshotSource(_config(backend), page_size=7) as source:
        info = save_snapshot(snapshot, source)
    done_at = len(log) // 2
    save_done.set()
    writer.join(60)
    assert not errors, errors

    expected: dict[bytes, int] = {}
    for key, revision in log:
        if revision <= info.revision:
            expected[key.encode()] = revision
    assert any(revision > info.revision for _key, revision in log), "writes went on"
    got = {e.key: e.mod_revision for e in read_entries(snapshot)}
    assert got == expected
    assert info.source == "etcd" and info.key_prefix == backend.config.prefix


def test_snapshots_move_from_lmdb_to_etcd_and_back(
    compacts: None, backend: EtcdBackend, cluster: EtcdCluster, tmp_path: Path
) -> None:
    lmdb_dir = tmp_path / "lmdb"
    with LmdbBackend(LmdbConfig(path=lmdb_dir)) as lmdb_backend:
        pods = lmdb_backend.storage_for(pod_config())
        for i in range(30):
            pods.create(f"/pods/ns/p{i:02d}", pod("ns", f"p{i:02d}", nodeName=f"n{i}"))
        pods.create("/pods/ns/ttl", pod("ns", "ttl"), ttl_seconds=600)
        pods.delete("/pods/ns/p07")
    from_lmdb = tmp_path / "from-lmdb"
    save_snapshot(from_lmdb, LmdbSnapshotSource(lmdb_dir))
    original = {e.key: e for e in read_entries(from_lmdb)}

    # LMDB -> etcd: the same bytes under the prefix, the TTL on a lease.
    before = backend.current_revision()
    with EtcdSnapshotTarget(_config(backend)) as target:
        _info, revision = restore_snapshot(from_lmdb, target)
    etcd_pods = backend.storage_for(pod_config())
    listed = etcd_pods.list("/pods/ns")
    assert [o["metadata"]["name"] for o in listed.items] == sorted(
        k.decode().rsplit("/", 1)[1] for k in original
    )
    assert all(before < int(o["metadata"]["resourceVersion"]) <= revision for o in listed.items)
    with pytest.raises(Expired):
        etcd_pods.list(
            "/pods/ns",
            ListOptions(
                resource_version=str(before), resource_version_match=ResourceVersionMatch.EXACT
            ),
        )
    with EtcdSnapshotSource(_config(backend)) as source:
        _rev, entries = source.read()
        in_etcd = {e.key: e for e in entries}
    assert {k: e.value for k, e in in_etcd.items()} == {k: e.value for k, e in original.items()}
    assert 590_000 <= in_etcd[b"/pods/ns/ttl"].ttl_ms <= 601_000 + 30_000
    assert [k for k, e in in_etcd.items() if e.ttl_ms] == [b"/pods/ns/ttl"]

    # etcd -> LMDB through the command line: same bytes, a TTL, revisions renumbered where
    # etcd's transactions gave several keys one revision.
    from_etcd = tmp_path / "from-etcd"
    etcd_flags = [
        "--etcd-servers",
        ",".join(backend.config.endpoints),
        "--etcd-prefix",
        backend.config.prefix,
    ]
    saved = subprocess.run(
        [sys.executable, "-m", "kstore.cli", "snapshot", "save", str(from_etcd), *etcd_flags],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert saved.returncode == 0, saved.stderr
    assert verify_snapshot(from_etcd).source == "etcd"
    lmdb_again = tmp_path / "lmdb-again"
    with LmdbSnapshotTarget(lmdb_again) as lmdb_target:
        restore_snapshot(from_etcd, lmdb_target)
    _rev, entries = LmdbSnapshotSource(lmdb_again).read()
    back = {e.key: e for e in entries}
    assert {k: e.value for k, e in back.items()} == {k: e.value for k, e in original.items()}
    assert len({e.mod_revision for e in back.values()}) == len(back)
    assert back[b"/pods/ns/ttl"].ttl_ms > 500_000
    with LmdbBackend(LmdbConfig(path=lmdb_again)) as lmdb_backend:
        got = lmdb_backend.storage_for(pod_config()).get("/pods/ns/p03")
        assert got["spec"] == {"nodeName": "n3"}


def test_a_non_empty_prefix_is_refused_without_force(
    compacts: None, backend: EtcdBackend, cluster: EtcdCluster, tmp_path: Path
) -> None:
    pods = backend.storage_for(pod_config())
    pods.create("/pods/ns/a", pod("ns", "a"))
    snapshot = tmp_path / "snap"
    with EtcdSnapshotSource(_config(backend)) as source:
        save_snapshot(snapshot, source)
    pods.create("/pods/ns/b", pod("ns", "b"))
    with (
        EtcdSnapshotTarget(_config(backend)) as target,
        pytest.raises(BadRequest, match="holds 2 keys"),
    ):
        restore_snapshot(snapshot, target)
    assert _count(cluster, backend.config.prefix) == 2
    with EtcdSnapshotTarget(_config(backend)) as target:
        restore_snapshot(snapshot, target, force=True)
    assert [o["metadata"]["name"] for o in pods.list("/pods/ns").items] == ["a"]


def test_a_corrupt_snapshot_writes_nothing_to_etcd(
    backend: EtcdBackend, cluster: EtcdCluster, tmp_path: Path
) -> None:
    pods = backend.storage_for(pod_config())
    for name in ("a", "b", "c"):
        pods.create(f"/pods/ns/{name}", pod("ns", name))
    snapshot = tmp_path / "snap"
    with EtcdSnapshotSource(_config(backend)) as source:
        save_snapshot(snapshot, source)
    data = bytearray(snapshot.read_bytes())
    data[-60] ^= 0x20
    snapshot.write_bytes(bytes(data))
    empty = backend.config.prefix + "-empty"
    with EtcdSnapshotTarget(_config(backend, empty)) as target, pytest.raises(InvalidSnapshot):
        restore_snapshot(snapshot, target)
    assert _count(cluster, empty) == 0


def test_values_bound_to_their_key_are_not_moved_to_another_prefix(
    backend: EtcdBackend, cluster: EtcdCluster, tmp_path: Path
) -> None:
    class Sealed:
        name = "lmdb"
        key_prefix = ""

        def read(self) -> tuple[int, Iterator[SnapshotEntry]]:
            return 5, iter(
                [
                    SnapshotEntry(b"/configmaps/ns/a", b"{}", 2, 2),
                    SnapshotEntry(b"/secrets/ns/s", b"k8s:enc:aesgcm:v1:key1:\x00sealed", 3, 3),
                ]
            )

    snapshot = tmp_path / "snap"
    save_snapshot(snapshot, Sealed())
    with (
        EtcdSnapshotTarget(_config(backend)) as target,
        pytest.raises(InvalidSnapshot, match=r"1 values .* aesgcm"),
    ):
        restore_snapshot(snapshot, target)
    assert _count(cluster, backend.config.prefix) == 0
