"""The on-disk layout of the LMDB backend, and the reads over it (one read transaction each).

Five named databases in one environment:

- ``meta``: ``revision`` (the global revision, written in the same transaction as the changes
  it counts), ``compacted`` (reads below it are Expired), ``purged`` (history is physically
  dropped up to here; below ``compacted`` while a purge is in progress), ``format``;
- ``kv``: key -> ``(mod_revision, create_revision, expiry_ms, value_len)`` for live keys;
- ``hist``: 8-byte big-endian revision -> ``(kind, create_revision, prev_revision, expiry_ms,
  key)`` + stored bytes. Every revision has exactly one entry until compaction purges it; a
  value is stored once, here, and ``kv`` points to it by revision;
- ``keyrev``: ``key + NUL + revision`` -> ``(kind, expiry_ms)``: the versions of each key in key
  order, for reads at an exact revision;
- ``ttl``: ``expiry_ms + key`` -> empty: the expiry index the reaper walks.

Keys never contain NUL, so ``key + NUL`` sorts each key's versions just before any longer key
with the same prefix, and key order in ``keyrev`` equals key order in ``kv``.

Compaction at ``C`` keeps, for every key, the version that was current at ``C`` (and all later
ones): reads at any revision ``>= C`` and replays of changes after ``C`` stay exact.

An object whose expiry has passed is never returned by any read, whether or not the reaper has
removed it yet.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from kstore.storage._watch_hub import RawEvent

__all__ = [
    "HIST_HEADER",
    "KEYREV_VALUE",
    "KIND_DELETE",
    "KIND_EXPIRE",
    "KIND_PUT",
    "KV_RECORD",
    "META_COMPACTED",
    "META_FORMAT",
    "META_PURGED",
    "META_REVISION",
    "Tables",
    "count_at",
    "count_current",
    "get_at",
    "get_current",
    "hist_key",
    "keyrev_key",
    "keyrev_start",
    "meta_int",
    "prefix_end",
    "read_events",
    "scan_at",
    "scan_current",
    "ttl_key",
]

META_REVISION = b"revision"
META_COMPACTED = b"compacted"
META_PURGED = b"purged"
META_FORMAT = b"format"

KIND_PUT = 1
KIND_DELETE = 2
KIND_EXPIRE = 3

KV_RECORD = struct.Struct(">QQqI")
HIST_HEADER = struct.Struct(">BQQqH")
KEYREV_VALUE = struct.Struct(">Bq")

_HDR = HIST_HEADER.size


@dataclass(frozen=True, slots=True)
class Tables:
    """Handles of the named databases (py-lmdb ``_Database`` objects)."""

    meta: Any
    kv: Any
    hist: Any
    keyrev: Any
    ttl: Any


def hist_key(revision: int) -> bytes:
    return revision.to_bytes(8, "big")


def keyrev_key(key: bytes, revision: int) -> bytes:
    return key + b"\x00" + revision.to_bytes(8, "big")


def ttl_key(expiry_ms: int, key: bytes) -> bytes:
    return expiry_ms.to_bytes(8, "big") + key


def keyrev_start(start: bytes) -> bytes:
    """The ``keyrev`` position of a ``kv`` range start: "strictly after K" (``K + NUL``)
    becomes ``K + 0x01``, past every version of K."""
    return start[:-1] + b"\x01" if start.endswith(b"\x00") else start


def prefix_end(prefix: bytes) -> bytes | None:
    """The smallest key greater than every key starting with ``prefix`` (None: no bound)."""
    stripped = prefix.rstrip(b"\xff")
    if not stripped:
        return None
    return stripped[:-1] + bytes([stripped[-1] + 1])


def meta_int(txn: Any, tables: Tables, name: bytes) -> int:
    raw = txn.get(name, db=tables.meta)
    return int.from_bytes(raw, "big") if raw else 0


def _hist_value(txn: Any, tables: Tables, revision: int) -> bytes:
    record = txn.get(hist_key(revision), db=tables.hist)
    if record is None:
        raise LookupError(f"history entry {revision} is missing")
    key_len = HIST_HEADER.unpack_from(record)[4]
    return bytes(record[_HDR + key_len :])


def get_current(txn: Any, tables: Tables, key: bytes, now_ms: int) -> tuple[int, bytes] | None:
    """``(mod_revision, stored bytes)`` of the live value at ``key``, or None."""
    raw = txn.get(key, db=tables.kv)
    if raw is None:
        return None
    mod_rev, _create, expiry, _size = KV_RECORD.unpack(raw)
    if expiry and expiry <= now_ms:
        return None
    return mod_rev, _hist_value(txn, tables, mod_rev)


def _version_at(cursor: Any, key: bytes, revision: int) -> tuple[int, int, int] | None:
    # The last version of key at or before revision: (revision, kind, expiry_ms).
    if not cursor.set_range(keyrev_key(key, revision + 1)):
        if not cursor.last():
            return None
    elif not cursor.prev():
        return None
    found = cursor.key()
    if found[:-9] != key:
        return None
    kind, expiry = KEYREV_VALUE.unpack(cursor.value())
    return int.from_bytes(found[-8:], "big"), kind, expiry


def get_at(
    txn: Any, tables: Tables, key: bytes, revision: int, now_ms: int
) -> tuple[int, bytes] | None:
    """The live value of ``key`` as of ``revision`` (caller checks compaction), or None."""
    version = _version_at(txn.cursor(db=tables.keyrev), key, revision)
    if version is None:
        return None
    mod_rev, kind, expiry = version
    if kind != KIND_PUT or (expiry and expiry <= now_ms):
        return None
    return mod_rev, _hist_value(txn, tables, mod_rev)


def scan_current(
    txn: Any, tables: Tables, start: bytes, end: bytes | None, limit: int, now_ms: int
) -> tuple[list[tuple[bytes, int, bytes]], bool]:
    """Up to ``limit`` live ``(key, mod_revision, stored bytes)`` with ``start <= key < end``,
    in key order; and whether more live keys follow."""
    items: list[tuple[bytes, int, bytes]] = []
    cursor = txn.cursor(db=tables.kv)
    if not cursor.set_range(start):
        return items, False
    unpack = KV_RECORD.unpack
    hist_db = tables.hist
    for key, raw in cursor.iternext():
        if end is not None and key >= end:
            return items, False
        mod_rev, _create, expiry, _size = unpack(raw)
        if expiry and expiry <= now_ms:
            continue
        if len(items) == limit:
            return items, True
        record = txn.get(mod_rev.to_bytes(8, "big"), db=hist_db)
        key_len = HIST_HEADER.unpack_from(record)[4]
        items.append((key, mod_rev, record[_HDR + key_len :]))
    return items, False


def _versions_at(
    txn: Any, tables: Tables, start: bytes, end: bytes | None, revision: int, now_ms: int
) -> Any:
    """Yield ``(key, mod_revision)`` of every key live at ``revision`` in ``[start, end)``."""
    cursor = txn.cursor(db=tables.keyrev)
    if not cursor.set_range(keyrev_start(start)):
        return
    unpack = KEYREV_VALUE.unpack
    current: bytes | None = None
    best: tuple[int, int, int] | None = None
    for composite, raw in cursor.iternext():
        if end is not None and composite >= end:
            break
        key = composite[:-9]
        if key != current:
            if best is not None and current is not None:
                rev, kind, expiry = best
                if kind == KIND_PUT and not (expiry and expiry <= now_ms):
                    yield current, rev
            current = key
            best = None
        rev = int.from_bytes(composite[-8:], "big")
        if rev <= revision:
            kind, expiry = unpack(raw)
            best = (rev, kind, expiry)
    if best is not None and current is not None:
        rev, kind, expiry = best
        if kind == KIND_PUT and not (expiry and expiry <= now_ms):
            yield current, rev


def scan_at(
    txn: Any,
    tables: Tables,
    start: bytes,
    end: bytes | None,
    revision: int,
    limit: int,
    now_ms: int,
) -> tuple[list[tuple[bytes, int, bytes]], bool]:
    """As :func:`scan_current`, for the state at ``revision`` (caller checks compaction)."""
    items: list[tuple[bytes, int, bytes]] = []
    for key, rev in _versions_at(txn, tables, start, end, revision, now_ms):
        if len(items) == limit:
            return items, True
        items.append((key, rev, _hist_value(txn, tables, rev)))
    return items, False


def count_current(txn: Any, tables: Tables, start: bytes, end: bytes | None, now_ms: int) -> int:
    """Live keys in ``[start, end)`` now."""
    cursor = txn.cursor(db=tables.kv)
    if not cursor.set_range(start):
        return 0
    count = 0
    unpack_from = KV_RECORD.unpack_from
    for key, raw in cursor.iternext():
        if end is not None and key >= end:
            break
        expiry = unpack_from(raw)[2]
        if not expiry or expiry > now_ms:
            count += 1
    return count


def count_at(
    txn: Any, tables: Tables, start: bytes, end: bytes | None, revision: int, now_ms: int
) -> int:
    """Live keys in ``[start, end)`` at ``revision``."""
    return sum(1 for _ in _versions_at(txn, tables, start, end, revision, now_ms))


def read_events(
    txn: Any,
    tables: Tables,
    key: bytes,
    recursive: bool,
    after_revision: int,
    upto_revision: int,
    limit: int,
) -> tuple[list[RawEvent], int]:
    """Changes to ``key`` (a prefix when ``recursive``) in ``(after_revision, upto_revision]``,
    scanning at most ``limit`` revisions; and the last revision covered.

    The caller guarantees ``after_revision >= compacted``, so no entry in range was purged and
    every ``prev_revision`` it names is still stored."""
    events: list[RawEvent] = []
    cursor = txn.cursor(db=tables.hist)
    if not cursor.set_range(hist_key(after_revision + 1)):
        return events, upto_revision
    scanned = after_revision
    seen = 0
    unpack_from = HIST_HEADER.unpack_from
    for raw_rev, record in cursor.iternext():
        rev = int.from_bytes(raw_rev, "big")
        if rev > upto_revision:
            return events, upto_revision
        if seen == limit:
            return events, scanned
        seen += 1
        scanned = rev
        kind, _create, prev_rev, _expiry, key_len = unpack_from(record)
        entry_key = record[_HDR : _HDR + key_len]
        if entry_key != key and not (recursive and entry_key.startswith(key)):
            continue
        value = record[_HDR + key_len :] if kind == KIND_PUT else None
        prev = _hist_value(txn, tables, prev_rev) if prev_rev else None
        events.append(RawEvent(entry_key.decode(), rev, value, prev))
    return events, upto_revision
