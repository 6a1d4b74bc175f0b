"""``kstore bench rest --workers N``: one server process against N, in the same run.

Two ``kstore serve`` servers run side by side on LMDB (fresh directories, durable commits):
one with ``--workers 1``, one with ``--workers N``. Each round measures both in turn, in the
same order, so a load swing moves both alike; every figure is the median over the rounds and
each ratio the median of the rounds' own ratios (N workers over one):

- create: ``clients`` keep-alive connections each ``POST`` the object (goal with N = 2 on the
  2-core dev VM: >= 1.7x);
- get: the same connections ``GET`` the objects just created (goal: >= 1.7x);
- watch delivery: with ``watchers`` watch streams open (fresh connections, so that they are
  spread over the workers), the time from a create's answer to the client to each stream's
  event for it, over ``probes`` creates from one client; its p50 and p99 (goal: p99 <= 50 ms).
  With N workers most streams are on another process than the write: what the change feed
  costs.

Beside the rates, the servers' CPU per request (the parent and every worker, from ``/proc``)
and the load generator's (this process, every client thread). The clients share the machine
with the servers, so N workers cannot go faster than the machine's cores allow:
``cores / (server CPU + client CPU per request)``. The report prints that bound over the
one-worker rate, the highest ratio this machine could show whatever the servers did.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import orjson

from kstore.benchmarks.rest import (
    _COLLECTIONS,
    _HEADERS,
    _create_service_account,
    _expect,
    _new_object,
    _parallel,
    _request,
    _Server,
)

__all__ = ["WorkersBenchResult", "run_workers_bench"]

_Work = Callable[[http.client.HTTPConnection, int], None]


def _tree_cpu_seconds(root: int) -> float:
    """CPU time (user + system) of ``root`` and its live children."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(entry) == root or int(fields[1]) == root:
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def _measure(server: _Server, clients: int, total: int, work: _Work) -> tuple[float, float, float]:
    """Requests per second, and the servers' and the clients' CPU microseconds per
    request."""
    before = _tree_cpu_seconds(server.process.pid)
    client_before = time.process_time()
    rate = total / _parallel(server, clients, total, work)
    client_after = time.process_time()
    after = _tree_cpu_seconds(server.process.pid)
    return rate, (after - before) / total * 1e6, (client_after - client_before) / total * 1e6


class _DeliveryProbe:
    """``watchers`` watch streams on one label, recording when each event arrives."""

    def __init__(self, server: _Server, collection: str, watchers: int, label: str) -> None:
        self.arrivals: dict[str, list[float]] = {}
        self._lock = threading.Lock()
        self._conns: list[http.client.HTTPConnection] = []
        ready = threading.Barrier(watchers + 1)
        path = f"{collection}?watch=true&labelSelector=run%3D{label}&timeoutSeconds=120"
        self._threads = [
            threading.Thread(target=self._run, args=(server, path, ready), daemon=True)
            for _ in range(watchers)
        ]
        for thread in self._threads:
            thread.start()
        ready.wait(60)

    def _run(self, server: _Server, path: str, ready: threading.Barrier) -> None:
        conn = server.connection()
        with self._lock:
            self._conns.append(conn)
        conn.request("GET", path, headers=_HEADERS)
        response = conn.getresponse()
        ready.wait(60)
        with contextlib.suppress(OSError, ValueError):
            while line := response.readline():
                arrived = time.perf_counter()
                event = orjson.loads(line)
                if event.get("type") == "ADDED":
                    name = event["object"]["metadata"]["name"]
                    with self._lock:
                        self.arrivals.setdefault(name, []).append(arrived)

    def close(self) -> None:
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            # Unblocks the stream's reader at once (close alone may not).
            if conn.sock is not None:
                with contextlib.suppress(OSError):
                    conn.sock.shutdown(2)
        # The readers first: closing a connection under a reader races with it.
        for thread in self._threads:
            thread.join(10)
        for conn in conns:
            conn.close()


