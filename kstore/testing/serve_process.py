"""A ``kstore serve`` process that robustness tests can kill -9 and start again.

:class:`ServeProcess` runs ``python -m kstore.cli serve`` on 127.0.0.1. The first start binds
a free port (``--port 0``); every later start asks for the **same port** on the same data
directory, so clients keep one base URL across a crash, as they keep one address across an
API server restart. A start returns once ``/readyz`` answers 200 and records how long that
took (:attr:`ServeProcess.ready_seconds`).

Invariants: at most one process at a time; every process started here is stopped here by its
own process id (:meth:`kill` sends SIGKILL and reaps it, :meth:`stop` sends SIGTERM and falls
back to SIGKILL); the server's stderr is appended to one log file per instance across restarts,
so a failing test can show every run's log. Only the standard library is used, so the driver
has no dependency beyond kstore itself.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

__all__ = ["ServeProcess", "ServeStartError"]

#: How long a start may take before it is a failure; generous, as the machine is shared.
_START_TIMEOUT = 60.0


class ServeStartError(RuntimeError):
    """The server exited or did not become ready in time; the message carries its log tail."""


class ServeProcess:
    """One ``kstore serve`` at a time on ``data_dir``, with ``args`` added to every start."""

    def __init__(self, data_dir: Path, args: Sequence[str] = ()) -> None:
        self.data_dir = data_dir
        self.args = tuple(args)
        self.log_path = data_dir.parent / f"{data_dir.name}-serve.log"
        self.port = 0
        self.starts = 0
        #: Seconds from spawning the last process to its first 200 from ``/readyz``.
        self.ready_seconds = 0.0
        self._process: subprocess.Popen[str] | None = None

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        if self._process is None:
            raise RuntimeError("kstore serve is not running")
        return self._process.pid

    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self, extra_args: Sequence[str] = ()) -> ServeProcess:
        """Start (again, on the same port after the first start) and wait until ready."""
        if self.running():
            raise RuntimeError("kstore serve is already running")
        self.data_dir.parent.mkdir(parents=True, exist_ok=True)
        command = [
            sys.executable,
            "-m",
            "kstore.cli",
            "serve",
            "--workers",
            "1",
            "--bind-address",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--data-dir",
            str(self.data_dir),
            *self.args,
            *extra_args,
        ]
        began = time.monotonic()
        with self.log_path.open("a") as log:
            log.write(f"--- start {self.starts + 1}: {' '.join(command[3:])}\n")
            log.flush()
            self._process = subprocess.Popen(
                command,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        self.starts += 1
        self.port = self._read_port()
        self._wait_ready(began)
        self.ready_seconds = time.monotonic() - began
        return self

    def _read_port(self) -> int:
        process = self._process
        assert process is not None and process.stdout is not None
        # The first line names the URL; nothing else is read from stdout, and the server
        # writes little more, so the pipe never fills.
        line = process.stdout.readline()
        if not line.startswith("kstore serving on "):
            self._reap()
            raise ServeStartError(f"kstore serve did not start: {line!r}\n{self.log_tail()}")
        return int(line.split()[3].rsplit(":", 1)[1])

    def _wait_ready(self, began: float) -> None:
        while time.monotonic() - began < _START_TIMEOUT:
            if not self.running():
                self._reap()
                raise ServeStartError(f"kstore serve exited during start\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/readyz", timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.02)
        self.kill()
        raise ServeStartError(f"kstore serve not ready in {_START_TIMEOUT} s\n{self.log_tail()}")

    def kill(self) -> None:
        """SIGKILL the process and reap it (no clean shutdown of any kind)."""
        process = self._process
        if process is None:
            return
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
        process.wait()
        self._reap()

    def stop(self, timeout: float = 30.0) -> int | None:
        """SIGTERM and the exit status (SIGKILL if it does not exit in time); None if the
        process was not running."""
        process = self._process
        if process is None:
            return None
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        try:
            status = process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            status = process.wait()
        self._reap()
        return status

    def _reap(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()

    def __enter__(self) -> ServeProcess:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- observation -----------------------------------------------------------------------

    def rss_bytes(self) -> int:
        """The process's resident set size now (Linux ``/proc``)."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError("no VmRSS in /proc status")

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text().splitlines()[-lines:])
        except OSError:
            return ""
