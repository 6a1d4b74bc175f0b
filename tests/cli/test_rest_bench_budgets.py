"""``kstore bench rest``'s table shows the per-request CPU budgets as its goal column.

Each budget is a multiple of the trivial endpoint's server CPU in the same run; the row says
whether the run met it. The figures here are given, not measured: only the table is tested.
"""

from __future__ import annotations

import dataclasses

import pytest

from kstore.benchmarks.rest import CPU_BUDGETS, RestBenchResult


def _result(kind: str, cpu_us: dict[str, float]) -> RestBenchResult:
    return RestBenchResult(
        kind=kind,
        trivial_rate=1000.0,
        create_rate=300.0,
        create_ratio=0.3,
        create_p50_ms=5.0,
        create_p99_ms=20.0,
        get_rate=800.0,
        get_ratio=0.8,
        list_rate=100.0,
        list_ratio=0.1,
        watched_create_rate=250.0,
        watch_events_rate=2500.0,
        clients=16,
        watchers=10,
        load_before=(1.0, 1.0, 1.0),
        load_after=(1.0, 1.0, 1.0),
        cpu_us=cpu_us,
    )


def _row(report: str, start: str) -> str:
    rows = [line for line in report.splitlines() if line.startswith(start)]
    assert len(rows) == 1, report
    return rows[0]


def test_the_budgets_are_the_issues() -> None:
    assert CPU_BUDGETS == {
        ("configmap", "create"): 3.0,
        ("pod", "create"): 8.0,
        ("configmap", "get"): 1.5,
        ("pod", "get"): 1.5,
        ("configmap", "list"): 4.0,
        ("pod", "list"): 10.0,
    }


@pytest.mark.parametrize("kind", ["configmap", "pod"])
def test_each_budget_row_says_whether_the_run_met_it(kind: str) -> None:
    trivial = 100.0
    cpu = {
        "trivial": trivial,
        # Just within the create budget, just over the get budget, the list's exactly on it.
        "create": CPU_BUDGETS[(kind, "create")] * trivial - 1,
        "get": CPU_BUDGETS[(kind, "get")] * trivial + 1,
        "list": CPU_BUDGETS[(kind, "list")] * trivial,
    }
    report = _result(kind, cpu).report()
    create = _row(report, f"create (POST {kind})")
    assert create.endswith(f"CPU <= {CPU_BUDGETS[(kind, 'create')]:g}x (met)")
    get = _row(report, f"get (GET {kind})")
    assert get.endswith(f"CPU <= {CPU_BUDGETS[(kind, 'get')]:g}x (not met)")
    listed = _row(report, "list (100 a page, by label)")
    assert listed.endswith(f"CPU <= {CPU_BUDGETS[(kind, 'list')]:g}x (met)")
    assert ">= 0.40x" not in create and ">= 0.50x" not in get


def test_without_cpu_figures_the_budget_is_shown_unjudged() -> None:
    report = _result("configmap", {}).report()
    assert _row(report, "create (POST configmap)").endswith("CPU <= 3x")


def test_the_custom_kind_keeps_its_rate_goals() -> None:
    report = _result("custom", {"trivial": 100.0, "create": 500.0}).report()
    assert ">= 0.40x" in _row(report, "create (POST custom)")


@pytest.mark.parametrize(("ratio", "verdict"), [(0.86, "met"), (0.84, "not met")])
def test_the_plugins_row_judges_the_rate_within_15_percent(ratio: float, verdict: str) -> None:
    result = dataclasses.replace(
        _result("pod", {"trivial": 100.0, "create": 900.0, "bare_create": 800.0}),
        bare_create_rate=350.0,
        plugins_rate_ratio=ratio,
        plugins_cpu_ratio=1.125,
    )
    report = result.report()
    assert _row(report, "create, admission plugins off").rstrip().endswith("800 (8.0x)")
    assert _row(report, "create with the admission plugins / without") == (
        f"create with the admission plugins / without: rate {ratio:.2f}x "
        f"(goal >= 0.85x, {verdict}), server CPU 1.12x"
    )
