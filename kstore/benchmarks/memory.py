"""The memory benchmark: what ``kstore serve`` holds per cached object, against its JSON size.

``run_memory_bench()`` measures, for each shape of object (a small ConfigMap, a ~1.5 KiB
ConfigMap, a ~5 KiB Pod):

1. a fresh LMDB store is filled with ``count`` objects by a :data:`Loader` (the embedding
   API: the same registry ``kstore serve`` runs; fsync off to load fast), in namespace
   ``bench``;
2. ``kstore serve`` starts on it; once its watch cache has the objects (a consistent list of
   one item answered, and the resident set stopped growing), the server's memory is read from
   ``/proc``: the resident set (``VmRSS``), its anonymous part (``RssAnon``: the process's own
   heap) and its file-backed part (``RssFile``: mostly the touched pages of LMDB's memory map,
   page cache shared with every process mapping the store), and PSS from ``smaps_rollup``;
3. one full LIST of the collection (JSON) is read, and the memory read again.

The same server started on an empty store gives the baseline; the figures per object are
``(memory with the objects - baseline) / count``, divided by the object's JSON size (the
mean size of an item of the full LIST as a client receives it). Goals (issue #23): resident
memory per object <= 2.5x its JSON size; memory after a full LIST within 10% of before.

``workers`` is the server process count: the memory of the server's whole process tree is
summed (PSS, so pages shared between processes count once).

``run_workers_memory_bench()`` measures one worker and ``workers`` of them on the same stores
and prints what the N together hold against the one: the sum of PSS is the honest figure (the
pages of LMDB's map and of the modules the forking parent imported are shared, and PSS splits
them between the processes mapping them), the sum of anonymous memory the price of one watch
cache per worker. Goal (issue #23): two workers together <= 1.5x one worker's memory.
"""

from __future__ import annotations

import http.client
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import orjson

from kstore.api.gvk import Object
from kstore.benchmarks._child import stop_child
from kstore.benchmarks.storage import sample_pod

__all__ = [
    "SHAPES",
    "Loader",
    "MemoryFigures",
    "MemoryReport",
    "MemoryRow",
    "WorkersMemoryReport",
    "run_memory_bench",
    "run_workers_memory_bench",
]

_NAMESPACE = "bench"
_KIB = 1024
_MIB = 1024 * 1024
#: How long the server may take to start and to fill its watch cache.
_SYNC_TIMEOUT = 600.0


#: Words the ConfigMaps' settings are made of.
_WORDS = (
    "enabled",
    "timeout",
    "retries",
    "endpoint",
    "region",
    "cache",
    "level",
    "debug",
    "listen",
    "port",
    "path",
    "user",
    "group",
    "token",
    "secret",
    "replicas",
    "interval",
    "backoff",
    "limit",
    "queue",
    "worker",
    "thread",
    "pool",
    "buffer",
    "size",
    "format",
    "json",
    "yaml",
    "info",
    "warn",
    "error",
    "metrics",
    "tracing",
    "sampler",
    "ratio",
    "bucket",
    "zone",
    "primary",
    "replica",
)


def _setting_lines(rng: random.Random, length: int) -> str:
    """Lines of ``name = value`` settings, ``length`` characters or a little more: text with
    the repetition of a real configuration file, no more (a value of one repeated character
    would compress far better than anything users store)."""
    lines: list[str] = []
    total = 0
    while total < length:
        name = "_".join(rng.sample(_WORDS, 2))
        value = rng.choice(
            (
                str(rng.randrange(1, 100_000)),
                rng.choice(_WORDS),
                f"{rng.choice(_WORDS)}-{rng.getrandbits(32):08x}.example.com"
                f":{rng.randrange(1, 65536)}",
                ",".join(rng.sample(_WORDS, 3)),
            )
        )
        line = f"{name} = {value}\n"
        lines.append(line)
        total += len(line)
    return "".join(lines)


def _configmap(size: int) -> Callable[[str, int], Object]:
    def make(name: str, index: int) -> Object:
        # Files of a few hundred bytes, as real configuration files tend to be.
        rng = random.Random(index)
        files = max(1, size // 212)
        return {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "labels": {"app": "bench", "run": f"r{index % 100}"}},
            "data": {f"file-{k}.conf": _setting_lines(rng, 200) for k in range(files)},
        }

    return make


def _pod(name: str, index: int) -> Object:
    pod = sample_pod(_NAMESPACE, name)
    pod.pop("status", None)
    meta = pod["metadata"]
    # No owner: the garbage collector would delete a Pod whose owner does not exist.
    for system in (
        "uid",
        "creationTimestamp",
        "resourceVersion",
        "managedFields",
        "ownerReferences",
    ):
        meta.pop(system, None)
    meta["labels"] = {**(meta.get("labels") or {}), "run": f"r{index % 100}"}
    return pod


#: name -> (resource path segment, object factory).
SHAPES: dict[str, tuple[str, Callable[[str, int], Object]]] = {
    "ConfigMap ~0.5 KiB": ("configmaps", _configmap(300)),
    "ConfigMap ~1.5 KiB": ("configmaps", _configmap(1300)),
    "Pod ~5 KiB": ("pods", _pod),
}


