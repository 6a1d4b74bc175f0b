"""The etcd storage benchmark harness in a small run, on the throwaway etcd it starts itself:
every row is measured (each phase really wrote), the asyncio and threaded rows included."""

from __future__ import annotations

import pytest

from kstore.benchmarks.etcd import measure_etcd
from tests.conftest_etcd import require_etcd

pytestmark = pytest.mark.etcd


def test_a_small_run_measures_every_row() -> None:
    require_etcd()
    header, rows = measure_etcd(objects=40, sequential=20, writers=4, concurrent=40, repeats=1)
    assert "etcd" in header
    names = [row.name for row in rows]
    for expected in (
        "sequential create",
        "4 concurrent creators, asyncio",
        "  raw: 4 grpc.aio calls, one loop",
        "4 concurrent creators, threads",
        "guaranteed_update, cached object",
        "list 40 objects, one page",
    ):
        assert expected in names, names
    assert all(row.kstore > 0 for row in rows), rows
    assert all(row.raw is None or row.raw > 0 for row in rows), rows
