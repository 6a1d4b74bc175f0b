"""The deadline of a write: ``?timeout=`` capped at 34 s, answered with 504 when it passes.

As kube-apiserver: the ``timeout`` query parameter is a Go duration (``1s``, ``500ms``,
``1m30s``); a malformed one is a 400 ("invalid timeout specified in the request URL - ...",
as ``WithRequestDeadline`` answers), zero or negative means "no timeout of the client's".
Create, update, patch and delete then run their registry call under a deadline of the client's
timeout capped at ``requestTimeoutUpperBound`` (34 s). When the deadline passes first the
client gets a 504 ``Status`` (reason Timeout, "Timeout: request did not complete within
requested timeout - context deadline exceeded", the message of Kubernetes' ``FinishRequest``)
while the write carries on behind it and may still be stored, as in Kubernetes: a storage call
cannot be interrupted safely half way.

The registry call runs on a thread of :data:`_WRITERS` while the handler's thread waits for it
with the deadline; that is the only way a synchronous handler can answer before a storage call
that does not return (an etcd member that stopped answering). That hand-off is a second thread
switch per write, and on a busy server it is dear: ConfigMap creates through ``kstore serve``
on LMDB, paired A/B rounds, 1,881 against 1,331 us of server CPU per create and 211 against
295 creates/s. So the deadline is *enforced* (the hand-off made) only where a write may stall
(:attr:`~kstore.registry.interface.Registry.writes_may_stall`: etcd) or where the client asked
for a ``?timeout=``; an LMDB write without one waits only for this process's own group commit
and runs on the handler's thread (``--request-timeout``, enforced separately by
:mod:`kstore.server.filters.timeout`, still bounds it).
"""

from __future__ import annotations

import contextvars
import logging
import re
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from kstore.errors import BadRequest, Timeout

__all__ = [
    "REQUEST_TIMEOUT_UPPER_BOUND",
    "TIMEOUT_MESSAGE",
    "WriteDeadline",
    "parse_go_duration",
    "request_timeout",
    "run_before",
    "write_budget_seconds",
    "write_deadline",
]

_log = logging.getLogger("kstore.server")

T = TypeVar("T")

#: kube-apiserver's ``requestTimeoutUpperBound``: no write waits on storage longer (seconds).
REQUEST_TIMEOUT_UPPER_BOUND: Final = 34.0

TIMEOUT_MESSAGE: Final = (
    "request did not complete within requested timeout - context deadline exceeded"
)
_INVALID_TIMEOUT: Final = "invalid timeout specified in the request URL"

# Go's time.ParseDuration units, in seconds ("µs" in both of its Unicode spellings).
_UNITS: Final = {
    "ns": 1e-9,
    "us": 1e-6,
    "\u00b5s": 1e-6,
    "\u03bcs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_NUMBER = re.compile(r"(\d*)(?:\.(\d*))?")
_UNIT = re.compile(r"[^\d.]*")

# Threads of abandoned writes stay busy until their storage call returns, so the pool is
# sized well above the writes one commit usually carries; beyond it writes queue (and a
# queued write still times out at its own deadline).
_WRITERS = ThreadPoolExecutor(max_workers=64, thread_name_prefix="kstore-write")


def parse_go_duration(text: str) -> float:
    """Seconds in a Go duration string, with Go's rules and error wording.

    ``[-+]`` then one or more ``<number><unit>`` (``1.5h``, ``.5s``, ``1h2m3.5s``); a bare
    ``0`` is zero. Raises ValueError("time: ...") as Go's ``time.ParseDuration`` reports.
    """
    quoted = '"' + text + '"'
    rest = text
    sign = 1.0
    if rest[:1] in ("-", "+"):
        sign = -1.0 if rest[0] == "-" else 1.0
        rest = rest[1:]
    if rest == "0":
        return 0.0
    if not rest:
        raise ValueError(f"time: invalid duration {quoted}")
    total = 0.0
    while rest:
        number = _NUMBER.match(rest)
        assert number is not None  # the pattern matches the empty string
        whole, fraction = number.group(1), number.group(2)
        if not whole and not fraction:
            raise ValueError(f"time: invalid duration {quoted}")
        rest = rest[number.end() :]
        unit_match = _UNIT.match(rest)
        assert unit_match is not None
        unit = unit_match.group(0)
        if not unit:
            raise ValueError(f"time: missing unit in duration {quoted}")
        scale = _UNITS.get(unit)
        if scale is None:
            raise ValueError(f'time: unknown unit "{unit}" in duration {quoted}')
        total += float(f"{whole or 0}.{fraction or 0}") * scale
        rest = rest[unit_match.end() :]
    return sign * total


def request_timeout(query: Mapping[str, str]) -> float | None:
    """The client's ``?timeout=`` in seconds; None when absent, zero or negative (no timeout
    of the client's). A malformed value is a 400 with Kubernetes' wording."""
    raw = query.get("timeout")
    if not raw:
        return None
    try:
        seconds = parse_go_duration(raw)
    except ValueError as exc:
        raise BadRequest(f"{_INVALID_TIMEOUT} - {exc}") from None
    return seconds if seconds > 0 else None


def write_budget_seconds(query: Mapping[str, str]) -> float:
    """How long a write's registry call may take: the client's timeout, at most 34 s."""
    timeout = request_timeout(query)
    if timeout is None:
        return REQUEST_TIMEOUT_UPPER_BOUND
    return min(timeout, REQUEST_TIMEOUT_UPPER_BOUND)


@dataclass(frozen=True, slots=True)
class WriteDeadline:
    """When a write's registry call must be done (``time.monotonic()``), and whether it runs
    on a thread of its own so that the deadline can answer first (``enforced``)."""

    at: float
    enforced: bool = True


def write_deadline(query: Mapping[str, str], *, writes_may_stall: bool = True) -> WriteDeadline:
    """The deadline of a write: enforced when its storage may stall or the client asked for
    a timeout. A malformed ``?timeout=`` is a 400 either way."""
    budget = write_budget_seconds(query)
    enforced = writes_may_stall or request_timeout(query) is not None
    return WriteDeadline(time.monotonic() + budget, enforced)


def _log_late(future: Future[Any]) -> None:
    error = None if future.cancelled() else future.exception()
    _log.warning("a write finished after its deadline%s", f" with {error!r}" if error else "")


def run_before(deadline: WriteDeadline, work: Callable[[], T]) -> T:
    """``work()``'s result, or :class:`~kstore.errors.Timeout` once an enforced deadline has
    passed; ``work`` then still runs to its end (its outcome is only logged). A deadline that
    is not enforced runs ``work`` here and waits for it."""
    if not deadline.enforced:
        return work()
    # The caller's context variables (the authenticated user among them) go with the work, as
    # anyio's thread hop carries them: admission hooks must see who asks.
    future = _WRITERS.submit(contextvars.copy_context().run, work)
    try:
        return future.result(max(0.0, deadline.at - time.monotonic()))
    except FutureTimeout:
        # Not yet started (all writer threads busy): it need not run at all.
        if not future.cancel():
            future.add_done_callback(_log_late)
        raise Timeout(TIMEOUT_MESSAGE) from None
