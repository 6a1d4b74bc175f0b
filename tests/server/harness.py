"""A real ``kstore serve`` process on a free loopback port, for tests that speak HTTP to it.

:func:`start_server` runs ``python -m kstore.cli serve --port 0`` (the server binds a free
port and prints its URL once it serves), waits for that line, and returns a
:class:`RunningServer`; :meth:`RunningServer.stop` sends SIGTERM and waits for the exit. The
server's log goes to ``server.log`` beside its data directory, which failing tests print.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import httpx

__all__ = ["RunningServer", "start_server"]

_STARTUP_TIMEOUT = 60.0


@dataclass
class RunningServer:
    url: str
    process: subprocess.Popen[str]
    data_dir: Path
    log_path: Path
    stdout_lines: list[str] = field(default_factory=list)
    reader: threading.Thread | None = None

    def client(self, **kwargs: object) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=30.0, **kwargs)  # type: ignore[arg-type]

    def log(self) -> str:
        try:
            return self.log_path.read_text()
        except OSError:
            return ""

    def stop(self, timeout: float = 30.0) -> int:
        """SIGTERM, then the exit status (the process is killed if it does not exit)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise
        finally:
            if self.reader is not None:
                self.reader.join(5)
            if self.process.stdout is not None:
                self.process.stdout.close()


def _pump(stream: IO[str], lines: queue.Queue[str | None]) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


def start_server(data_dir: Path, *args: str) -> RunningServer:
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    log_path = data_dir.parent / f"{data_dir.name}-server.log"
    log = log_path.open("a")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kstore.cli",
            "serve",
            "--workers",
            "1",
            "--bind-address",
            "127.0.0.1",
            "--port",
            "0",
            "--data-dir",
            str(data_dir),
            *args,
        ],
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
        env=env,
    )
    log.close()
    assert process.stdout is not None
    lines: queue.Queue[str | None] = queue.Queue()
    reader = threading.Thread(target=_pump, args=(process.stdout, lines), daemon=True)
    reader.start()
    seen: list[str] = []
    deadline = time.monotonic() + _STARTUP_TIMEOUT
    while True:
        remaining = deadline - time.monotonic()
        try:
            line = lines.get(timeout=max(remaining, 0.01))
        except queue.Empty:
            process.kill()
            process.wait()
            process.stdout.close()
            raise RuntimeError(f"kstore serve did not start: {log_path.read_text()}") from None
        if line is None:
            process.wait()
            process.stdout.close()
            raise RuntimeError(f"kstore serve exited early: {log_path.read_text()}")
        seen.append(line)
        if "kubectl --server" in line and seen[0].startswith("kstore serving on "):
            url = seen[0].split()[3]
            return RunningServer(url, process, data_dir, log_path, seen, reader)