def _delivery_ms(server: _Server, kind: str, watchers: int, probes: int, label: str) -> list[float]:
    """Milliseconds from each probe create's answer to each stream's event for it."""
    collection = _COLLECTIONS[kind]
    probe = _DeliveryProbe(server, collection, watchers, label)
    answered: dict[str, float] = {}
    conn = server.connection()
    try:
        for i in range(probes):
            name = f"{label}-{i:06d}"
            status, body = _request(conn, "POST", collection, _new_object(kind, name, label, i))
            answered[name] = time.perf_counter()
            _expect(status, body, 201)
            time.sleep(0.01)  # probes, not load: one create at a time, spaced
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with probe._lock:
                complete = sum(len(probe.arrivals.get(n, ())) for n in answered)
            if complete >= probes * watchers:
                break
            time.sleep(0.05)
    finally:
        conn.close()
        probe.close()
    out: list[float] = []
    for name, at in answered.items():
        arrivals = probe.arrivals.get(name, [])
        # A stream that missed the event counts as the whole wait.
        out += [max(0.0, (arrived - at) * 1000) for arrived in arrivals]
        out += [30_000.0] * (watchers - len(arrivals))
    return out


def _percentile(ordered: list[float], p: float) -> float:
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


@dataclass(frozen=True, slots=True)
class WorkersBenchResult:
    kind: str
    workers: int
    clients: int
    watchers: int
    #: figure -> (one worker, N workers); rates in req/s, CPU in us/request, latencies in ms.
    figures: dict[str, tuple[float, float]]
    #: figure -> median over rounds of (N workers / one worker).
    ratios: dict[str, float]
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float]
    #: The machine's CPUs, for the bound (see the module docstring).
    cores: int = 2

    def bound(self, figure: str) -> float | None:
        """The highest N-worker over one-worker ratio of ``figure`` (create, get) the
        machine's cores allow, given the CPU each request costs the servers and the clients
        with N workers."""
        try:
            one_rate, _ = self.figures[figure]
            _, server_cpu = self.figures[f"{figure}_cpu"]
            _, client_cpu = self.figures[f"{figure}_client_cpu"]
        except KeyError:
            return None
        if one_rate <= 0 or server_cpu + client_cpu <= 0:
            return None
        return self.cores * 1e6 / (server_cpu + client_cpu) / one_rate

    def report(self) -> str:
        n = self.workers
        goals = {"create": ">= 1.7x", "get": ">= 1.7x", "watch_p99": "<= 50 ms"}
        names = {
            "create": ("create", "req/s"),
            "create_cpu": ("create, server CPU", "us/req"),
            "create_client_cpu": ("create, client CPU", "us/req"),
            "get": ("get", "req/s"),
            "get_cpu": ("get, server CPU", "us/req"),
            "get_client_cpu": ("get, client CPU", "us/req"),
            "watch_p50": (f"watch delivery p50 ({self.watchers} streams)", "ms"),
            "watch_p99": (f"watch delivery p99 ({self.watchers} streams)", "ms"),
        }

        def load(figures: tuple[float, float, float]) -> str:
            return " ".join(f"{f:.2f}" for f in figures)

        lines = [
            f"kstore bench rest --workers {n}: LMDB (durable), {self.clients} concurrent HTTP "
            f"clients (keep-alive), {self.kind}, 1 worker beside {n} in the same run",
            f"load average before: {load(self.load_before)}; after: {load(self.load_after)}",
            f"{'figure':<34} {'1 worker':>10} {f'{n} workers':>10} {'ratio':>7} {'unit':<7} goal",
        ]
        for key, (label, unit) in names.items():
            if key not in self.figures:
                continue
            one, many = self.figures[key]
            ratio = self.ratios.get(key)
            shown = f"{ratio:.2f}x" if ratio is not None else ""
            lines.append(
                f"{label:<34} {one:>10,.1f} {many:>10,.1f} {shown:>7} {unit:<7} "
                f"{goals.get(key, '')}"
            )
        bounds = {figure: self.bound(figure) for figure in ("create", "get")}
        if all(value is not None for value in bounds.values()):
            lines.append(
                f"this machine's bound, {self.cores} cores / (server + client CPU per request "
                f"with {n} workers), over 1 worker's rate: "
                + ", ".join(f"{figure} {value:.2f}x" for figure, value in bounds.items())
            )
        return "\n".join(lines)


