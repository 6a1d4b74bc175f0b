"""The raw etcd client doing the same transactions as the backend: what benchmarks compare
against.

No codec, transformer, revisions bookkeeping or retries: the generated stubs on a channel
configured as the backend's (:class:`~kstore.storage._etcd_client.EtcdClient`, same options,
same TLS, same ``hasleader`` metadata), bytes in, bytes out. Concurrency comes in the forms
the dev box was measured with (perf-limits 1.2): blocking calls from threads, gRPC futures
with a window of requests in flight from one thread, and ``grpc.aio`` calls in flight from
one event loop.
"""

from __future__ import annotations

import asyncio
import collections
import threading
import weakref
from collections.abc import Sequence
from typing import Any

from etcd3 import etcdrpc

from kstore.storage._etcd_aio import Member
from kstore.storage._etcd_client import REQUIRE_LEADER, EtcdClient, prefix_range_end
from kstore.storage._etcd_config import EtcdConfig

__all__ = ["RawEtcdBaseline"]

_TIMEOUT = 30.0


def _create_request(key: bytes, value: bytes) -> Any:
    return etcdrpc.TxnRequest(
        compare=[
            etcdrpc.Compare(
                result=etcdrpc.Compare.EQUAL, target=etcdrpc.Compare.MOD, key=key, mod_revision=0
            )
        ],
        success=[etcdrpc.RequestOp(request_put=etcdrpc.PutRequest(key=key, value=value))],
    )


