"""``kstore bench``'s flags reach the benchmark they are for, with each backend's defaults.

The benchmarks themselves are measured elsewhere (bench/, tests/storage/test_lmdb_bench.py);
here only the command line is under test, so each run function is replaced by one that records
what it was asked for.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import kstore.benchmarks.etcd as etcd_bench
import kstore.benchmarks.rest as rest_bench
import kstore.benchmarks.storage as storage_bench
from kstore.cli import main


class _Recorder:
    def __init__(self, result: Any) -> None:
        self.calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
        self._result = result

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append((args, kwargs))
        return self._result


class _Report:
    def report(self) -> str:
        return "rest report"


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> int:
    code = main(argv)
    capsys.readouterr()
    return code


@pytest.mark.parametrize(
    ("backend", "module", "function", "writers"),
    [("etcd", etcd_bench, "run_etcd_bench", 32), ("lmdb", storage_bench, "run_storage_bench", 16)],
)
def test_storage_bench_defaults_to_each_backends_concurrency(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    backend: str,
    module: Any,
    function: str,
    writers: int,
) -> None:
    recorder = _Recorder("table")
    monkeypatch.setattr(module, function, recorder)
    assert _run(["bench", "storage", "--backend", backend], capsys) == 0
    assert recorder.calls[0][1]["writers"] == writers
    assert _run(["bench", "storage", "--backend", backend, "--writers", "8"], capsys) == 0
    assert recorder.calls[1][1]["writers"] == 8


def test_rest_bench_takes_the_kind_and_client_count(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    recorder = _Recorder(_Report())
    monkeypatch.setattr(rest_bench, "run_rest_bench", recorder)
    assert _run(["bench", "rest"], capsys) == 0
    assert recorder.calls[0][1]["kind"] == "pod"
    assert recorder.calls[0][1]["clients"] == 16
    assert _run(["bench", "rest", "--kind", "configmap", "--writers", "4"], capsys) == 0
    assert recorder.calls[1][1]["kind"] == "configmap"
    assert recorder.calls[1][1]["clients"] == 4
    assert recorder.calls[1][1]["admission_plugins"] is True
    assert _run(["bench", "rest", "--no-admission-plugins"], capsys) == 0
    assert recorder.calls[2][1]["admission_plugins"] is False
    assert recorder.calls[2][1]["policy"] is False
    assert recorder.calls[2][1]["webhook"] is False
    assert recorder.calls[2][1]["controllers"] == "*"
    assert _run(["bench", "rest", "--policy"], capsys) == 0
    assert recorder.calls[3][1]["policy"] is True
    assert _run(["bench", "rest", "--controllers=*,-garbagecollector"], capsys) == 0
    assert recorder.calls[4][1]["controllers"] == "*,-garbagecollector"
    assert recorder.calls[4][1]["plugins_compare"] is False
    assert _run(["bench", "rest", "--compare-admission-plugins"], capsys) == 0
    assert recorder.calls[5][1]["plugins_compare"] is True


def test_rest_bench_takes_the_webhook_flag(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    recorder = _Recorder(_Report())
    monkeypatch.setattr(rest_bench, "run_rest_bench", recorder)
    assert _run(["bench", "rest", "--kind", "configmap", "--webhook"], capsys) == 0
    assert recorder.calls[0][1]["webhook"] is True


@pytest.mark.parametrize("argv", [["--writers", "0"], ["--kind", "secret"]])
def test_bad_bench_flags_are_usage_errors(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["bench", "rest", *argv])
    assert exc.value.code == 2
    assert "usage:" in capsys.readouterr().err


def test_the_custom_kind_rest_bench_runs_beside_configmap_creates() -> None:
    from kstore.benchmarks.rest import run_rest_bench

    result = run_rest_bench(kind="custom", requests=40, repeats=1, clients=2, watchers=1)
    assert result.configmap_create_rate is not None and result.configmap_create_rate > 0
    assert result.create_rate > 0
    report = result.report()
    assert "custom resource, 20 CEL rules" in report
    assert "create (POST configmap), same run" in report


def test_the_plugins_rest_bench_creates_on_a_second_server_without_them() -> None:
    from kstore.benchmarks.rest import run_rest_bench

    result = run_rest_bench(
        kind="pod", requests=40, repeats=1, clients=2, watchers=1, plugins_compare=True
    )
    assert result.bare_create_rate is not None and result.bare_create_rate > 0
    assert result.plugins_rate_ratio is not None and result.plugins_rate_ratio > 0
    report = result.report()
    assert "create, admission plugins off" in report
    assert "create with the admission plugins / without: rate" in report
    with pytest.raises(ValueError, match="plugins_compare"):
        run_rest_bench(admission_plugins=False, plugins_compare=True)


def test_the_policy_rest_bench_creates_through_a_bound_policy() -> None:
    from kstore.benchmarks.rest import run_rest_bench

    result = run_rest_bench(
        kind="configmap", requests=40, repeats=1, clients=2, watchers=1, policy=True
    )
    assert result.policy_create_rate is not None and result.policy_create_rate > 0
    report = result.report()
    assert "create through 1 VAP (3 rules)" in report
    assert "create through the policy / create, server CPU:" in report


def test_memory_bench_takes_the_object_count_and_loads_through_the_embedding_api(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import kstore.benchmarks.memory as memory_bench
    from kstore.cli import _load_through_client

    recorder = _Recorder(_Report())
    monkeypatch.setattr(memory_bench, "run_memory_bench", recorder)
    assert _run(["bench", "memory", "--objects", "1234"], capsys) == 0
    ((args, kwargs),) = recorder.calls
    assert args == (_load_through_client,) and kwargs == {"count": 1234}


def test_memory_bench_loader_fills_a_store_and_memory_is_read_from_proc(
    tmp_path: Any,
) -> None:
    import os

    import kstore
    from kstore.benchmarks.memory import SHAPES, read_memory
    from kstore.cli import _load_through_client

    url = f"lmdb://{tmp_path}/store?durable=false"
    for shape in ("ConfigMap ~1.5 KiB", "Pod ~5 KiB"):
        resource, make = SHAPES[shape]
        objects = (make(f"{resource}-{i}", i) for i in range(3))
        if resource == "configmaps":
            _load_through_client(url, "bench", resource, objects)
        else:
            with kstore.open(url, controllers=()) as client:
                target = client.resource("v1", resource, namespace="bench")
                for obj in objects:
                    target.create(obj)
    with kstore.open(url, controllers=()) as client:
        cms = client.resource("v1", "configmaps", namespace="bench").list()["items"]
        pods = client.resource("v1", "pods", namespace="bench").list()["items"]
    assert len(cms) == 3 and len(pods) == 3
    assert 1_200 < len(json.dumps(cms[0])) < 2_200
    assert not pods[0]["metadata"].get("ownerReferences")  # the collector would delete them
    mine = read_memory(os.getpid())
    assert mine.rss > 0 and mine.anon > 0 and mine.pss > 0
    assert mine.rss == mine.anon + mine.file


def test_memory_bench_with_workers_compares_them_with_one(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import kstore.benchmarks.memory as memory_bench
    from kstore.cli import _load_through_client

    recorder = _Recorder(_Report())
    monkeypatch.setattr(memory_bench, "run_workers_memory_bench", recorder)
    assert _run(["bench", "memory", "--objects", "321", "--workers", "2"], capsys) == 0
    ((args, kwargs),) = recorder.calls
    assert args == (_load_through_client,) and kwargs == {"workers": 2, "count": 321}


def test_memory_bench_of_two_workers_measures_both_and_the_one_against_them() -> None:
    from kstore.benchmarks.memory import run_workers_memory_bench
    from kstore.cli import _load_through_client

    result = run_workers_memory_bench(
        _load_through_client, workers=2, count=30, shapes=("ConfigMap ~0.5 KiB",)
    )
    assert (result.one.workers, result.many.workers) == (1, 2)
    (one,), (two,) = result.one.rows, result.many.rows
    assert one.count == two.count == 30 and one.json_size == two.json_size
    # Two serving processes (and their parent) hold more than one, by any measure.
    assert two.loaded.anon > one.loaded.anon and two.loaded.rss > one.loaded.rss
    (ratio,) = result.ratios("pss")
    assert ratio == two.loaded.pss / one.loaded.pss > 1
    report = result.report()
    assert "2 workers together / 1 worker" in report
    assert f"{ratio:.2f}x" in report


def test_the_workers_bench_bound_is_the_cores_over_each_requests_cpu() -> None:
    from kstore.benchmarks.workers import WorkersBenchResult

    result = WorkersBenchResult(
        kind="configmap",
        workers=2,
        clients=16,
        watchers=8,
        # One worker: 1,000 creates/s. Two: each create costs 600 us in the servers and
        # 200 us in the clients, so 2 cores give at most 2,500/s: 2.5x.
        figures={
            "create": (1000.0, 1500.0),
            "create_cpu": (500.0, 600.0),
            "create_client_cpu": (200.0, 200.0),
            "get": (4000.0, 4100.0),
            "get_cpu": (150.0, 160.0),
            "get_client_cpu": (90.0, 90.0),
        },
        ratios={"create": 1.5, "get": 1.03},
        load_before=(1.0, 1.0, 1.0),
        load_after=(1.0, 1.0, 1.0),
        cores=2,
    )
    assert result.bound("create") == pytest.approx(2.5)
    assert result.bound("get") == pytest.approx(2e6 / 250 / 4000)
    report = result.report()
    assert "create, client CPU" in report
    assert (
        "this machine's bound, 2 cores / (server + client CPU per request with 2 workers), "
        "over 1 worker's rate: create 2.50x, get 2.00x"
    ) in report


def test_the_workers_bench_measures_one_worker_beside_two() -> None:
    from kstore.benchmarks.workers import run_workers_bench

    result = run_workers_bench(workers=2, clients=2, requests=30, repeats=1, watchers=1, probes=3)
    one, two = result.figures["create_client_cpu"]
    assert one > 0 and two > 0
    assert result.bound("create") is not None and result.bound("get") is not None
    assert "this machine's bound" in result.report()
