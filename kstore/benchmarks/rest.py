"""The REST benchmark: kstore's API over HTTP beside a trivial endpoint of the same server.

``run_rest_bench()`` starts a real ``kstore serve`` process on LMDB (a fresh directory, a free
loopback port, durable commits) and drives it from ``clients`` threads, each with its own
keep-alive connection (``http.client``: the cheapest client in the standard library, so the
client's CPU weighs as little as possible on the shared machine). Figures, each the median of
``repeats`` rounds, trivial endpoint and kstore interleaved so both see the same load:

- trivial: ``GET /version`` (a constant JSON document; the server stack's own cost);
- create: ``POST`` of a ConfigMap, requests/s and latency percentiles (goal: >= 0.4x the
  trivial rate, p99 <= 25 ms at 16 concurrent clients);
- get: ``GET`` of one ConfigMap (goal: >= 0.5x the trivial rate);
- list: ``GET`` of a page of 100 ConfigMaps;
- watch: events per second delivered to ``watchers`` watch streams while the creates run.

The report is a plain-text table.
"""

from __future__ import annotations

import http.client
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import orjson

__all__ = ["RestBenchResult", "run_rest_bench"]

_CMS = "/api/v1/namespaces/default/configmaps"
_HEADERS = {"Content-Type": "application/json", "Accept": "application/json"}


@dataclass(frozen=True, slots=True)
class RestBenchResult:
    trivial_rate: float
    create_rate: float
    create_p50_ms: float
    create_p99_ms: float
    get_rate: float
    list_rate: float
    watch_events_rate: float
    clients: int
    watchers: int

    def report(self) -> str:
        def row(name: str, value: float, unit: str, ratio: str, goal: str) -> str:
            return f"{name:<34} {value:>12,.1f} {unit:<10} {ratio:>8}  {goal}"

        t = self.trivial_rate
        lines = [
            f"kstore bench rest: LMDB, {self.clients} concurrent HTTP clients (keep-alive)",
            f"{'figure':<34} {'value':>12} {'unit':<10} {'vs triv.':>8}  goal",
            row("trivial endpoint (GET /version)", t, "req/s", "1.00x", ""),
            row(
                "create (POST ConfigMap)",
                self.create_rate,
                "req/s",
                f"{self.create_rate / t:.2f}x",
                ">= 0.40x",
            ),
            row("create latency p50", self.create_p50_ms, "ms", "", ""),
            row("create latency p99", self.create_p99_ms, "ms", "", "<= 25 ms"),
            row(
                "get (GET ConfigMap)",
                self.get_rate,
                "req/s",
                f"{self.get_rate / t:.2f}x",
                ">= 0.50x",
            ),
            row(
                "list (100 ConfigMaps a page)",
                self.list_rate,
                "req/s",
                f"{self.list_rate / t:.2f}x",
                "",
            ),
            row(
                f"watch events ({self.watchers} watchers)",
                self.watch_events_rate,
                "events/s",
                "",
                "",
            ),
        ]
        return "\n".join(lines)


class _Server:
    """A ``kstore serve`` child process on a free port."""

    def __init__(self, data_dir: Path) -> None:
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
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.startswith("kstore serving on "):
            self.process.kill()
            raise RuntimeError(f"kstore serve did not start: {line!r}")
        url = urlsplit(line.split()[3])
        self.host, self.port = url.hostname or "127.0.0.1", url.port or 80

    def connection(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.host, self.port, timeout=60)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _request(
    conn: http.client.HTTPConnection, method: str, path: str, body: bytes | None = None
) -> tuple[int, bytes]:
    conn.request(method, path, body=body, headers=_HEADERS)
    response = conn.getresponse()
    return response.status, response.read()


def _parallel(
    server: _Server,
    clients: int,
    total: int,
    work: Callable[[http.client.HTTPConnection, int], None],
) -> float:
    """Run ``work(conn, i)`` for i in range(total) over ``clients`` threads; seconds taken."""
    conns = [server.connection() for _ in range(clients)]
    barrier = threading.Barrier(clients + 1)
    errors: list[BaseException] = []

    def run(k: int) -> None:
        barrier.wait()
        try:
            for i in range(k, total, clients):
                work(conns[k], i)
        except BaseException as exc:  # reported after the join
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    barrier.wait()
    started = time.perf_counter()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    for c in conns:
        c.close()
    if errors:
        raise errors[0]
    return elapsed


