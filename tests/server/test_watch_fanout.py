"""Fan-out over HTTP: many watch streams of one server get every event, in order, once; a
stream whose client stopped reading holds nobody else back and, given more than the kernel's
socket buffers and its watcher's buffer hold, ends as a slow watcher does.

Every stream here is a real HTTP/1.1 connection to a ``kstore serve`` process, read with
``http.client`` (chunked decoding included), one thread per stream.
"""

from __future__ import annotations

import http.client
import socket
import threading
import time
from collections.abc import Callable, Iterator
from urllib.parse import urlsplit

import orjson

from tests.server.harness import RunningServer

CMS = "/api/v1/namespaces/default/configmaps"
_HEADERS = {"Content-Type": "application/json", "Accept": "application/json"}

Event = tuple[str, str, int]


def _address(server: RunningServer) -> tuple[str, int]:
    url = urlsplit(server.url)
    return url.hostname or "127.0.0.1", url.port or 80


def _call(conn: http.client.HTTPConnection, method: str, path: str, body: object = None) -> dict:
    data = None if body is None else orjson.dumps(body)
    conn.request(method, path, body=data, headers=_HEADERS)
    response = conn.getresponse()
    payload = response.read()
    assert response.status in (200, 201), payload[:300]
    result: dict = orjson.loads(payload)
    return result


class _Stream:
    """One watch stream; ``sock`` lets a test shape the connection (a small receive buffer)."""

    def __init__(
        self, server: RunningServer, query: str, *, receive_buffer: int | None = None
    ) -> None:
        host, port = _address(server)
        self.conn = http.client.HTTPConnection(host, port, timeout=120)
        if receive_buffer is not None:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
            sock.settimeout(120)
            sock.connect((host, port))
            self.conn.sock = sock
        self.conn.request("GET", f"{CMS}?watch=true&{query}", headers=_HEADERS)
        self.response = self.conn.getresponse()
        assert self.response.status == 200
        assert self.response.getheader("transfer-encoding") == "chunked"

    def events(self) -> Iterator[dict]:
        """The stream's events until it ends."""
        while True:
            line = self.response.readline()
            if not line:
                return
            yield orjson.loads(line)

    def close(self) -> None:
        self.conn.close()