def run_workers_bench(
    *,
    workers: int = 2,
    clients: int = 16,
    requests: int = 2000,
    repeats: int = 3,
    kind: str = "configmap",
    watchers: int = 8,
    probes: int = 100,
) -> WorkersBenchResult:
    """Start a one-worker and a ``workers``-worker server, measure both, stop them."""
    if kind not in ("pod", "configmap"):
        raise ValueError(f"kind must be pod or configmap, not {kind!r}")
    if workers < 2:
        raise ValueError("workers must be at least 2 (it is compared with one)")
    collection = _COLLECTIONS[kind]
    samples: dict[str, list[float]] = {}
    load_before = os.getloadavg()

    def add(name: str, value: float) -> None:
        samples.setdefault(name, []).append(value)

    def creator(label: str) -> _Work:
        bodies = [_new_object(kind, f"{label}-{i:06d}", label, i) for i in range(requests)]

        def create(c: http.client.HTTPConnection, i: int) -> None:
            _expect(*_request(c, "POST", collection, bodies[i]), 201)

        return create

    def getter(label: str) -> _Work:
        def get(c: http.client.HTTPConnection, i: int) -> None:
            _expect(*_request(c, "GET", f"{collection}/{label}-{i:06d}"), 200)

        return get

    with tempfile.TemporaryDirectory(prefix="kstore-bench-workers-") as tmp:
        servers: dict[str, _Server] = {}
        try:
            for side, count in (("one", 1), ("many", workers)):
                server = servers[side] = _Server(Path(tmp) / side, workers=count)
                _parallel(server, 1, 1, _create_service_account)
                warm = min(requests, 200)
                _parallel(server, 4, warm, creator("warm"))
                _parallel(server, 4, warm, getter("warm"))
            for rep in range(repeats):
                for side in ("one", "many"):
                    server = servers[side]
                    label = f"r{rep}"
                    rate, cpu, client = _measure(server, clients, requests, creator(label))
                    add(f"{side}_create", rate)
                    add(f"{side}_create_cpu", cpu)
                    add(f"{side}_create_client_cpu", client)
                    rate, cpu, client = _measure(server, clients, requests, getter(label))
                    add(f"{side}_get", rate)
                    add(f"{side}_get_cpu", cpu)
                    add(f"{side}_get_client_cpu", client)
                    delivered = sorted(_delivery_ms(server, kind, watchers, probes, f"d{rep}"))
                    add(f"{side}_watch_p50", _percentile(delivered, 0.50))
                    add(f"{side}_watch_p99", _percentile(delivered, 0.99))
                for figure in ("create", "get", "watch_p99"):
                    one, many = samples[f"one_{figure}"][-1], samples[f"many_{figure}"][-1]
                    if one > 0:  # a delivery can take under the clock's resolution
                        add(f"ratio_{figure}", many / one)
        finally:
            for server in servers.values():
                server.stop()
    figures = {
        name: (
            statistics.median(samples[f"one_{name}"]),
            statistics.median(samples[f"many_{name}"]),
        )
        for name in (
            "create",
            "create_cpu",
            "create_client_cpu",
            "get",
            "get_cpu",
            "get_client_cpu",
            "watch_p50",
            "watch_p99",
        )
    }
    ratios = {
        name: statistics.median(samples[f"ratio_{name}"])
        for name in ("create", "get", "watch_p99")
        if f"ratio_{name}" in samples
    }
    return WorkersBenchResult(
        kind=kind,
        workers=workers,
        clients=clients,
        watchers=watchers,
        figures=figures,
        ratios=ratios,
        load_before=load_before,
        load_after=os.getloadavg(),
        cores=len(os.sched_getaffinity(0)),
    )
