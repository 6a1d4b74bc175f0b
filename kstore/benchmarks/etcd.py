"""The etcd storage benchmark: the backend beside the raw etcd client doing the same
transactions, in the same run, against the same member.

``run_etcd_bench()`` starts its own single-member etcd on a free loopback port (or uses the
``endpoints`` given) and measures, on realistic ~5 KiB Pods stored as JSON:

- sequential create against the raw create transaction (goal >= 0.85x);
- ``writers`` concurrent creators as asyncio tasks on one event loop (the backend's native
  coroutines, :func:`kstore.storage.aio.as_async`) against the raw client with as many create
  transactions in flight, in its faster form of the run: gRPC futures from one thread or
  ``grpc.aio`` calls from one loop (goal >= 0.8x); ``writers`` threads on the blocking verbs,
  beside as many raw threads making blocking calls, are shown for reference;
- guaranteed_update from the previous result (one round trip) against a raw compare-and-swap
  chain (goal >= 0.8x), and without a cached object (read + swap, two round trips);
- get, a list of ``objects`` Pods in one response and in pages of 500, and the delivery
  latency of a watch event.

Each figure is the median of ``repeats`` runs, raw and kstore interleaved so both see the same
load. Beside the rates, the write comparisons report CPU per create: this process's (every
thread: callers, the pipeline's sender, gRPC's threads) and, when the bench started etcd itself,
etcd's. On a shared machine the rates follow the CPU both sides spend per create more than
anything else, and CPU per operation moves much less with the load than a rate does. The
report is a plain-text table; nothing here gates anything.
"""

from __future__ import annotations

import asyncio
import itertools
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from kstore.api.gvk import Object
from kstore.benchmarks.storage import BenchRow, sample_pod
from kstore.codec.json import JsonSerializer
from kstore.storage.aio import as_async
from kstore.storage.etcd import EtcdBackend, EtcdConfig, RawEtcdBaseline
from kstore.storage.interface import ListOptions, ResourceStorageConfig, Storage

__all__ = ["format_report", "measure_etcd", "run_etcd_bench"]

_PREFIX = "/registry"
#: Operations per turn when raw and kstore alternate (see _EtcdBench.alternate).
_SLICE = 50
#: Turns of the concurrent-create comparison.
_CONCURRENT_SLICES = 4

#: One turn of a measured phase: its argument is the turn's index.
Phase = Callable[[int], object]


def _attrs(obj: Object) -> tuple[dict[str, str], dict[str, str]]:
    meta = obj.get("metadata", {})
    return meta.get("labels", {}), {"metadata.name": meta.get("name", "")}


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _process_cpu_seconds(pid: int) -> float | None:
    """CPU time used so far by every thread of process ``pid`` (Linux ``/proc``; None where
    that cannot be read)."""
    total = 0
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                total += int((task / "schedstat").read_text().split()[0])
            except (FileNotFoundError, ProcessLookupError):
                continue  # the thread ended between the listing and the read
    except (OSError, ValueError, IndexError):
        return None
    return total / 1e9


def _threads(count: int, work: Callable[[int], None]) -> float:
    workers = [threading.Thread(target=work, args=(k,)) for k in range(count)]
    start = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return time.perf_counter() - start


def format_report(rows: list[BenchRow], header: str) -> str:
    """The rows as a plain-text table under ``header``."""

    def num(value: float | None) -> str:
        if value is None:
            return "-"
        return f"{value:,.0f}" if value >= 100 else f"{value:,.2f}"

    cells = [("operation", "unit", "kstore", "raw", "kstore/raw", "goal")]
    for row in rows:
        ratio = row.ratio
        ratio_text = "-" if ratio is None else f"{ratio:.2f}x"
        cells.append((row.name, row.unit, num(row.kstore), num(row.raw), ratio_text, row.goal))
    widths = [max(len(line[i]) for line in cells) for i in range(6)]
    lines = [header, ""]
    for index, line in enumerate(cells):
        padded = [
            c.ljust(widths[i]) if i in (0, 1, 5) else c.rjust(widths[i]) for i, c in enumerate(line)
        ]
        lines.append("  ".join(padded).rstrip())
        if index == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines += ["", "kstore/raw: throughput ratio (higher is better); for times, raw / kstore."]
    return "\n".join(lines)


