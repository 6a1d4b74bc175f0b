"""The REST benchmark: kstore's API over HTTP beside a trivial endpoint of the same server.

``run_rest_bench()`` starts a real ``kstore serve`` process on LMDB (a fresh directory, a free
loopback port, durable commits) and drives it from another process (this one, so the load
generator never shares the server's GIL) with ``clients`` threads, each with its own keep-alive
connection (``http.client``: the cheapest client in the standard library, so the client's CPU
weighs as little as possible on the shared machine). The object created is a realistic ~5 KiB
Pod (three containers, probes, volumes; :func:`kstore.benchmarks.storage.sample_pod` without
its status and system fields, owned by a ReplicaSet the benchmark creates first, so the garbage
collector tracks the Pods and keeps them) unless ``kind="configmap"`` asks for a small
ConfigMap. The
first requests of every path (imports, compiled plans, caches) are made before any timing.

Each round measures, in this order, the trivial endpoint, creates, gets, the trivial endpoint
again, lists, and finally creates with ``watchers`` watch streams open. Every figure is the
median over ``repeats`` rounds; each ratio is the median over rounds of the round's own ratio
(kstore over the mean of that round's two trivial runs), so a load swing between rounds moves
both sides of a ratio alike. Beside each rate, the server process's CPU time per request
(user + system, all its threads, from ``/proc``) and its multiple of the trivial endpoint's:
on a shared machine the steadier figure, and what the rate ratio tends to when the server is
CPU-bound.

- trivial: ``GET /version`` (a constant JSON document; the server stack's own cost);
- create: ``POST`` of the object with no watch open, requests/s and latency percentiles
  (goal: p99 <= 25 ms at 16 concurrent clients);
- get: ``GET`` of one of the created objects;
- list: ``GET`` of a page of ``listed`` objects by label;
- policy (``policy=True``, Pods and ConfigMaps): creates through one ValidatingAdmissionPolicy
  with three validations and a Deny binding, measured in each round right after the plain
  creates (the binding is created before and deleted after, each waited for by a probe the
  policy refuses), and the ratio of the two creates' server CPU (goal: <= 1.3x);
- mutating policy (``map_policy=True``, Pods and ConfigMaps): creates through one
  MutatingAdmissionPolicy with one ApplyConfiguration mutation (a label) and its binding,
  measured like the validating policy's (the binding's effect waited for by a probe that must
  come back labelled, or not), and the ratio of the two creates' server CPU;
- webhook (``webhook=True``, Pods and ConfigMaps): creates through one no-op mutating
  admission webhook (HTTPS, in a process of its own: :mod:`kstore.benchmarks.webhook`),
  measured in each round right after the plain creates (its configuration created before and
  deleted after, each waited for by a probe the webhook refuses), and the ratios of the two
  creates' rates and server CPU (goal: <= 2x);
- admission plugins (``plugins_compare=True``): a second server with every admission plugin
  off, started beside the first; in each round, right after the plain creates, as many creates
  on it, and the ratios of the two rates and server CPU (with the plugins over without them;
  goal: the rate within 15%, >= 0.85x);
- watch: events per second delivered to ``watchers`` watch streams while another batch of
  creates runs, and the create rate with those watchers attached (every create is then also
  encoded and sent ``watchers`` times, so it is reported apart from the plain create rate).
- 1,000 watchers: ``fanout_creates`` creates without a watch, then as many with
  ``fanout_watchers`` HTTP watch streams open in a separate process
  (:func:`measure_fanout`): the create rate, its ratio to the rate without watchers (not to
  the trivial endpoint), and the server's CPU per delivered event.

The goal of create, get and list (Pods and ConfigMaps) is a budget of server CPU per request
(:data:`CPU_BUDGETS`, a multiple of the trivial endpoint's): what a request costs the machine,
steadier than a rate on a shared one. The custom kind keeps the rate goals it had.

The report is a plain-text table with the load average at the start and the end of the run.
"""

from __future__ import annotations

import contextlib
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
from typing import Any
from urllib.parse import urlsplit

import orjson

from kstore.benchmarks._child import stop_child
from kstore.benchmarks.custom_kind import BENCH_CRD, BENCH_GROUP, BENCH_PLURAL, bench_object
from kstore.benchmarks.storage import sample_pod
from kstore.benchmarks.webhook import NoopWebhook
from kstore.registry.plugins import DEFAULT_ON_PLUGINS

__all__ = ["CPU_BUDGETS", "RestBenchResult", "run_rest_bench"]

