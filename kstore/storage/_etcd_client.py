"""A small etcd v3 client on python3-etcd3's generated gRPC stubs (``etcd3.etcdrpc``).

Why not python3-etcd3's client object: it costs about 40 µs a call in wrappers (perf-limits
1.2), marks a failed endpoint but never retries, and its watch thread dies when a stream ends.
kstore keeps the package for its generated stubs and messages and owns the calling policy here:

- **one pinned member**: every call goes to the current endpoint; when a call shows that member
  cannot serve, the next endpoint becomes current (fail-over), preferring members that have
  not failed in the last second;
- **retries only when safe**: a request that provably never reached etcd, or that etcd refused
  before proposing it (``no leader``), is retried on the next member until the request
  timeout, each member of a round in turn without a pause; a read is also retried after an
  ambiguous failure (a timeout, a dropped connection); a write with an ambiguous outcome is
  never retried here — it fails with :class:`AmbiguousWrite` (a
  :class:`~kstore.errors.Timeout`), since it may or may not have been applied, and only the
  caller, who knows the write's guard and bytes, can settle it (:mod:`._etcd_settle`);
- **a frozen member costs one attempt**: single-key calls have a short per-attempt deadline
  (``key_attempt_timeout``) below the request's, so a call stuck on a paused member moves on
  instead of waiting for the whole request timeout; once an attempt has failed, the call's
  next attempts (and those of the calls settling it) are short for a few seconds, so a
  write finds a newly elected leader soon after the election; gRPC keepalive finds a frozen
  member's connection for the calls without a deadline (watch streams);
- **require a leader**: calls and watch streams carry etcd's ``hasleader`` metadata, so a member
  cut off from its quorum refuses at once instead of hanging, and cancels its watch streams;
- **overlapping calls pipelined**: KV calls made while others are in flight are issued as
  gRPC futures by one sender thread per member (:mod:`._etcd_pipeline`), which is cheaper
  than many threads blocking in gRPC at once; callers on asyncio use :mod:`._etcd_aio`, the
  same policy (:class:`Attempts`) on ``grpc.aio`` channels, cheaper still;
- **typed errors**: gRPC errors become kstore errors at this one boundary, except the two that
  callers interpret by context (compacted and future revisions), which are
  :class:`CompactedError` and :class:`FutureRevisionError`.

Thread-safe: gRPC channels and stubs are shared by all threads.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import grpc  # type: ignore[import-untyped, unused-ignore]
from etcd3 import etcdrpc

from kstore.errors import (
    InternalError,
    KStoreError,
    RequestEntityTooLarge,
    Timeout,
    Unavailable,
)
from kstore.storage._etcd_config import EtcdConfig
from kstore.storage._etcd_liveness import LivenessProbe
from kstore.storage._etcd_pipeline import Pipeline, PipelineClosed, PipelineTimeout

__all__ = [
    "AmbiguousWrite",
    "CompactedError",
    "EtcdClient",
    "FutureRevisionError",
    "LeaseNotFoundError",
    "WatchCall",
    "prefix_range_end",
]

#: Its own generator: the process's shared one stays the application's (seeded runs, tests).
_RANDOM = random.Random()


T = TypeVar("T")

#: Metadata of clientv3's ``WithRequireLeader``: a member without a leader refuses the call.
REQUIRE_LEADER = (("hasleader", "true"),)

#: A member that failed is avoided for this long when another one is available: long enough
#: that a paused or partitioned member is not picked again at once, short enough that a
#: restarted one soon takes its share again.
_FAILED_AVOID_SECONDS = 5.0
#: Pause between rounds of retries of a call (every member tried once), doubling up to the
#: maximum: short, as an election after a lost leader takes etcd 1-2 s (its default 1 s
#: election timeout, randomized up to twice that) and a write waits for it.
_RETRY_PAUSE = 0.05
_RETRY_PAUSE_MAX = 0.25
#: Once an attempt of a call has failed (or the call settles one that did), its attempts are
#: this short for a while: a write forwarded to a frozen leader is lost, not failed, when the
#: others elect a new one, so only a fresh attempt can use the new leader, and short ones
#: find it soon after the election (writes are answered in milliseconds when etcd has a
#: leader). After the window they double, so a cluster that is merely slow still answers.
_SHORT_ATTEMPT = 0.25
_SHORT_ATTEMPTS_WINDOW = 3.0

CHANNEL_OPTIONS = (
    # etcd answers large ranges in one message; clientv3 allows math.MaxInt32.
    ("grpc.max_receive_message_length", 2**31 - 1),
    ("grpc.max_send_message_length", 16 * 1024 * 1024),
    # A ping after 6 s without traffic, the connection dead after 3 s without an answer: a
    # frozen member's connection (which stays open) is found within 9 s, where
    # kube-apiserver's 30 s + 10 s would hold a watch on it for 40 s. etcd refuses pings
    # more often than every 5 s (--grpc-keepalive-min-time).
    ("grpc.keepalive_time_ms", 6_000),
    ("grpc.keepalive_timeout_ms", 3_000),
    # A restarted member is reachable again within a second.
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1000),
)

# gRPC UNAVAILABLE details meaning the request never left this process.
_NOT_SENT_MARKERS = (
    "failed to connect",
    "connection refused",
    "connections to all backends failing",
    "dns resolution failed",
    "name resolution failure",
    "no address",
    "no connection available",
)
# etcd errors returned before the request was proposed to raft: safe to retry elsewhere.
_REFUSED_MARKERS = (
    "etcdserver: no leader",
    "etcdserver: not capable",
    "etcdserver: too many requests",
)


# Server-side deadlines and shutdowns, whatever status code carries them: the request may
# have been applied.
_AMBIGUOUS_MARKERS = (
    "context deadline exceeded",
    "context canceled",
    "request timed out",
    "leader changed",
    "server stopped",
)


class AmbiguousWrite(Timeout):
    """A write's attempt failed after it may have reached etcd (a timeout, a dropped
    connection): it may or may not have been applied. The client has already made another
    member current, so a read made now goes elsewhere."""


class CompactedError(Exception):
    """etcd: the revision asked for has been compacted (``mvcc: required revision has been
    compacted``). Callers turn it into the 410 of their context."""


class FutureRevisionError(Exception):
    """etcd: the revision asked for is newer than the store (``mvcc: required revision is a
    future revision``)."""


class LeaseNotFoundError(Exception):
    """etcd: the lease attached to a put does not exist (it expired or was revoked)."""


def prefix_range_end(prefix: bytes) -> bytes:
    """The ``range_end`` that makes a range or watch cover every key starting with ``prefix``
    (clientv3's ``GetPrefixRangeEnd``)."""
    end = bytearray(prefix)
    for i in range(len(end) - 1, -1, -1):
        if end[i] < 0xFF:
            end[i] += 1
            return bytes(end[: i + 1])
    return b"\x00"  # every key from ``prefix`` on


class _Endpoint:
    """One member: its channel and the stubs on it."""

    __slots__ = (
        "channel",
        "failed_at",
        "index",
        "kv",
        "lease",
        "maintenance",
        "pipeline",
        "target",
        "txn_bytes",
        "watch",
    )

    def __init__(self, index: int, target: str, credentials: Any) -> None:
        self.index = index
        self.target = target
        if credentials is None:
            self.channel = grpc.insecure_channel(target, options=CHANNEL_OPTIONS)
        else:
            self.channel = grpc.secure_channel(target, credentials, options=CHANNEL_OPTIONS)
        self.kv = etcdrpc.KVStub(self.channel)
        self.lease = etcdrpc.LeaseStub(self.channel)
        self.watch = etcdrpc.WatchStub(self.channel)
        self.maintenance = etcdrpc.MaintenanceStub(self.channel)
        # KV.Txn taking a request already encoded (:mod:`._etcd_wire`): no serializer.
        self.txn_bytes = self.channel.unary_unary(
            "/etcdserverpb.KV/Txn",
            request_serializer=None,
            response_deserializer=etcdrpc.TxnResponse.FromString,
        )
        self.pipeline = Pipeline(target)
        self.failed_at = 0.0


def _split_endpoint(endpoint: str) -> tuple[str, bool]:
    """``host:port`` and whether the endpoint asked for TLS (an ``https://`` URL)."""
    secure = endpoint.startswith("https://")
    for scheme in ("https://", "http://"):
        if endpoint.startswith(scheme):
            endpoint = endpoint[len(scheme) :]
    return endpoint.rstrip("/"), secure


def _read_file(path: str | None) -> bytes | None:
    if path is None:
        return None
    with open(path, "rb") as handle:
        return handle.read()


class _Outcome:
    NOT_SENT = "not-sent"  # never reached etcd, or refused before proposing: retry anything
    AMBIGUOUS = "ambiguous"  # may have been applied: retry reads only
    FATAL = "fatal"  # a definite answer: raise


def _classify(exc: Any) -> tuple[str, BaseException]:
    """The retry outcome of a gRPC error and the exception it means."""
    code = exc.code()
    details = str(exc.details() or "")
    lowered = details.lower()
    if code == grpc.StatusCode.OUT_OF_RANGE:
        if "compacted" in lowered:
            return _Outcome.FATAL, CompactedError(details)
        if "future revision" in lowered:
            return _Outcome.FATAL, FutureRevisionError(details)
    if "lease not found" in lowered:
        return _Outcome.FATAL, LeaseNotFoundError(details)
    # etcd refuses requests over --max-request-bytes (1.5 MiB by default) itself, and gRPC
    # refuses messages over that plus 512 KiB (or over the client's own send limit).
    if "request is too large" in lowered or "message larger than max" in lowered:
        return _Outcome.FATAL, RequestEntityTooLarge(
            f"etcd refused the request as too large: {details}"
        )
    if code == grpc.StatusCode.UNAVAILABLE or code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        if any(m in lowered for m in _NOT_SENT_MARKERS) or any(
            m in lowered for m in _REFUSED_MARKERS
        ):
            return _Outcome.NOT_SENT, Unavailable(f"etcd is unavailable: {details}")
        if code == grpc.StatusCode.UNAVAILABLE:
            return _Outcome.AMBIGUOUS, Timeout(f"etcd did not complete the request: {details}")
    if code == grpc.StatusCode.DEADLINE_EXCEEDED or any(m in lowered for m in _AMBIGUOUS_MARKERS):
        return _Outcome.AMBIGUOUS, Timeout(f"etcd did not complete the request in time: {details}")
    if code == grpc.StatusCode.CANCELLED:
        return _Outcome.FATAL, Unavailable(f"etcd request cancelled: {details}")
    return _Outcome.FATAL, InternalError(f"etcd: {details or code}")


WatchCall = Any
"""A running gRPC Watch stream: iterate it for responses, ``cancel()`` to end it."""


class Attempts:
    """One call's retry budget, per the module docstring's policy: the request timeout overall,
    each attempt bounded by the attempt timeout (short ones once an attempt failed), each
    member tried once per round, growing pauses between rounds."""

    __slots__ = (
        "_attempt_timeout",
        "_client",
        "_deadline",
        "_mutating",
        "_pause",
        "_short",
        "_short_since",
        "_tried",
    )

    def __init__(
        self,
        client: EtcdClient,
        mutating: bool,
        *,
        attempt_timeout: float | None = None,
        deadline: float | None = None,
        after_failure: bool = False,
    ) -> None:
        self._client = client
        self._mutating = mutating
        config = client.config
        own_deadline = time.monotonic() + config.request_timeout
        self._deadline = own_deadline if deadline is None else min(deadline, own_deadline)
        self._attempt_timeout = (
            config.attempt_timeout if attempt_timeout is None else attempt_timeout
        )
        self._pause = _RETRY_PAUSE
        # Members tried since the last pause: a round tries each once before pausing.
        self._tried: set[int] | None = None
        self._short = _SHORT_ATTEMPT
        self._short_since: float | None = time.monotonic() if after_failure else None

    def next_timeout(self) -> float:
        """The timeout of the next attempt; Unavailable once the client is closed."""
        if self._client.closed:
            raise Unavailable("the etcd client is closed")
        now = time.monotonic()
        remaining = self._deadline - now
        if remaining <= 0:
            raise Timeout("etcd did not complete the request in time")
        timeout = self._attempt_timeout
        if self._short_since is not None:
            if now - self._short_since >= _SHORT_ATTEMPTS_WINDOW:
                self._short *= 2
            timeout = min(timeout, self._short)
        return max(0.001, min(remaining, timeout))

    def pause_after(self, endpoint: _Endpoint, failure: BaseException) -> float:
        """How long to wait before retrying after ``failure`` on ``endpoint`` (which then
        stops being current); raises the kstore error the caller gets when it must not be
        retried or the time is up."""
        if isinstance(failure, grpc.RpcError):
            outcome, error = _classify(failure)
        elif isinstance(failure, PipelineClosed):
            raise Unavailable("the etcd client is closed") from None
        elif isinstance(failure, PipelineTimeout):
            outcome, error = _Outcome.AMBIGUOUS, Timeout(f"etcd: {failure}")
        else:
            raise failure
        if outcome == _Outcome.FATAL:
            raise error
        if self._short_since is None:
            self._short_since = time.monotonic()
        self._client.endpoint_failed(endpoint)
        if outcome == _Outcome.AMBIGUOUS:
            self._client.suspect()
        if outcome == _Outcome.AMBIGUOUS and self._mutating:
            raise AmbiguousWrite(str(error)) from failure
        if time.monotonic() >= self._deadline:
            raise error
        tried = self._tried
        if tried is None:
            tried = self._tried = set()
        tried.add(endpoint.index)
        if self._client.current_endpoint().index not in tried:
            return 0.0  # a member not tried yet in this round: at once
        tried.clear()
        pause = self._pause
        if time.monotonic() + pause >= self._deadline:
            raise error
        self._pause = min(pause * 2, _RETRY_PAUSE_MAX)
        return pause


class EtcdClient:
    """Calls etcd with fail-over and the retry policy of the module docstring."""

    def __init__(self, config: EtcdConfig) -> None:
        self._config = config
        credentials = None
        targets = [_split_endpoint(e) for e in config.endpoints]
        if config.uses_tls:
            credentials = grpc.ssl_channel_credentials(
                root_certificates=_read_file(config.ca_file),
                private_key=_read_file(config.key_file),
                certificate_chain=_read_file(config.cert_file),
            )
        self._credentials = credentials
        self._endpoints = [
            _Endpoint(index, target, credentials) for index, (target, _) in enumerate(targets)
        ]
        self._lock = threading.Lock()
        # The asyncio clients (:mod:`._etcd_aio`), one per event loop that used this client.
        self._loop_clients: dict[Any, Any] = {}
        self._loop_clients_lock = threading.Lock()
        # Spread several kstore processes over the members, as clientv3 does.
        self._current = _RANDOM.randrange(len(self._endpoints))
        self._closed = False
        self._probe = LivenessProbe([ep.maintenance for ep in self._endpoints], self.probed)

    # -- endpoint choice -----------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def config(self) -> EtcdConfig:
        return self._config

    @property
    def credentials(self) -> Any:
        """The TLS channel credentials (None: plain connections)."""
        return self._credentials

    @property
    def endpoints(self) -> list[_Endpoint]:
        """Every member, in configuration order."""
        return self._endpoints

    @property
    def loop_clients(self) -> dict[Any, Any]:
        """The asyncio clients by event loop (kept and closed by :mod:`._etcd_aio`), changed
        under :attr:`loop_clients_lock`."""
        return self._loop_clients

    @property
    def loop_clients_lock(self) -> threading.Lock:
        return self._loop_clients_lock

    def current_endpoint(self) -> _Endpoint:
        return self._endpoints[self._current]

    def endpoint_failed(self, endpoint: _Endpoint) -> None:
        """``endpoint`` could not serve: make another member current."""
        now = time.monotonic()
        with self._lock:
            endpoint.failed_at = now
            if self._endpoints[self._current] is not endpoint or len(self._endpoints) == 1:
                return
            count = len(self._endpoints)
            others = [(self._current + step) % count for step in range(1, count)]
            for index in others:
                if now - self._endpoints[index].failed_at > _FAILED_AVOID_SECONDS:
                    self._current = index
                    return
            # Every other member failed recently too: the one that failed longest ago.
            self._current = min(others, key=lambda i: self._endpoints[i].failed_at)

    def suspect(self) -> None:
        """An attempt timed out: find out which members answer at all (in the background)."""
        if len(self._endpoints) > 1 and not self._closed:
            self._probe.suspect()

    def probed(self, answered: list[int], silent: list[int]) -> None:
        """A probe's result (:mod:`._etcd_liveness`): silent members are avoided, members
        that answered are no longer, and a silent current member gives way to the next one
        that answered."""
        now = time.monotonic()
        with self._lock:
            for index in silent:
                self._endpoints[index].failed_at = now
            for index in answered:
                self._endpoints[index].failed_at = 0.0
            if answered and self._current in silent:
                count = len(self._endpoints)
                for step in range(1, count):
                    index = (self._current + step) % count
                    if index in answered:
                        self._current = index
                        break

    # -- calls ---------------------------------------------------------------------------------

    def attempts(
        self,
        *,
        mutating: bool,
        attempt_timeout: float | None = None,
        deadline: float | None = None,
        after_failure: bool = False,
    ) -> Attempts:
        """The retry budget of one call (the blocking calls here, the asyncio ones of
        :mod:`._etcd_aio`): ``attempt_timeout`` per attempt (default: the config's), all of
        them within the request timeout and ``deadline`` (a ``time.monotonic()`` instant);
        ``after_failure``: the call follows one whose attempt failed, so its attempts are
        short from the first."""
        return Attempts(
            self,
            mutating,
            attempt_timeout=attempt_timeout,
            deadline=deadline,
            after_failure=after_failure,
        )

    def _call(
        self,
        invoke: Callable[[_Endpoint, float], T],
        *,
        mutating: bool,
        attempt_timeout: float | None = None,
        deadline: float | None = None,
        after_failure: bool = False,
    ) -> T:
        attempts = Attempts(
            self,
            mutating,
            attempt_timeout=attempt_timeout,
            deadline=deadline,
            after_failure=after_failure,
        )
        while True:
            timeout = attempts.next_timeout()
            endpoint = self._endpoints[self._current]
            try:
                return invoke(endpoint, timeout)
            except (grpc.RpcError, PipelineClosed, PipelineTimeout) as exc:
                failure: BaseException = exc
            time.sleep(attempts.pause_after(endpoint, failure))

    def txn(self, request: Any) -> Any:
        """Run a transaction (a write unless it only reads); see the retry policy."""
        return self._call(
            lambda ep, timeout: ep.pipeline.call(
                ep.kv.Txn, request, timeout=timeout, metadata=REQUIRE_LEADER
            ),
            mutating=True,
        )

    def txn_encoded(
        self,
        request: bytes,
        meanwhile: Callable[[], None] | None = None,
        *,
        deadline: float | None = None,
        after_failure: bool = False,
    ) -> Any:
        """:meth:`txn` for a single-key ``TxnRequest`` already serialized
        (:mod:`._etcd_wire`), each attempt bounded by ``key_attempt_timeout``. ``meanwhile``
        runs while the request is in flight (see :mod:`._etcd_pipeline`); it may run again
        when an attempt is retried, and must not raise."""
        return self._call(
            lambda ep, timeout: ep.pipeline.call(
                ep.txn_bytes,
                request,
                timeout=timeout,
                metadata=REQUIRE_LEADER,
                meanwhile=meanwhile,
            ),
            mutating=True,
            attempt_timeout=self._config.key_attempt_timeout,
            deadline=deadline,
            after_failure=after_failure,
        )

    def range(
        self,
        request: Any,
        *,
        single_key: bool = False,
        deadline: float | None = None,
        after_failure: bool = False,
    ) -> Any:
        """A Range read, retried on another member when one cannot answer; ``single_key``:
        one key's read, each attempt bounded by ``key_attempt_timeout``."""
        return self._call(
            lambda ep, timeout: ep.pipeline.call(
                ep.kv.Range, request, timeout=timeout, metadata=REQUIRE_LEADER
            ),
            mutating=False,
            attempt_timeout=self._config.key_attempt_timeout if single_key else None,
            deadline=deadline,
            after_failure=after_failure,
        )

    def lease_grant(self, ttl: int) -> int:
        """A new lease of ``ttl`` seconds; its id. Granting is safe to retry (an extra lease
        only expires)."""
        request = etcdrpc.LeaseGrantRequest(TTL=ttl)
        response = self._call(
            lambda ep, timeout: ep.lease.LeaseGrant(
                request, timeout=timeout, metadata=REQUIRE_LEADER
            ),
            mutating=False,
        )
        if response.error:
            raise InternalError(f"etcd: lease grant failed: {response.error}")
        return int(response.ID)

    def lease_time_to_live(self, lease_id: int) -> int:
        """The seconds ``lease_id`` has left (-1: it expired or was revoked). A read."""
        request = etcdrpc.LeaseTimeToLiveRequest(ID=lease_id)
        response = self._call(
            lambda ep, timeout: ep.lease.LeaseTimeToLive(
                request, timeout=timeout, metadata=REQUIRE_LEADER
            ),
            mutating=False,
        )
        return int(response.TTL)

    def compact(self, revision: int) -> None:
        """Compact the key-value history up to ``revision`` (not waiting for the physical
        compaction); CompactedError when it already is."""
        request = etcdrpc.CompactionRequest(revision=revision, physical=False)
        self._call(
            lambda ep, timeout: ep.kv.Compact(request, timeout=timeout, metadata=REQUIRE_LEADER),
            mutating=False,
        )

    def watch_stream(self, requests: Iterator[Any]) -> tuple[WatchCall, _Endpoint]:
        """Open a Watch stream on the current member, fed by ``requests``."""
        endpoint = self._endpoints[self._current]
        return endpoint.watch.Watch(requests, metadata=REQUIRE_LEADER), endpoint

    def close(self) -> None:
        """Close every channel; running calls and watch streams end with CANCELLED."""
        self._closed = True
        for endpoint in self._endpoints:
            endpoint.pipeline.close()
            endpoint.channel.close()
        with self._loop_clients_lock:
            loop_clients = list(self._loop_clients.values())
            self._loop_clients.clear()
        for loop_client in loop_clients:
            loop_client.close_soon()


def is_cancelled(exc: BaseException) -> bool:
    """Whether a gRPC error is the cancellation of the call (ours, or a closed channel)."""
    return isinstance(exc, grpc.RpcError) and exc.code() == grpc.StatusCode.CANCELLED


def classify_stream_error(exc: BaseException) -> KStoreError | CompactedError | None:
    """What a failed watch stream means: None when resuming on another member may help,
    CompactedError for a compacted start revision, else the error to end the watch with."""
    if not isinstance(exc, grpc.RpcError):
        return InternalError(f"etcd watch failed: {exc}")
    outcome, error = _classify(exc)
    if isinstance(error, CompactedError):
        return error
    if outcome == _Outcome.FATAL and not is_cancelled(exc):
        return error if isinstance(error, KStoreError) else InternalError(str(error))
    return None
