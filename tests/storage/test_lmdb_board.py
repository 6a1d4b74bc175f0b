"""The revision board: one shared word per store that only goes up, raised by every commit
before it is answered, and by every open to the store's revision."""

from __future__ import annotations

from pathlib import Path

from kstore.storage._lmdb_board import BOARD_FILE, RevisionBoard
from kstore.storage.lmdb import LmdbBackend, LmdbConfig, LmdbSnapshotSource, LmdbSnapshotTarget
from kstore.storage.snapshot import restore_snapshot, save_snapshot

from .conftest import open_backend, pod, pod_config


def test_two_mappings_of_one_directory_share_the_word_and_it_never_goes_down(
    tmp_path: Path,
) -> None:
    one, two = RevisionBoard(tmp_path), RevisionBoard(tmp_path)
    assert one.read() == two.read() == 0
    one.raise_to(7)
    assert two.read() == 7
    two.raise_to(3)
    assert one.read() == 7
    two.raise_to(2**40 + 5)  # beyond 32 bits: the whole word is written
    assert one.read() == 2**40 + 5


def test_a_commit_raises_the_board_to_its_revision(tmp_path: Path) -> None:
    backend = open_backend(tmp_path / "store")
    try:
        board = RevisionBoard(tmp_path / "store")
        created = backend.storage_for(pod_config()).create("/pods/ns/a", pod("ns", "a"))
        assert board.read() == int(created["metadata"]["resourceVersion"])
    finally:
        backend.close()


def test_an_open_raises_a_lost_board_to_the_store_revision(tmp_path: Path) -> None:
    store = tmp_path / "store"
    backend = open_backend(store)
    try:
        backend.storage_for(pod_config()).create("/pods/ns/a", pod("ns", "a"))
        revision = backend.current_revision()
    finally:
        backend.close()
    (store / BOARD_FILE).unlink()
    reopened = open_backend(store)
    try:
        assert RevisionBoard(store).read() == revision
        assert reopened.sync() == revision
    finally:
        reopened.close()


def test_a_restore_forgets_the_board_of_the_store_it_replaces(tmp_path: Path) -> None:
    """A forced restore may take a store back to a lower revision: its next open starts the
    board from there, so reads skip the store again at once."""
    small, busy = tmp_path / "small", tmp_path / "busy"
    with LmdbBackend(LmdbConfig(path=small)) as backend:
        backend.storage_for(pod_config()).create("/pods/ns/a", pod("ns", "a"))
    save_snapshot(tmp_path / "snap", LmdbSnapshotSource(small))
    with LmdbBackend(LmdbConfig(path=busy)) as backend:
        pods = backend.storage_for(pod_config())
        for i in range(30):
            pods.create(f"/pods/ns/p{i}", pod("ns", f"p{i}"))
        before = backend.current_revision()
    with LmdbSnapshotTarget(busy) as target:
        restore_snapshot(tmp_path / "snap", target, force=True)
    with LmdbBackend(LmdbConfig(path=busy)) as restored:
        revision = restored.current_revision()
        assert revision < before
        assert RevisionBoard(busy).read() == revision
