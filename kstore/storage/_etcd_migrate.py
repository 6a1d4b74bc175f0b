"""etcd's side of a migration (see :mod:`kstore.storage.migrate`) and its maintenance.

**Changes of a source prefix**: each round lists the prefix's keys (``keys_only``, with their
mod revisions) at the current revision ``H``; a key the previous round listed and this one
does not was deleted; a key whose mod revision is past the last round's revision was written,
and its value is read at ``H`` (pages of keys, every page pinned at ``H``) with the time its
lease has left. The round's changes are the state at ``H``: a key written twice since the
last round is one put, a key created and deleted in between is nothing. The first round's
listing is the copy's (at the snapshot's revision).

**Changes into a target prefix**: the last change of each key in a batch is written, in
transactions of up to 128 operations and 1 MiB, several in flight at once (each key appears
in one transaction only, so their order does not matter); keys with a TTL share a lease per
whole number of seconds, as a restore does.

**Defragmentation**: ``Defragment`` on every member in turn (a member blocks its reads and
writes while it defragments, so one at a time keeps a quorum serving), with each member's
database size before and after from ``Status``.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from etcd3 import etcdrpc

from kstore.errors import Expired, InternalError
from kstore.storage._etcd_client import CompactedError, EtcdClient, prefix_range_end
from kstore.storage._etcd_config import EtcdConfig
from kstore.storage._etcd_snapshot import _key_prefix, _Leases
from kstore.storage.migrate import Change

__all__ = ["EtcdChangeFeed", "EtcdChangeTarget", "defragment_etcd"]

_PAGE = 1000
_TXN_OPS = 128
_TXN_BYTES = 1 << 20
_IN_FLIGHT = 8


class _Prefixed:
    def __init__(self, config: EtcdConfig) -> None:
        self._client = EtcdClient(config)
        self.key_prefix = _key_prefix(config.prefix)
        self._raw_prefix = (self.key_prefix + "/").encode()
        self._end = prefix_range_end(self._raw_prefix)

    def close(self) -> None:
        self._client.close()


class EtcdChangeFeed(_Prefixed):
    """The changes of a prefix, a round at a time (see the module docstring)."""

    def __init__(self, config: EtcdConfig) -> None:
        super().__init__(config)
        self._known: dict[bytes, int] | None = None
        self._known_at = 0

    def begin(self, revision: int) -> None:
        self._known, _ = self._list(revision)
        self._known_at = revision

    def held(self) -> bool:
        # Whether servers still write an etcd prefix cannot be known: follow until stopped.
        return True

    def hold(self) -> None:
        return None

    def _list(self, revision: int) -> tuple[dict[bytes, int], int]:
        try:
            response = self._client.range(
                etcdrpc.RangeRequest(
                    key=self._raw_prefix, range_end=self._end, revision=revision, keys_only=True
                )
            )
        except CompactedError:
            raise Expired(
                f"etcd compacted revision {revision} while the migration read it; migrate again"
            ) from None
        strip = len(self.key_prefix)
        keys = {bytes(kv.key[strip:]): int(kv.mod_revision) for kv in response.kvs}
        return keys, int(response.header.revision)

    def changes(self, after: int, limit: int) -> tuple[list[Change], int, int]:
        if self._known is None or self._known_at != after:
            self._known, _ = self._list(after)
            self._known_at = after
        current, head = self._list(0)
        if head <= after:
            return [], after, after
        out = [Change(key, head, None) for key in sorted(self._known.keys() - current.keys())]
        written = sorted(key for key, rev in current.items() if rev > after)
        prefix = self.key_prefix.encode()
        ttls: dict[int, int] = {}
        for first in range(0, len(written), _PAGE):
            page = written[first : first + _PAGE]
            response = self._client.range(
                etcdrpc.RangeRequest(
                    key=prefix + page[0],
                    range_end=prefix + page[-1] + b"\x00",
                    revision=head,
                    min_mod_revision=after + 1,
                )
            )
            for kv in response.kvs:
                ttl_ms = 0
                if kv.lease:
                    if kv.lease not in ttls:
                        seconds = self._client.lease_time_to_live(int(kv.lease))
                        ttls[kv.lease] = seconds * 1000 if seconds > 0 else 1
                    ttl_ms = ttls[kv.lease]
                out.append(
                    Change(
                        bytes(kv.key[len(prefix) :]), int(kv.mod_revision), bytes(kv.value), ttl_ms
                    )
                )
        self._known, self._known_at = current, head
        return out, head, head


class EtcdChangeTarget(_Prefixed):
    """Writes changes under a prefix (see the module docstring)."""

    def __init__(self, config: EtcdConfig) -> None:
        super().__init__(config)
        self._leases = _Leases(self._client)

    def apply(self, changes: list[Change]) -> None:
        last: dict[bytes, Change] = {}
        for change in changes:
            last[change.key] = change
        prefix = self.key_prefix.encode()
        batches: list[list[Any]] = []
        batch: list[Any] = []
        size = 0
        for change in last.values():
            key = prefix + change.key
            if change.value is None:
                op = etcdrpc.RequestOp(request_delete_range=etcdrpc.DeleteRangeRequest(key=key))
                item = len(key) + 16
            else:
                lease = self._leases.for_ttl(change.ttl_ms) if change.ttl_ms > 0 else 0
                op = etcdrpc.RequestOp(
                    request_put=etcdrpc.PutRequest(key=key, value=change.value, lease=lease)
                )
                item = len(key) + len(change.value) + 32
            if batch and (len(batch) >= _TXN_OPS or size + item > _TXN_BYTES):
                batches.append(batch)
                batch, size = [], 0
            batch.append(op)
            size += item
        if batch:
            batches.append(batch)
        if len(batches) == 1:
            self._client.txn(etcdrpc.TxnRequest(success=batches[0]))
            return
        with ThreadPoolExecutor(_IN_FLIGHT, thread_name_prefix="kstore-migrate") as pool:
            for _response in pool.map(
                lambda ops: self._client.txn(etcdrpc.TxnRequest(success=ops)), batches
            ):
                pass


def defragment_etcd(config: EtcdConfig) -> list[tuple[str, int, int]]:
    """Defragment every member in turn; ``(member, db size before, after)`` each."""
    client = EtcdClient(config)
    out: list[tuple[str, int, int]] = []
    try:
        timeout = max(config.request_timeout, 60.0)
        for endpoint in client.endpoints:
            try:
                before = int(
                    endpoint.maintenance.Status(etcdrpc.StatusRequest(), timeout=10).dbSize
                )
                endpoint.maintenance.Defragment(etcdrpc.DefragmentRequest(), timeout=timeout)
                after = int(endpoint.maintenance.Status(etcdrpc.StatusRequest(), timeout=10).dbSize)
            except Exception as exc:
                raise InternalError(f"defragmenting etcd member {endpoint.target}: {exc}") from None
            out.append((endpoint.target, before, after))
    finally:
        client.close()
    return out