class RawEtcdBaseline:
    """Plain etcd requests on the first configured member."""

    def __init__(self, config: EtcdConfig) -> None:
        self._client = EtcdClient(config)
        self._kv = self._client.current_endpoint().kv
        self._aio_members: weakref.WeakKeyDictionary[Any, Member] = weakref.WeakKeyDictionary()

    def close(self) -> None:
        self._client.close()
        # Channels of event loops still open close when collected (gRPC does it then).
        self._aio_members.clear()

    def put_each(self, keys: Sequence[bytes], value: bytes) -> None:
        """One plain Put per key, sequentially."""
        for key in keys:
            self._kv.Put(
                etcdrpc.PutRequest(key=key, value=value), timeout=_TIMEOUT, metadata=REQUIRE_LEADER
            )

    def create_each(self, keys: Sequence[bytes], value: bytes) -> None:
        """Kubernetes' create transaction (``If(mod_revision == 0) Then(Put)``) per key."""
        for key in keys:
            self._kv.Txn(_create_request(key, value), timeout=_TIMEOUT, metadata=REQUIRE_LEADER)

    def create_in_flight(self, keys: Sequence[bytes], value: bytes, in_flight: int) -> None:
        """The same transactions from one thread with ``in_flight`` gRPC futures outstanding."""
        window: collections.deque[Any] = collections.deque()
        for key in keys:
            window.append(
                self._kv.Txn.future(
                    _create_request(key, value), timeout=_TIMEOUT, metadata=REQUIRE_LEADER
                )
            )
            if len(window) >= in_flight:
                window.popleft().result()
        while window:
            window.popleft().result()

    async def create_in_flight_async(
        self, keys: Sequence[bytes], value: bytes, in_flight: int
    ) -> None:
        """The same transactions from the running event loop, ``in_flight`` at a time on a
        ``grpc.aio`` channel (one per loop, made on first use)."""
        txn = self._aio_txn()
        pending = iter(keys)

        async def send() -> None:
            for key in pending:
                await txn(_create_request(key, value), timeout=_TIMEOUT, metadata=REQUIRE_LEADER)

        await asyncio.gather(*(send() for _ in range(in_flight)))

    def _aio_txn(self) -> Any:
        loop = asyncio.get_running_loop()
        member = self._aio_members.get(loop)
        if member is None:
            endpoint = self._client.current_endpoint()
            member = self._aio_members[loop] = Member(endpoint.target, self._client.credentials)
        return etcdrpc.KVStub(member.channel).Txn

    def create_threads(self, keys: Sequence[bytes], value: bytes, threads: int) -> None:
        """The same transactions as blocking calls from ``threads`` threads."""

        def share(k: int) -> None:
            for i in range(k, len(keys), threads):
                self._kv.Txn(
                    _create_request(keys[i], value), timeout=_TIMEOUT, metadata=REQUIRE_LEADER
                )

        workers = [threading.Thread(target=share, args=(k,)) for k in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()

    def put(self, key: bytes, value: bytes) -> int:
        """One plain Put; its revision."""
        response = self._kv.Put(
            etcdrpc.PutRequest(key=key, value=value), timeout=_TIMEOUT, metadata=REQUIRE_LEADER
        )
        return int(response.header.revision)

    def compare_and_swap(self, key: bytes, values: Sequence[bytes], revision: int) -> int:
        """Update ``key`` (last written at ``revision``) once per value with
        ``If(mod_revision == last) Then(Put) Else(Get)``, the revision taken from the previous
        answer (as a cache would); returns the last revision."""
        for value in values:
            request = etcdrpc.TxnRequest(
                compare=[
                    etcdrpc.Compare(
                        result=etcdrpc.Compare.EQUAL,
                        target=etcdrpc.Compare.MOD,
                        key=key,
                        mod_revision=revision,
                    )
                ],
                success=[etcdrpc.RequestOp(request_put=etcdrpc.PutRequest(key=key, value=value))],
                failure=[etcdrpc.RequestOp(request_range=etcdrpc.RangeRequest(key=key))],
            )
            response = self._kv.Txn(request, timeout=_TIMEOUT, metadata=REQUIRE_LEADER)
            if not response.succeeded:
                raise RuntimeError("raw compare-and-swap conflicted: the key is not ours")
            revision = int(response.header.revision)
        return revision

    def read_then_swap(self, key: bytes, values: Sequence[bytes]) -> None:
        """Update ``key`` once per value with a linearizable read, then the compare-and-swap
        transaction (two round trips, what an update without a cached object costs)."""
        for value in values:
            current = self._kv.Range(
                etcdrpc.RangeRequest(key=key), timeout=_TIMEOUT, metadata=REQUIRE_LEADER
            )
            revision = int(current.kvs[0].mod_revision) if current.kvs else 0
            request = etcdrpc.TxnRequest(
                compare=[
                    etcdrpc.Compare(
                        result=etcdrpc.Compare.EQUAL,
                        target=etcdrpc.Compare.MOD,
                        key=key,
                        mod_revision=revision,
                    )
                ],
                success=[etcdrpc.RequestOp(request_put=etcdrpc.PutRequest(key=key, value=value))],
                failure=[etcdrpc.RequestOp(request_range=etcdrpc.RangeRequest(key=key))],
            )
            self._kv.Txn(request, timeout=_TIMEOUT, metadata=REQUIRE_LEADER)

    def get_each(self, keys: Sequence[bytes]) -> int:
        """A linearizable Range of each key; the bytes read."""
        total = 0
        for key in keys:
            response = self._kv.Range(
                etcdrpc.RangeRequest(key=key), timeout=_TIMEOUT, metadata=REQUIRE_LEADER
            )
            total += sum(len(kv.value) for kv in response.kvs)
        return total

    def range_prefix(self, prefix: bytes, page: int = 0) -> int:
        """Every key under ``prefix`` (in pages of ``page`` at one pinned revision, 0: one
        response); how many."""
        end = prefix_range_end(prefix)
        start, revision, count = prefix, 0, 0
        while True:
            response = self._kv.Range(
                etcdrpc.RangeRequest(key=start, range_end=end, limit=page, revision=revision),
                timeout=_TIMEOUT,
                metadata=REQUIRE_LEADER,
            )
            count += len(response.kvs)
            revision = revision or int(response.header.revision)
            if not response.more or not response.kvs:
                return count
            start = bytes(response.kvs[-1].key) + b"\x00"
