"""The write side of the LMDB backend: requests, and how one write transaction applies them.

The writer thread drains queued requests into one transaction (group commit) and applies them
here, in order. Invariants:

- each applied change takes the next revision (``revision + 1``), so a group of N changes
  takes N consecutive revisions, and ``meta.revision`` is written in the same transaction;
- every request is checked (existence, compare-and-swap) before it writes anything, so a
  request that fails leaves the transaction as it found it and its batch-mates proceed;
- an expired value met by a write is first removed as its own change (a DELETED event with its
  own revision), then the write proceeds as if the key were absent;
- every change becomes one :class:`RawEvent`, published after the commit.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from kstore.errors import KStoreError
from kstore.storage._lmdb_records import (
    HIST_HEADER,
    KEYREV_VALUE,
    KIND_DELETE,
    KIND_EXPIRE,
    KIND_PUT,
    KV_RECORD,
    META_COMPACTED,
    META_PURGED,
    META_REVISION,
    Tables,
    hist_key,
    keyrev_key,
    meta_int,
    ttl_key,
)
from kstore.storage._watch_hub import RawEvent

__all__ = [
    "Batch",
    "CompactRequest",
    "DeleteRequest",
    "ExpireRequest",
    "Outcome",
    "PutRequest",
    "Request",
    "apply_batch",
    "purge_history",
]

_HDR = HIST_HEADER.size


@dataclass(slots=True)
class Outcome:
    """What one request got: its revision, or a conflict with the current value, or an error.

    ``current`` is the live ``(mod_revision, stored bytes)`` when a compare-and-swap failed
    (None when the key is absent); ``prev_value`` is the value a delete removed."""

    revision: int = 0
    conflict: bool = False
    current: tuple[int, bytes] | None = None
    prev_value: bytes | None = None
    error: BaseException | None = None
    count: int = 0
    more: bool = False


class Request:
    """A unit of work for the writer, with a one-shot hand-back of its :class:`Outcome`.

    The waiter blocks on a lock the writer releases (cheaper than an Event per request)."""

    __slots__ = ("_done", "outcome")

    def __init__(self) -> None:
        self._done = threading.Lock()
        self._done.acquire()
        self.outcome: Outcome | None = None

    def resolve(self, outcome: Outcome) -> None:
        self.outcome = outcome
        self._done.release()

    def wait(self) -> Outcome:
        self._done.acquire()
        outcome = self.outcome
        assert outcome is not None
        return outcome


class PutRequest(Request):
    """Store ``value`` at ``key`` if its live mod revision is ``expected`` (0: absent).

    ``create`` turns a failed check into AlreadyExists (raised by the caller) rather than a
    conflict to retry."""

    __slots__ = ("create", "expected", "expiry_ms", "key", "value")

    def __init__(
        self, key: bytes, value: bytes, *, expected: int, expiry_ms: int = 0, create: bool = False
    ) -> None:
        super().__init__()
        self.key = key
        self.value = value
        self.expected = expected
        self.expiry_ms = expiry_ms
        self.create = create


class DeleteRequest(Request):
    """Delete ``key`` if its live mod revision is ``expected``."""

    __slots__ = ("expected", "key")

    def __init__(self, key: bytes, *, expected: int) -> None:
        super().__init__()
        self.key = key
        self.expected = expected


class ExpireRequest(Request):
    """Remove up to ``limit`` values whose expiry has passed (the reaper's work)."""

    __slots__ = ("limit",)

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit


class CompactRequest(Request):
    """Move the compacted revision to ``revision`` (never backwards)."""

    __slots__ = ("revision",)

    def __init__(self, revision: int) -> None:
        super().__init__()
        self.revision = revision


@dataclass(slots=True)
class Batch:
    """The result of applying a batch: the new revision and the changes, to publish after
    commit, plus one outcome per request."""

    revision: int
    events: list[RawEvent]
    outcomes: list[Outcome]
    ttl_written: int = 0
    purge_pending: bool = False


class _Txn:
    """The state of one write transaction while requests are applied."""

    def __init__(self, txn: Any, tables: Tables, revision: int, now_ms: int) -> None:
        self.txn = txn
        self.t = tables
        self.revision = revision
        self.now_ms = now_ms
        self.events: list[RawEvent] = []
        self.min_expiry = 0

    def live(self, key: bytes) -> tuple[int, int, int] | None:
        """``(mod_revision, create_revision, expiry_ms)`` of the live value at ``key``; an
        expired value is removed first (its own revision)."""
        raw = self.txn.get(key, db=self.t.kv)
        if raw is None:
            return None
        mod_rev, create_rev, expiry, _size = KV_RECORD.unpack(raw)
        if expiry and expiry <= self.now_ms:
            self.remove(key, mod_rev, create_rev, expiry, KIND_EXPIRE)
            return None
        return mod_rev, create_rev, expiry

    def value_at(self, revision: int) -> bytes:
        record = self.txn.get(hist_key(revision), db=self.t.hist)
        key_len = HIST_HEADER.unpack_from(record)[4]
        return bytes(record[_HDR + key_len :])

    def put(
        self, key: bytes, value: bytes, expiry_ms: int, old: tuple[int, int, int] | None
    ) -> int:
        rev = self.revision + 1
        txn, t = self.txn, self.t
        prev_rev, create_rev, old_expiry = (old[0], old[1], old[2]) if old else (0, rev, 0)
        header = HIST_HEADER.pack(KIND_PUT, create_rev, prev_rev, expiry_ms, len(key))
        txn.put(hist_key(rev), header + key + value, db=t.hist, append=True)
        txn.put(keyrev_key(key, rev), KEYREV_VALUE.pack(KIND_PUT, expiry_ms), db=t.keyrev)
        txn.put(key, KV_RECORD.pack(rev, create_rev, expiry_ms, len(value)), db=t.kv)
        if old_expiry:
            txn.delete(ttl_key(old_expiry, key), db=t.ttl)
        if expiry_ms:
            txn.put(ttl_key(expiry_ms, key), b"", db=t.ttl)
            if not self.min_expiry or expiry_ms < self.min_expiry:
                self.min_expiry = expiry_ms
        prev_value = self.value_at(prev_rev) if prev_rev else None
        self.events.append(RawEvent(key.decode(), rev, value, prev_value))
        self.revision = rev
        return rev

    def remove(
        self, key: bytes, mod_rev: int, create_rev: int, expiry_ms: int, kind: int
    ) -> tuple[int, bytes]:
        rev = self.revision + 1
        txn, t = self.txn, self.t
        header = HIST_HEADER.pack(kind, create_rev, mod_rev, expiry_ms, len(key))
        txn.put(hist_key(rev), header + key, db=t.hist, append=True)
        txn.put(keyrev_key(key, rev), KEYREV_VALUE.pack(kind, 0), db=t.keyrev)
        txn.delete(key, db=t.kv)
        if expiry_ms:
            txn.delete(ttl_key(expiry_ms, key), db=t.ttl)
        prev_value = self.value_at(mod_rev)
        self.events.append(RawEvent(key.decode(), rev, None, prev_value))
        self.revision = rev
        return rev, prev_value


def _apply_put(w: _Txn, req: PutRequest) -> Outcome:
    old = w.live(req.key)
    current_rev = old[0] if old else 0
    if current_rev != req.expected:
        current = (current_rev, w.value_at(current_rev)) if old else None
        return Outcome(conflict=True, current=current)
    return Outcome(revision=w.put(req.key, req.value, req.expiry_ms, old))


def _apply_delete(w: _Txn, req: DeleteRequest) -> Outcome:
    old = w.live(req.key)
    if old is None or old[0] != req.expected:
        current = (old[0], w.value_at(old[0])) if old else None
        return Outcome(conflict=True, current=current)
    rev, prev_value = w.remove(req.key, old[0], old[1], old[2], KIND_DELETE)
    return Outcome(revision=rev, prev_value=prev_value)


def _apply_expire(w: _Txn, req: ExpireRequest) -> Outcome:
    cursor = w.txn.cursor(db=w.t.ttl)
    due: list[tuple[int, bytes]] = []
    more = False
    if cursor.first():
        for raw, _ in cursor.iternext():
            expiry = int.from_bytes(raw[:8], "big")
            if expiry > w.now_ms:
                break
            if len(due) == req.limit:
                more = True
                break
            due.append((expiry, raw[8:]))
    for expiry, key in due:
        raw_kv = w.txn.get(key, db=w.t.kv)
        if raw_kv is None:
            w.txn.delete(ttl_key(expiry, key), db=w.t.ttl)
            continue
        mod_rev, create_rev, kv_expiry, _size = KV_RECORD.unpack(raw_kv)
        if kv_expiry != expiry:
            # A stale index entry (the value was rewritten with another expiry).
            w.txn.delete(ttl_key(expiry, key), db=w.t.ttl)
            continue
        w.remove(key, mod_rev, create_rev, expiry, KIND_EXPIRE)
    return Outcome(count=len(due), more=more)


def _apply_compact(w: _Txn, req: CompactRequest) -> Outcome:
    compacted = meta_int(w.txn, w.t, META_COMPACTED)
    target = min(req.revision, w.revision)
    if target > compacted:
        w.txn.put(META_COMPACTED, target.to_bytes(8, "big"), db=w.t.meta)
        compacted = target
    return Outcome(revision=compacted)


def apply_batch(
    txn: Any, tables: Tables, requests: list[Request], revision: int, now_ms: int
) -> Batch:
    """Apply ``requests`` in order inside ``txn`` (store at ``revision``); the caller commits.

    Request-level failures (a KStoreError raised while applying one) become that request's
    outcome; anything else propagates and aborts the whole transaction."""
    w = _Txn(txn, tables, revision, now_ms)
    outcomes: list[Outcome] = []
    purge = False
    for req in requests:
        if isinstance(req, PutRequest):
            outcome = _apply_put(w, req)
        elif isinstance(req, DeleteRequest):
            outcome = _apply_delete(w, req)
        elif isinstance(req, ExpireRequest):
            outcome = _apply_expire(w, req)
        elif isinstance(req, CompactRequest):
            outcome = _apply_compact(w, req)
            purge = True
        else:
            outcome = Outcome(error=KStoreError(f"unknown write request {type(req).__name__}"))
        outcomes.append(outcome)
    if w.revision != revision:
        txn.put(META_REVISION, w.revision.to_bytes(8, "big"), db=tables.meta)
    return Batch(w.revision, w.events, outcomes, ttl_written=w.min_expiry, purge_pending=purge)


def purge_history(txn: Any, tables: Tables, limit: int) -> bool:
    """Drop up to ``limit`` revisions of history made unreachable by compaction; True when
    more remain.

    For each history entry at or below the compacted revision, the version it superseded is
    dropped, and a delete is dropped together with itself: what remains at or below ``C`` is
    exactly the version of each key that was current at ``C``."""
    compacted = meta_int(txn, tables, META_COMPACTED)
    purged = meta_int(txn, tables, META_PURGED)
    if purged >= compacted:
        return False
    # Read the chunk first, then delete: no cursor is moved by deletions under it.
    entries: list[tuple[int, int, int, bytes]] = []
    more = False
    cursor = txn.cursor(db=tables.hist)
    if cursor.set_range(hist_key(purged + 1)):
        for raw_rev, record in cursor.iternext():
            rev = int.from_bytes(raw_rev, "big")
            if rev > compacted:
                break
            if len(entries) == limit:
                more = True
                break
            kind, _create, prev_rev, _expiry, key_len = HIST_HEADER.unpack_from(record)
            entries.append((rev, kind, prev_rev, bytes(record[_HDR : _HDR + key_len])))
    for rev, kind, prev_rev, key in entries:
        if prev_rev:
            txn.delete(hist_key(prev_rev), db=tables.hist)
            txn.delete(keyrev_key(key, prev_rev), db=tables.keyrev)
        if kind != KIND_PUT:
            txn.delete(hist_key(rev), db=tables.hist)
            txn.delete(keyrev_key(key, rev), db=tables.keyrev)
    position = entries[-1][0] if entries else purged
    if not more:
        position = compacted
    txn.put(META_PURGED, position.to_bytes(8, "big"), db=tables.meta)
    return more
