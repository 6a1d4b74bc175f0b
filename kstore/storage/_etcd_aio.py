"""The etcd client's calls for asyncio: the same members, policy and errors, on ``grpc.aio``.

Why a second client: a caller keeping many requests in flight from one event loop is
etcd's fastest client form (perf-limits 1.2: ~5x a sequential put at 32 in flight, where 32
blocking threads reach ~3x), and with ``grpc.aio`` every completion resolves on the loop's
own thread, so no second Python thread competes for the interpreter lock per request.
Measured on the dev VM (32 creates of a 5 KiB Pod in flight, encode and decode included,
against the raw client's 32 futures in the same run): 0.89x through ``grpc.aio`` from one
loop, 0.66x with gRPC futures resolved onto the loop, 0.56x from 32 threads.

A ``grpc.aio`` channel belongs to the event loop it was made in, so there is one
:class:`AsyncEtcdClient` per loop (:func:`async_client`), made on first use and dropped once
its loop is closed and another loop asks (gRPC closes a dropped channel when collected). The
member in use, the fail-over and the retry budget are the blocking client's
(:class:`~kstore.storage._etcd_client.EtcdClient`): a member that fails for one form of call
is left for both. Closing the blocking client closes these too (in their loop, without
waiting).
"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc  # type: ignore[import-untyped, unused-ignore]
from etcd3 import etcdrpc

from kstore.storage._etcd_client import CHANNEL_OPTIONS, REQUIRE_LEADER, EtcdClient

__all__ = ["AsyncEtcdClient", "Member", "async_client"]


def async_client(client: EtcdClient) -> AsyncEtcdClient:
    """The asyncio client of ``client`` for the running event loop (made on first use)."""
    loop = asyncio.get_running_loop()
    loop_clients = client.loop_clients
    found: AsyncEtcdClient | None = loop_clients.get(loop)
    if found is None:
        with client.loop_clients_lock:
            # A loop that ended leaves its client behind (asyncio has no close hook): drop
            # those now, so a program making a loop per call keeps one client, not one each.
            for ended in [other for other in loop_clients if other.is_closed()]:
                del loop_clients[ended]
            found = loop_clients.setdefault(loop, AsyncEtcdClient(client, loop))
    return found


class Member:
    """One member's ``grpc.aio`` channel and the calls kstore makes on it."""

    __slots__ = ("channel", "range", "txn_bytes")

    def __init__(self, target: str, credentials: Any) -> None:
        if credentials is None:
            self.channel = grpc.aio.insecure_channel(target, options=CHANNEL_OPTIONS)
        else:
            self.channel = grpc.aio.secure_channel(target, credentials, options=CHANNEL_OPTIONS)
        self.range = etcdrpc.KVStub(self.channel).Range
        # KV.Txn taking a request already encoded (:mod:`._etcd_wire`): no serializer.
        self.txn_bytes = self.channel.unary_unary(
            "/etcdserverpb.KV/Txn",
            request_serializer=None,
            response_deserializer=etcdrpc.TxnResponse.FromString,
        )


class AsyncEtcdClient:
    """:class:`EtcdClient`'s KV calls as coroutines, for one event loop."""

    def __init__(self, client: EtcdClient, loop: asyncio.AbstractEventLoop) -> None:
        self._client = client
        self._loop = loop
        self._members = [Member(ep.target, client.credentials) for ep in client.endpoints]
        self._closing: set[asyncio.Task[None]] = set()

    async def call(
        self,
        method: str,
        request: Any,
        *,
        mutating: bool,
        deadline: float | None = None,
        after_failure: bool = False,
    ) -> Any:
        """Call ``method`` (a :class:`Member` attribute: a single-key call, each attempt
        bounded by ``key_attempt_timeout``) with the blocking client's policy; ``mutating``:
        a write, never retried after an ambiguous failure; ``deadline``: a
        ``time.monotonic()`` instant the call must not outlast; ``after_failure``: short
        attempts from the first (see :class:`~._etcd_client.Attempts`)."""
        client = self._client
        attempts = client.attempts(
            mutating=mutating,
            attempt_timeout=client.config.key_attempt_timeout,
            deadline=deadline,
            after_failure=after_failure,
        )
        while True:
            timeout = attempts.next_timeout()
            endpoint = client.current_endpoint()
            member = self._members[endpoint.index]
            try:
                return await getattr(member, method)(
                    request, timeout=timeout, metadata=REQUIRE_LEADER
                )
            except grpc.RpcError as exc:
                failure: BaseException = exc
            await asyncio.sleep(attempts.pause_after(endpoint, failure))

    def close_soon(self) -> None:
        """Close the channels in their loop, from any thread, without waiting for it."""
        loop = self._loop
        if loop.is_closed():
            return  # the channels went with the loop; gRPC closes them when collected
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            task = loop.create_task(self._close())
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)
        elif loop.is_running():
            asyncio.run_coroutine_threadsafe(self._close(), loop)

    async def _close(self) -> None:
        for member in self._members:
            await member.channel.close()