def _expect(status: int, body: bytes, want: int) -> None:
    if status != want:
        raise RuntimeError(f"unexpected HTTP {status}: {body[:300]!r}")


class _Watchers:
    """``count`` watch streams on the ConfigMaps of one label, counting the events they get."""

    def __init__(self, server: _Server, count: int, label: str, expected: int) -> None:
        self.expected = expected
        self.done: queue.Queue[float] = queue.Queue()
        self.threads = []
        ready = threading.Barrier(count + 1)
        for _ in range(count):
            t = threading.Thread(target=self._run, args=(server, label, ready), daemon=True)
            t.start()
            self.threads.append(t)
        ready.wait()

    def _run(self, server: _Server, label: str, ready: threading.Barrier) -> None:
        conn = server.connection()
        path = f"{_CMS}?watch=true&resourceVersion=0&labelSelector=run%3D{label}&timeoutSeconds=120"
        conn.request("GET", path, headers=_HEADERS)
        response = conn.getresponse()
        ready.wait()
        seen = 0
        while seen < self.expected:
            line = response.readline()
            if not line:
                break
            if line.startswith(b'{"type":"ADDED"'):
                seen += 1
        self.done.put(time.perf_counter())
        conn.close()

    def wait(self, timeout: float) -> float:
        """When the last watcher had all its events."""
        last = 0.0
        for _ in self.threads:
            last = max(last, self.done.get(timeout=timeout))
        return last


def run_rest_bench(
    *,
    clients: int = 16,
    requests: int = 2000,
    watchers: int = 10,
    repeats: int = 3,
    listed: int = 100,
) -> RestBenchResult:
    """Start a server, measure, stop it; see the module docstring for the figures."""
    samples: dict[str, list[float]] = {}
    latencies: list[float] = []

    def add(name: str, value: float) -> None:
        samples.setdefault(name, []).append(value)

    with tempfile.TemporaryDirectory(prefix="kstore-bench-rest-") as tmp:
        server = _Server(Path(tmp) / "data")
        try:
            # Warm up: first requests import and compile lazily on the server.
            _parallel(server, 2, 50, lambda c, i: _expect(*_request(c, "GET", "/version"), 200))
            for rep in range(repeats):
                add("trivial", requests / _parallel(
                    server, clients, requests,
                    lambda c, i: _expect(*_request(c, "GET", "/version"), 200),
                ))  # fmt: skip
                label = f"r{rep}"
                watch = _Watchers(server, watchers, label, requests)

                def create(c: http.client.HTTPConnection, i: int, label: str = label) -> None:
                    body = orjson.dumps(
                        {
                            "metadata": {"name": f"{label}-{i:06d}", "labels": {"run": label}},
                            "data": {"key": "value", "index": str(i)},
                        }
                    )
                    started = time.perf_counter()
                    status, data = _request(c, "POST", _CMS, body)
                    latencies.append(time.perf_counter() - started)
                    _expect(status, data, 201)

                began = time.perf_counter()
                add("create", requests / _parallel(server, clients, requests, create))
                add("watch", watchers * requests / (watch.wait(120) - began))

                def get(c: http.client.HTTPConnection, i: int, label: str = label) -> None:
                    _expect(*_request(c, "GET", f"{_CMS}/{label}-{i:06d}"), 200)

                add("get", requests / _parallel(server, clients, requests, get))
                list_path = f"{_CMS}?labelSelector=run%3D{label}&limit={listed}"
                lists = max(50, requests // 10)

                def list_page(c: http.client.HTTPConnection, i: int, path: str = list_path) -> None:
                    _expect(*_request(c, "GET", path), 200)

                add("list", lists / _parallel(server, clients, lists, list_page))
        finally:
            server.stop()
    latencies.sort()

    def pct(p: float) -> float:
        return latencies[min(len(latencies) - 1, int(len(latencies) * p))] * 1000

    return RestBenchResult(
        trivial_rate=statistics.median(samples["trivial"]),
        create_rate=statistics.median(samples["create"]),
        create_p50_ms=pct(0.50),
        create_p99_ms=pct(0.99),
        get_rate=statistics.median(samples["get"]),
        list_rate=statistics.median(samples["list"]),
        watch_events_rate=statistics.median(samples["watch"]),
        clients=clients,
        watchers=watchers,
    )
