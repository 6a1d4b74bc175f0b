"""etcd storage benchmark: the backend beside the raw etcd client, same run, same member.

Run: ``pytest bench/bench_etcd.py -s`` (or ``python -m bench.bench_etcd``); it starts its own
single-member etcd on a free loopback port and prints the table of
:func:`kstore.benchmarks.etcd.run_etcd_bench`. Goals (issue 5): sequential create >= 0.85x the
raw create transaction; 32 concurrent creators >= 0.8x the raw client with 32 create
transactions in flight; guaranteed_update >= 0.8x a raw compare-and-swap transaction. Nothing
here gates CI on time.
"""

from __future__ import annotations

import sys

import pytest

from kstore.benchmarks.etcd import format_report, measure_etcd, run_etcd_bench
from kstore.testing.etcd_cluster import EtcdNotInstalled, etcd_binary

pytestmark = pytest.mark.etcd


def test_etcd_storage_beside_the_raw_client(capsys: pytest.CaptureFixture[str]) -> None:
    try:
        etcd_binary()
    except EtcdNotInstalled as exc:
        pytest.skip(str(exc))
    header, rows = measure_etcd()
    with capsys.disabled():
        sys.stdout.write("\n" + format_report(rows, header) + "\n")
    # Every figure was measured (a row of zeros means a phase silently did nothing).
    assert all(row.kstore > 0 for row in rows), rows
    assert all(row.raw is None or row.raw > 0 for row in rows), rows


if __name__ == "__main__":
    print(run_etcd_bench())