_NAMESPACE = "default"
#: The server CPU each request may cost, as a multiple of the trivial endpoint's in the same
#: run (one server process), by (kind, figure): the budgets of the table's goal column.
CPU_BUDGETS: dict[tuple[str, str], float] = {
    ("configmap", "create"): 3.0,
    ("pod", "create"): 8.0,
    ("configmap", "get"): 1.5,
    ("pod", "get"): 1.5,
    ("configmap", "list"): 4.0,
    ("pod", "list"): 10.0,
}
#: Every admission plugin kube-apiserver runs by default (``admission_plugins=False`` turns
#: them all off, for the figure without them).
_PLUGINS = sorted(DEFAULT_ON_PLUGINS)
_HEADERS = {"Content-Type": "application/json", "Accept": "application/json"}
_COLLECTIONS = {
    "pod": f"/api/v1/namespaces/{_NAMESPACE}/pods",
    "configmap": f"/api/v1/namespaces/{_NAMESPACE}/configmaps",
    "custom": f"/apis/{BENCH_GROUP}/v1/namespaces/{_NAMESPACE}/{BENCH_PLURAL}",
}


@dataclass(frozen=True, slots=True)
class RestBenchResult:
    kind: str
    trivial_rate: float
    create_rate: float
    create_ratio: float
    create_p50_ms: float
    create_p99_ms: float
    get_rate: float
    get_ratio: float
    list_rate: float
    list_ratio: float
    watched_create_rate: float
    watch_events_rate: float
    clients: int
    watchers: int
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float]
    #: The server's CPU microseconds per request (median over rounds) by figure: steadier
    #: than rates on a shared machine, and the ratio a CPU-bound server's rates tend to.
    cpu_us: dict[str, float]
    #: For ``kind="custom"``: ConfigMap creates measured in the same rounds, and the custom
    #: create's cost over theirs (median of the rounds' ratios of server CPU per create).
    configmap_create_rate: float | None = None
    custom_over_configmap: float | None = None
    #: With ``policy``: creates through one policy of three validations, and their server CPU
    #: over the plain creates' (median of the rounds' ratios).
    policy_create_rate: float | None = None
    policy_over_create: float | None = None
    #: With ``map_policy``: creates through one MutatingAdmissionPolicy of one
    #: ApplyConfiguration mutation, and their server CPU over the plain creates' (median).
    map_create_rate: float | None = None
    map_over_create: float | None = None
    #: With ``webhook``: creates through one no-op mutating webhook, and their rate and
    #: server CPU against the plain creates' (medians of the rounds' ratios).
    webhook_create_rate: float | None = None
    webhook_rate_ratio: float | None = None
    webhook_cpu_ratio: float | None = None
    #: The many-watchers figure (:func:`measure_fanout`, medians of the rounds): creates with
    #: ``fanout_watchers`` HTTP watch streams open, their rate over the rate without them,
    #: and the server's CPU per delivered event.
    fanout_watchers: int = 0
    fanout_create_rate: float | None = None
    fanout_rate_ratio: float | None = None
    fanout_delivery_cpu_us: float | None = None
    #: With ``plugins_compare``: creates on a server with every admission plugin off, in the
    #: same rounds, and the plain creates' rate and server CPU over theirs (medians of the
    #: rounds' ratios).
    bare_create_rate: float | None = None
    plugins_rate_ratio: float | None = None
    plugins_cpu_ratio: float | None = None

    def report(self) -> str:
        trivial_cpu = self.cpu_us.get("trivial")

        def row(name: str, value: float, unit: str, ratio: str, goal: str, cpu: str = "") -> str:
            return f"{name:<34} {value:>10,.1f} {unit:<9} {ratio:>8} {cpu:>16}  {goal}"

        def cpu(figure: str) -> str:
            value = self.cpu_us.get(figure)
            if value is None:
                return ""
            times = f" ({value / trivial_cpu:.1f}x)" if trivial_cpu else ""
            return f"{value:,.0f}{times}"

        def budget(figure: str, rate_goal: str = "") -> str:
            """The figure's CPU budget (met or not, where the run measured CPU); else the
            rate goal it had before budgets."""
            limit = CPU_BUDGETS.get((self.kind, figure))
            if limit is None:
                return rate_goal
            goal = f"CPU <= {limit:g}x"
            value = self.cpu_us.get(figure)
            if value is None or not trivial_cpu:
                return goal
            return f"{goal} ({'met' if value / trivial_cpu <= limit else 'not met'})"

        def load(figures: tuple[float, float, float]) -> str:
            return " ".join(f"{f:.2f}" for f in figures)

        label = {
            "pod": "Pod ~5 KiB",
            "configmap": "ConfigMap",
            "custom": "custom resource, 20 CEL rules",
        }[self.kind]
        t = self.trivial_rate
        lines = [
            f"kstore bench rest: LMDB (durable), {self.clients} concurrent HTTP clients "
            f"(keep-alive), {label}",
            f"load average before: {load(self.load_before)}; after: {load(self.load_after)}",
            f"{'figure':<34} {'value':>10} {'unit':<9} {'vs triv.':>8} "
            f"{'server CPU us/req':>16}  goal",
            row("trivial endpoint (GET /version)", t, "req/s", "1.00x", "", cpu("trivial")),
            row(
                f"create (POST {self.kind})",
                self.create_rate,
                "req/s",
                f"{self.create_ratio:.2f}x",
                budget("create", ">= 0.40x"),
                cpu("create"),
            ),
            row("create latency p50", self.create_p50_ms, "ms", "", ""),
            row("create latency p99", self.create_p99_ms, "ms", "", "<= 25 ms"),
            row(
                f"get (GET {self.kind})",
                self.get_rate,
                "req/s",
                f"{self.get_ratio:.2f}x",
                budget("get", ">= 0.50x"),
                cpu("get"),
            ),
            row(
                "list (100 a page, by label)",
                self.list_rate,
                "req/s",
                f"{self.list_ratio:.2f}x",
                budget("list"),
                cpu("list"),
            ),
            row(
                f"create, {self.watchers} watchers open",
                self.watched_create_rate,
                "req/s",
                f"{self.watched_create_rate / t:.2f}x",
                "",
                cpu("watched_create"),
            ),
            row(
                f"watch events ({self.watchers} watchers)",
                self.watch_events_rate,
                "events/s",
                "",
                "",
            ),
        ]
        if self.fanout_create_rate is not None and self.fanout_rate_ratio is not None:
            delivery = self.fanout_delivery_cpu_us
            lines.append(
                row(
                    f"create, {self.fanout_watchers:,} watchers",
                    self.fanout_create_rate,
                    "req/s",
                    f"{self.fanout_rate_ratio:.2f}x",
                    ">= 0.50x (vs no watchers); <= 10 us/event",
                    "" if delivery is None else f"{delivery:.1f}/event",
                )
            )
        if self.bare_create_rate is not None:
            lines.append(
                row(
                    "create, admission plugins off",
                    self.bare_create_rate,
                    "req/s",
                    "",
                    "",
                    cpu("bare_create"),
                )
            )
        if self.plugins_rate_ratio is not None and self.plugins_cpu_ratio is not None:
            met = "met" if self.plugins_rate_ratio >= 0.85 else "not met"
            lines.append(
                f"create with the admission plugins / without: rate "
                f"{self.plugins_rate_ratio:.2f}x (goal >= 0.85x, {met}), server CPU "
                f"{self.plugins_cpu_ratio:.2f}x"
            )
        if self.configmap_create_rate is not None:
            lines.append(
                row(
                    "create (POST configmap), same run",
                    self.configmap_create_rate,
                    "req/s",
                    f"{self.configmap_create_rate / t:.2f}x",
                    "",
                    cpu("configmap_create"),
                )
            )
        if self.policy_create_rate is not None:
            lines.append(
                row(
                    "create through 1 VAP (3 rules)",
                    self.policy_create_rate,
                    "req/s",
                    f"{self.policy_create_rate / t:.2f}x",
                    "",
                    cpu("policy_create"),
                )
            )
        if self.policy_over_create is not None:
            lines.append(
                f"create through the policy / create, server CPU: "
                f"{self.policy_over_create:.2f}x (goal <= 1.3x)"
            )
        if self.map_create_rate is not None:
            lines.append(
                row(
                    "create through 1 MAP (1 apply)",
                    self.map_create_rate,
                    "req/s",
                    f"{self.map_create_rate / t:.2f}x",
                    "",
                    cpu("map_create"),
                )
            )
        if self.map_over_create is not None:
            lines.append(
                f"create through the mutating policy / create, server CPU: "
                f"{self.map_over_create:.2f}x"
            )
        if self.webhook_create_rate is not None:
            lines.append(
                row(
                    "create through 1 no-op webhook",
                    self.webhook_create_rate,
                    "req/s",
                    f"{self.webhook_create_rate / t:.2f}x",
                    "",
                    cpu("webhook_create"),
                )
            )
        if self.webhook_rate_ratio is not None and self.webhook_cpu_ratio is not None:
            lines.append(
                f"create / create through the webhook: rate {self.webhook_rate_ratio:.2f}x, "
                f"server CPU {self.webhook_cpu_ratio:.2f}x (goal <= 2x)"
            )
        if self.custom_over_configmap is not None:
            lines.append(
                f"custom create / ConfigMap create, server CPU: "
                f"{self.custom_over_configmap:.2f}x (goal <= 2x)"
            )
        return "\n".join(lines)


