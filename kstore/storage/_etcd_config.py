"""Configuration of the etcd backend: where etcd is, how to reach it, and the policies kstore
runs against it (compaction, leases, timeouts).

Defaults are kube-apiserver's where it has one: key prefix ``/registry`` (``--etcd-prefix``),
compaction every 5 minutes (``--etcd-compaction-interval``), leases reused for
``min(60 s, 5 % of the TTL)`` with at most 1000 objects each (``--lease-reuse-duration-seconds``,
the lease manager's object limit). TLS files mirror ``--etcd-cafile``, ``--etcd-certfile`` and
``--etcd-keyfile``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["EtcdConfig"]


@dataclass(frozen=True, kw_only=True, slots=True)
class EtcdConfig:
    """How the etcd backend connects and behaves.

    ``endpoints``: ``host:port`` or ``http(s)://host:port`` of one or more members; requests
    stick to one member and fail over to the next when it cannot serve.
    ``prefix``: every key kstore writes lives under it (``/registry/pods/ns/name``).
    ``request_timeout``: the longest a single storage call waits for etcd (including fail-over
    retries) before it fails with Timeout or Unavailable; kube-apiserver caps writes at 34 s.
    ``attempt_timeout``: the longest one attempt of a range read over a prefix may wait on
    one member before the read moves to another (a paused member accepts connections and
    never answers).
    ``key_attempt_timeout``: the same for one key's read or write (create, get, update,
    delete), which etcd answers in milliseconds when it has a leader: 1 s, so that a call
    stuck on a frozen member moves on in time for writes to resume within 3 s of a frozen
    leader (etcd's own election takes 1-2 s). A write whose attempt timed out may have been
    applied; the backend settles it before answering (:mod:`._etcd_settle`).
    ``watch_idle_timeout``: a watch stream that has been silent this long is probed with a
    progress request, and abandoned for another member when the probe is not answered within
    the same time again.
    ``watch_reconnect_timeout``: how long a broken watch keeps trying to resume before it ends
    with an ERROR event (503).
    ``compaction_interval``: seconds between compactions; 0 disables the timer (compaction on
    demand still works).
    """

    endpoints: tuple[str, ...] = ("127.0.0.1:2379",)
    prefix: str = "/registry"
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    request_timeout: float = 30.0
    attempt_timeout: float = 5.0
    key_attempt_timeout: float = 1.0
    watch_idle_timeout: float = 2.0
    watch_reconnect_timeout: float = 60.0
    compaction_interval: float = 300.0
    lease_reuse_duration_seconds: int = 60
    lease_max_object_count: int = 1000

    def __post_init__(self) -> None:
        if not self.endpoints:
            raise ValueError("etcd needs at least one endpoint")
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("etcd client certificate and key must be given together")
        for name in (
            "request_timeout",
            "attempt_timeout",
            "key_attempt_timeout",
            "watch_idle_timeout",
        ):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")
        if self.compaction_interval < 0:
            raise ValueError("compaction_interval must not be negative")

    @property
    def uses_tls(self) -> bool:
        return self.ca_file is not None or any(e.startswith("https://") for e in self.endpoints)
