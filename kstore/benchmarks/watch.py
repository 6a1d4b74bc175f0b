"""The watch cache benchmark (``kstore bench watch``): fan-out latency and CPU, LIST from memory.

Everything runs in one process on the real LMDB backend with the watch cache in front:

- **fan-out** scenarios: ``watchers`` in-process watchers on one prefix, consumed as asyncio
  tasks on one event loop thread (how the REST facade serves watch streams), and one writer
  thread creating realistic ~5 KiB Pods at a fixed ``rate``. Each delivery's latency runs from
  just before the write call to the moment the consumer holds the event (so it includes the
  durable commit). CPU per delivery is the whole process's CPU time over the measured window
  divided by deliveries — writer, LMDB, cache, dispatch and consumers all included. Goals:
  p99 <= 50 ms and <= 10 us of CPU per delivery. Every watcher must get every event.
- **LIST** of ``list_objects`` Pods: from the cache (resourceVersion "0", and a consistent
  read, which first confirms the cache is current) against the backend's own consistent
  LIST, interleaved, median of ``list_repeats``. Goal: cache >= 3x faster.

The report is a plain-text table; nothing here gates anything.
"""

from __future__ import annotations

import asyncio
import gc
import os
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from kstore.api.gvk import Object
from kstore.benchmarks.storage import sample_pod
from kstore.cache import CacheConfig, Cacher, CacheWatcher
from kstore.cache.gc_policy import LongLivedObjects
from kstore.codec.json import JsonSerializer
from kstore.storage.interface import ListOptions, ResourceStorageConfig, Storage

__all__ = ["FanoutResult", "ListResult", "run_watch_bench"]

_PREFIX = "/pods"
_NAMESPACE = "bench"


def _attrs(obj: Object) -> tuple[dict[str, str], dict[str, str]]:
    meta = obj.get("metadata") or {}
    fields = {
        "metadata.name": meta.get("name", ""),
        "metadata.namespace": meta.get("namespace", ""),
        "spec.nodeName": (obj.get("spec") or {}).get("nodeName", ""),
    }
    return meta.get("labels") or {}, fields


@dataclass(frozen=True, slots=True)
class FanoutResult:
    watchers: int
    rate: int
    writes: int
    deliveries: int
    expected: int
    seconds: float
    p50_ms: float
    p99_ms: float
    max_ms: float
    cpu_us_per_delivery: float
    loop_cpu_us_per_delivery: float
    cache_cpu_us_per_delivery: float
    write_cpu_us_per_write: float
    closed_watchers: int
    gc_full_passes: int
    gc_longest_ms: float
    gc_total_ms: float

    @property
    def deliveries_per_second(self) -> float:
        return self.deliveries / self.seconds if self.seconds else 0.0


@dataclass(frozen=True, slots=True)
class ListResult:
    objects: int
    cache_any_ms: float
    cache_consistent_ms: float
    backend_ms: float

    @property
    def speedup_any(self) -> float:
        return self.backend_ms / self.cache_any_ms if self.cache_any_ms else 0.0

    @property
    def speedup_consistent(self) -> float:
        return self.backend_ms / self.cache_consistent_ms if self.cache_consistent_ms else 0.0


class _GcPauses:
    """Cyclic-GC passes during a measurement: Python stops every thread for them, so they are
    reported next to the latencies they cause."""

    def __init__(self) -> None:
        self.pauses: list[tuple[int, float]] = []
        self._started = 0.0

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.pauses.append((info["generation"], time.perf_counter() - self._started))

    def __enter__(self) -> _GcPauses:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._callback)

    @property
    def full_passes(self) -> int:
        return sum(1 for generation, _ in self.pauses if generation == 2)

    @property
    def longest_ms(self) -> float:
        return max((seconds for _, seconds in self.pauses), default=0.0) * 1e3

    @property
    def total_ms(self) -> float:
        return sum(seconds for _, seconds in self.pauses) * 1e3