def _create_service_account(c: http.client.HTTPConnection, i: int) -> None:
    body = orjson.dumps({"metadata": {"name": "default"}})
    status, data = _request(c, "POST", f"/api/v1/namespaces/{_NAMESPACE}/serviceaccounts", body)
    if status != 409:
        _expect(status, data, 201)


def _create_owner(c: http.client.HTTPConnection) -> str:
    """The ReplicaSet the Pods name as their owner (no replicas: nothing runs it), created so
    that the garbage collector finds it and keeps them; its uid."""
    pod = sample_pod(_NAMESPACE, "template")
    reference = pod["metadata"]["ownerReferences"][0]
    labels = pod["metadata"]["labels"]
    body = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": reference["name"], "labels": labels},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": pod["spec"]},
        },
    }
    path = f"/apis/apps/v1/namespaces/{_NAMESPACE}/replicasets"
    status, data = _request(c, "POST", path, orjson.dumps(body))
    if status == 409:
        status, data = _request(c, "GET", f"{path}/{reference['name']}")
        _expect(status, data, 200)
    else:
        _expect(status, data, 201)
    return str(orjson.loads(data)["metadata"]["uid"])


def _new_object(
    kind: str, name: str, label: str, index: int, *, owner_uid: str | None = None
) -> bytes:
    """The body a client would POST: no status, no system fields. A Pod names its
    ReplicaSet (see :func:`_create_owner`) when given its ``owner_uid``, else no owner (the
    garbage collector would delete a Pod whose owner does not exist)."""
    if kind == "custom":
        return orjson.dumps(bench_object(_NAMESPACE, name, label, index))
    if kind == "configmap":
        obj: dict[str, Any] = {
            "metadata": {"name": name, "labels": {"run": label}},
            "data": {"key": "value", "index": str(index)},
        }
    else:
        obj = sample_pod(_NAMESPACE, name)
        obj.pop("status", None)
        meta = obj["metadata"]
        for field in ("uid", "creationTimestamp", "resourceVersion", "managedFields"):
            meta.pop(field, None)
        meta["labels"] = {**(meta.get("labels") or {}), "run": label}
        if owner_uid is None:
            meta.pop("ownerReferences", None)
        else:
            meta["ownerReferences"][0]["uid"] = owner_uid
    return orjson.dumps(obj)


