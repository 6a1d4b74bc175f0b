"""The second process of the two-process conformance run: LMDB stores, driven over a socket.

``python -m tests.conformance.lmdb_rpc_peer FD`` serves :class:`PeerRoot` on the connected
socket ``FD`` (see :mod:`tests.conformance.rpc`) until the other end closes it. The driving
process opens each test's store here through :meth:`PeerRoot.open` and then calls the
backend, its storages and watchers as if they were its own.
"""

from __future__ import annotations

import os
import socket
import sys
import threading

from kstore.storage.lmdb import LmdbBackend, LmdbConfig

from .rpc import Endpoint


class PeerRoot:
    """What the driving process calls first: open a store here, close it at the test's end."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: list[LmdbBackend] = []
        self.endpoint: Endpoint | None = None

    def open(self, config: LmdbConfig) -> LmdbBackend:
        backend = LmdbBackend(config)
        with self._lock:
            self._open.append(backend)
        return backend

    def close_all(self) -> int:
        """Close every store opened here and forget the test's objects; how many were open."""
        with self._lock:
            backends, self._open = self._open, []
        for backend in backends:
            backend.close()
        if self.endpoint is not None:
            self.endpoint.forget_exports()
        return len(backends)

    def pid(self) -> int:
        return os.getpid()


def main(fd: int) -> None:
    root = PeerRoot()
    endpoint = Endpoint(socket.socket(fileno=fd), root)
    root.endpoint = endpoint
    endpoint.wait_closed()
    root.close_all()


if __name__ == "__main__":
    main(int(sys.argv[1]))