def _collect(streams: list[_Stream], until: Callable[[list[Event]], bool]) -> list[list[Event]]:
    """Read every stream in its own thread until ``until(seen)`` or the stream's end;
    BOOKMARKs are left out. ERROR events are kept as ("ERROR", reason, code)."""
    seen: list[list[Event]] = [[] for _ in streams]

    def read(k: int) -> None:
        for event in streams[k].events():
            obj = event["object"]
            if event["type"] == "BOOKMARK":
                continue
            if event["type"] == "ERROR":
                seen[k].append(("ERROR", obj.get("reason", ""), obj.get("code", 0)))
                continue
            meta = obj["metadata"]
            seen[k].append((event["type"], meta["name"], int(meta["resourceVersion"])))
            if until(seen[k]):
                return

    threads = [threading.Thread(target=read, args=(k,), daemon=True) for k in range(len(streams))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(180)
        assert not t.is_alive(), "a watch stream did not get its events in time"
    return seen


def _configmap_watch_events(conn: http.client.HTTPConnection) -> int:
    """The server's ``apiserver_watch_events_total`` for ConfigMaps."""
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    prefix = 'apiserver_watch_events_total{group="",version="v1",kind="ConfigMap"} '
    return sum(int(line[len(prefix) :]) for line in text.splitlines() if line.startswith(prefix))


def test_a_hundred_streams_each_get_every_event_in_order_exactly_once(
    server: RunningServer,
) -> None:
    host, port = _address(server)
    writer = http.client.HTTPConnection(host, port, timeout=60)
    counted_before = _configmap_watch_events(writer)
    start = _call(writer, "GET", f"{CMS}?labelSelector=suite%3Dfan")["metadata"]["resourceVersion"]
    query = f"resourceVersion={start}&labelSelector=suite%3Dfan&timeoutSeconds=120"
    # Streams of the same shape, and a few of other shapes (bookmarks asked, a field selector).
    streams = [_Stream(server, query) for _ in range(90)]
    streams += [_Stream(server, query + "&allowWatchBookmarks=true") for _ in range(5)]
    streams += [
        _Stream(server, query + "&fieldSelector=metadata.namespace%3Ddefault") for _ in range(5)
    ]
    expected: list[Event] = []
    for i in range(30):
        body = {
            "metadata": {"name": f"fan-{i:02d}", "labels": {"suite": "fan"}},
            "data": {"i": "0"},
        }
        created = _call(writer, "POST", CMS, body)
        expected.append(("ADDED", f"fan-{i:02d}", int(created["metadata"]["resourceVersion"])))
    for i in range(0, 30, 3):
        current = _call(writer, "GET", f"{CMS}/fan-{i:02d}")
        current["data"] = {"i": "1"}
        updated = _call(writer, "PUT", f"{CMS}/fan-{i:02d}", current)
        expected.append(("MODIFIED", f"fan-{i:02d}", int(updated["metadata"]["resourceVersion"])))
    for i in range(1, 30, 3):
        _call(writer, "DELETE", f"{CMS}/fan-{i:02d}")
        expected.append(("DELETED", f"fan-{i:02d}", 0))
    try:
        seen = _collect(streams, lambda got: len(got) >= len(expected))
        # Every delivered event is counted once, though streams report them together.
        counted = _configmap_watch_events(writer) - counted_before
        assert len(streams) * len(expected) <= counted <= len(streams) * len(expected) + 20
    finally:
        writer.close()
        for stream in streams:
            stream.close()
    for got in seen:
        assert [(t, n) for t, n, _ in got] == [(t, n) for t, n, _ in expected]
        revisions = [rv for _, _, rv in got]
        assert revisions == sorted(set(revisions))
        assert [rv for (_, _, rv), (_, _, want) in zip(got, expected, strict=True) if want] == [
            rv for _, _, rv in expected if rv
        ]


def _send_buffer_limit() -> int:
    """The most a TCP socket's send buffer grows to on this machine (Linux), or 4 MiB."""
    try:
        with open("/proc/sys/net/ipv4/tcp_wmem") as wmem:
            return int(wmem.read().split()[2])
    except (OSError, IndexError, ValueError):
        return 4 << 20


def test_a_stream_that_stops_reading_holds_back_nobody_and_ends_as_a_slow_watcher(
    server: RunningServer,
) -> None:
    host, port = _address(server)
    payload = "x" * 4000
    # Enough events that, once the stalled connection's kernel buffers are full (half again
    # the send buffer's limit, to be sure), more than a watcher's buffer of undelivered events
    # (1024) are left over: the server must then end that watch.
    count = (_send_buffer_limit() * 3 // 2) // len(payload) + 1024 + 200
    query = "labelSelector=suite%3Dstall&timeoutSeconds=170"
    stalled = _Stream(server, query, receive_buffer=4096)
    streams = [_Stream(server, query) for _ in range(10)]
    writers = 8
    writes_done: list[float] = []

    def create(k: int) -> None:
        conn = http.client.HTTPConnection(host, port, timeout=60)
        for i in range(k, count, writers):
            body = {
                "metadata": {"name": f"stall-{i:05d}", "labels": {"suite": "stall"}},
                "data": {"payload": payload},
            }
            _call(conn, "POST", CMS, body)
        conn.close()
        writes_done.append(time.monotonic())

    finished: list[float] = []

    def until(got: list[Event]) -> bool:
        if len(got) >= count:
            finished.append(time.monotonic())
            return True
        return False

    threads = [threading.Thread(target=create, args=(k,)) for k in range(writers)]
    for t in threads:
        t.start()
    try:
        # The others get every event, promptly, while the stalled client reads nothing.
        seen = _collect(streams, until)
        for t in threads:
            t.join()
        assert len(finished) == len(streams)
        assert max(finished) - max(writes_done) < 15
        for got in seen:
            assert len(got) == count
            assert {name for _, name, _ in got} == {f"stall-{i:05d}" for i in range(count)}
            revisions = [rv for _, _, rv in got]
            assert revisions == sorted(set(revisions))
        order = seen[0]
        assert all(got == order for got in seen)
        # The stalled stream, once it reads: a part of the same events in the same order,
        # then the 429 that ends a watch whose client did not keep up, then the stream's end.
        late = _collect([stalled], lambda got: False)[0]
    finally:
        stalled.close()
        for stream in streams:
            stream.close()
    assert late[-1] == ("ERROR", "TooManyRequests", 429)
    assert 0 < len(late) - 1 < count
    assert late[:-1] == order[: len(late) - 1]