class _EtcdBench:
    def __init__(self, endpoints: Sequence[str], writers: int, etcd_pid: int | None) -> None:
        self.etcd_pid = etcd_pid
        config = EtcdConfig(endpoints=tuple(endpoints), prefix=_PREFIX, compaction_interval=0)
        self.backend = EtcdBackend(config)
        self.raw = RawEtcdBaseline(config)
        self.writers = writers
        self.codec = JsonSerializer()
        self.storage: Storage = self.backend.storage_for(
            ResourceStorageConfig(resource_prefix="/pods", codec=self.codec, get_attrs=_attrs)
        )
        self.template = sample_pod("default", "template")
        self.value = self.codec.encode(sample_pod("default", "pod-000000"))
        self.samples: dict[str, list[float]] = {}
        self.run_id = itertools.count()
        # One event loop for every asyncio phase: its grpc.aio channels are made once.
        self.loop = asyncio.new_event_loop()

    def close(self) -> None:
        self.backend.close()
        self.raw.close()
        # The backend scheduled its asyncio channels' close on the loop: let it run.
        self.loop.run_until_complete(asyncio.sleep(0.05))
        self.loop.close()

    def pod(self, namespace: str, name: str) -> Object:
        # Only metadata differs: the storage never mutates what it is given.
        meta = {**self.template["metadata"], "namespace": namespace, "name": name}
        return {**self.template, "metadata": meta}

    def add(self, name: str, figure: float) -> None:
        self.samples.setdefault(name, []).append(figure)

    def median(self, name: str) -> float:
        values = self.samples.get(name, [])
        return statistics.median(values) if values else 0.0

    def alternate(self, rounds: int, per_round: int, phases: dict[str, Phase]) -> None:
        """Run the phases in turn, ``rounds`` times, each on its own slice of ``per_round``
        operations, and record each phase's rate over all rounds, with the CPU this process
        (``<name>_cpu``) and etcd (``<name>_etcd_cpu``, when its process is known) spent per
        operation, in microseconds: raw and kstore take turns in short slices, so a load
        burst on the shared machine hits both alike."""
        totals = dict.fromkeys(phases, 0.0)
        cpu = dict.fromkeys(phases, 0.0)
        etcd_cpu: dict[str, float] | None = dict.fromkeys(phases, 0.0)
        for index in range(rounds):
            for name, phase in phases.items():
                etcd_before = self.etcd_cpu()
                cpu_before = time.process_time()
                started = time.perf_counter()
                phase(index)
                totals[name] += time.perf_counter() - started
                cpu[name] += time.process_time() - cpu_before
                etcd_after = self.etcd_cpu()
                if etcd_cpu is not None and etcd_before is not None and etcd_after is not None:
                    etcd_cpu[name] += etcd_after - etcd_before
                else:
                    etcd_cpu = None
        operations = rounds * per_round
        for name, seconds in totals.items():
            self.add(name, operations / seconds)
            self.add(f"{name}_cpu", cpu[name] / operations * 1e6)
            if etcd_cpu is not None:
                self.add(f"{name}_etcd_cpu", etcd_cpu[name] / operations * 1e6)

    def etcd_cpu(self) -> float | None:
        return None if self.etcd_pid is None else _process_cpu_seconds(self.etcd_pid)

    def writes(self, sequential: int, concurrent: int) -> None:
        run = next(self.run_id)
        storage, raw, value, writers = self.storage, self.raw, self.value, self.writers
        batch = min(_SLICE, sequential)
        rounds = max(1, sequential // batch)

        def keys(kind: str, index: int, count: int) -> list[bytes]:
            return [f"{_PREFIX}/raw/{kind}/{run}/{index}/{i}".encode() for i in range(count)]

        def creates(index: int) -> None:
            for i in range(batch):
                name = f"seq-{run}-{index}-{i}"
                storage.create(f"/pods/seq/{name}", self.pod("seq", name))

        self.alternate(
            rounds,
            batch,
            {
                "raw_put": lambda index: raw.put_each(keys("put", index, batch), value),
                "raw_seq": lambda index: raw.create_each(keys("seq", index, batch), value),
                "seq": creates,
            },
        )

        share_size = max(writers, concurrent // _CONCURRENT_SLICES)
        aio = as_async(storage)
        loop = self.loop

        def concurrent_creates(index: int) -> None:
            names = iter(range(share_size))

            async def creator() -> None:
                for i in names:
                    name = f"con-{run}-{index}-{i}"
                    await aio.create(f"/pods/con/{name}", self.pod("con", name))

            async def creators() -> None:
                await asyncio.gather(*(creator() for _ in range(writers)))

            loop.run_until_complete(creators())

        def concurrent_threads(index: int) -> None:
            def share(k: int) -> None:
                for i in range(k, share_size, writers):
                    name = f"cth-{run}-{index}-{i}"
                    storage.create(f"/pods/cth/{name}", self.pod("cth", name))

            _threads(writers, share)

        self.alternate(
            _CONCURRENT_SLICES,
            share_size,
            {
                "raw_futures": lambda index: raw.create_in_flight(
                    keys("fut", index, share_size), value, writers
                ),
                "raw_aio": lambda index: loop.run_until_complete(
                    raw.create_in_flight_async(keys("aio", index, share_size), value, writers)
                ),
                "raw_threads": lambda index: raw.create_threads(
                    keys("thr", index, share_size), value, writers
                ),
                "concurrent": concurrent_creates,
                "concurrent_threads": concurrent_threads,
            },
        )

    def updates(self, count: int) -> None:
        run = next(self.run_id)
        storage, raw = self.storage, self.raw
        batch = min(_SLICE, count)
        rounds = max(1, count // batch)
        values = [self.value + b" " * (i % 2) for i in range(batch)]
        raw_key = f"{_PREFIX}/raw/cas/{run}".encode()
        raw_read_key = f"{_PREFIX}/raw/rcas/{run}".encode()
        raw_rev = raw.put(raw_key, self.value)
        raw.put(raw_read_key, self.value)
        name = f"upd-{run}"
        current = storage.create(f"/pods/upd/{name}", self.pod("upd", name))
        generation = itertools.count(2)

        def raw_chain(index: int) -> None:
            nonlocal raw_rev
            raw_rev = raw.compare_and_swap(raw_key, values, raw_rev)

        def chain(index: int) -> None:
            nonlocal current
            for _ in range(batch):
                current = storage.guaranteed_update(
                    f"/pods/upd/{name}", _generation(next(generation)), cached_existing=current
                )

        def uncached(index: int) -> None:
            nonlocal current
            for _ in range(batch):
                current = storage.guaranteed_update(
                    f"/pods/upd/{name}", _generation(next(generation))
                )

        self.alternate(
            rounds,
            batch,
            {
                "raw_cas": raw_chain,
                "cas": chain,
                "raw_read_swap": lambda index: raw.read_then_swap(raw_read_key, values),
                "read_swap": uncached,
            },
        )

    def fill(self, objects: int) -> list[str]:
        names = [f"pod-{i:06d}" for i in range(objects)]

        def fill(k: int) -> None:
            for i in range(k, objects, self.writers):
                self.storage.create(f"/pods/list/{names[i]}", self.pod("list", names[i]))

        _threads(self.writers, fill)
        return names

    def reads(self, names: list[str]) -> None:
        storage, raw = self.storage, self.raw
        sample = names[:: max(1, len(names) // 500)]
        keys = [f"{_PREFIX}/pods/list/{n}".encode() for n in sample]
        self.add("raw_get", _timed(lambda: raw.get_each(keys)) / len(keys) * 1e6)

        def gets() -> None:
            for name in sample:
                storage.get(f"/pods/list/{name}")

        self.add("get", _timed(gets) / len(sample) * 1e6)
        prefix = f"{_PREFIX}/pods/list/".encode()
        self.add("raw_range", _timed(lambda: raw.range_prefix(prefix)) * 1e3)
        self.add("list", _timed(lambda: storage.list("/pods/list")) * 1e3)
        self.add("raw_range_paged", _timed(lambda: raw.range_prefix(prefix, 500)) * 1e3)

        def paged() -> None:
            token = ""
            while True:
                page = storage.list("/pods/list", ListOptions(limit=500, continue_token=token))
                token = page.continue_token
                if not token:
                    return

        self.add("list_paged", _timed(paged) * 1e3)

    def watch_latency(self, rounds: int) -> list[float]:
        """Seconds from the start of an update to its event in a waiting watcher's hands."""
        base = self.storage.create("/pods/watch/target", self.pod("watch", "target"))
        watcher = self.storage.watch(
            "/pods/watch/target",
            ListOptions(resource_version=base["metadata"]["resourceVersion"], recursive=False),
        )
        latencies: list[float] = []
        try:
            for i in range(rounds):
                start = time.perf_counter()
                self.storage.guaranteed_update("/pods/watch/target", _generation(i + 2))
                if watcher.next(timeout=5.0) is None:
                    break
                latencies.append(time.perf_counter() - start)
        finally:
            watcher.stop()
        return latencies


def _cpu_rows(bench: _EtcdBench, writers: int) -> list[BenchRow]:
    """CPU per create beside the rate rows: this process's, and etcd's when it is known."""
    m = bench.median
    pairs = [
        ("sequential", "seq", "raw_seq"),
        (f"{writers} concurrent, asyncio", "concurrent", "raw_aio"),
        (f"{writers} concurrent, threads", "concurrent_threads", "raw_threads"),
    ]
    rows = [
        BenchRow(
            f"  CPU per create, {label}: kstore process",
            "us/op",
            m(f"{ours}_cpu"),
            m(f"{raw}_cpu"),
            higher_is_better=False,
            goal="all threads",
        )
        for label, ours, raw in pairs
    ]
    if bench.samples.get("seq_etcd_cpu"):
        rows += [
            BenchRow(
                f"  CPU per create, {label}: etcd",
                "us/op",
                m(f"{ours}_etcd_cpu"),
                m(f"{raw}_etcd_cpu"),
                higher_is_better=False,
            )
            for label, ours, raw in pairs
        ]
    return rows


def _generation(generation: int) -> Callable[[Object], Object]:
    def update(obj: Object) -> Object:
        return {**obj, "metadata": {**obj["metadata"], "generation": generation}}

    return update


def run_etcd_bench(
    endpoints: Sequence[str] | None = None,
    *,
    objects: int = 10_000,
    sequential: int = 300,
    writers: int = 32,
    concurrent: int = 3_000,
    repeats: int = 3,
) -> str:
    """Run the etcd benchmark and return the report (see :func:`measure_etcd`)."""
    header, rows = measure_etcd(
        endpoints,
        objects=objects,
        sequential=sequential,
        writers=writers,
        concurrent=concurrent,
        repeats=repeats,
    )
    return format_report(rows, header)


def measure_etcd(
    endpoints: Sequence[str] | None = None,
    *,
    objects: int = 10_000,
    sequential: int = 300,
    writers: int = 32,
    concurrent: int = 3_000,
    repeats: int = 3,
) -> tuple[str, list[BenchRow]]:
    """Measure and return the report's header and rows. Without ``endpoints`` it starts (and
    stops) a single-member etcd of its own; with them, it writes under ``/registry/`` there."""
    if min(repeats, writers, objects, sequential) < 1 or concurrent < writers:
        raise ValueError("counts must be positive and concurrent >= writers")
    if endpoints:
        return _run(endpoints, None, objects, sequential, writers, concurrent, repeats)
    from kstore.testing.etcd_cluster import EtcdCluster

    with EtcdCluster(1) as cluster:
        pid = cluster.members[0].pid
        return _run(cluster.endpoints, pid, objects, sequential, writers, concurrent, repeats)


def _run(
    endpoints: Sequence[str],
    etcd_pid: int | None,
    objects: int,
    sequential: int,
    writers: int,
    concurrent: int,
    repeats: int,
) -> tuple[str, list[BenchRow]]:
    bench = _EtcdBench(endpoints, writers, etcd_pid)
    try:
        for _ in range(repeats):
            bench.writes(sequential, concurrent)
            bench.updates(sequential)
        names = bench.fill(objects)
        for _ in range(repeats):
            bench.reads(names)
        latencies = sorted(bench.watch_latency(max(100, sequential)))
    finally:
        bench.close()
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] if latencies else 0.0
    median_latency = statistics.median(latencies) if latencies else 0.0
    m = bench.median
    cpu_rows = _cpu_rows(bench, writers)
    rows = [
        BenchRow("put (reference)", "puts/s", m("raw_put"), m("raw_put"), goal="raw etcd Put"),
        BenchRow(
            "sequential create", "creates/s", m("seq"), m("raw_seq"), goal=">= 0.85x raw create txn"
        ),
        BenchRow(
            f"{writers} concurrent creators, asyncio",
            "creates/s",
            m("concurrent"),
            max(m("raw_futures"), m("raw_aio")),
            goal=f">= 0.80x raw's fastest, {writers} in flight",
        ),
        BenchRow(
            f"  raw: {writers} gRPC futures, one thread",
            "creates/s",
            m("concurrent"),
            m("raw_futures"),
            goal="reference",
        ),
        BenchRow(
            f"  raw: {writers} grpc.aio calls, one loop",
            "creates/s",
            m("concurrent"),
            m("raw_aio"),
            goal="reference",
        ),
        BenchRow(
            f"{writers} concurrent creators, threads",
            "creates/s",
            m("concurrent_threads"),
            m("raw_threads"),
            goal=f"reference: raw {writers} threads, blocking",
        ),
        *cpu_rows,
        BenchRow(
            "guaranteed_update, cached object",
            "updates/s",
            m("cas"),
            m("raw_cas"),
            goal=">= 0.80x raw CAS txn",
        ),
        BenchRow(
            "guaranteed_update, no cache",
            "updates/s",
            m("read_swap"),
            m("raw_read_swap"),
            goal="raw = read + CAS txn",
        ),
        BenchRow("get (linearizable)", "us/op", m("get"), m("raw_get"), higher_is_better=False),
        BenchRow(
            f"list {objects} objects, one page",
            "ms",
            m("list"),
            m("raw_range"),
            higher_is_better=False,
            goal="raw reads bytes, kstore decodes",
        ),
        BenchRow(
            f"list {objects} objects, pages of 500",
            "ms",
            m("list_paged"),
            m("raw_range_paged"),
            higher_is_better=False,
        ),
        BenchRow(
            "watch delivery latency, median",
            "us",
            median_latency * 1e6,
            higher_is_better=False,
            goal="update start -> event",
        ),
        BenchRow("watch delivery latency, p99", "us", p99 * 1e6, higher_is_better=False),
    ]
    header = (
        f"kstore storage benchmark: backend=etcd ({len(endpoints)} endpoint(s)), "
        f"Pod = {len(bench.value)} bytes of JSON, medians of {repeats} runs"
    )
    return header, rows
