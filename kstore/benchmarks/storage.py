"""The storage benchmark: a backend against the raw engine under it, same run, same durability.

``run_storage_bench("lmdb")`` measures, on realistic ~5 KiB Pods (JSON, as stored):

- sequential durable create, against raw py-lmdb with one put per commit (goal >= 0.8x);
- concurrent durable create from ``writers`` threads (group commit; goal >= 10,000/s), against
  raw py-lmdb doing the same group commit (as many threads, each put waiting for its commit,
  one writer thread with the backend's hand-off: :meth:`RawLmdbBaseline.put_from_threads`),
  and raw py-lmdb committing 1,000 puts per transaction as the ceiling of the disk; the same
  creates from ``writers`` asyncio tasks on one event loop (:func:`kstore.storage.aio.as_async`);
- get, list of ``objects`` objects in one page and in pages of 500, guaranteed_update;
- watch delivery latency (write start -> event in the watcher's hands).

Each figure is the median of ``repeats`` runs, kstore and raw interleaved so both see the same
machine load: the one-commit-per-write rows alternate kstore and raw every
:data:`_INTERLEAVE_CHUNK` writes (a 2-core box shared with other work swings by 2x within
seconds, which whole-run blocks turn into noise in the ratio), and their ratio is the median of
each run's own ratio. The report is a plain-text table, with the object size and, for the
concurrent row, how many creates each commit carried.

Single-threaded loops run on a worker thread, not the main one: that is where a server calls
its storage (request handlers), and the LMDB backend commits a lone write on its caller's
thread only off the main thread (the main thread gets KeyboardInterrupt; see
:meth:`kstore.storage.lmdb.LmdbBackend._commit_inline`). The sequential create is measured
from the main thread as well, where every write takes the hand-off to the writer thread.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from kstore.api.gvk import Object
from kstore.codec.json import JsonSerializer
from kstore.storage.aio import as_async
from kstore.storage.interface import (
    Backend,
    ListOptions,
    ResourceStorageConfig,
    Storage,
)

__all__ = ["BenchRow", "interleaved", "on_worker", "run_storage_bench", "sample_pod"]

T = TypeVar("T")


def sample_pod(namespace: str, name: str) -> Object:
    """A Pod shaped like a real one (three containers, probes, volumes, status), ~5 KiB as
    compact JSON."""
    containers = []
    for index, role in enumerate(("app", "sidecar", "metrics")):
        containers.append(
            {
                "name": f"{role}",
                "image": f"registry.example.com/team/{role}:v1.{index}.7",
                "args": [f"--listen=:{8080 + index}", "--config=/etc/app"],
                "ports": [{"name": "http", "containerPort": 8080 + index, "protocol": "TCP"}],
                "env": [{"name": f"SETTING_{k}", "value": f"value-{k}-{name}"} for k in range(2)],
                "resources": {
                    "limits": {"cpu": "500m", "memory": "256Mi"},
                    "requests": {"cpu": "100m", "memory": "128Mi"},
                },
                "volumeMounts": [
                    {"name": "config", "mountPath": "/etc/app", "readOnly": True},
                    {"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io"},
                ],
                "livenessProbe": {
                    "httpGet": {"path": "/healthz", "port": 8080 + index, "scheme": "HTTP"},
                    "initialDelaySeconds": 10,
                    "periodSeconds": 10,
                    "timeoutSeconds": 1,
                    "successThreshold": 1,
                    "failureThreshold": 3,
                },
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "imagePullPolicy": "IfNotPresent",
            }
        )
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": f"6f1c2a3e-0000-4000-8000-{abs(hash(name)) % 10**12:012d}",
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "labels": {"app": "web", "tier": "frontend", "pod-template-hash": "5d8f9c7b6"},
            "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z"},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": "web-5d8f9c7b6",
                    "uid": "0b7a9c1e-1111-4111-8111-111111111111",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "containers": containers,
            "volumes": [
                {"name": "config", "configMap": {"name": "web-config", "defaultMode": 420}},
                {
                    "name": "kube-api-access",
                    "projected": {
                        "defaultMode": 420,
                        "sources": [
                            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                            {
                                "configMap": {
                                    "name": "kube-root-ca.crt",
                                    "items": [{"key": "ca.crt", "path": "ca.crt"}],
                                }
                            },
                        ],
                    },
                },
            ],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default",
            "nodeName": "node-17.example.internal",
            "schedulerName": "default-scheduler",
            "tolerations": [
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                }
            ],
        },
        "status": {
            "phase": "Running",
            "hostIP": "10.0.3.17",
            "podIP": "10.244.3.41",
            "startTime": "2026-01-01T00:00:01Z",
            "qosClass": "Burstable",
            "conditions": [
                {"type": t, "status": "True", "lastTransitionTime": "2026-01-01T00:00:05Z"}
                for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
            ],
            "containerStatuses": [
                {
                    "name": c["name"],
                    "ready": True,
                    "restartCount": 0,
                    "image": c["image"],
                    "imageID": f"registry.example.com/team/{c['name']}@sha256:{'ab' * 32}",
                    "containerID": f"containerd://{'cd' * 32}",
                    "started": True,
                    "state": {"running": {"startedAt": "2026-01-01T00:00:04Z"}},
                }
                for c in containers
            ],
        },
    }


def _pod_attrs(obj: Object) -> tuple[dict[str, str], dict[str, str]]:
    meta = obj.get("metadata", {})
    fields = {
        "metadata.name": meta.get("name", ""),
        "metadata.namespace": meta.get("namespace", ""),
        "spec.nodeName": obj.get("spec", {}).get("nodeName", ""),
    }
    return meta.get("labels", {}), fields


@dataclass(frozen=True, slots=True)
class BenchRow:
    """One line of the report: kstore's median, the raw engine's, and what the goal is."""

    name: str
    unit: str
    kstore: float
    raw: float | None = None
    higher_is_better: bool = True
    goal: str = ""
    #: The median of per-run ratios, when kstore and raw were measured in pairs.
    paired_ratio: float | None = None

    @property
    def ratio(self) -> float | None:
        if self.paired_ratio is not None:
            return self.paired_ratio
        if self.raw is None or self.raw == 0 or self.kstore == 0:
            return None
        return self.kstore / self.raw if self.higher_is_better else self.raw / self.kstore


def _median(samples: list[float]) -> float:
    return statistics.median(samples) if samples else 0.0


def _format(rows: list[BenchRow], header: str) -> str:
    def num(value: float | None) -> str:
        if value is None:
            return "-"
        return f"{value:,.0f}" if value >= 100 else f"{value:,.2f}"

    lines = [header, ""]
    table = [("operation", "unit", "kstore", "raw", "kstore/raw", "goal")]
    for row in rows:
        ratio = row.ratio
        table.append(
            (
                row.name,
                row.unit,
                num(row.kstore),
                num(row.raw),
                "-" if ratio is None else f"{ratio:.2f}x",
                row.goal,
            )
        )
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    for index, row_cells in enumerate(table):
        cells = [
            cell.ljust(widths[i]) if i in (0, 1, 5) else cell.rjust(widths[i])
            for i, cell in enumerate(row_cells)
        ]
        lines.append("  ".join(cells).rstrip())
        if index == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines.append("")
    lines.append(
        "kstore/raw: throughput ratio (higher is better); for times, raw time / kstore time."
    )
    return "\n".join(lines)


class _Lmdb:
    """The LMDB backend and its raw py-lmdb baseline, side by side in one scratch directory."""

    def __init__(self, root: Path, durable: bool) -> None:
        from kstore.storage.lmdb import LmdbBackend, LmdbConfig, RawLmdbBaseline

        self.lmdb = LmdbBackend(
            LmdbConfig(path=root / "kstore", durable=durable, compaction_interval_s=0)
        )
        self.backend: Backend = self.lmdb
        self.raw = RawLmdbBaseline(LmdbConfig(path=root / "raw", durable=durable))

    def close(self) -> None:
        self.backend.close()
        self.raw.close()


class _Pods:
    """Pods built from one template: only ``metadata`` is per object, the rest is shared (the
    storage never mutates what it is given), so a run does not hold 30,000 full Pods."""

    def __init__(self) -> None:
        self._template = sample_pod("default", "template")

    def make(self, namespace: str, name: str) -> Object:
        meta = {**self._template["metadata"], "namespace": namespace, "name": name}
        return {**self._template, "metadata": meta}


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


#: Writes per turn when kstore and raw alternate on the one-commit-per-write rows.
_INTERLEAVE_CHUNK = 25


def interleaved(
    first: Callable[[int], None], second: Callable[[int], None], count: int
) -> tuple[float, float]:
    """Seconds spent in ``first(i)`` and in ``second(i)`` for ``i`` in ``range(count)``, taken
    in alternating chunks (and alternating which goes first), so both see the same load."""
    spent = [0.0, 0.0]
    calls = (first, second)
    for turn, start in enumerate(range(0, count, _INTERLEAVE_CHUNK)):
        stop = min(start + _INTERLEAVE_CHUNK, count)
        for side in (0, 1) if turn % 2 == 0 else (1, 0):
            call = calls[side]
            began = time.perf_counter()
            for i in range(start, stop):
                call(i)
            spent[side] += time.perf_counter() - began
    return spent[0], spent[1]


def on_worker(fn: Callable[[], T]) -> T:
    """``fn()`` run on a worker thread (see the module docstring); its exception re-raised."""
    box: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            box.append(fn())
        except BaseException as exc:
            failure.append(exc)

    thread = threading.Thread(target=run, name="kstore-bench")
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return box[0]


def _run_threads(count: int, work: Callable[[int], None]) -> float:
    threads = [threading.Thread(target=work, args=(k,)) for k in range(count)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - start


def _with_generation(generation: int) -> Callable[[Object], Object]:
    def update(obj: Object) -> Object:
        return {**obj, "metadata": {**obj["metadata"], "generation": generation}}

    return update


def _watch_latency(storage: Storage, pods: _Pods, rounds: int) -> list[float]:
    """Seconds from the start of a write to its event reaching a waiting watcher."""
    base = storage.create("/pods/watch/target", pods.make("watch", "target"))
    watcher = storage.watch(
        "/pods/watch/target",
        ListOptions(resource_version=base["metadata"]["resourceVersion"], recursive=False),
    )
    latencies: list[float] = []
    got = threading.Event()
    arrived: list[float] = []

    def consume() -> None:
        for _event in watcher:
            arrived.append(time.perf_counter())
            got.set()

    consumer = threading.Thread(target=consume, daemon=True)
    consumer.start()
    try:
        for i in range(rounds):
            got.clear()
            start = time.perf_counter()
            storage.guaranteed_update("/pods/watch/target", _with_generation(i + 2))
            if not got.wait(5.0):
                break
            latencies.append(arrived[-1] - start)
    finally:
        watcher.stop()
        consumer.join(timeout=5.0)
    return latencies


def run_storage_bench(
    backend: str = "lmdb",
    *,
    path: str | None = None,
    objects: int = 10_000,
    sequential: int = 300,
    writers: int = 16,
    concurrent: int = 8_000,
    repeats: int = 3,
    durable: bool = True,
) -> str:
    """Run the storage benchmark on ``backend`` (only ``"lmdb"`` so far) and return the report.

    ``path`` is where the scratch directory goes (the system's temporary directory by default);
    ``objects`` the size of the listed collection; ``sequential`` creates per sequential run;
    ``concurrent`` creates shared by ``writers`` threads per concurrent run.
    """
    if backend != "lmdb":
        raise ValueError(f"unknown storage backend {backend!r} (known: lmdb)")
    if min(repeats, writers, objects, sequential) < 1 or concurrent < writers:
        raise ValueError("counts must be positive and concurrent >= writers")
    with tempfile.TemporaryDirectory(dir=path) as scratch:
        bench = _LmdbBench(Path(scratch), durable, writers)
        try:
            return bench.run(objects, sequential, concurrent, repeats)
        finally:
            bench.close()


class _LmdbBench:
    def __init__(self, root: Path, durable: bool, writers: int) -> None:
        self.durable = durable
        self.writers = writers
        self.codec = JsonSerializer()
        self.pods = _Pods()
        self.engines = _Lmdb(root, durable)
        self.storage = self.engines.backend.storage_for(
            ResourceStorageConfig(resource_prefix="/pods", codec=self.codec, get_attrs=_pod_attrs)
        )
        self.raw = self.engines.raw
        self.value = self.codec.encode(sample_pod("default", "pod-000000"))
        self.samples: dict[str, list[float]] = {}
        self.loop = asyncio.new_event_loop()

    def close(self) -> None:
        self.engines.close()
        self.loop.close()

    def add(self, name: str, figure: float) -> None:
        self.samples.setdefault(name, []).append(figure)

    def median(self, name: str) -> float:
        return _median(self.samples.get(name, []))

    def creates(self, rep: int, sequential: int, concurrent: int) -> None:
        storage, pods, raw, writers = self.storage, self.pods, self.raw, self.writers
        # Sequential durable create: one commit per create on both sides.
        names = [f"seq-{rep}-{i:06d}" for i in range(sequential)]
        keys = [[f"/registry/pods/seq/{n}".encode()] for n in names]

        def raw_put(i: int) -> None:
            raw.put_each(keys[i], self.value)

        def create(i: int) -> None:
            storage.create(f"/pods/seq/{names[i]}", pods.make("seq", names[i]))

        raw_s, kstore_s = on_worker(lambda: interleaved(raw_put, create, sequential))
        self.add("raw_seq", sequential / raw_s)
        self.add("seq", sequential / kstore_s)
        self.add("seq_ratio", raw_s / kstore_s)
        # The same from the main thread, whose writes always go through the writer thread.
        main_names = [f"main-{rep}-{i:06d}" for i in range(sequential)]
        main_keys = [[f"/registry/pods/main/{n}".encode()] for n in main_names]

        def raw_put_main(i: int) -> None:
            raw.put_each(main_keys[i], self.value)

        def create_main(i: int) -> None:
            storage.create(f"/pods/main/{main_names[i]}", pods.make("main", main_names[i]))

        raw_s, kstore_s = interleaved(raw_put_main, create_main, sequential)
        self.add("raw_seq_main", sequential / raw_s)
        self.add("seq_main", sequential / kstore_s)
        self.add("seq_main_ratio", raw_s / kstore_s)
        # Concurrent durable creates share commits through the writer thread; raw py-lmdb
        # does the same group commit with nothing else, the two runs back to back, in turn
        # first (so both see the same load).
        cnames = [f"con-{rep}-{i:06d}" for i in range(concurrent)]
        ckeys = [f"/registry/pods/con/{n}".encode() for n in cnames]

        def create_share(k: int) -> None:
            for i in range(k, concurrent, writers):
                storage.create(f"/pods/con/{cnames[i]}", pods.make("con", cnames[i]))

        def kstore_group() -> float:
            commits = self.engines.lmdb.write_commits
            rate = concurrent / _run_threads(writers, create_share)
            self.add("per_commit", concurrent / max(1, self.engines.lmdb.write_commits - commits))
            return rate

        def raw_group() -> float:
            started = time.perf_counter()
            commits = raw.put_from_threads(ckeys, self.value, writers)
            rate = concurrent / (time.perf_counter() - started)
            self.add("raw_per_commit", concurrent / max(1, commits))
            return rate

        anames = [f"cao-{rep}-{i:06d}" for i in range(concurrent)]
        aio = as_async(storage)

        async def create_tasks() -> None:
            pending = iter(anames)

            async def creator() -> None:
                for name in pending:
                    await aio.create(f"/pods/cao/{name}", pods.make("cao", name))

            await asyncio.gather(*(creator() for _ in range(writers)))

        def kstore_tasks() -> float:
            commits = self.engines.lmdb.write_commits
            rate = concurrent / _timed(lambda: self.loop.run_until_complete(create_tasks()))
            self.add(
                "aio_per_commit", concurrent / max(1, self.engines.lmdb.write_commits - commits)
            )
            return rate

        # Each of the three first in turn, so that all see the same load.
        phases = [("concurrent", kstore_group), ("raw_group", raw_group), ("aio", kstore_tasks)]
        shift = rep % len(phases)
        rates = {name: run() for name, run in phases[shift:] + phases[:shift]}
        self.add("concurrent", rates["concurrent"])
        self.add("raw_group", rates["raw_group"])
        self.add("concurrent_ratio", rates["concurrent"] / rates["raw_group"])
        self.add("aio", rates["aio"])
        self.add("aio_ratio", rates["aio"] / rates["raw_group"])
        bkeys = [f"/registry/pods/batch/{n}".encode() for n in cnames]
        self.add("raw_batch", concurrent / _timed(lambda: raw.put_batched(bkeys, self.value, 1000)))

    def fill_list(self, objects: int) -> list[str]:
        storage, pods, writers = self.storage, self.pods, self.writers
        names = [f"pod-{i:06d}" for i in range(objects)]

        def fill(k: int) -> None:
            for i in range(k, objects, writers):
                storage.create(f"/pods/list/{names[i]}", pods.make("list", names[i]))

        _run_threads(writers, fill)
        self.raw.put_batched([f"/registry/pods/list/{n}".encode() for n in names], self.value, 1000)
        return names

    def reads(self, rep: int, names: list[str], updates: int) -> None:
        storage, raw = self.storage, self.raw
        get_names = names[:: max(1, len(names) // 2000)]
        get_keys = [f"/registry/pods/list/{n}".encode() for n in get_names]
        self.add("raw_get", _timed(lambda: raw.get_each(get_keys)) / len(get_keys) * 1e6)

        def gets() -> None:
            for name in get_names:
                storage.get(f"/pods/list/{name}")

        self.add("get", _timed(gets) / len(get_names) * 1e6)
        self.add("raw_scan", _timed(lambda: raw.scan(b"/registry/pods/list/")) * 1e3)
        self.add("list", _timed(lambda: storage.list("/pods/list")) * 1e3)

        def paged() -> None:
            token = ""
            while True:
                page = storage.list("/pods/list", ListOptions(limit=500, continue_token=token))
                token = page.continue_token
                if not token:
                    return

        self.add("list_paged", _timed(paged) * 1e3)
        # guaranteed_update: a read and one durable commit per update; raw: one commit per put.
        ukeys = [[f"/registry/pods/upd/{i}".encode()] for i in range(updates)]

        def raw_put(i: int) -> None:
            raw.put_each(ukeys[i], self.value)

        def update(i: int) -> None:
            storage.guaranteed_update(
                "/pods/list/pod-000000", _with_generation(rep * 1_000_000 + i + 1)
            )

        raw_s, kstore_s = on_worker(lambda: interleaved(raw_put, update, updates))
        self.add("raw_update", updates / raw_s)
        self.add("update", updates / kstore_s)
        self.add("update_ratio", raw_s / kstore_s)

    def run(self, objects: int, sequential: int, concurrent: int, repeats: int) -> str:
        for rep in range(repeats):
            self.creates(rep, sequential, concurrent)
        names = self.fill_list(objects)
        updates = max(50, sequential // 2)
        for rep in range(repeats):
            self.reads(rep, names, updates)
        latencies = sorted(_watch_latency(self.storage, self.pods, max(100, sequential)))
        p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] if latencies else 0.0
        m = self.median
        rows = [
            BenchRow(
                "sequential durable create",
                "creates/s",
                m("seq"),
                m("raw_seq"),
                goal=">= 0.80x raw (1 put per commit)",
                paired_ratio=m("seq_ratio"),
            ),
            BenchRow(
                "  the same, from the main thread",
                "creates/s",
                m("seq_main"),
                m("raw_seq_main"),
                goal="writes handed to the writer thread",
                paired_ratio=m("seq_main_ratio"),
            ),
            BenchRow(
                f"{self.writers} concurrent durable creators",
                "creates/s",
                m("concurrent"),
                m("raw_group"),
                goal=f">= 10,000/s; raw = same group commit, {self.writers} threads",
                paired_ratio=m("concurrent_ratio"),
            ),
            BenchRow(
                f"  the same, {self.writers} asyncio tasks",
                "creates/s",
                m("aio"),
                m("raw_group"),
                goal=">= 10,000/s; one event loop, as_async(storage)",
                paired_ratio=m("aio_ratio"),
            ),
            BenchRow("get", "us/op", m("get"), m("raw_get"), higher_is_better=False),
            BenchRow(
                f"list {objects} objects, one page",
                "ms",
                m("list"),
                m("raw_scan"),
                higher_is_better=False,
                goal="raw reads bytes, kstore decodes",
            ),
            BenchRow(
                f"list {objects} objects, pages of 500",
                "ms",
                m("list_paged"),
                m("raw_scan"),
                higher_is_better=False,
            ),
            BenchRow(
                "guaranteed_update, durable",
                "updates/s",
                m("update"),
                m("raw_update"),
                goal="raw = 1 put per commit",
                paired_ratio=m("update_ratio"),
            ),
            BenchRow(
                "watch delivery latency, median",
                "us",
                _median(latencies) * 1e6,
                higher_is_better=False,
                goal="write start -> event received",
            ),
            BenchRow("watch delivery latency, p99", "us", p99 * 1e6, higher_is_better=False),
        ]
        pod_bytes = len(self.value)
        header = (
            f"kstore storage benchmark: backend=lmdb, durable={self.durable}, "
            f"Pod = {pod_bytes} bytes of JSON, medians of {repeats} runs"
        )
        note = (
            f"\n{self.writers} concurrent creators: {m('per_commit'):.1f} creates per commit "
            f"(asyncio tasks: {m('aio_per_commit'):.1f}), "
            f"raw group commit {m('raw_per_commit'):.1f} puts per commit (medians); raw "
            f"py-lmdb with 1000 puts per commit: {m('raw_batch'):,.0f} puts/s (the disk's "
            "ceiling).\nkstore/raw of the sequential, concurrent and update rows: median of "
            "paired runs (measured back to back or interleaved)."
        )
        return _format(rows, header) + note