class _Server:
    """A ``kstore serve`` child process on a free port."""

    def __init__(
        self,
        data_dir: Path,
        *,
        admission_plugins: bool = True,
        controllers: str = "*",
        workers: int = 1,
    ) -> None:
        off = () if admission_plugins else ("--disable-admission-plugins", ",".join(_PLUGINS))
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kstore.cli",
                "serve",
                f"--workers={workers}",
                "--port",
                "0",
                "--data-dir",
                str(data_dir),
                "--log-level",
                "warning",
                f"--controllers={controllers}",
                *off,
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

    def cpu_seconds(self) -> float | None:
        """The server process's CPU time so far (user + system, all threads); None where
        ``/proc`` is missing."""
        try:
            with open(f"/proc/{self.process.pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def connection(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.host, self.port, timeout=60)

    def stop(self) -> None:
        stop_child(self.process)


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


def _measure(
    server: _Server,
    clients: int,
    total: int,
    work: Callable[[http.client.HTTPConnection, int], None],
) -> tuple[float, float | None]:
    """(requests per second, the server's CPU microseconds per request) of ``total`` calls."""
    before = server.cpu_seconds()
    rate = total / _parallel(server, clients, total, work)
    after = server.cpu_seconds()
    cpu = None if before is None or after is None else (after - before) / total * 1e6
    return rate, cpu


def _expect(status: int, body: bytes, want: int) -> None:
    if status != want:
        raise RuntimeError(f"unexpected HTTP {status}: {body[:300]!r}")


@dataclass(frozen=True, slots=True)
class FanoutFigures:
    """One round of the many-watchers figure."""

    #: Creates per second with no watch open, then with the watch streams open.
    plain_rate: float
    watched_rate: float
    #: Server CPU per create with no watch open.
    plain_cpu_us: float | None
    #: Server CPU per delivered event: the watched phase's CPU (creates until the last
    #: stream has its last event) less what the creates cost alone, over the deliveries.
    delivery_cpu_us: float | None
    #: Deliveries per second: watchers x creates over the time until the last was read.
    events_rate: float


def measure_fanout(
    server: _Server,
    kind: str,
    *,
    watchers: int,
    creates: int,
    clients: int,
    label: str,
    timeout: float = 300.0,
) -> FanoutFigures:
    """``creates`` creates with no watch open, then ``creates`` more while ``watchers``
    HTTP watch streams (opened by a separate process, :mod:`kstore.benchmarks.watch_load`)
    receive each of them."""
    collection = _COLLECTIONS[kind]
    # Without an owner: the garbage collector's work on owned Pods would be counted as the
    # fan-out's.
    plain = [_new_object(kind, f"{label}p-{i:06d}", f"{label}p", i) for i in range(creates)]
    watched = [_new_object(kind, f"{label}w-{i:06d}", f"{label}w", i) for i in range(creates)]

    def creator(bodies: list[bytes]) -> Callable[[http.client.HTTPConnection, int], None]:
        def create(c: http.client.HTTPConnection, i: int) -> None:
            _expect(*_request(c, "POST", collection, bodies[i]), 201)

        return create

    plain_rate, plain_cpu = _measure(server, clients, creates, creator(plain))
    open_before = _open_watches(server)
    path = f"{collection}?watch=true&labelSelector=run%3D{label}w&timeoutSeconds={int(timeout)}"
    load = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kstore.benchmarks.watch_load",
            server.host,
            str(server.port),
            path,
            str(watchers),
            str(creates),
            str(timeout),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert load.stdout is not None
        line = load.stdout.readline().strip()
        if line != "ready":
            raise RuntimeError(f"the watch load did not start: {line!r}")
        before = server.cpu_seconds()
        began = time.perf_counter()
        elapsed = _parallel(server, clients, creates, creator(watched))
        line = load.stdout.readline().strip()
        ended = time.perf_counter()
        after = server.cpu_seconds()
        if not line.startswith("done "):
            raise RuntimeError(f"the watch streams did not get every event: {line!r}")
    finally:
        load.kill()
        load.wait()
        if load.stdout is not None:
            load.stdout.close()
        # Closing a thousand streams takes the server a while: not in the next figure's time.
        closed_by = time.monotonic() + 60
        while _open_watches(server) > open_before and time.monotonic() < closed_by:
            time.sleep(0.1)
    deliveries = watchers * creates
    delivery_cpu = None
    if before is not None and after is not None and plain_cpu is not None:
        delivery_cpu = ((after - before) * 1e6 - plain_cpu * creates) / deliveries
    return FanoutFigures(
        plain_rate=plain_rate,
        watched_rate=creates / elapsed,
        plain_cpu_us=plain_cpu,
        delivery_cpu_us=delivery_cpu,
        events_rate=deliveries / (ended - began),
    )


def _open_watches(server: _Server) -> int:
    """How many watches the server has open (its ``apiserver_longrunning_requests``)."""
    conn = server.connection()
    try:
        status, data = _request(conn, "GET", "/metrics")
    finally:
        conn.close()
    _expect(status, data, 200)
    prefix = b'apiserver_longrunning_requests{verb="WATCH",'
    lines = data.splitlines()
    return sum(int(line.rsplit(b" ", 1)[1]) for line in lines if line.startswith(prefix))


class _Watchers:
    """``count`` watch streams on the objects of one label, counting the events they get."""

    def __init__(
        self, server: _Server, collection: str, count: int, label: str, expected: int
    ) -> None:
        self.expected = expected
        self.done: queue.Queue[float] = queue.Queue()
        self.threads = []
        ready = threading.Barrier(count + 1)
        path = (
            f"{collection}?watch=true&resourceVersion=0&labelSelector=run%3D{label}"
            "&timeoutSeconds=300"
        )
        for _ in range(count):
            t = threading.Thread(target=self._run, args=(server, path, ready), daemon=True)
            t.start()
            self.threads.append(t)
        ready.wait()

    def _run(self, server: _Server, path: str, ready: threading.Barrier) -> None:
        conn = server.connection()
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


def _load() -> tuple[float, float, float]:
    return os.getloadavg()


def run_rest_bench(
    *,
    clients: int = 16,
    requests: int = 2000,
    watchers: int = 10,
    repeats: int = 3,
    listed: int = 100,
    kind: str = "pod",
    admission_plugins: bool = True,
    plugins_compare: bool = False,
    policy: bool = False,
    webhook: bool = False,
    map_policy: bool = False,
    controllers: str = "*",
    fanout_watchers: int = 1000,
    fanout_creates: int = 200,
) -> RestBenchResult:
    """Start a server, measure, stop it; see the module docstring for the figures."""
    if kind not in _COLLECTIONS:
        raise ValueError(f"kind must be one of {sorted(_COLLECTIONS)}, not {kind!r}")
    if plugins_compare and not admission_plugins:
        raise ValueError("plugins_compare compares with the plugins on: admission_plugins=False")
    if policy and kind not in _POLICY_RESOURCES:
        raise ValueError(f"policy needs kind pod or configmap, not {kind!r}")
    if map_policy and kind not in _POLICY_RESOURCES:
        raise ValueError(f"map_policy needs kind pod or configmap, not {kind!r}")
    if webhook and kind not in _WEBHOOK_RESOURCES:
        raise ValueError(f"webhook needs kind pod or configmap, not {kind!r}")
    collection = _COLLECTIONS[kind]
    samples: dict[str, list[float]] = {}
    latencies: list[float] = []
    load_before = _load()

    def add(name: str, value: float) -> None:
        samples.setdefault(name, []).append(value)

    def measure(
        name: str, total: int, work: Callable[[http.client.HTTPConnection, int], None]
    ) -> float:
        rate, cpu = _measure(server, clients, total, work)
        add(name, rate)
        if cpu is not None:
            add(f"{name}_cpu", cpu)
        return rate

    def trivial(c: http.client.HTTPConnection, i: int) -> None:
        _expect(*_request(c, "GET", "/version"), 200)

    # Each server's ReplicaSet that its Pods name as their owner (see _create_owner).
    owners: dict[int, str] = {}

    def own_pods(on: _Server) -> None:
        def make(c: http.client.HTTPConnection, i: int) -> None:
            owners[id(on)] = _create_owner(c)

        _parallel(on, 1, 1, make)

    def creator(
        label: str, timed: bool, of: str = kind, on: _Server | None = None
    ) -> Callable[[http.client.HTTPConnection, int], None]:
        owner = owners.get(id(on if on is not None else server)) if of == "pod" else None
        bodies = [
            _new_object(of, f"{label}-{i:06d}", label, i, owner_uid=owner) for i in range(requests)
        ]
        target = _COLLECTIONS[of]

        def create(c: http.client.HTTPConnection, i: int) -> None:
            started = time.perf_counter()
            status, data = _request(c, "POST", target, bodies[i])
            if timed:
                latencies.append(time.perf_counter() - started)
            _expect(status, data, 201)

        return create

    def getter(label: str) -> Callable[[http.client.HTTPConnection, int], None]:
        def get(c: http.client.HTTPConnection, i: int) -> None:
            _expect(*_request(c, "GET", f"{collection}/{label}-{i:06d}"), 200)

        return get

    def lister(path: str) -> Callable[[http.client.HTTPConnection, int], None]:
        def list_page(c: http.client.HTTPConnection, i: int) -> None:
            _expect(*_request(c, "GET", path), 200)

        return list_page

    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="kstore-bench-rest-"))
        noop = stack.enter_context(NoopWebhook()) if webhook else None
        server = _Server(
            Path(tmp) / "data", admission_plugins=admission_plugins, controllers=controllers
        )
        bare: _Server | None = None
        try:
            if plugins_compare:
                bare = _Server(Path(tmp) / "bare", admission_plugins=False, controllers=controllers)
                _parallel(bare, 1, 1, _create_service_account)
                own_pods(bare)
                if kind == "custom":
                    _install_crd(bare, collection)
                _parallel(bare, 2, min(requests, 100), creator("warm", False, on=bare))
            # The pods' service account, which the ServiceAccount admission plugin looks up.
            _parallel(server, 1, 1, _create_service_account)
            own_pods(server)
            if kind == "custom":
                _install_crd(server, collection)
            if policy:
                _install_policy(server, kind)
                _bind_policy(server, kind, True)
                _parallel(server, 2, min(requests, 100), creator("warm-p", False))
                _bind_policy(server, kind, False)
            if map_policy:
                _install_map(server, kind)
                _bind_map(server, kind, True)
                _parallel(server, 2, min(requests, 100), creator("warm-m", False))
                _bind_map(server, kind, False)
            if noop is not None:
                _configure_webhook(server, kind, noop.client_config())
                _parallel(server, 2, min(requests, 100), creator("warm-w", False))
                _configure_webhook(server, kind, None)
            # Warm up every path: first requests import and compile lazily on the server.
            warm = min(requests, 100)
            _parallel(server, 2, warm, trivial)
            _parallel(server, 2, warm, creator("warm", False))
            _parallel(server, 2, warm, getter("warm"))
            if kind == "custom":
                _parallel(server, 2, warm, creator("warm-cm", False, "configmap"))
            lists = max(50, requests // 10)
            for rep in range(repeats):
                label = f"r{rep}"
                before = measure("trivial", requests, trivial)
                measure("create", requests, creator(label, True))
                if bare is not None:
                    rate, cpu_us = _measure(bare, clients, requests, creator(label, False, on=bare))
                    add("bare_create", rate)
                    add("plugins_rate", samples["create"][-1] / rate)
                    if cpu_us is not None and "create_cpu" in samples:
                        add("bare_create_cpu", cpu_us)
                        add("plugins_cpu", samples["create_cpu"][-1] / cpu_us)
                if policy:
                    _bind_policy(server, kind, True)
                    measure("policy_create", requests, creator(f"p{rep}", False))
                    _bind_policy(server, kind, False)
                    add(
                        "policy_over_create",
                        samples["policy_create_cpu"][-1] / samples["create_cpu"][-1],
                    )
                if map_policy:
                    _bind_map(server, kind, True)
                    measure("map_create", requests, creator(f"m{rep}", False))
                    _bind_map(server, kind, False)
                    add(
                        "map_over_create", samples["map_create_cpu"][-1] / samples["create_cpu"][-1]
                    )
                if noop is not None:
                    _configure_webhook(server, kind, noop.client_config())
                    measure("webhook_create", requests, creator(f"h{rep}", False))
                    _configure_webhook(server, kind, None)
                    add("webhook_rate", samples["create"][-1] / samples["webhook_create"][-1])
                    if "create_cpu" in samples and "webhook_create_cpu" in samples:
                        add(
                            "webhook_cpu",
                            samples["webhook_create_cpu"][-1] / samples["create_cpu"][-1],
                        )
                if kind == "custom":
                    measure("configmap_create", requests, creator(label, False, "configmap"))
                    if "create_cpu" in samples and "configmap_create_cpu" in samples:
                        add(
                            "custom_over_configmap",
                            samples["create_cpu"][-1] / samples["configmap_create_cpu"][-1],
                        )
                measure("get", requests, getter(label))
                after = measure("trivial", requests, trivial)
                base = (before + after) / 2
                add("trivial_pair", base)
                add("create_ratio", samples["create"][-1] / base)
                add("get_ratio", samples["get"][-1] / base)
                list_path = f"{collection}?labelSelector=run%3D{label}&limit={listed}"
                measure("list", lists, lister(list_path))
                add("list_ratio", samples["list"][-1] / base)
                watched = f"w{rep}"
                create = creator(watched, False)
                watch = _Watchers(server, collection, watchers, watched, requests)
                began = time.perf_counter()
                measure("watched_create", requests, create)
                add("watch", watchers * requests / (watch.wait(300) - began))
                if fanout_watchers > 0:
                    fan = measure_fanout(
                        server,
                        kind,
                        watchers=fanout_watchers,
                        creates=fanout_creates,
                        clients=clients,
                        label=f"x{rep}",
                    )
                    add("fanout_create", fan.watched_rate)
                    add("fanout_ratio", fan.watched_rate / fan.plain_rate)
                    if fan.delivery_cpu_us is not None:
                        add("fanout_delivery_cpu", fan.delivery_cpu_us)
        finally:
            server.stop()
            if bare is not None:
                bare.stop()
    latencies.sort()

    def pct(p: float) -> float:
        return latencies[min(len(latencies) - 1, int(len(latencies) * p))] * 1000

    def median(name: str) -> float:
        return statistics.median(samples[name])

    def cpu(name: str) -> float | None:
        values = samples.get(f"{name}_cpu")
        return statistics.median(values) if values else None

    return RestBenchResult(
        kind=kind,
        trivial_rate=median("trivial_pair"),
        create_rate=median("create"),
        create_ratio=median("create_ratio"),
        create_p50_ms=pct(0.50),
        create_p99_ms=pct(0.99),
        get_rate=median("get"),
        get_ratio=median("get_ratio"),
        list_rate=median("list"),
        list_ratio=median("list_ratio"),
        watched_create_rate=median("watched_create"),
        watch_events_rate=median("watch"),
        clients=clients,
        watchers=watchers,
        load_before=load_before,
        load_after=_load(),
        cpu_us={
            name: value
            for name in (
                "trivial",
                "create",
                "policy_create",
                "map_create",
                "webhook_create",
                "bare_create",
                "configmap_create",
                "get",
                "list",
                "watched_create",
            )
            if (value := cpu(name)) is not None
        },
        configmap_create_rate=median("configmap_create") if "configmap_create" in samples else None,
        custom_over_configmap=(
            median("custom_over_configmap") if "custom_over_configmap" in samples else None
        ),
        policy_create_rate=median("policy_create") if "policy_create" in samples else None,
        policy_over_create=(
            median("policy_over_create") if "policy_over_create" in samples else None
        ),
        map_create_rate=median("map_create") if "map_create" in samples else None,
        map_over_create=median("map_over_create") if "map_over_create" in samples else None,
        webhook_create_rate=median("webhook_create") if "webhook_create" in samples else None,
        webhook_rate_ratio=median("webhook_rate") if "webhook_rate" in samples else None,
        webhook_cpu_ratio=median("webhook_cpu") if "webhook_cpu" in samples else None,
        fanout_watchers=fanout_watchers,
        fanout_create_rate=median("fanout_create") if "fanout_create" in samples else None,
        fanout_rate_ratio=median("fanout_ratio") if "fanout_ratio" in samples else None,
        fanout_delivery_cpu_us=(
            median("fanout_delivery_cpu") if "fanout_delivery_cpu" in samples else None
        ),
        bare_create_rate=median("bare_create") if "bare_create" in samples else None,
        plugins_rate_ratio=median("plugins_rate") if "plugins_rate" in samples else None,
        plugins_cpu_ratio=median("plugins_cpu") if "plugins_cpu" in samples else None,
    )


def _install_crd(server: _Server, collection: str) -> None:
    """Create the bench CRD and wait (30 s at most) until its objects are served."""
    c = server.connection()
    try:
        _expect(
            *_request(
                c,
                "POST",
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                orjson.dumps(BENCH_CRD),
            ),
            201,
        )
        deadline = time.monotonic() + 30
        while _request(c, "GET", collection)[0] != 200:
            if time.monotonic() > deadline:
                raise RuntimeError("the bench CRD was not served within 30 s")
            time.sleep(0.05)
    finally:
        c.close()


_POLICY_RESOURCES = {"pod": "pods", "configmap": "configmaps"}
_POLICY = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies"
_BINDINGS = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings"


def _install_policy(server: _Server, kind: str) -> None:
    """The bench policy: three validations every bench object passes."""
    rule = {
        "apiGroups": [""],
        "apiVersions": ["v1"],
        "operations": ["CREATE", "UPDATE"],
        "resources": [_POLICY_RESOURCES[kind]],
    }
    policy = {
        "metadata": {"name": "bench"},
        "spec": {
            "matchConstraints": {"resourceRules": [rule]},
            "validations": [
                {"expression": "size(object.metadata.name) <= 63"},
                {"expression": "has(object.metadata.labels) && 'run' in object.metadata.labels"},
                {
                    "expression": "!('forbidden' in object.metadata.labels)",
                    "message": "forbidden label",
                },
            ],
        },
    }
    c = server.connection()
    try:
        _expect(*_request(c, "POST", _POLICY, orjson.dumps(policy)), 201)
    finally:
        c.close()


def _bind_policy(server: _Server, kind: str, bound: bool) -> None:
    """Create (or delete) the bench policy's Deny binding and wait, 10 s at most, until a
    probe object carrying the forbidden label is refused (or admitted)."""
    c = server.connection()
    collection = _COLLECTIONS[kind]
    probe = orjson.loads(_new_object(kind, "probe", "probe", 0))
    probe["metadata"]["labels"]["forbidden"] = "yes"
    try:
        if bound:
            binding = {
                "metadata": {"name": "bench"},
                "spec": {"policyName": "bench", "validationActions": ["Deny"]},
            }
            _expect(*_request(c, "POST", _BINDINGS, orjson.dumps(binding)), 201)
        else:
            _expect(*_request(c, "DELETE", f"{_BINDINGS}/bench"), 200)
        deadline = time.monotonic() + 10
        body = orjson.dumps(probe)
        while True:
            status, data = _request(c, "POST", f"{collection}?dryRun=All", body)
            if (status == 422) == bound:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"the bench binding did not take effect: {status} {data[:200]!r}"
                )
            time.sleep(0.05)
    finally:
        c.close()


