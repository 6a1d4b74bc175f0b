"""Many HTTP watch streams from one separate process: the load side of the fan-out figures.

``python -m kstore.benchmarks.watch_load HOST PORT PATH COUNT EXPECTED TIMEOUT`` opens
``COUNT`` keep-alive connections to ``HOST:PORT``, sends ``GET PATH`` (a watch) on each, and
prints ``ready`` once every response's headers have arrived. It then reads every stream until
each has carried ``EXPECTED`` ADDED events (JSON watch lines) and prints ``done SECONDS``: the
time from ``ready`` until the last stream had its last event, or ``timeout N`` (N: the streams
still short) after ``TIMEOUT`` seconds.

It runs in its own process so that the server's CPU time (read from ``/proc``) is the server's
alone, and reads raw sockets with one ``selectors`` loop and no HTTP parsing (it counts the
event marker in the bytes, across read boundaries), so that a thousand streams cost the shared
machine as little client CPU as possible.
"""

from __future__ import annotations

import selectors
import socket
import sys
import time

__all__ = ["ADDED_MARKER", "main"]

#: How an ADDED event starts in a JSON watch stream.
ADDED_MARKER = b'{"type":"ADDED"'
_KEEP = len(ADDED_MARKER) - 1


def main(argv: list[str]) -> int:
    host, port, path = argv[0], int(argv[1]), argv[2]
    count, expected, timeout = int(argv[3]), int(argv[4]), float(argv[5])
    request = (
        f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: application/json\r\n\r\n"
    ).encode()
    socks: list[socket.socket] = []
    for _ in range(count):
        sock = socket.create_connection((host, port))
        sock.sendall(request)
        socks.append(sock)
    # Wait for every response's headers (the watch is registered before they are sent).
    pending: dict[socket.socket, bytes] = {}
    for sock in socks:
        data = b""
        while b"\r\n\r\n" not in data:
            more = sock.recv(65536)
            if not more:
                print("closed before headers", flush=True)
                return 1
            data += more
        head, _, rest = data.partition(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 200"):
            print(f"unexpected answer: {head[:200]!r}", flush=True)
            return 1
        pending[sock] = rest
        sock.setblocking(False)
    print("ready", flush=True)
    started = time.perf_counter()
    seen: dict[socket.socket, int] = {}
    tails: dict[socket.socket, bytes] = {}
    selector = selectors.DefaultSelector()
    for sock, rest in pending.items():
        seen[sock] = rest.count(ADDED_MARKER)
        tails[sock] = rest[-_KEEP:]
        if seen[sock] < expected:
            selector.register(sock, selectors.EVENT_READ, sock)
    left = sum(1 for n in seen.values() if n < expected)
    deadline = started + timeout
    while left:
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            print(f"timeout {left}", flush=True)
            return 1
        for key, _ in selector.select(min(remaining, 1.0)):
            sock = key.data
            data = sock.recv(262144)
            if not data:
                selector.unregister(sock)
                left -= 1
                continue
            joined = tails[sock] + data
            seen[sock] += joined.count(ADDED_MARKER)
            tails[sock] = joined[-_KEEP:]
            if seen[sock] >= expected:
                selector.unregister(sock)
                left -= 1
    elapsed = time.perf_counter() - started
    short = sum(1 for n in seen.values() if n < expected)
    if short:
        print(f"timeout {short}", flush=True)
        return 1
    print(f"done {elapsed:.6f}", flush=True)
    for sock in socks:
        sock.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
