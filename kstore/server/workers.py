"""``kstore serve --workers N``: N server processes on one listening socket and one store.

The parent binds the socket, then forks the workers; each serves the whole API on the
inherited socket (the kernel hands every new connection to one of the processes accepting
on it) over its own open store. The parent serves nothing and opens nothing: it only starts,
watches and stops its children.

- **Start.** The parent announces the server (prints its URL) once every worker is serving.
  A worker that fails before the first announcement fails the start: the others are stopped
  and the parent exits with the worker's status.
- **A worker dies** (a crash, ``kill -9``): the parent forks a new one in its place, at once
  if the dead one had served for a while, else after a back-off that doubles up to
  :data:`_MAX_BACKOFF_S` (a worker that cannot start is not restarted in a tight loop). The
  other workers keep serving, and connections waiting in the socket's queue are accepted by
  them. Every write a dead worker acknowledged is in the store (durable commits), and the
  store's change feed brings it to every other worker's watchers.
- **SIGTERM or SIGINT to the parent** drains all: each worker gets SIGTERM and stops as a
  single server does (ends its watches, finishes the requests in flight, closes the store);
  the parent waits for all of them (at most ``drain_timeout_seconds``, then kills the rest)
  and exits 0 when every worker did.
- **The parent dies** (even by ``kill -9``): each worker gets SIGTERM from the kernel
  (``PR_SET_PDEATHSIG``) and drains, so no worker is left serving without a parent.

Forking (rather than starting fresh interpreters) makes a restart quick, and the workers
share the pages of the modules the parent imported. The parent never starts a thread, so
forking it is safe.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import select
import signal
import sys
import time
import traceback
from collections.abc import Callable
from types import FrameType

__all__ = ["run_workers"]

_log = logging.getLogger("kstore.server.workers")

#: The longest wait before a worker that keeps failing is started again.
_MAX_BACKOFF_S = 5.0
#: A worker that served at least this long is restarted at once when it dies.
_HEALTHY_S = 10.0
_PR_SET_PDEATHSIG = 1

#: What a worker runs: serve until told to stop, calling ``ready`` once serving; the status.
WorkerMain = Callable[[Callable[[], None]], int]


def _die_with(parent: int) -> None:
    """Have the kernel send this process SIGTERM when ``parent`` dies (Linux)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:  # it died before the request took effect
        os.kill(os.getpid(), signal.SIGTERM)