_MAP = "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies"
_MAP_BINDINGS = "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings"


def _install_map(server: _Server, kind: str) -> None:
    """The bench mutating policy: one ApplyConfiguration adding a label."""
    rule = {
        "apiGroups": [""],
        "apiVersions": ["v1"],
        "operations": ["CREATE"],
        "resources": [_POLICY_RESOURCES[kind]],
    }
    expression = "Object{metadata: Object.metadata{labels: {'mutated': 'yes'}}}"
    policy = {
        "metadata": {"name": "bench"},
        "spec": {
            "matchConstraints": {"resourceRules": [rule]},
            "reinvocationPolicy": "Never",
            "mutations": [
                {
                    "patchType": "ApplyConfiguration",
                    "applyConfiguration": {"expression": expression},
                }
            ],
        },
    }
    c = server.connection()
    try:
        _expect(*_request(c, "POST", _MAP, orjson.dumps(policy)), 201)
    finally:
        c.close()


def _bind_map(server: _Server, kind: str, bound: bool) -> None:
    """Create (or delete) the bench mutating policy's binding and wait, 10 s at most, until a
    dry-run probe comes back labelled (or not)."""
    c = server.connection()
    collection = _COLLECTIONS[kind]
    body = _new_object(kind, "probe", "probe", 0)
    try:
        if bound:
            binding = {"metadata": {"name": "bench"}, "spec": {"policyName": "bench"}}
            _expect(*_request(c, "POST", _MAP_BINDINGS, orjson.dumps(binding)), 201)
        else:
            _expect(*_request(c, "DELETE", f"{_MAP_BINDINGS}/bench"), 200)
        deadline = time.monotonic() + 10
        while True:
            status, data = _request(c, "POST", f"{collection}?dryRun=All", body)
            _expect(status, data, 201)
            labelled = "mutated" in (orjson.loads(data)["metadata"].get("labels") or {})
            if labelled == bound:
                return
            if time.monotonic() > deadline:
                raise RuntimeError("the bench mutating policy's binding did not take effect")
            time.sleep(0.05)
    finally:
        c.close()