@dataclass(frozen=True)
class MemoryFigures:
    """Bytes of one process tree's memory at one moment."""

    rss: int
    anon: int
    file: int
    pss: int

    def minus(self, other: MemoryFigures) -> MemoryFigures:
        return MemoryFigures(
            self.rss - other.rss,
            self.anon - other.anon,
            self.file - other.file,
            self.pss - other.pss,
        )


@dataclass(frozen=True)
class MemoryRow:
    shape: str
    count: int
    json_size: float
    baseline: MemoryFigures
    loaded: MemoryFigures
    after_list: MemoryFigures

    def per_object(self, figures: MemoryFigures, what: str) -> float:
        """Memory per object beyond the baseline, divided by the JSON size."""
        extra: int = getattr(figures.minus(self.baseline), what)
        return extra / self.count / self.json_size


@dataclass
class MemoryReport:
    workers: int
    rows: list[MemoryRow] = field(default_factory=list)

    def report(self) -> str:
        head = (
            f"kstore bench memory: kstore serve on LMDB, {self.workers} worker(s); memory per "
            "object beyond an empty server's, / the object's JSON size (goal: RSS <= 2.5x; "
            "after a full LIST within 10% of before)"
        )
        lines = [
            head,
            f"{'objects':<20}{'count':>8}{'JSON B':>8}{'RSS':>7}{'anon':>7}{'file':>7}"
            f"{'PSS':>7}{'RSS MiB':>9}{'after LIST':>11}{'anon after':>11}{'list/load':>10}",
        ]
        for row in self.rows:
            loaded, after = row.loaded, row.after_list
            lines.append(
                f"{row.shape:<20}{row.count:>8}{row.json_size:>8.0f}"
                f"{row.per_object(loaded, 'rss'):>6.2f}x{row.per_object(loaded, 'anon'):>6.2f}x"
                f"{row.per_object(loaded, 'file'):>6.2f}x{row.per_object(loaded, 'pss'):>6.2f}x"
                f"{loaded.rss / _MIB:>9.0f}{after.rss / _MIB:>10.0f}M"
                f"{row.per_object(after, 'anon'):>10.2f}x{after.rss / loaded.rss:>10.2f}"
            )
        lines.append(
            "RSS = anon + file. anon: the server's own heap (the watch cache lives there); "
            "file: touched pages of LMDB's memory map (page cache, shared by every process on "
            "the store). list/load: resident memory after one full LIST / before it."
        )
        return "\n".join(lines)


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def _tree(pid: int) -> list[int]:
    pids = [pid]
    for child in _children(pid):
        pids.extend(_tree(child))
    return pids


def _status_kib(pid: int) -> dict[str, int]:
    out: dict[str, int] = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            name, _, rest = line.partition(":")
            if rest.strip().endswith("kB"):
                out[name] = int(rest.split()[0])
    return out


def _pss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def read_memory(pid: int) -> MemoryFigures:
    """The memory of ``pid`` and its descendants (RSS summed; PSS counts shared pages once)."""
    rss = anon = file = pss = 0
    for member in _tree(pid):
        try:
            status = _status_kib(member)
        except OSError:
            continue
        rss += status.get("VmRSS", 0) * _KIB
        anon += status.get("RssAnon", 0) * _KIB
        file += (status.get("RssFile", 0) + status.get("RssShmem", 0)) * _KIB
        pss += _pss_kib(member) * _KIB
    return MemoryFigures(rss, anon, file, pss)


class _Server:
    """``kstore serve`` on ``data_dir`` as a child process."""

    def __init__(self, data_dir: Path, workers: int) -> None:
        # Always said: serve's own default is one process per CPU.
        extra = [f"--workers={workers}"]
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kstore.cli",
                "serve",
                "--port",
                "0",
                "--data-dir",
                str(data_dir),
                "--log-level",
                "warning",
                *extra,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.startswith("kstore serving on "):
            self.stop()
            raise RuntimeError(f"kstore serve did not start: {line!r}")
        url = urlsplit(line.split()[3])
        self.host, self.port = url.hostname or "127.0.0.1", url.port or 80

    def get(self, path: str) -> bytes:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=_SYNC_TIMEOUT)
        try:
            conn.request("GET", path, headers={"Accept": "application/json"})
            response = conn.getresponse()
            body = response.read()
            if response.status != 200:
                raise RuntimeError(f"GET {path}: {response.status} {body[:200]!r}")
            return body
        finally:
            conn.close()

    def memory(self) -> MemoryFigures:
        return read_memory(self.process.pid)

    def settled_memory(self, path: str) -> MemoryFigures:
        """Memory once the watch cache is filled: a list answered, then the resident set
        not growing by more than 1% over two seconds (bounded by the sync timeout)."""
        self.get(f"{path}?limit=1")
        deadline = time.monotonic() + _SYNC_TIMEOUT
        last = self.memory()
        while time.monotonic() < deadline:
            time.sleep(2.0)
            now = self.memory()
            if now.anon <= last.anon * 1.01:
                return now
            last = now
        return last

    def stop(self) -> None:
        stop_child(self.process)