class _Supervisor:
    def __init__(self, count: int, main: WorkerMain, drain_timeout_seconds: float) -> None:
        self._count = count
        self._main = main
        self._drain_timeout = drain_timeout_seconds
        self._children: dict[int, int] = {}  # pid -> slot
        self._started: dict[int, float] = {}  # slot -> when its current worker started
        self._backoff: dict[int, float] = {}
        self._restart_at: dict[int, float] = {}
        self._ready: set[int] = set()
        self._stop_signal = 0
        self._pid = os.getpid()
        self._ready_r, self._ready_w = os.pipe()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        os.set_blocking(self._ready_r, False)

    def _on_stop(self, signum: int, frame: FrameType | None) -> None:
        self._stop_signal = self._stop_signal or signum

    def run(self, announce: Callable[[], None]) -> int:
        signals = (signal.SIGTERM, signal.SIGINT, signal.SIGCHLD)
        previous = {sig: signal.getsignal(sig) for sig in signals}
        old_wakeup = signal.set_wakeup_fd(self._wake_w)
        signal.signal(signal.SIGTERM, self._on_stop)
        signal.signal(signal.SIGINT, self._on_stop)
        # A handler (not SIG_DFL) so that a child's exit writes to the wake-up pipe.
        signal.signal(signal.SIGCHLD, lambda _signum, _frame: None)
        try:
            return self._supervise(announce)
        finally:
            signal.set_wakeup_fd(old_wakeup)
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            for fd in (self._ready_r, self._ready_w, self._wake_r, self._wake_w):
                os.close(fd)

    def _supervise(self, announce: Callable[[], None]) -> int:
        for slot in range(self._count):
            self._spawn(slot)
        announced = False
        status = 0
        draining_until: float | None = None
        while True:
            for slot, code in self._reap():
                if draining_until is not None:
                    status = status or code
                elif not announced:
                    _log.error("worker %d failed to start (status %d): stopping", slot, code)
                    status = code or 1
                    self._stop_signal = self._stop_signal or signal.SIGTERM
                else:
                    self._schedule_restart(slot, code)
            if self._stop_signal and draining_until is None:
                _log.info("received signal %d: draining %d workers", self._stop_signal, self._count)
                draining_until = time.monotonic() + self._drain_timeout
                self._restart_at.clear()
                self._signal_all(signal.SIGTERM)
            if draining_until is not None:
                if not self._children:
                    return status
                if time.monotonic() > draining_until:
                    _log.error("workers still running after the drain timeout: killing them")
                    self._signal_all(signal.SIGKILL)
                    draining_until = time.monotonic() + 5.0
                    status = status or 1
            now = time.monotonic()
            for slot, when in list(self._restart_at.items()):
                if when <= now:
                    del self._restart_at[slot]
                    self._spawn(slot)
            for slot in self._read_ready():
                self._ready.add(slot)
            if not announced and draining_until is None and len(self._ready) == self._count:
                announce()
                announced = True
            timeout = 1.0
            if self._restart_at:
                timeout = max(0.0, min(timeout, min(self._restart_at.values()) - now))
            with contextlib.suppress(InterruptedError):
                select.select([self._ready_r, self._wake_r], [], [], timeout)
            with contextlib.suppress(BlockingIOError):
                while os.read(self._wake_r, 512):
                    pass

    def _spawn(self, slot: int) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid:
            self._children[pid] = slot
            self._started[slot] = time.monotonic()
            return
        code = 1
        try:
            signal.set_wakeup_fd(-1)
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGCHLD):
                signal.signal(sig, signal.SIG_DFL)
            for fd in (self._ready_r, self._wake_r, self._wake_w):
                os.close(fd)
            _die_with(self._pid)
            ready_w = self._ready_w

            def ready() -> None:
                os.write(ready_w, f"{slot}\n".encode())

            code = self._main(ready)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:
            traceback.print_exc()
        finally:
            with contextlib.suppress(Exception):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(code)

    def _reap(self) -> list[tuple[int, int]]:
        ended: list[tuple[int, int]] = []
        while self._children:
            try:
                pid, wait_status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            slot = self._children.pop(pid, None)
            if slot is None:
                continue
            self._ready.discard(slot)
            ended.append((slot, os.waitstatus_to_exitcode(wait_status)))
        return ended

    def _schedule_restart(self, slot: int, code: int) -> None:
        lived = time.monotonic() - self._started.get(slot, 0.0)
        if lived >= _HEALTHY_S:
            delay = 0.0
        else:
            delay = min(_MAX_BACKOFF_S, max(0.1, 2 * self._backoff.get(slot, 0.0)))
        self._backoff[slot] = delay
        _log.warning(
            "worker %d ended (status %d) after %.1f s: starting another in %.1f s",
            slot,
            code,
            lived,
            delay,
        )
        self._restart_at[slot] = time.monotonic() + delay

    def _signal_all(self, sig: int) -> None:
        for pid in self._children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)

    def _read_ready(self) -> list[int]:
        data = b""
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(self._ready_r, 512):
                data += chunk
        return [int(line) for line in data.split()]


def run_workers(
    count: int,
    main: WorkerMain,
    *,
    ready: Callable[[], None],
    drain_timeout_seconds: float,
) -> int:
    """Run ``count`` worker processes, each ``main``, until SIGTERM/SIGINT (see the module
    docstring); ``ready`` is called once all of them serve. The exit status."""
    return _Supervisor(count, main, drain_timeout_seconds).run(ready)
