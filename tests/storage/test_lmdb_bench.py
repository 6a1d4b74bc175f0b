"""The storage benchmark harness on LMDB: interleaving of kstore and raw, and a small run."""

from __future__ import annotations

from pathlib import Path

import pytest

from kstore.benchmarks import storage as bench
from kstore.storage.lmdb import LmdbConfig, RawLmdbBaseline


def test_interleaving_alternates_chunks_and_which_side_goes_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(bench, "_INTERLEAVE_CHUNK", 3)
    calls: list[tuple[str, int]] = []
    first_s, second_s = bench.interleaved(
        lambda i: calls.append(("a", i)), lambda i: calls.append(("b", i)), 7
    )
    assert calls == [
        *[("a", i) for i in range(3)],
        *[("b", i) for i in range(3)],
        *[("b", i) for i in range(3, 6)],
        *[("a", i) for i in range(3, 6)],
        ("a", 6),
        ("b", 6),
    ]
    assert first_s >= 0 and second_s >= 0


def test_a_small_run_reports_every_row_and_the_creates_per_commit(tmp_path: Path) -> None:
    report = bench.run_storage_bench(
        "lmdb",
        path=str(tmp_path),
        objects=40,
        sequential=30,
        writers=4,
        concurrent=40,
        repeats=1,
        durable=False,
    )
    for row in (
        "sequential durable create",
        "the same, from the main thread",
        "4 concurrent durable creators",
        "  the same, 4 asyncio tasks",
        "get",
        "list 40 objects, one page",
        "guaranteed_update, durable",
        "watch delivery latency, p99",
    ):
        assert row in report
    assert "creates per commit" in report
    assert "raw group commit" in report
    assert "bytes of JSON" in report


def test_raw_group_commit_stores_every_key_in_fewer_commits_than_puts(tmp_path: Path) -> None:
    raw = RawLmdbBaseline(LmdbConfig(path=tmp_path / "raw", durable=False))
    try:
        keys = [f"/registry/pods/k{i:04d}".encode() for i in range(400)]
        commits = raw.put_from_threads(keys, b"v" * 100, 8)
        assert raw.scan(b"/registry/pods/") == 400
        assert 1 <= commits <= 400
    finally:
        raw.close()


def test_only_lmdb_is_known() -> None:
    with pytest.raises(ValueError, match="unknown storage backend"):
        bench.run_storage_bench("etcd")
