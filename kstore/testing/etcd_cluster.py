"""Real etcd processes for tests: one member or a cluster on loopback, plus fault helpers.

An :class:`EtcdCluster` starts ``size`` etcd members on 127.0.0.1 with free ports and a fresh
data directory each (under ``base_dir`` or a temporary directory it removes again), waits until
every member reports healthy, and stops each member **by its own process id** when stopped or
garbage-collected through the context manager. Nothing here kills processes by name, and nothing
here talks gRPC: health and leadership come from etcd's HTTP endpoints (``/health`` and the
JSON gateway's ``/v3/maintenance/status``), so this module needs only the standard library.

Fault helpers act on one member at a time: :meth:`EtcdCluster.kill` (SIGKILL, the process is
reaped), :meth:`~EtcdCluster.pause` / :meth:`~EtcdCluster.resume` (SIGSTOP / SIGCONT),
:meth:`~EtcdCluster.terminate` (SIGTERM, a clean stop) and :meth:`~EtcdCluster.restart` (start
again on the same data directory and ports). :meth:`~EtcdCluster.leader` finds the member that
currently leads.

Invariants: every process this module starts is recorded in its member and is stopped by
:meth:`EtcdCluster.stop` (a paused member is continued first, so SIGTERM can act; one that does
not exit in time gets SIGKILL); ports are chosen afresh for every start attempt, and a start that
loses a port race is retried on new ports.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = [
    "EtcdCluster",
    "EtcdMember",
    "EtcdNotInstalled",
    "EtcdStartError",
    "EtcdTLSFiles",
    "etcd_binary",
]

#: How long one HTTP probe of a member may take. A paused member never answers.
_PROBE_TIMEOUT = 1.0


class EtcdNotInstalled(RuntimeError):
    """No ``etcd`` executable on PATH (``scripts/install-etcd`` installs Debian's package)."""


class EtcdStartError(RuntimeError):
    """A member did not become healthy in time; the message carries the tail of its log."""


@dataclass(frozen=True, kw_only=True, slots=True)
class EtcdTLSFiles:
    """PEM files for serving clients over TLS with client-certificate authentication.

    ``cert_file``/``key_file`` are the server's; ``client_cert_file``/``client_key_file`` are
    what this module presents in its own health probes (etcd then requires a client cert)."""

    ca_file: Path
    cert_file: Path
    key_file: Path
    client_cert_file: Path
    client_key_file: Path


def etcd_binary() -> str:
    """The etcd executable to run; EtcdNotInstalled when there is none."""
    found = shutil.which("etcd")
    if found is None:
        raise EtcdNotInstalled("etcd is not installed (run scripts/install-etcd)")
    return found


def _free_port(taken: set[int]) -> int:
    # Bind to port 0 and let the kernel choose; remember what we chose so the members of one
    # cluster never collide with each other. Another process may still grab the port before
    # etcd binds it: the start loop retries on fresh ports when that happens.
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if port not in taken:
            taken.add(port)
            return port


@dataclass(eq=False)
class EtcdMember:
    """One etcd member: its ports, data directory, log file and (while running) process."""

    name: str
    client_port: int
    peer_port: int
    data_dir: Path
    log_path: Path
    scheme: str = "http"
    process: subprocess.Popen[bytes] | None = None
    paused: bool = False
    member_id: int = 0
    _log_file: Any = field(default=None, repr=False)

    @property
    def endpoint(self) -> str:
        """``host:port`` of the client URL, the form kstore's etcd config takes."""
        return f"127.0.0.1:{self.client_port}"

    @property
    def client_url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.client_port}"

    @property
    def peer_url(self) -> str:
        return f"http://127.0.0.1:{self.peer_port}"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    @property
    def running(self) -> bool:
        """The process exists and has not exited (a paused member is running)."""
        return self.process is not None and self.process.poll() is None

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