_WEBHOOK_RESOURCES = {"pod": "pods", "configmap": "configmaps"}
_WEBHOOKS = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"


def _configure_webhook(server: _Server, kind: str, client_config: dict[str, Any] | None) -> None:
    """Create the bench's mutating webhook configuration (``client_config`` given) or delete
    it (None), and wait, 10 s at most, until a probe object carrying the label the webhook
    refuses is refused (or admitted)."""
    c = server.connection()
    collection = _COLLECTIONS[kind]
    probe = orjson.loads(_new_object(kind, "probe", "probe", 0))
    probe["metadata"]["labels"]["forbidden"] = "yes"
    on = client_config is not None
    try:
        if client_config is not None:
            hook = {
                "name": "noop.bench.kstore.dev",
                "clientConfig": client_config,
                "rules": [
                    {
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE"],
                        "resources": [_WEBHOOK_RESOURCES[kind]],
                    }
                ],
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
            }
            config = {"metadata": {"name": "bench"}, "webhooks": [hook]}
            _expect(*_request(c, "POST", _WEBHOOKS, orjson.dumps(config)), 201)
        else:
            _expect(*_request(c, "DELETE", f"{_WEBHOOKS}/bench"), 200)
        deadline = time.monotonic() + 10
        body = orjson.dumps(probe)
        while True:
            status, data = _request(c, "POST", f"{collection}?dryRun=All", body)
            if (status == 400) == on:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"the bench webhook configuration did not take effect: {status} {data[:200]!r}"
                )
            time.sleep(0.05)
    finally:
        c.close()
