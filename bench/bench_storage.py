"""Storage benchmarks: the LMDB backend beside raw py-lmdb, same run, same durability (fsync).

Run: ``pytest bench/bench_storage.py --benchmark-only``. Objects are ~5 KiB Pods
(:func:`kstore.benchmarks.storage.sample_pod`, stored as JSON). Goals (issue 4): a sequential
durable create within 0.8x of raw py-lmdb doing one durable put per commit (also measured with
the two interleaved, as ``kstore bench storage`` does), and at least 10,000 durable creates/s
from 16 concurrent creators (group commit; the summary says how many creates each commit
carried). Medians and ratios are printed at the end; ``kstore bench storage`` prints the same
comparison as one table.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kstore.benchmarks.storage import interleaved, on_worker, sample_pod
from kstore.codec.json import JsonSerializer
from kstore.storage.interface import ListOptions, ResourceStorageConfig, Storage
from kstore.storage.lmdb import LmdbBackend, LmdbConfig, RawLmdbBaseline

WRITERS = 16
CONCURRENT_CREATES = 4000
LISTED = 10_000

_medians: dict[str, float] = {}
_codec = JsonSerializer()
_template = sample_pod("default", "template")
_value = _codec.encode(sample_pod("default", "pod-000000"))
_names = itertools.count()


def _pod(namespace: str, name: str) -> dict[str, Any]:
    # Only metadata differs; the rest is shared (storage never mutates its input).
    return {
        **_template,
        "metadata": {**_template["metadata"], "namespace": namespace, "name": name},
    }


def _attrs(obj: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    meta = obj["metadata"]
    return meta.get("labels", {}), {"metadata.name": meta["name"]}


def _record(benchmark: Any, key: str, per_call: int = 1) -> None:
    stats = getattr(benchmark, "stats", None)
    if stats is not None:
        _medians[key] = stats.stats.median / per_call


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LmdbBackend, Storage]]:
    backend = LmdbBackend(
        LmdbConfig(path=tmp_path_factory.mktemp("kstore"), compaction_interval_s=0)
    )
    storage = backend.storage_for(
        ResourceStorageConfig(resource_prefix="/pods", codec=_codec, get_attrs=_attrs)
    )
    yield backend, storage
    backend.close()


@pytest.fixture(scope="module")
def raw(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawLmdbBaseline]:
    baseline = RawLmdbBaseline(LmdbConfig(path=Path(tmp_path_factory.mktemp("raw"))))
    yield baseline
    baseline.close()


@pytest.fixture(scope="module")
def listed(store: tuple[LmdbBackend, Storage], raw: RawLmdbBaseline) -> list[str]:
    _, storage = store
    names = [f"pod-{i:06d}" for i in range(LISTED)]

    def fill(k: int) -> None:
        for i in range(k, LISTED, WRITERS):
            storage.create(f"/pods/list/{names[i]}", _pod("list", names[i]))

    threads = [threading.Thread(target=fill, args=(k,)) for k in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    raw.put_batched([f"/registry/pods/list/{n}".encode() for n in names], _value, 1000)
    return names


@pytest.fixture(scope="module", autouse=True)
def _print_ratios(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is None or capture is None or not _medians:
        return
    m = _medians
    lines = [f"storage (Pod = {len(_value)} bytes of JSON), medians:"]
    if "create" in m and "raw_put" in m:
        lines.append(
            f"  sequential durable create {m['create'] * 1e6:8.0f} us, raw put+commit "
            f"{m['raw_put'] * 1e6:8.0f} us: {m['raw_put'] / m['create']:.2f}x (goal >= 0.80x)"
        )
    if "paired" in m:
        lines.append(
            "  sequential durable create, interleaved with raw in the same run: "
            f"{m['paired']:.2f}x raw (goal >= 0.80x)"
        )
    if "concurrent" in m:
        lines.append(
            f"  {WRITERS} concurrent durable creators: {1 / m['concurrent']:,.0f} creates/s "
            f"(goal >= 10,000/s), {m.get('per_commit', 0):.1f} creates per commit"
        )
    for key, raw_key, label in (
        ("get", "raw_get", "get"),
        ("list", "raw_scan", f"list {LISTED}"),
        ("list_paged", "raw_scan", f"list {LISTED} in pages of 500"),
        ("update", "raw_put", "guaranteed_update"),
    ):
        if key in m and raw_key in m:
            lines.append(
                f"  {label:30s} {m[key] * 1e6:10.0f} us, raw {m[raw_key] * 1e6:10.0f} us "
                f"({m[key] / m[raw_key]:.1f}x the raw time)"
            )
    if "watch" in m:
        lines.append(f"  watch delivery latency (write start -> event) {m['watch'] * 1e6:.0f} us")
    with capture.global_and_fixture_disabled():
        reporter.write_line("")
        for line in lines:
            reporter.write_line(line)


def test_raw_lmdb_durable_put(benchmark: Any, raw: RawLmdbBaseline) -> None:
    benchmark.group = "durable write"
    benchmark(lambda: raw.put_each([f"/registry/pods/raw/{next(_names)}".encode()], _value))
    _record(benchmark, "raw_put")


def test_kstore_sequential_durable_create(
    benchmark: Any, store: tuple[LmdbBackend, Storage]
) -> None:
    _, storage = store
    benchmark.group = "durable write"

    def create() -> None:
        name = f"p{next(_names)}"
        storage.create(f"/pods/seq/{name}", _pod("seq", name))

    benchmark(create)
    _record(benchmark, "create")


def test_kstore_vs_raw_sequential_interleaved(
    benchmark: Any, store: tuple[LmdbBackend, Storage], raw: RawLmdbBaseline
) -> None:
    # The two tests above run one after the other; on a shared machine the load differs
    # between them. Here both alternate every few writes: the ratio of the same moments.
    _, storage = store
    benchmark.group = "durable write, interleaved"
    ratios: list[float] = []

    def run() -> None:
        prefix = f"i{next(_names)}"
        keys = [[f"/registry/pods/{prefix}/{i}".encode()] for i in range(200)]
        # On a worker thread, where a server calls its storage (a lone write off the main
        # thread commits on its own thread, without the hand-off to the writer thread).
        raw_s, kstore_s = on_worker(
            lambda: interleaved(
                lambda i: raw.put_each(keys[i], _value),
                lambda i: storage.create(f"/pods/{prefix}/p{i}", _pod(prefix, f"p{i}")),
                200,
            )
        )
        ratios.append(raw_s / kstore_s)

    benchmark.pedantic(run, rounds=3, iterations=1)
    _medians["paired"] = sorted(ratios)[len(ratios) // 2]


def test_kstore_concurrent_durable_creates(
    benchmark: Any, store: tuple[LmdbBackend, Storage]
) -> None:
    backend, storage = store
    benchmark.group = "durable write, 16 creators"
    commits = backend.write_commits

    def run() -> None:
        prefix = f"c{next(_names)}"

        def share(k: int) -> None:
            for i in range(k, CONCURRENT_CREATES, WRITERS):
                storage.create(f"/pods/{prefix}/p{i}", _pod(prefix, f"p{i}"))

        threads = [threading.Thread(target=share, args=(k,)) for k in range(WRITERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    benchmark.pedantic(run, rounds=3, iterations=1)
    _record(benchmark, "concurrent", CONCURRENT_CREATES)
    _medians["per_commit"] = 3 * CONCURRENT_CREATES / (backend.write_commits - commits)


def test_raw_lmdb_get(benchmark: Any, raw: RawLmdbBaseline, listed: list[str]) -> None:
    benchmark.group = "get"
    key = [f"/registry/pods/list/{listed[LISTED // 2]}".encode()]
    benchmark(raw.get_each, key)
    _record(benchmark, "raw_get")


def test_kstore_get(benchmark: Any, store: tuple[LmdbBackend, Storage], listed: list[str]) -> None:
    _, storage = store
    benchmark.group = "get"
    obj = benchmark(storage.get, f"/pods/list/{listed[LISTED // 2]}")
    assert obj["metadata"]["name"] == listed[LISTED // 2]
    _record(benchmark, "get")


def test_raw_lmdb_scan(benchmark: Any, raw: RawLmdbBaseline, listed: list[str]) -> None:
    benchmark.group = "list"
    assert benchmark.pedantic(raw.scan, args=(b"/registry/pods/list/",), rounds=5) == LISTED
    _record(benchmark, "raw_scan")


def test_kstore_list_one_page(
    benchmark: Any, store: tuple[LmdbBackend, Storage], listed: list[str]
) -> None:
    _, storage = store
    benchmark.group = "list"
    result = benchmark.pedantic(storage.list, args=("/pods/list",), rounds=5)
    assert len(result.items) == LISTED
    _record(benchmark, "list")


def test_kstore_list_paged(
    benchmark: Any, store: tuple[LmdbBackend, Storage], listed: list[str]
) -> None:
    _, storage = store
    benchmark.group = "list"

    def paged() -> int:
        token, count = "", 0
        while True:
            page = storage.list("/pods/list", ListOptions(limit=500, continue_token=token))
            count += len(page.items)
            token = page.continue_token
            if not token:
                return count

    assert benchmark.pedantic(paged, rounds=5) == LISTED
    _record(benchmark, "list_paged")


def test_kstore_guaranteed_update(
    benchmark: Any, store: tuple[LmdbBackend, Storage], listed: list[str]
) -> None:
    _, storage = store
    benchmark.group = "durable write"
    key = f"/pods/list/{listed[0]}"

    def update() -> None:
        generation = next(_names)
        storage.guaranteed_update(
            key, lambda o: {**o, "metadata": {**o["metadata"], "generation": generation}}
        )

    benchmark(update)
    _record(benchmark, "update")


def test_kstore_watch_delivery_latency(benchmark: Any, store: tuple[LmdbBackend, Storage]) -> None:
    _, storage = store
    benchmark.group = "watch"
    created = storage.create("/pods/watch/target", _pod("watch", "target"))
    watcher = storage.watch(
        "/pods/watch/target",
        ListOptions(resource_version=created["metadata"]["resourceVersion"], recursive=False),
    )
    arrived = threading.Event()

    def consume() -> None:
        for _event in watcher:
            arrived.set()

    consumer = threading.Thread(target=consume, daemon=True)
    consumer.start()

    def write_and_wait() -> None:
        arrived.clear()
        generation = next(_names)
        storage.guaranteed_update(
            "/pods/watch/target",
            lambda o: {**o, "metadata": {**o["metadata"], "generation": generation}},
        )
        assert arrived.wait(5.0)

    started = time.perf_counter()
    benchmark.pedantic(write_and_wait, rounds=200, iterations=1)
    watcher.stop()
    consumer.join(5.0)
    assert time.perf_counter() - started < 120
    _record(benchmark, "watch")
