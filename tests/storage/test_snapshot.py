"""Snapshots of LMDB stores: save beside a writing ``kstore serve``, the file format's checks,
restore, and the ``kstore snapshot`` verbs (run as ``python -m kstore.cli``).

A snapshot taken while a server writes must hold exactly the writes acknowledged at or before
its revision (checked against the writer's log of acknowledged resourceVersions); a file that
is corrupt, truncated or of another format version is refused before anything is written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from kstore.errors import BadRequest
from kstore.storage.interface import GetOptions, ResourceStorageConfig
from kstore.storage.lmdb import LmdbBackend, LmdbConfig, LmdbSnapshotSource, LmdbSnapshotTarget
from kstore.storage.snapshot import (
    FORMAT_VERSION,
    MAGIC,
    InvalidSnapshot,
    SnapshotEntry,
    read_entries,
    resource_of_key,
    restore_snapshot,
    save_snapshot,
    verify_snapshot,
)
from tests.encryption.configs import KEY1, provider, secrets_with
from tests.server.harness import start_server
from tests.storage.conftest import JsonCodec, pod, pod_attrs, pod_config

_WRITES_BEFORE = 80
_MAX_WRITES = 5000
_IGNORE = GetOptions(ignore_not_found=True)


def kstore_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kstore.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def stored(path: Path) -> dict[bytes, SnapshotEntry]:
    """Every live key of the LMDB store at ``path``, read as a snapshot reads it."""
    _revision, entries = LmdbSnapshotSource(path).read()
    return {e.key: e for e in entries}


@pytest.fixture
def small_store(tmp_path: Path) -> Path:
    """Four Pods (one with a 300 s TTL) and a ConfigMap; one Pod deleted, one updated."""
    path = tmp_path / "source"
    with LmdbBackend(LmdbConfig(path=path)) as backend:
        pods = backend.storage_for(pod_config())
        for i in range(5):
            pods.create(f"/pods/ns/p{i}", pod("ns", f"p{i}"), ttl_seconds=300 if i == 0 else None)
        pods.delete("/pods/ns/p3")
        pods.guaranteed_update("/pods/ns/p1", lambda o: {**o, "spec": {"nodeName": "n1"}})
        maps = backend.storage_for(
            ResourceStorageConfig(
                resource_prefix="/configmaps", codec=JsonCodec(), get_attrs=pod_attrs
            )
        )
        maps.create("/configmaps/ns/c", {"kind": "ConfigMap", "metadata": {"name": "c"}})
    return path


def test_save_status_and_restore_keep_bytes_revisions_and_ttls(
    small_store: Path, tmp_path: Path
) -> None:
    snapshot = tmp_path / "snap"
    info = save_snapshot(snapshot, LmdbSnapshotSource(small_store))
    assert info.entries == 5
    assert info.resources == {"pods": 4, "configmaps": 1}
    assert info.with_ttl == 1
    checked = verify_snapshot(snapshot)
    assert (checked.revision, checked.entries, checked.sha256) == (9, 5, info.sha256)
    assert checked.size == snapshot.stat().st_size

    before = {e.key: e for e in read_entries(snapshot)}
    source = stored(small_store)
    assert {k: (e.value, e.mod_revision) for k, e in before.items()} == {
        k: (e.value, e.mod_revision) for k, e in source.items()
    }
    target = tmp_path / "restored"
    with LmdbSnapshotTarget(target) as lmdb_target:
        restored_info, revision = restore_snapshot(snapshot, lmdb_target)
    assert restored_info.revision == revision == 9
    after = stored(target)
    assert after.keys() == before.keys()
    for key, entry in before.items():
        got = after[key]
        assert (got.value, got.mod_revision, got.create_revision) == (
            entry.value,
            entry.mod_revision,
            entry.create_revision,
        )
        if entry.ttl_ms:
            assert entry.ttl_ms - 10_000 < got.ttl_ms <= entry.ttl_ms
        else:
            assert got.ttl_ms == 0

    with LmdbBackend(LmdbConfig(path=target)) as backend:
        # The counter continues above the snapshot's revision; older revisions are history
        # the snapshot does not hold.
        assert backend.current_revision() == 9
        assert backend.compacted_revision == 9
        pods = backend.storage_for(pod_config())
        assert pods.get("/pods/ns/p1")["spec"] == {"nodeName": "n1"}
        assert pods.get("/pods/ns/p1")["metadata"]["resourceVersion"] == "8"
        created = pods.create("/pods/ns/new", pod("ns", "new"))
        assert created["metadata"]["resourceVersion"] == "10"


def test_ttls_run_on_after_a_restore(tmp_path: Path) -> None:
    source = tmp_path / "source"
    with LmdbBackend(LmdbConfig(path=source)) as backend:
        pods = backend.storage_for(pod_config())
        pods.create("/pods/ns/short", pod("ns", "short"), ttl_seconds=2)
        pods.create("/pods/ns/long", pod("ns", "long"))
    snapshot = tmp_path / "snap"
    save_snapshot(snapshot, LmdbSnapshotSource(source))
    target = tmp_path / "restored"
    with LmdbSnapshotTarget(target) as lmdb_target:
        restore_snapshot(snapshot, lmdb_target)
    assert set(stored(target)) == {b"/pods/ns/short", b"/pods/ns/long"}
    with LmdbBackend(LmdbConfig(path=target)) as backend:
        pods = backend.storage_for(pod_config())
        deadline = time.monotonic() + 10
        while pods.get("/pods/ns/short", _IGNORE) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert pods.get("/pods/ns/short", _IGNORE) == {}
        assert pods.get("/pods/ns/long")["metadata"]["name"] == "long"


# -- refusals --------------------------------------------------------------------------------


@pytest.fixture
def snapshot_file(small_store: Path, tmp_path: Path) -> Path:
    path = tmp_path / "snap"
    save_snapshot(path, LmdbSnapshotSource(small_store))
    return path


def _refused(snapshot: Path, target: Path, match: str) -> None:
    with LmdbSnapshotTarget(target) as lmdb_target, pytest.raises(InvalidSnapshot, match=match):
        restore_snapshot(snapshot, lmdb_target)
    assert not target.exists(), "nothing may be written for a refused snapshot"


def test_a_corrupt_snapshot_is_refused_and_nothing_written(
    snapshot_file: Path, tmp_path: Path
) -> None:
    data = bytearray(snapshot_file.read_bytes())
    data[len(data) // 2] ^= 0x01
    snapshot_file.write_bytes(bytes(data))
    _refused(snapshot_file, tmp_path / "target", "checksum does not match")


@pytest.mark.parametrize("keep", [5, 20, 0.5, -41, -1])
def test_a_truncated_snapshot_is_refused_and_nothing_written(
    snapshot_file: Path, tmp_path: Path, keep: float
) -> None:
    data = snapshot_file.read_bytes()
    cut = int(len(data) * keep) if isinstance(keep, float) else keep
    snapshot_file.write_bytes(data[:cut])
    _refused(snapshot_file, tmp_path / "target", "truncated|not start with")


def test_another_format_version_is_refused_by_name(snapshot_file: Path, tmp_path: Path) -> None:
    data = bytearray(snapshot_file.read_bytes())
    data[len(MAGIC) : len(MAGIC) + 4] = (FORMAT_VERSION + 1).to_bytes(4, "big")
    snapshot_file.write_bytes(bytes(data))
    _refused(snapshot_file, tmp_path / "target", f"format version {FORMAT_VERSION + 1}")


def test_a_file_that_is_no_snapshot_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.write_bytes(b'{"kind": "Pod"}\n')
    _refused(other, tmp_path / "target", "does not start with the snapshot magic")


def test_bytes_after_the_trailer_are_refused(snapshot_file: Path, tmp_path: Path) -> None:
    with snapshot_file.open("ab") as f:
        f.write(b"x")
    _refused(snapshot_file, tmp_path / "target", "bytes follow its trailer")


def test_a_non_empty_store_is_refused_without_force(
    snapshot_file: Path, small_store: Path, tmp_path: Path
) -> None:
    target = tmp_path / "busy"
    with LmdbBackend(LmdbConfig(path=target)) as backend:
        backend.storage_for(pod_config()).create("/pods/x/keep", pod("x", "keep"))
    with LmdbSnapshotTarget(target) as lmdb_target, pytest.raises(BadRequest, match="not empty"):
        restore_snapshot(snapshot_file, lmdb_target)
    assert set(stored(target)) == {b"/pods/x/keep"}
    with LmdbSnapshotTarget(target) as lmdb_target:
        restore_snapshot(snapshot_file, lmdb_target, force=True)
    assert stored(target).keys() == stored(small_store).keys()


def test_a_store_open_in_a_server_is_refused(snapshot_file: Path, tmp_path: Path) -> None:
    target = tmp_path / "open"
    with (
        LmdbBackend(LmdbConfig(path=target)),
        LmdbSnapshotTarget(target) as lmdb_target,
        pytest.raises(Exception, match="already open"),
    ):
        restore_snapshot(snapshot_file, lmdb_target)


def test_an_interrupted_restore_is_refused_until_restored_again(
    snapshot_file: Path, tmp_path: Path
) -> None:
    target = tmp_path / "half"

    def failing_entries() -> Iterator[SnapshotEntry]:
        for n, entry in enumerate(read_entries(snapshot_file)):
            if n == 2:
                raise OSError("disk gone")
            yield entry

    with LmdbSnapshotTarget(target) as lmdb_target:
        for entry in read_entries(snapshot_file):
            lmdb_target.inspect(entry)
        lmdb_target.check(force=False)
        with pytest.raises(OSError, match="disk gone"):
            lmdb_target.load(failing_entries(), 9, force=False)
    with pytest.raises(Exception, match="did not finish"):
        LmdbBackend(LmdbConfig(path=target))
    with LmdbSnapshotTarget(target) as lmdb_target:
        restore_snapshot(snapshot_file, lmdb_target, force=True)
    with LmdbBackend(LmdbConfig(path=target)) as backend:
        assert backend.current_revision() == 9


def test_keys_sharing_a_revision_are_renumbered_in_order(tmp_path: Path) -> None:
    class Entries:
        name = "etcd"
        key_prefix = ""

        def read(self) -> tuple[int, Iterator[SnapshotEntry]]:
            return 20, iter(
                [
                    SnapshotEntry(b"/pods/ns/a", b"{}", 10, 10),
                    SnapshotEntry(b"/pods/ns/b", b"{}", 10, 10),
                    SnapshotEntry(b"/pods/ns/c", b"{}", 11, 11),
                    SnapshotEntry(b"/pods/ns/d", b"{}", 15, 3),
                ]
            )

    snapshot = tmp_path / "snap"
    save_snapshot(snapshot, Entries())
    target = tmp_path / "restored"
    with LmdbSnapshotTarget(target) as lmdb_target:
        assert restore_snapshot(snapshot, lmdb_target)[1] == 20
    revisions = {k: e.mod_revision for k, e in stored(target).items()}
    assert revisions == {b"/pods/ns/a": 10, b"/pods/ns/b": 11, b"/pods/ns/c": 12, b"/pods/ns/d": 15}


def test_a_failed_save_leaves_no_file(tmp_path: Path) -> None:
    snapshot = tmp_path / "snap"
    with pytest.raises(BadRequest, match="no kstore LMDB store"):
        save_snapshot(snapshot, LmdbSnapshotSource(tmp_path / "missing"))
    assert list(tmp_path.iterdir()) == []


def test_resources_are_named_from_the_key_layout() -> None:
    assert resource_of_key(b"/pods/ns/a") == "pods"
    assert resource_of_key(b"/namespaces/default") == "namespaces"
    assert resource_of_key(b"/services/specs/ns/s") == "services/specs"
    assert resource_of_key(b"/example.com/widgets/ns/w") == "example.com/widgets"
    assert resource_of_key(b"/ranges/serviceips") == "ranges"


# -- beside a running server, through the command line ----------------------------------------


def test_save_beside_a_writing_server_restores_exactly_the_acknowledged_writes(
    tmp_path: Path,
) -> None:
    """One writer creates ConfigMaps through ``kstore serve`` and logs each acknowledged
    resourceVersion; ``kstore snapshot save`` runs on the server's directory meanwhile. The
    restored store holds exactly the ConfigMaps acknowledged at or before the snapshot's
    revision, with their resourceVersions and uids, and a server on it serves them."""
    data_dir = tmp_path / "data"
    server = start_server(data_dir)
    acked: dict[str, tuple[int, str]] = {}
    errors: list[BaseException] = []
    save_may_start = threading.Event()
    save_done = threading.Event()

    def write() -> None:
        # Bounded: a third of the writes before the save, the save, then as many again.
        try:
            with server.client() as http:
                for i in range(_MAX_WRITES):
                    body = {"metadata": {"name": f"cm-{i:04d}"}, "data": {"i": str(i)}}
                    response = http.post("/api/v1/namespaces/default/configmaps", json=body)
                    assert response.status_code == 201, response.text
                    meta = response.json()["metadata"]
                    acked[meta["name"]] = (int(meta["resourceVersion"]), meta["uid"])
                    if i == _WRITES_BEFORE:
                        save_may_start.set()
                    if save_done.is_set() and len(acked) > after_save + _WRITES_BEFORE:
                        return
        except BaseException as exc:
            errors.append(exc)
            save_may_start.set()

    snapshot = tmp_path / "snap"
    after_save = _MAX_WRITES
    writer = threading.Thread(target=write)
    writer.start()
    try:
        assert save_may_start.wait(120)
        saved = kstore_cli("snapshot", "save", snapshot, "--data-dir", data_dir)
        after_save = len(acked)
        save_done.set()
        writer.join(120)
    finally:
        server.stop()
    assert not errors, errors
    assert saved.returncode == 0, saved.stderr
    assert len(acked) < _MAX_WRITES

    status = kstore_cli("snapshot", "status", snapshot, "-o", "json")
    assert status.returncode == 0, status.stderr
    info = json.loads(status.stdout)
    revision = info["revision"]
    before = {n for n, (rv, _uid) in acked.items() if rv <= revision}
    after = {n for n, (rv, _uid) in acked.items() if rv > revision}
    assert before and after, "the save must fall inside the write load"
    assert info["resources"]["configmaps"] >= len(before)
    assert info["formatVersion"] == FORMAT_VERSION
    assert info["size"] == snapshot.stat().st_size

    restored_dir = tmp_path / "restored"
    restored = kstore_cli("snapshot", "restore", snapshot, "--data-dir", restored_dir)
    assert restored.returncode == 0, restored.stderr
    again = kstore_cli("snapshot", "restore", snapshot, "--data-dir", restored_dir)
    assert again.returncode == 1
    assert "not empty" in again.stderr

    keys = stored(restored_dir)
    prefix = b"/configmaps/default/"
    names = {k[len(prefix) :].decode() for k in keys if k.startswith(prefix + b"cm-")}
    assert names == before
    for name in before:
        assert keys[prefix + name.encode()].mod_revision == acked[name][0]

    server = start_server(restored_dir)
    try:
        first = min(before)
        response = httpx.get(f"{server.url}/api/v1/namespaces/default/configmaps/{first}")
        assert response.status_code == 200
        meta = response.json()["metadata"]
        assert (int(meta["resourceVersion"]), meta["uid"]) == acked[first]
        listed = httpx.get(f"{server.url}/api/v1/namespaces/default/configmaps").json()
        served = {item["metadata"]["name"] for item in listed["items"]}
        assert {n for n in served if n.startswith("cm-")} == before
        assert int(listed["metadata"]["resourceVersion"]) >= revision
    finally:
        server.stop()


def test_the_cli_refuses_a_corrupt_file_with_one_line(snapshot_file: Path, tmp_path: Path) -> None:
    data = bytearray(snapshot_file.read_bytes())
    data[-45] ^= 0xFF
    snapshot_file.write_bytes(bytes(data))
    target = tmp_path / "target"
    result = kstore_cli("snapshot", "restore", snapshot_file, "--data-dir", target)
    assert result.returncode == 1
    assert result.stderr.startswith("error: ") and "Traceback" not in result.stderr
    assert not target.exists()
    status = kstore_cli("snapshot", "status", snapshot_file)
    assert status.returncode == 1
    assert "not a valid kstore snapshot" in status.stderr


def test_status_prints_counts_per_resource(snapshot_file: Path) -> None:
    result = kstore_cli("snapshot", "status", snapshot_file)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "revision:       9" in lines
    assert "format version: 1" in lines
    assert any(line.split() == ["pods", "4"] for line in lines)
    assert any(line.split() == ["configmaps", "1"] for line in lines)
    assert f"size:           {os.path.getsize(snapshot_file)} bytes" in lines


def test_encrypted_values_stay_encrypted_and_decrypt_after_a_restore(tmp_path: Path) -> None:
    encryption = secrets_with(provider("aesgcm", ("gcm1", KEY1)))
    secrets_config = ResourceStorageConfig(
        resource_prefix="/secrets",
        codec=JsonCodec(),
        get_attrs=pod_attrs,
        transformer=encryption.transformer_for("", "secrets"),
    )
    source = tmp_path / "source"
    secret = {"kind": "Secret", "metadata": {"name": "s"}, "data": {"password": "aHVudGVyMg=="}}
    with LmdbBackend(LmdbConfig(path=source)) as backend:
        backend.storage_for(secrets_config).create("/secrets/ns/s", secret)
    snapshot = tmp_path / "snap"
    save_snapshot(snapshot, LmdbSnapshotSource(source))
    raw = snapshot.read_bytes()
    assert b"aHVudGVyMg==" not in raw
    assert [e.value[:23] for e in read_entries(snapshot)] == [b"k8s:enc:aesgcm:v1:gcm1:"]
    target = tmp_path / "restored"
    with LmdbSnapshotTarget(target) as lmdb_target:
        restore_snapshot(snapshot, lmdb_target)
    with LmdbBackend(LmdbConfig(path=target)) as backend:
        got = backend.storage_for(secrets_config).get("/secrets/ns/s")
    assert got["data"] == secret["data"]


def test_the_snapshot_bench_runs_on_a_small_store(tmp_path: Path) -> None:
    from bench.bench_snapshot import run

    lines = run(200, None, tmp_path)
    assert lines[0].startswith("200 Pods")
    names = ["snapshot save (LMDB)", "raw LMDB env.copy", "snapshot status", "snapshot restore"]
    assert len(lines) == 1 + len(names)
    for line, name in zip(lines[1:], names, strict=True):
        assert line.startswith(name) and line.endswith("MB/s"), line


def test_a_key_lmdb_cannot_hold_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    class Entries:
        name = "etcd"
        key_prefix = ""

        def read(self) -> tuple[int, Iterator[SnapshotEntry]]:
            return 9, iter(
                [
                    SnapshotEntry(b"/pods/ns/a", b"{}", 4, 4),
                    SnapshotEntry(b"/pods/ns/" + b"x" * 600, b"{}", 5, 5),
                ]
            )

    snapshot = tmp_path / "snap"
    save_snapshot(snapshot, Entries())
    _refused(snapshot, tmp_path / "target", "cannot be stored in LMDB")


def test_the_cli_names_a_file_it_cannot_write(small_store: Path, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dir" / "snap"
    result = kstore_cli("snapshot", "save", missing, "--data-dir", small_store)
    assert result.returncode == 1
    assert result.stderr.startswith("error: ") and "No such file or directory" in result.stderr
    assert not missing.parent.exists()
