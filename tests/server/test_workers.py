"""``kstore serve --workers 2`` over HTTP: one port, two processes, one LMDB store.

Which worker served a connection is read from the kernel (the server side of the TCP
connection in ``/proc/net/tcp``, and which worker holds that socket), not from anything the
server says about itself.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.server.harness import RunningServer, start_server

LONG = os.environ.get("KSTORE_LONG") == "1"
_CM_PATH = "/api/v1/namespaces/default/configmaps"


def workers_of(parent: int) -> set[int]:
    """The live children of ``parent``."""
    found: set[int] = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == parent and fields[0] != "Z":
            found.add(int(entry))
    return found


def serving_worker(client_port: int, server_port: int, pids: set[int]) -> int | None:
    """The worker holding the server side of the connection from ``client_port``."""
    inode = None
    with open("/proc/net/tcp") as table:
        for line in table.readlines()[1:]:
            parts = line.split()
            local, remote = parts[1], parts[2]
            if (
                int(local.split(":")[1], 16) == server_port
                and int(remote.split(":")[1], 16) == client_port
            ):
                inode = parts[9]
    if inode is None:
        return None
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == f"socket:[{inode}]":
                    return pid
            except OSError:
                continue
    return None


class Call:
    """One request on a fresh connection, and the worker that answered it."""

    def __init__(self, server: RunningServer, method: str, path: str, body: Any = None) -> None:
        url = urlsplit(server.url)
        assert url.hostname is not None and url.port is not None
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
        try:
            payload = None if body is None else json.dumps(body)
            conn.request(method, path, payload, {"Content-Type": "application/json"})
            response = conn.getresponse()
            self.status = response.status
            self.body: dict[str, Any] = json.loads(response.read() or b"{}")
            assert conn.sock is not None
            self.worker = serving_worker(
                conn.sock.getsockname()[1], url.port, workers_of(server.process.pid)
            )
        finally:
            conn.close()


def _create(server: RunningServer, name: str) -> Call:
    return Call(server, "POST", _CM_PATH, {"metadata": {"name": name}, "data": {"k": name}})


def _rv(call: Call) -> int:
    return int(call.body["metadata"]["resourceVersion"])


def _start(data_dir: Path) -> RunningServer:
    server = start_server(data_dir, "--workers", "2", "--log-level", "warning")
    assert len(workers_of(server.process.pid)) == 2
    return server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    running = _start(tmp_path_factory.mktemp("workers") / "data")
    try:
        yield running
    finally:
        assert running.stop(60) == 0, running.log()


def test_requests_spread_over_both_workers_and_each_reads_the_others_writes(
    server: RunningServer,
) -> None:
    workers = workers_of(server.process.pid)
    served: dict[int, int] = {}
    for i in range(40 if not LONG else 400):
        created = _create(server, f"spread-{i}")
        assert created.status == 201, created.body
        read = Call(server, "GET", f"{_CM_PATH}/spread-{i}")
        assert read.status == 200, read.body
        assert _rv(read) == _rv(created)
        listed = Call(server, "GET", _CM_PATH)
        assert int(listed.body["metadata"]["resourceVersion"]) >= _rv(created)
        assert f"spread-{i}" in {item["metadata"]["name"] for item in listed.body["items"]}
        for call in (created, read, listed):
            if call.worker is not None:
                served[call.worker] = served.get(call.worker, 0) + 1
    assert set(served) == workers, served


def test_a_watch_on_one_worker_gets_the_writes_through_the_other_in_order(
    server: RunningServer,
) -> None:
    start = _list_rv(server)
    url = urlsplit(server.url)
    assert url.hostname is not None and url.port is not None
    watch = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    watch.request("GET", f"{_CM_PATH}?watch=1&resourceVersion={start}")
    stream = watch.getresponse()
    assert stream.status == 200
    assert watch.sock is not None
    watching = serving_worker(watch.sock.getsockname()[1], url.port, workers_of(server.process.pid))
    assert watching is not None
    acked: list[int] = []
    through_other = 0
    for i in range(400):
        created = _create(server, f"watched-{i}")
        assert created.status == 201, created.body
        acked.append(_rv(created))
        through_other += created.worker not in (watching, None)
        if through_other >= (5 if not LONG else 100) and i >= 20:
            break
    assert through_other >= 5, "no write went through the other worker"
    events: list[tuple[str, int]] = []
    deadline = time.monotonic() + 60
    while len(events) < len(acked) and time.monotonic() < deadline:
        line = stream.readline()
        assert line, f"the watch ended after {len(events)} events"
        event = json.loads(line)
        events.append((event["type"], int(event["object"]["metadata"]["resourceVersion"])))
    watch.close()
    assert events == [("ADDED", rv) for rv in acked]


def _list_rv(server: RunningServer) -> int:
    return int(Call(server, "GET", _CM_PATH).body["metadata"]["resourceVersion"])


class Watch:
    """A watch of the ConfigMaps from a revision, on one connection, and its worker."""

    def __init__(self, server: RunningServer, since: int) -> None:
        url = urlsplit(server.url)
        assert url.hostname is not None and url.port is not None
        self.conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
        self.conn.request("GET", f"{_CM_PATH}?watch=1&resourceVersion={since}")
        self.stream = self.conn.getresponse()
        assert self.stream.status == 200
        assert self.conn.sock is not None
        self.worker = serving_worker(
            self.conn.sock.getsockname()[1], url.port, workers_of(server.process.pid)
        )

    def read_until(self, revisions: set[int], timeout: float = 60) -> list[tuple[str, int]]:
        """Events (type, revision) until every one of ``revisions`` was seen (or the time)."""
        events: list[tuple[str, int]] = []
        missing = set(revisions)
        deadline = time.monotonic() + timeout
        while missing and time.monotonic() < deadline:
            line = self.stream.readline()
            assert line, f"the watch ended after {len(events)} events"
            event = json.loads(line)
            revision = int(event["object"]["metadata"]["resourceVersion"])
            events.append((event["type"], revision))
            missing.discard(revision)
        return events

    def close(self) -> None:
        self.conn.close()


def watches_on_each_worker(server: RunningServer, since: int) -> dict[int, Watch]:
    """One watch served by each worker (new connections until the kernel gave each one)."""
    workers = workers_of(server.process.pid)
    found: dict[int, Watch] = {}
    for _ in range(60):
        watch = Watch(server, since)
        if watch.worker is None or watch.worker in found:
            watch.close()
        else:
            found[watch.worker] = watch
        if set(found) == workers:
            return found
    for watch in found.values():
        watch.close()
    raise AssertionError(f"no watch landed on every worker: {set(found)} of {workers}")


def test_watches_on_both_workers_get_concurrent_writes_through_both_in_order_once(
    server: RunningServer,
) -> None:
    start = _list_rv(server)
    watches = watches_on_each_worker(server, start)
    acked: dict[str, int] = {}
    served: dict[int, int] = {}
    lock = threading.Lock()
    count = 120 if not LONG else 2000

    def write(first: int) -> None:
        for i in range(first, count, 4):
            created = _create(server, f"load-{i}")
            assert created.status == 201, created.body
            with lock:
                acked[f"load-{i}"] = _rv(created)
                if created.worker is not None:
                    served[created.worker] = served.get(created.worker, 0) + 1

    writers = [threading.Thread(target=write, args=(k,)) for k in range(4)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(120)
    assert len(acked) == count, f"{len(acked)} of {count} writes acknowledged"
    assert set(served) == set(watches), f"the writes did not go through both workers: {served}"
    expected = sorted(acked.values())
    assert len(set(expected)) == count
    for worker, watch in watches.items():
        events = watch.read_until(set(expected))
        watch.close()
        # Nothing but these writes happened since the watch's start: exactly them, in order.
        assert events == [("ADDED", rv) for rv in expected], f"watch on {worker}"


def test_a_killed_worker_is_restarted_losing_nothing_and_sigterm_drains_all(
    tmp_path: Path,
) -> None:
    server = _start(tmp_path / "data")
    try:
        before = workers_of(server.process.pid)
        # A watch on each worker from before the load: the one on the surviving worker must
        # get every acknowledged write, whichever worker took it, exactly once and in order.
        watches = watches_on_each_worker(server, _list_rv(server))
        acked: dict[str, int] = {}
        served: set[int | None] = set()
        failures: list[str] = []
        stop = threading.Event()

        def write() -> None:
            i = 0
            deadline = time.monotonic() + 120
            while not stop.is_set() and time.monotonic() < deadline:
                name = f"kill-{i}"
                i += 1
                try:
                    created = _create(server, name)
                except OSError as exc:  # a connection the dying worker had taken
                    failures.append(f"{name}: {exc}")
                    continue
                if created.status == 201:
                    acked[name] = _rv(created)
                    served.add(created.worker)

        writers = [threading.Thread(target=write, daemon=True) for _ in range(4)]
        for writer in writers:
            writer.start()
        # Killed while both workers are taking writes.
        deadline = time.monotonic() + 60
        while len(acked) < 40 or not before <= served:
            assert time.monotonic() < deadline, f"writes did not reach both workers: {served}"
            time.sleep(0.05)
        victim = sorted(before)[0]
        survivor = next(iter(before - {victim}))
        watches.pop(victim).close()
        os.kill(victim, signal.SIGKILL)
        deadline = time.monotonic() + 60
        while True:
            now = workers_of(server.process.pid)
            if len(now) == 2 and victim not in now:
                break
            assert time.monotonic() < deadline, f"no worker in place of {victim}: {now}"
            time.sleep(0.1)
        count_at_restart = len(acked)
        while len(acked) < count_at_restart + 40:
            time.sleep(0.05)
        stop.set()
        for writer in writers:
            writer.join(60)
        for name, revision in acked.items():
            read = Call(server, "GET", f"{_CM_PATH}/{name}")
            assert read.status == 200 and _rv(read) == revision, (name, read.body)
        listed = Call(server, "GET", _CM_PATH)
        assert set(acked) <= {item["metadata"]["name"] for item in listed.body["items"]}
        events = watches[survivor].read_until(set(acked.values()))
        watches.pop(survivor).close()
        revisions = [revision for _, revision in events]
        assert set(acked.values()) <= set(revisions), "the surviving worker's watch lost writes"
        # Writes a dying worker committed but could not answer may be there too, once each.
        assert revisions == sorted(set(revisions)), "out of order or twice"
        assert all(kind == "ADDED" for kind, _ in events)

        # SIGTERM drains: an open watch ends cleanly, every worker exits, the parent exits 0.
        url = urlsplit(server.url)
        assert url.hostname is not None and url.port is not None
        watch = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
        since = listed.body["metadata"]["resourceVersion"]
        watch.request("GET", f"{_CM_PATH}?watch=1&resourceVersion={since}")
        stream = watch.getresponse()
        assert stream.status == 200
        workers = workers_of(server.process.pid)
        assert server.stop(90) == 0, server.log()
        assert stream.read() is not None  # the stream reached its end
        watch.close()
        assert not any(os.path.exists(f"/proc/{pid}") for pid in workers)
    finally:
        if server.process.poll() is None:
            server.process.kill()
            server.process.wait()


def test_the_parent_loads_and_freezes_what_workers_share_without_starting_a_thread(
    tmp_path: Path,
) -> None:
    """Before forking: the kinds and the store's modules are loaded and every object is out
    of the collector's reach (so a worker's collections do not copy the pages it shares with
    the parent), and no thread was started (forking stays safe). In a fresh interpreter, as
    the parent is."""
    import subprocess
    import sys

    script = (
        "import gc, sys, threading\n"
        "from pathlib import Path\n"
        "from kstore.server.serve import ServeConfig, _preload_for_workers\n"
        "tracked = len(gc.get_objects())\n"
        f"_preload_for_workers(ServeConfig(data_dir=Path({str(tmp_path)!r})))\n"
        "assert gc.get_freeze_count() > tracked, (gc.get_freeze_count(), tracked)\n"
        "assert 'kstore.api.kinds' in sys.modules and 'kstore.storage.lmdb' in sys.modules\n"
        "assert threading.active_count() == 1, threading.enumerate()\n"
        "assert not any(Path(sys.argv[1]).iterdir())\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.stdout.strip() == "ok", done.stderr
