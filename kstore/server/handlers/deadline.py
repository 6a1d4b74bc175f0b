"""The deadline of a write: ``?timeout=`` capped at 34 s, answered with 504 when it passes.

As kube-apiserver: the ``timeout`` query parameter is a Go duration (``1s``, ``500ms``,
``1m30s``); a malformed one is a 400 ("invalid timeout specified in the request URL - ...",
as ``WithRequestDeadline`` answers) on every request, reads included; zero or negative means
"no timeout of the client's". Create, update, patch, delete and deletecollection (and the
writes of the ``status`` and ``scale`` subresources) then run under a deadline of the client's
timeout capped at ``requestTimeoutUpperBound`` (34 s), on every backend. When the deadline
passes first the client gets a 504 ``Status`` (reason Timeout, "Timeout: request did not
complete within requested timeout - context deadline exceeded", the message of Kubernetes'
``FinishRequest``) while the write carries on behind it and may still be stored, as in
Kubernetes: a storage call cannot be interrupted safely half way.

:func:`run_write` carries the deadline on the one worker-thread hop every handler takes
anyway: the event loop waits for the handler's thread under the deadline and, when it passes,
abandons the thread (which runs the write to its end) and answers. A second hand-off inside
the handler would cost a thread switch per write (measured: 1,881 against 1,331 us of server
CPU per ConfigMap create on LMDB). The thread starts in a copy of the caller's context, so
context variables (the authenticated user, read by RBAC's escalation check) reach admission.

:func:`run_write_on_loop` is the same for a handler that is a coroutine (a create, update or
patch where the registry's writes run on the event loop): the write is a task of its own,
awaited under the deadline; at the deadline the task is left to end on its own, as the thread
is.

Invariant: a write's outcome is reported exactly once: to the client when it is known by the
deadline (even if the deadline fired in the same instant), else in the log ("finished after
its deadline").
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from collections.abc import Awaitable, Callable, Mapping
from typing import Final

import anyio
import anyio.to_thread

from kstore.errors import BadRequest, Timeout
from kstore.server.handlers.scope import Call, Reply, ResourceScope

__all__ = [
    "REQUEST_TIMEOUT_UPPER_BOUND",
    "TIMEOUT_MESSAGE",
    "AsyncHandler",
    "Handler",
    "parse_go_duration",
    "request_timeout",
    "run_write",
    "run_write_on_loop",
    "write_budget_seconds",
]

_log = logging.getLogger("kstore.server")

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


#: A resource handler, as the routes call it.
Handler = Callable[[ResourceScope, Call], Reply]
#: A resource handler that runs on the event loop.
AsyncHandler = Callable[[ResourceScope, Call], Awaitable[Reply]]

# Writes left to end after their deadline: the loop keeps only weak references to tasks.
_abandoned_tasks: set[asyncio.Task[Reply]] = set()


class _Attempt:
    """One write on its thread, and who reports its outcome: the route, when the write ends
    by the deadline, else the log. The lock orders the write's end against the deadline."""

    __slots__ = ("_abandoned", "_call", "_done", "_error", "_lock", "_reply")

    def __init__(self, call: Call) -> None:
        self._call = call
        self._lock = threading.Lock()
        self._done = False
        self._abandoned = False
        self._reply: Reply | None = None
        self._error: BaseException | None = None

    def run(self, handler: Handler, scope: ResourceScope, call: Call) -> Reply:
        """``handler(scope, call)`` on the worker thread, its outcome kept for :meth:`give_up`."""
        try:
            reply = handler(scope, call)
        except BaseException as exc:
            self._end(None, exc)
            raise
        self._end(reply, None)
        return reply

    async def run_async(self, handler: AsyncHandler, scope: ResourceScope, call: Call) -> Reply:
        """:meth:`run` for a handler that is a coroutine, in a task of its own."""
        try:
            reply = await handler(scope, call)
        except BaseException as exc:
            self._end(None, exc)
            raise
        self._end(reply, None)
        return reply

    def _end(self, reply: Reply | None, error: BaseException | None) -> None:
        with self._lock:
            self._done = True
            self._reply, self._error = reply, error
            late = self._abandoned
        if late:
            self.log_late()

    def abandon(self) -> bool:
        """Leave the write to end on its own (its outcome then logged); False when it has
        already ended."""
        with self._lock:
            self._abandoned = not self._done
            return self._abandoned

    def give_up(self) -> Reply:
        """At the deadline: the write's reply when it has just ended after all (its error
        raised), else Timeout, the write left to end on its own and be logged."""
        if self.abandon():
            raise Timeout(TIMEOUT_MESSAGE)
        if self._error is not None:
            raise self._error
        assert self._reply is not None  # done without an error
        return self._reply

    def log_late(self) -> None:
        """Log the write's outcome, which its client will not get."""
        info = self._call.info
        outcome = f"with {self._error!r}" if self._error is not None else "successfully"
        _log.warning(
            "%s of %s %s/%s finished %s after its deadline",
            self._call.method,
            info.resource,
            info.namespace,
            info.name,
            outcome,
        )


async def run_write(handler: Handler, scope: ResourceScope, call: Call) -> Reply:
    """``handler(scope, call)`` on a worker thread under the write deadline of ``call``'s
    query: its reply, or Timeout once the deadline has passed (the write then runs on to its
    end and its outcome is logged). A malformed ``?timeout=`` is a 400 before any work."""
    budget = write_budget_seconds(call.query)
    attempt = _Attempt(call)
    try:
        with anyio.move_on_after(budget):
            return await anyio.to_thread.run_sync(
                attempt.run, handler, scope, call, abandon_on_cancel=True
            )
    except anyio.get_cancelled_exc_class():
        # Cancelled from outside (the --request-timeout filter answers): the client gets no
        # outcome of the write, so the log does, now or when the write ends.
        if not attempt.abandon():
            attempt.log_late()
        raise
    return attempt.give_up()


async def run_write_on_loop(handler: AsyncHandler, scope: ResourceScope, call: Call) -> Reply:
    """:func:`run_write` for a coroutine handler: it runs as a task of its own on this loop,
    awaited under the deadline; past it (or when this request is cancelled from outside) the
    task runs on to its end and its outcome is logged."""
    budget = write_budget_seconds(call.query)
    attempt = _Attempt(call)
    loop = asyncio.get_running_loop()
    task = loop.create_task(attempt.run_async(handler, scope, call))
    # One waiter woken by whichever comes first, the write's end or the deadline: what
    # asyncio.wait does, without its bookkeeping (this runs once per create).
    waiter = loop.create_future()

    def wake(_: object = None) -> None:
        if not waiter.done():
            waiter.set_result(None)

    task.add_done_callback(wake)
    timer = loop.call_later(budget, wake)
    try:
        await waiter
    except BaseException:
        if not attempt.abandon():
            attempt.log_late()
        _let_run(task)
        raise
    finally:
        timer.cancel()
        task.remove_done_callback(wake)
    if task.done():
        return task.result()
    _let_run(task)
    return attempt.give_up()


def _let_run(task: asyncio.Task[Reply]) -> None:
    """Keep an abandoned write's task alive until it ends; its outcome is logged by its
    attempt, so its exception is consumed here."""
    _abandoned_tasks.add(task)

    def done(finished: asyncio.Task[Reply]) -> None:
        _abandoned_tasks.discard(finished)
        if not finished.cancelled():
            finished.exception()

    task.add_done_callback(done)