def _thread_cpu() -> dict[str, float]:
    """CPU seconds per live thread, by name (Linux ``/proc``; empty elsewhere)."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    out: dict[str, float] = {}
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        name = names.get(int(tid), f"thread {tid}")
        out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return out


def _percentile(sorted_values: list[float], fraction: float) -> float:
    if not sorted_values:
        return 0.0
    index = min(len(sorted_values) - 1, int(len(sorted_values) * fraction))
    return sorted_values[index]


class _Consumers:
    """``count`` watchers consumed by asyncio tasks on one event-loop thread."""

    def __init__(self, cache: Cacher, count: int, sent: dict[str, float]) -> None:
        revision = cache.resource_version
        opts = ListOptions(resource_version=str(revision))
        self.watchers: list[CacheWatcher] = []
        for _ in range(count):
            watcher = cache.watch(f"{_PREFIX}/{_NAMESPACE}", opts)
            assert isinstance(watcher, CacheWatcher)
            self.watchers.append(watcher)
        self.sent = sent
        self.latencies: list[list[float]] = [[] for _ in range(count)]
        self.received = [0] * count
        self.loop_cpu = 0.0
        self._loop = asyncio.new_event_loop()
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bench consumers", daemon=True)
        self._thread.start()
        self._started.wait()

    async def _consume(self, index: int) -> None:
        watcher = self.watchers[index]
        latencies = self.latencies[index]
        sent = self.sent
        clock = time.perf_counter
        received = 0
        while True:
            event = await watcher.next_async()
            if event is None:
                break
            now = clock()
            latencies.append(now - sent[event.object["metadata"]["name"]])
            received += 1
            self.received[index] = received

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)

        async def main() -> None:
            tasks = [asyncio.create_task(self._consume(i)) for i in range(len(self.watchers))]
            self._started.set()
            started = time.thread_time()
            await asyncio.gather(*tasks)
            self.loop_cpu = time.thread_time() - started

        self._loop.run_until_complete(main())
        self._loop.close()

    def total(self) -> int:
        return sum(self.received)

    def stop(self) -> None:
        for watcher in self.watchers:
            watcher.stop()
        self._thread.join(timeout=30.0)


def _fanout(
    cache: Cacher, storage: Storage, watchers: int, rate: int, duration: float, run: int
) -> FanoutResult:
    sent: dict[str, float] = {}
    consumers = _Consumers(cache, watchers, sent)
    writes = int(rate * duration)
    interval = 1.0 / rate
    gc.collect()
    closed_before = cache.dispatcher.closed_slow
    threads_before = _thread_cpu()
    writer_cpu_start = time.thread_time()
    cpu_start = time.process_time()
    wall_start = time.perf_counter()
    next_at = wall_start
    with _GcPauses() as pauses:
        for index in range(writes):
            now = time.perf_counter()
            if now < next_at:
                time.sleep(next_at - now)
            next_at += interval
            # Built just in time: a pile of prepared objects would lengthen every GC pass.
            name = f"w{run}-{index:07d}"
            obj = sample_pod(_NAMESPACE, name)
            sent[name] = time.perf_counter()
            storage.create(f"{_PREFIX}/{_NAMESPACE}/{name}", obj)
        writer_cpu = time.thread_time() - writer_cpu_start
        expected = writes * watchers
        deadline = time.monotonic() + max(10.0, duration)
        while consumers.total() < expected and time.monotonic() < deadline:
            time.sleep(0.01)
        seconds = time.perf_counter() - wall_start
        cpu = time.process_time() - cpu_start
        threads_after = _thread_cpu()
    consumers.stop()
    deliveries = consumers.total()
    per_delivery = 1e6 / deliveries if deliveries else 0.0
    cache_cpu = sum(
        threads_after.get(name, 0.0) - threads_before.get(name, 0.0)
        for name in threads_after
        if name.startswith("kstore-cache")
    )
    lmdb_cpu = sum(
        threads_after.get(name, 0.0) - threads_before.get(name, 0.0)
        for name in threads_after
        if name.startswith("kstore-lmdb")
    )
    latencies = sorted(x for per in consumers.latencies for x in per)
    return FanoutResult(
        watchers=watchers,
        rate=rate,
        writes=writes,
        deliveries=deliveries,
        expected=expected,
        seconds=seconds,
        p50_ms=_percentile(latencies, 0.50) * 1e3,
        p99_ms=_percentile(latencies, 0.99) * 1e3,
        max_ms=(latencies[-1] * 1e3) if latencies else 0.0,
        cpu_us_per_delivery=cpu * per_delivery,
        loop_cpu_us_per_delivery=consumers.loop_cpu * per_delivery,
        cache_cpu_us_per_delivery=cache_cpu * per_delivery,
        write_cpu_us_per_write=(writer_cpu + lmdb_cpu) / writes * 1e6 if writes else 0.0,
        closed_watchers=cache.dispatcher.closed_slow - closed_before,
        gc_full_passes=pauses.full_passes,
        gc_longest_ms=pauses.longest_ms,
        gc_total_ms=pauses.total_ms,
    )


def _timed_ms(fn: object) -> float:
    assert callable(fn)
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1e3


def _lists(cache: Cacher, storage: Storage, objects: int, repeats: int) -> ListResult:
    key = f"{_PREFIX}/lists"
    existing = storage.list(key).items
    for index in range(len(existing), objects):
        name = f"l-{index:07d}"
        storage.create(f"{key}/{name}", sample_pod("lists", name))
    any_revision = ListOptions(resource_version="0")
    consistent = ListOptions()
    # The cache must hold them all before timing (a consistent read waits for that).
    assert len(cache.list(key, consistent).items) == objects
    cache_any: list[float] = []
    cache_consistent: list[float] = []
    backend: list[float] = []
    for _ in range(repeats):
        backend.append(_timed_ms(lambda: storage.list(key, consistent)))
        cache_any.append(_timed_ms(lambda: cache.list(key, any_revision)))
        cache_consistent.append(_timed_ms(lambda: cache.list(key, consistent)))
    return ListResult(
        objects=objects,
        cache_any_ms=statistics.median(cache_any),
        cache_consistent_ms=statistics.median(cache_consistent),
        backend_ms=statistics.median(backend),
    )


def _table(rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for index, row in enumerate(rows):
        lines.append("  ".join(cell.rjust(widths[i]) for i, cell in enumerate(row)))
        if index == 0:
            lines.append("  ".join("-" * w for w in widths))
    return lines


def _format(
    fanouts: list[FanoutResult], lists: ListResult | None, durable: bool, gc_policy: bool
) -> str:
    policy = (
        "GC: kstore.cache.gc_policy.LongLivedObjects (gc.freeze() every 0.25 s)"
        if gc_policy
        else "GC: CPython defaults"
    )
    lines = [
        "kstore bench watch: watch cache on LMDB "
        f"({'durable' if durable else 'non-durable'} commits), one process; {policy}",
        "",
    ]
    rows: list[tuple[str, ...]] = [
        (
            "watchers",
            "events/s",
            "delivered",
            "deliv/s",
            "p50 ms",
            "p99 ms",
            "max ms",
            "closed",
            "full GCs",
            "longest GC ms",
        ),
    ]
    for r in fanouts:
        rows.append(
            (
                f"{r.watchers:,}",
                f"{r.rate:,}",
                f"{r.deliveries:,}/{r.expected:,}",
                f"{r.deliveries_per_second:,.0f}",
                f"{r.p50_ms:.2f}",
                f"{r.p99_ms:.2f}",
                f"{r.max_ms:.2f}",
                str(r.closed_watchers),
                str(r.gc_full_passes),
                f"{r.gc_longest_ms:.1f}",
            )
        )
    lines += _table(rows)
    lines += ["", "CPU:"]
    rows = [
        (
            "watchers",
            "events/s",
            "process us/deliv",
            "cache us/deliv",
            "consumers us/deliv",
            "cache+consumers",
            "write path us/write",
        ),
    ]
    for r in fanouts:
        rows.append(
            (
                f"{r.watchers:,}",
                f"{r.rate:,}",
                f"{r.cpu_us_per_delivery:.2f}",
                f"{r.cache_cpu_us_per_delivery:.2f}",
                f"{r.loop_cpu_us_per_delivery:.2f}",
                f"{r.cache_cpu_us_per_delivery + r.loop_cpu_us_per_delivery:.2f}",
                f"{r.write_cpu_us_per_write:.0f}",
            )
        )
    lines += _table(rows)
    lines += [
        "",
        "latency: write call start -> event held by the consumer (an asyncio task), so it",
        "includes the commit. process: all CPU of the process (writer, LMDB, cache, consumers,",
        "GC) / deliveries; cache: the cache's feeding thread (backend watch decode, state,",
        "history, fan-out); consumers: the event-loop thread running the watchers' tasks;",
        "write path: the writer thread plus LMDB's threads, per write (fsync included).",
        "goals: p99 <= 50 ms, <= 10 us CPU per delivery, every event delivered to every watcher.",
    ]
    if lists is not None:
        lines += [
            "",
            f"LIST of {lists.objects:,} Pods (~5 KiB), median ms:",
            f"  backend (LMDB, consistent):        {lists.backend_ms:9.2f}",
            f"  cache, resourceVersion=0:          {lists.cache_any_ms:9.2f}"
            f"   ({lists.speedup_any:,.0f}x faster)",
            f"  cache, consistent (RV unset):      {lists.cache_consistent_ms:9.2f}"
            f"   ({lists.speedup_consistent:,.0f}x faster)",
            "goal: cache >= 3x faster than the backend.",
        ]
    return "\n".join(lines)


def run_watch_bench(
    *,
    path: str | Path | None = None,
    duration: float = 5.0,
    scenarios: tuple[tuple[int, int], ...] = ((100, 1000), (1000, 100)),
    list_objects: int = 10_000,
    list_repeats: int = 5,
    durable: bool = True,
    gc_policy: bool = True,
) -> str:
    """Run the fan-out ``scenarios`` ((watchers, events/s) pairs, ``duration`` seconds each)
    and the LIST comparison; return the report. ``path`` is the directory for the LMDB store
    (a temporary one by default). ``gc_policy`` runs everything under
    :class:`~kstore.cache.gc_policy.LongLivedObjects` (what a server holding caches should
    do); without it, full GC passes over the cache's objects show up as latency."""
    from kstore.storage.lmdb import LmdbBackend, LmdbConfig

    with tempfile.TemporaryDirectory(prefix="kstore-bench-watch-") as scratch:
        root = Path(path) if path is not None else Path(scratch)
        backend = LmdbBackend(
            LmdbConfig(path=root / "lmdb", durable=durable, compaction_interval_s=0)
        )
        config = ResourceStorageConfig(
            resource_prefix=_PREFIX, codec=JsonSerializer(), get_attrs=_attrs
        )
        storage = backend.storage_for(config)
        cache = Cacher(CacheConfig(storage=storage, resource=config))
        policy = LongLivedObjects(full_collection_interval=None) if gc_policy else None
        if policy is not None:
            policy.start()
        try:
            if not cache.wait_ready(30.0):
                raise RuntimeError("the watch cache did not become ready")
            fanouts = [
                _fanout(cache, storage, watchers, rate, duration, run)
                for run, (watchers, rate) in enumerate(scenarios)
            ]
            lists = _lists(cache, storage, list_objects, list_repeats) if list_objects else None
        finally:
            if policy is not None:
                policy.stop()
            cache.stop()
            backend.close()
    return _format(fanouts, lists, durable, gc_policy)
