"""The storage benchmark harness on LMDB: interleaving of kstore and raw, and a small run."""

from __future__ import annotations

from pathlib import Path

import pytest

from kstore.benchmarks import storage as bench


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
        "4 concurrent durable creators",
        "get",
        "list 40 objects, one page",
        "guaranteed_update, durable",
        "watch delivery latency, p99",
    ):
        assert row in report
    assert "creates per commit" in report
    assert "bytes of JSON" in report


def test_only_lmdb_is_known() -> None:
    with pytest.raises(ValueError, match="unknown storage backend"):
        bench.run_storage_bench("etcd")
