"""Backend operations written once, run blocking or on asyncio.

Each operation of :class:`~kstore.storage.etcd.EtcdStorage` (create, get, guaranteed_update,
delete) is a generator of **steps**: it yields the etcd request it needs next and is sent its
answer, or has the call's error thrown in at that point; all decisions (preconditions, retry
on conflict, no-op detection, results) stay in the generator. :func:`run_blocking` performs
the steps with the blocking client, :func:`run_async` with the event loop's ``grpc.aio``
client, so both forms of every verb behave alike by construction.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Generator
from typing import Any

from etcd3 import etcdrpc

from kstore.api.gvk import Object
from kstore.storage._etcd_aio import async_client
from kstore.storage._etcd_client import EtcdClient
from kstore.storage._etcd_leases import LeaseManager

__all__ = ["Lease", "Range", "Steps", "Txn", "run_async", "run_blocking"]


class Range:
    """Read one key (linearizable), by ``deadline`` (a ``time.monotonic()`` instant) if
    given; ``after_failure``: it settles a write whose attempt failed, so its attempts are
    short from the first."""

    __slots__ = ("after_failure", "deadline", "key")

    def __init__(
        self, key: bytes, deadline: float | None = None, *, after_failure: bool = False
    ) -> None:
        self.key = key
        self.deadline = deadline
        self.after_failure = after_failure


class Txn:
    """A single-key transaction already encoded (:mod:`._etcd_wire`). ``meanwhile``: work
    the caller needs anyway, run while the request is in flight where the client can (it
    must not raise, and may not run at all); ``deadline`` and ``after_failure`` as for
    :class:`Range`."""

    __slots__ = ("after_failure", "deadline", "meanwhile", "request")

    def __init__(
        self,
        request: bytes,
        meanwhile: Callable[[], None] | None = None,
        deadline: float | None = None,
        *,
        after_failure: bool = False,
    ) -> None:
        self.request = request
        self.meanwhile = meanwhile
        self.deadline = deadline
        self.after_failure = after_failure


class Lease:
    """A lease id for an object that lives ``ttl`` seconds (shared, see :mod:`._etcd_leases`)."""

    __slots__ = ("ttl",)

    def __init__(self, ttl: int) -> None:
        self.ttl = ttl


Step = Range | Txn | Lease
#: An operation: yields steps, is sent each step's answer, returns the operation's result.
Steps = Generator[Step, Any, Object]


def run_blocking(steps: Steps, client: EtcdClient, leases: LeaseManager) -> Object:
    """Perform ``steps`` in this thread."""
    answer: Any = None
    failed = False
    while True:
        try:
            step = steps.throw(answer) if failed else steps.send(answer)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        try:
            if isinstance(step, Txn):
                answer = client.txn_encoded(
                    step.request,
                    step.meanwhile,
                    deadline=step.deadline,
                    after_failure=step.after_failure,
                )
            elif isinstance(step, Range):
                answer = client.range(
                    etcdrpc.RangeRequest(key=step.key),
                    single_key=True,
                    deadline=step.deadline,
                    after_failure=step.after_failure,
                )
            else:
                answer = leases.get_lease(step.ttl)
            failed = False
        except Exception as exc:
            answer, failed = exc, True


async def run_async(steps: Steps, client: EtcdClient, leases: LeaseManager) -> Object:
    """Perform ``steps`` on the running event loop: etcd calls through its ``grpc.aio``
    client, a lease grant (rare: leases are shared) in a worker thread."""
    calls = async_client(client)
    answer: Any = None
    failed = False
    while True:
        try:
            step = steps.throw(answer) if failed else steps.send(answer)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        try:
            if isinstance(step, Txn):
                answer = await calls.call(
                    "txn_bytes",
                    step.request,
                    mutating=True,
                    deadline=step.deadline,
                    after_failure=step.after_failure,
                )
            elif isinstance(step, Range):
                answer = await calls.call(
                    "range",
                    etcdrpc.RangeRequest(key=step.key),
                    mutating=False,
                    deadline=step.deadline,
                    after_failure=step.after_failure,
                )
            else:
                answer = await asyncio.to_thread(leases.get_lease, step.ttl)
            failed = False
        except Exception as exc:
            answer, failed = exc, True
