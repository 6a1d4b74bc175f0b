"""The LMDB store as a whole: one directory, a lock, durable revisions, growth, closing."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import lmdb
import pytest

from kstore.errors import InternalError, NotFound, Unavailable
from kstore.storage._lmdb_records import META_FORMAT
from kstore.storage._lmdb_sync import DirectoryLock
from kstore.storage.interface import Backend, GetOptions, ListOptions, Storage
from kstore.storage.lmdb import LmdbBackend, LmdbConfig

from .conftest import open_backend, pod, pod_config, rv


def test_backend_satisfies_the_backend_and_storage_protocols(
    backend: LmdbBackend, pods: Storage
) -> None:
    assert isinstance(backend, Backend)
    assert isinstance(pods, Storage)


def test_fresh_store_starts_at_revision_one_and_first_write_takes_two(
    backend: LmdbBackend, pods: Storage
) -> None:
    assert backend.current_revision() == 1
    assert pods.list("/pods").resource_version == 1
    assert rv(pods.create("/pods/ns/a", pod("ns", "a"))) == 2


def test_durability_flags_are_on_by_default(backend: LmdbBackend) -> None:
    flags = backend._env.flags()
    assert flags["sync"] is True
    assert flags["metasync"] is True
    assert flags["writemap"] is False
    assert flags["map_async"] is False


def test_second_open_in_the_same_process_is_a_clear_error(
    backend: LmdbBackend, tmp_path: Path
) -> None:
    with pytest.raises(Unavailable, match="already open"):
        LmdbBackend(LmdbConfig(path=tmp_path / "store"))


def test_a_second_process_opens_the_same_store_and_reads_its_writes(
    backend: LmdbBackend, tmp_path: Path
) -> None:
    backend.storage_for(pod_config()).create("/pods/ns/a", pod("ns", "a"))
    script = textwrap.dedent(
        f"""
        from kstore.storage.lmdb import LmdbBackend, LmdbConfig
        with LmdbBackend(LmdbConfig(path={str(tmp_path / "store")!r})) as other:
            print("opened at", other.current_revision())
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout == f"opened at {backend.current_revision()}\n", done.stderr


def test_a_tool_rewriting_the_store_is_refused_naming_the_processes(
    backend: LmdbBackend, tmp_path: Path
) -> None:
    with pytest.raises(Unavailable, match=rf"already open \(process {os.getpid()}\)"):
        DirectoryLock(tmp_path / "store")


def test_the_peer_registry_names_the_process_while_open_and_nobody_once_closed(
    tmp_path: Path,
) -> None:
    store = tmp_path / "closed"
    opened = LmdbBackend(LmdbConfig(path=store))
    assert os.listdir(store / "kstore.peers") == [str(os.getpid())]
    opened.close()
    assert os.listdir(store / "kstore.peers") == []
    assert (store / "kstore.lock").read_text() == ""


def test_lock_is_released_on_close(tmp_path: Path) -> None:
    first = open_backend(tmp_path / "s")
    first.close()
    second = open_backend(tmp_path / "s")
    second.close()


def test_revision_and_data_survive_reopen_and_revisions_are_never_reused(tmp_path: Path) -> None:
    store = open_backend(tmp_path / "s")
    pods = store.storage_for(pod_config())
    created = [pods.create(f"/pods/ns/p{i}", pod("ns", f"p{i}")) for i in range(5)]
    deleted = pods.delete("/pods/ns/p4")
    store.close()

    store = open_backend(tmp_path / "s")
    try:
        pods = store.storage_for(pod_config())
        assert store.current_revision() == rv(deleted)
        for obj in created[:4]:
            assert pods.get(f"/pods/ns/{obj['metadata']['name']}") == obj
        with pytest.raises(NotFound):
            pods.get("/pods/ns/p4")
        assert rv(pods.create("/pods/ns/new", pod("ns", "new"))) == rv(deleted) + 1
        # History survives too: an exact list before the delete still sees p4.
        old = pods.list(
            "/pods",
            ListOptions(resource_version=str(rv(created[4])), resource_version_match="Exact"),  # type: ignore[arg-type]
        )
        assert [o["metadata"]["name"] for o in old.items] == ["p0", "p1", "p2", "p3", "p4"]
    finally:
        store.close()


def test_map_grows_by_itself(tmp_path: Path) -> None:
    store = open_backend(tmp_path / "s", map_size=1 << 20)
    try:
        pods = store.storage_for(pod_config())
        blob = "x" * 50_000
        for i in range(100):  # ~5 MB of values into a 1 MiB map
            pods.create(f"/pods/ns/p{i}", {**pod("ns", f"p{i}"), "data": blob})
        assert store._map_size > 1 << 20
        assert len(pods.list("/pods").items) == 100
    finally:
        store.close()