#: Fills a new store: (its ``lmdb://`` URL, namespace, resource, objects in that namespace).
#: The embedding API's client does it for ``kstore bench memory`` (the same registry as
#: ``kstore serve``); it is passed in because benchmarks sit beside the embedding layer.
Loader = Callable[[str, str, str, Iterator[Object]], None]


def _load(
    loader: Loader,
    data_dir: Path,
    resource: str,
    make: Callable[[str, int], Object],
    count: int,
) -> None:
    objects = (make(f"obj-{index:07d}", index) for index in range(count))
    loader(f"lmdb://{data_dir}?durable=false", _NAMESPACE, resource, objects)


def _measure(
    loader: Loader, shape: str, count: int, workers: int, baseline: MemoryFigures, root: Path
) -> MemoryRow:
    resource, make = SHAPES[shape]
    data_dir = root / f"{list(SHAPES).index(shape)}-{resource}-{count}"
    _load(loader, data_dir, resource, make, count)
    server = _Server(data_dir, workers)
    try:
        path = f"/api/v1/namespaces/{_NAMESPACE}/{resource}"
        loaded = server.settled_memory(path)
        body = server.get(path)
        listed = len(orjson.loads(body)["items"])
        if listed != count:
            raise RuntimeError(f"listed {listed} {resource}, loaded {count}")
        size = len(body)
        del body
        time.sleep(1.0)
        after = server.memory()
        # The item's share of the list: the list less its envelope, per item.
        one = server.get(f"{path}?limit=1")
        envelope = len(one) - len(orjson.dumps(orjson.loads(one)["items"][0]))
        json_size = (size - envelope) / count
    finally:
        server.stop()
    return MemoryRow(shape, count, json_size, baseline, loaded, after)


def run_memory_bench(
    loader: Loader,
    *,
    count: int = 50_000,
    shapes: tuple[str, ...] = tuple(SHAPES),
    workers: int = 1,
) -> MemoryReport:
    """Measure each of ``shapes`` with ``count`` objects (see the module docstring)."""
    report = MemoryReport(workers)
    with tempfile.TemporaryDirectory(prefix="kstore-bench-memory-") as tmp:
        root = Path(tmp)
        empty = root / "empty"
        _load(loader, empty, "configmaps", _configmap(100), 0)
        server = _Server(empty, workers)
        try:
            baseline = server.settled_memory(f"/api/v1/namespaces/{_NAMESPACE}/configmaps")
        finally:
            server.stop()
        for shape in shapes:
            report.rows.append(_measure(loader, shape, count, workers, baseline, root))
    return report


@dataclass
class WorkersMemoryReport:
    """The same shapes and counts served by one worker and by ``many.workers`` of them."""

    one: MemoryReport
    many: MemoryReport

    def ratios(self, what: str) -> list[float]:
        """Per shape: the N workers' ``what`` (with the objects loaded) / one worker's."""
        return [
            getattr(many.loaded, what) / getattr(one.loaded, what)
            for one, many in zip(self.one.rows, self.many.rows, strict=True)
        ]

    def report(self) -> str:
        n = self.many.workers
        lines = [
            self.one.report(),
            "",
            self.many.report(),
            "",
            f"{n} workers together / 1 worker, objects loaded, whole process tree "
            f"(goal: <= 1.5x); PSS counts the shared pages (LMDB's map, the parent's "
            "modules) once, anon is each worker's own heap (its watch cache)",
            f"{'objects':<20}{'count':>8}{'PSS 1':>9}{f'PSS {n}':>9}{'ratio':>7}"
            f"{'anon 1':>9}{f'anon {n}':>9}{'ratio':>7}{'RSS 1':>9}{f'RSS {n}':>9}",
        ]
        pss, anon = self.ratios("pss"), self.ratios("anon")
        for k, (one, many) in enumerate(zip(self.one.rows, self.many.rows, strict=True)):
            lines.append(
                f"{one.shape:<20}{one.count:>8}"
                f"{one.loaded.pss / _MIB:>8.0f}M{many.loaded.pss / _MIB:>8.0f}M{pss[k]:>6.2f}x"
                f"{one.loaded.anon / _MIB:>8.0f}M{many.loaded.anon / _MIB:>8.0f}M{anon[k]:>6.2f}x"
                f"{one.loaded.rss / _MIB:>8.0f}M{many.loaded.rss / _MIB:>8.0f}M"
            )
        lines.append(
            "RSS sums each process's resident set, so it counts shared pages once per process."
        )
        return "\n".join(lines)


def run_workers_memory_bench(
    loader: Loader,
    *,
    workers: int,
    count: int = 50_000,
    shapes: tuple[str, ...] = tuple(SHAPES),
) -> WorkersMemoryReport:
    """:func:`run_memory_bench` with one worker, then with ``workers`` of them."""
    one = run_memory_bench(loader, count=count, shapes=shapes, workers=1)
    many = run_memory_bench(loader, count=count, shapes=shapes, workers=workers)
    return WorkersMemoryReport(one, many)