class EtcdCluster:
    """``size`` etcd members on loopback; use as a context manager or call start()/stop().

    ``progress_notify_interval`` (seconds) sets etcd's experimental watch progress-notify
    interval (default: etcd's own, 10 minutes). ``extra_args`` go to every member.
    """

    def __init__(
        self,
        size: int = 1,
        *,
        base_dir: Path | None = None,
        tls: EtcdTLSFiles | None = None,
        progress_notify_interval: float | None = None,
        extra_args: Sequence[str] = (),
        start_timeout: float = 20.0,
    ) -> None:
        if size < 1:
            raise ValueError("an etcd cluster needs at least one member")
        self.size = size
        self.tls = tls
        self.progress_notify_interval = progress_notify_interval
        self.extra_args = tuple(extra_args)
        self.start_timeout = start_timeout
        self._own_dir = base_dir is None
        self._base_dir = (
            Path(tempfile.mkdtemp(prefix="kstore-etcd-")) if base_dir is None else base_dir
        )
        self._token = f"kstore-{uuid.uuid4().hex[:12]}"
        self._binary = etcd_binary()
        self.members: list[EtcdMember] = []
        self._ssl_context: ssl.SSLContext | None = None
        if tls is not None:
            ctx = ssl.create_default_context(cafile=str(tls.ca_file))
            ctx.load_cert_chain(str(tls.client_cert_file), str(tls.client_key_file))
            self._ssl_context = ctx

    # -- lifecycle -----------------------------------------------------------------------------

    def __enter__(self) -> EtcdCluster:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def endpoints(self) -> list[str]:
        """``host:port`` of every member's client URL, in member order."""
        return [m.endpoint for m in self.members]

    @property
    def base_dir(self) -> Path:
        return self._base_dir

    def start(self) -> EtcdCluster:
        """Start every member on fresh ports and wait until all are healthy."""
        last_error: Exception | None = None
        for attempt in range(3):
            self._plan_members(attempt)
            for member in self.members:
                self._spawn(member)
            try:
                self.wait_healthy(timeout=self.start_timeout)
            except EtcdStartError as exc:
                last_error = exc
                port_race = any("address already in use" in m.log_tail(200) for m in self.members)
                self._stop_all()
                if not port_race:
                    break
                continue
            for index in range(self.size):
                self.members[index].member_id = self._status(index)["member_id"]
            return self
        raise EtcdStartError(str(last_error))

    def stop(self) -> None:
        """Stop every member by its pid and remove the data directories this cluster made."""
        self._stop_all()
        if self._own_dir:
            shutil.rmtree(self._base_dir, ignore_errors=True)

    def _plan_members(self, attempt: int) -> None:
        taken: set[int] = set()
        scheme = "https" if self.tls is not None else "http"
        self.members = []
        for index in range(self.size):
            name = f"m{index}"
            member_dir = self._base_dir / f"try{attempt}" / name
            member_dir.mkdir(parents=True, exist_ok=True)
            self.members.append(
                EtcdMember(
                    name=name,
                    client_port=_free_port(taken),
                    peer_port=_free_port(taken),
                    data_dir=member_dir / "data",
                    log_path=member_dir / "etcd.log",
                    scheme=scheme,
                )
            )

    def _command(self, member: EtcdMember) -> list[str]:
        initial_cluster = ",".join(f"{m.name}={m.peer_url}" for m in self.members)
        cmd = [
            self._binary,
            "--name",
            member.name,
            "--data-dir",
            str(member.data_dir),
            "--listen-client-urls",
            member.client_url,
            "--advertise-client-urls",
            member.client_url,
            "--listen-peer-urls",
            member.peer_url,
            "--initial-advertise-peer-urls",
            member.peer_url,
            "--initial-cluster",
            initial_cluster,
            "--initial-cluster-token",
            self._token,
            "--initial-cluster-state",
            "new",
            "--logger",
            "zap",
            "--log-outputs",
            "stderr",
        ]
        if self.progress_notify_interval is not None:
            cmd += [
                "--experimental-watch-progress-notify-interval",
                f"{int(self.progress_notify_interval * 1000)}ms",
            ]
        if self.tls is not None:
            cmd += [
                "--cert-file",
                str(self.tls.cert_file),
                "--key-file",
                str(self.tls.key_file),
                "--trusted-ca-file",
                str(self.tls.ca_file),
                "--client-cert-auth",
            ]
        return cmd + list(self.extra_args)

    def _spawn(self, member: EtcdMember) -> None:
        # Append to the log so a restarted member keeps its earlier history for debugging.
        log = open(member.log_path, "ab")  # noqa: SIM115 - closed when the member stops
        member._log_file = log
        member.process = subprocess.Popen(
            self._command(member),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        member.paused = False

    def _reap(self, member: EtcdMember) -> None:
        if member._log_file is not None:
            member._log_file.close()
            member._log_file = None

    def _stop_all(self) -> None:
        for member in self.members:
            self._stop_member(member, sig=signal.SIGTERM)

    def _stop_member(self, member: EtcdMember, *, sig: signal.Signals) -> None:
        process = member.process
        if process is None:
            return
        if process.poll() is None:
            if member.paused:
                # A stopped process only acts on SIGTERM once continued.
                os.kill(process.pid, signal.SIGCONT)
                member.paused = False
            process.send_signal(sig)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
        member.process = None
        member.paused = False
        self._reap(member)

    # -- faults --------------------------------------------------------------------------------

    def kill(self, index: int) -> None:
        """SIGKILL member ``index`` and reap it (no clean shutdown, no leadership transfer)."""
        self._stop_member(self.members[index], sig=signal.SIGKILL)

    def terminate(self, index: int) -> None:
        """Stop member ``index`` cleanly (SIGTERM)."""
        self._stop_member(self.members[index], sig=signal.SIGTERM)

    def pause(self, index: int) -> None:
        """SIGSTOP member ``index``: its sockets stay open and silent."""
        member = self.members[index]
        if member.process is None or member.process.poll() is not None:
            raise RuntimeError(f"member {member.name} is not running")
        os.kill(member.process.pid, signal.SIGSTOP)
        member.paused = True

    def resume(self, index: int) -> None:
        """SIGCONT a paused member ``index``."""
        member = self.members[index]
        if member.process is not None and member.paused:
            os.kill(member.process.pid, signal.SIGCONT)
        member.paused = False

    def restart(self, index: int, *, wait: bool = True, timeout: float = 20.0) -> None:
        """Start member ``index`` again on its data directory and ports (stopping it first if
        it still runs); with ``wait``, until it reports healthy."""
        member = self.members[index]
        if member.process is not None:
            self._stop_member(member, sig=signal.SIGTERM)
        self._spawn(member)
        if wait:
            self.wait_healthy([index], timeout=timeout)

    # -- state ---------------------------------------------------------------------------------

    def _url_open(self, url: str, body: bytes | None = None) -> Any:
        request = urllib.request.Request(url, data=body, method="POST" if body else "GET")
        with urllib.request.urlopen(
            request, timeout=_PROBE_TIMEOUT, context=self._ssl_context
        ) as response:
            return json.loads(response.read())

    def healthy(self, index: int) -> bool:
        """Member ``index`` answers ``/health`` with a leader known (a probe of one second)."""
        member = self.members[index]
        if not member.running or member.paused:
            return False
        try:
            answer = self._url_open(member.client_url + "/health")
        except (OSError, ValueError, urllib.error.URLError):
            return False
        return bool(answer.get("health") in ("true", True))

    def wait_healthy(self, indices: Sequence[int] | None = None, *, timeout: float = 20.0) -> None:
        """Wait until the given members (default: all) are healthy; EtcdStartError otherwise,
        immediately when one of them has exited."""
        wanted = list(range(self.size)) if indices is None else list(indices)
        deadline = time.monotonic() + timeout
        pending = set(wanted)
        while pending:
            for index in sorted(pending):
                member = self.members[index]
                if member.process is not None and member.process.poll() is not None:
                    raise EtcdStartError(
                        f"etcd member {member.name} exited with {member.process.returncode}:\n"
                        + member.log_tail()
                    )
                if self.healthy(index):
                    pending.discard(index)
            if not pending:
                return
            if time.monotonic() > deadline:
                names = ", ".join(self.members[i].name for i in sorted(pending))
                tails = "\n".join(self.members[i].log_tail(10) for i in sorted(pending))
                raise EtcdStartError(f"etcd members not healthy after {timeout}s: {names}\n{tails}")
            time.sleep(0.05)

    def _status(self, index: int) -> dict[str, int]:
        answer = self._url_open(self.members[index].client_url + "/v3/maintenance/status", b"{}")
        header = answer.get("header", {})
        return {
            "member_id": int(header.get("member_id", 0)),
            "leader": int(answer.get("leader", 0)),
            "raft_term": int(header.get("raft_term", 0)),
            "revision": int(header.get("revision", 0)),
        }

    def leader(self, *, timeout: float = 10.0, exclude: Sequence[int] = ()) -> int:
        """Index of the member that leads, as the running members report it; waits for an
        election (up to ``timeout``) and ignores members in ``exclude``."""
        deadline = time.monotonic() + timeout
        by_id = {m.member_id: i for i, m in enumerate(self.members)}
        while True:
            for index, member in enumerate(self.members):
                if index in exclude or not member.running or member.paused:
                    continue
                try:
                    status = self._status(index)
                except (OSError, ValueError, urllib.error.URLError):
                    continue
                leader = by_id.get(status["leader"])
                if leader is not None and leader not in exclude:
                    leader_member = self.members[leader]
                    if leader_member.running and not leader_member.paused:
                        return leader
            if time.monotonic() > deadline:
                raise TimeoutError(f"no etcd leader within {timeout}s")
            time.sleep(0.05)

    def revision(self, index: int | None = None) -> int:
        """The store revision as member ``index`` (default: the first healthy one) reports it."""
        indices = range(self.size) if index is None else [index]
        for i in indices:
            if self.healthy(i):
                return self._status(i)["revision"]
        raise RuntimeError("no healthy etcd member")