def test_map_limit_is_a_clear_error_and_the_store_stays_usable(tmp_path: Path) -> None:
    store = open_backend(tmp_path / "s", map_size=1 << 20, max_map_size=2 << 20)
    try:
        pods = store.storage_for(pod_config())
        first = pods.create("/pods/ns/first", pod("ns", "first"))
        blob = "x" * 100_000
        with pytest.raises(InternalError, match="database space exceeded"):
            for i in range(100):
                pods.create(f"/pods/ns/p{i}", {**pod("ns", f"p{i}"), "data": blob})
        assert pods.get("/pods/ns/first") == first
        revision = store.current_revision()
        assert pods.get("/pods/ns/first", GetOptions(resource_version=str(revision))) == first
    finally:
        store.close()


def test_close_finishes_then_refuses_work(tmp_path: Path) -> None:
    store = open_backend(tmp_path / "s")
    pods = store.storage_for(pod_config())
    pods.create("/pods/ns/a", pod("ns", "a"))
    store.close()
    store.close()  # idempotent
    with pytest.raises(Unavailable, match="closed"):
        pods.create("/pods/ns/b", pod("ns", "b"))
    with pytest.raises(Unavailable, match="closed"):
        pods.get("/pods/ns/a")
    with pytest.raises(Unavailable, match="closed"):
        pods.list("/pods")


def test_open_watch_ends_when_the_store_closes(tmp_path: Path) -> None:
    store = open_backend(tmp_path / "s")
    pods = store.storage_for(pod_config())
    watcher = pods.watch("/pods", ListOptions(resource_version="1"))
    pods.create("/pods/ns/a", pod("ns", "a"))
    store.close()
    assert [e.resource_version for e in watcher] == [2]


def test_unknown_format_is_refused(tmp_path: Path) -> None:
    store = open_backend(tmp_path / "s")
    with store._env.begin(write=True) as txn:
        txn.put(META_FORMAT, b"something-else")
    store.close()
    with pytest.raises(InternalError, match="format"):
        open_backend(tmp_path / "s")
    # The failed open released the lock.
    with pytest.raises(InternalError):
        open_backend(tmp_path / "s")


def test_a_store_in_the_previous_layout_is_refused_naming_its_format(tmp_path: Path) -> None:
    # Format 1 kept five named databases, its marker in "meta".
    path = tmp_path / "s"
    path.mkdir()
    env = lmdb.open(str(path), max_dbs=8)
    with env.begin(write=True) as txn:
        meta = env.open_db(b"meta", txn=txn)
        txn.put(b"format", b"kstore-lmdb-1", db=meta)
    env.close()
    with pytest.raises(InternalError, match=r"kstore-lmdb-1.*kstore-lmdb-2"):
        open_backend(path)
    # Refused without writing: the old marker is still all there is.
    env = lmdb.open(str(path), max_dbs=8)
    with env.begin() as txn:
        assert txn.get(META_FORMAT) is None
        assert txn.get(b"format", db=env.open_db(b"meta", txn=txn)) == b"kstore-lmdb-1"
    env.close()


def test_an_lmdb_directory_of_something_else_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s"
    path.mkdir()
    env = lmdb.open(str(path))
    with env.begin(write=True) as txn:
        txn.put(b"somebody", b"else's data")
    env.close()
    with pytest.raises(InternalError, match="no kstore format marker"):
        open_backend(path)


def test_a_failing_disk_write_is_a_clear_error_and_never_corrupts(tmp_path: Path) -> None:
    # The file size limit makes LMDB's writes come up short, as on a full disk.
    script = textwrap.dedent(
        f"""
        import resource, signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        from kstore.errors import InternalError
        from kstore.storage.lmdb import LmdbBackend, LmdbConfig
        from tests.storage.conftest import pod, pod_config
        store = LmdbBackend(LmdbConfig(path={str(tmp_path / "s")!r}, compaction_interval_s=0))
        pods = store.storage_for(pod_config())
        pods.create("/pods/ns/first", pod("ns", "first"))
        resource.setrlimit(resource.RLIMIT_FSIZE, (2 << 20, 2 << 20))
        acked = 0
        try:
            for i in range(1000):
                pods.create(f"/pods/ns/p{{i}}", {{**pod("ns", f"p{{i}}"), "data": "x" * 20000}})
                acked += 1
        except InternalError as exc:
            print("error:", exc)
        print("acked", acked)
        print("still readable", pods.get("/pods/ns/first")["metadata"]["name"])
        store.close()
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    lines = done.stdout.splitlines()
    assert lines[0].startswith("error: could not write to the LMDB store at"), done.stdout
    assert "is its disk full?" in lines[0]
    acked = int(lines[1].split()[1])
    assert lines[2] == "still readable first"
    store = open_backend(tmp_path / "s")
    try:
        pods = store.storage_for(pod_config())
        assert len(pods.list("/pods").items) == acked + 1
        assert store.current_revision() == acked + 2
    finally:
        store.close()
