"""The zeroed runway past the end of the LMDB data file."""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

import pytest

import kstore.storage._lmdb_runway as runway_module
from kstore.storage._lmdb_runway import MIN_STORE_BYTES, Runway

from .conftest import open_backend, pod, pod_config

_MIB = 1 << 20


def _file(tmp_path: Path, size: int) -> Path:
    path = tmp_path / "data.mdb"
    path.write_bytes(b"\x01" * size)
    return path


def _commits(runway: Runway, count: int, used: list[int], growth: int) -> None:
    def used_bytes() -> int:
        return used[0]

    for _ in range(count):
        used[0] += growth
        runway.after_commit(used_bytes)


def test_small_commits_of_a_large_store_get_zeros_ahead_of_the_last_page(
    tmp_path: Path,
) -> None:
    path = _file(tmp_path, MIN_STORE_BYTES)
    runway = Runway(path, contextlib.nullcontext)
    used = [MIN_STORE_BYTES]
    _commits(runway, 32, used, 8 << 10)
    size = path.stat().st_size
    # 4 MiB past the last page, all zeros; what LMDB wrote
    # before it is untouched.
    assert size >= used[0] + 4 * _MIB
    with path.open("rb") as data:
        assert data.read(MIN_STORE_BYTES) == b"\x01" * MIN_STORE_BYTES
        data.seek(used[0])
        assert data.read() == bytes(size - used[0])
    # Enough is left ahead: the next looks add nothing.
    _commits(runway, 32, used, 8 << 10)
    assert path.stat().st_size == size
    runway.close()


@pytest.mark.parametrize(
    ("store_bytes", "growth"),
    [(_MIB, 8 << 10), (MIN_STORE_BYTES, 128 << 10)],
    # A small store grows its file as LMDB does; large commits get no zeros, whose bytes
    # would cost more than the journal writes they save.
    ids=["small store", "large commits"],
)
def test_no_zeros_for_a_small_store_or_for_large_commits(
    tmp_path: Path, store_bytes: int, growth: int
) -> None:
    path = _file(tmp_path, store_bytes)
    runway = Runway(path, contextlib.nullcontext)
    _commits(runway, 64, [store_bytes], growth)
    assert path.stat().st_size == store_bytes
    runway.close()


def test_a_fill_that_cannot_be_written_turns_the_runway_off_and_fails_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _file(tmp_path, MIN_STORE_BYTES)
    runway = Runway(path, contextlib.nullcontext)

    def full_disk(fd: int, data: bytes, offset: int) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(runway_module.os, "pwrite", full_disk)
    _commits(runway, 32, [MIN_STORE_BYTES], 8 << 10)
    assert not runway.enabled
    monkeypatch.undo()
    _commits(runway, 32, [MIN_STORE_BYTES], 8 << 10)
    assert path.stat().st_size == MIN_STORE_BYTES
    runway.close()


def test_a_store_with_a_runway_reopens_with_every_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A runway from the first commits on, so that most of these land inside it.
    monkeypatch.setattr(runway_module, "MIN_STORE_BYTES", 0)
    store = open_backend(tmp_path / "s")
    pods = store.storage_for(pod_config())
    for i in range(300):
        pods.create(f"/pods/ns/p{i}", {**pod("ns", f"p{i}"), "data": "x" * 5000})
    data = tmp_path / "s" / "data.mdb"
    used = store._used_bytes()
    assert data.stat().st_size > used
    store.close()
    store = open_backend(tmp_path / "s")
    try:
        pods = store.storage_for(pod_config())
        names = {obj["metadata"]["name"] for obj in pods.list("/pods").items}
        assert names == {f"p{i}" for i in range(300)}
        assert store.current_revision() == 301
        # Commits go on past the zeros.
        pods.create("/pods/ns/after", pod("ns", "after"))
    finally:
        store.close()
    assert os.path.getsize(data) >= used
