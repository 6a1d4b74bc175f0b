"""Recorded operations and watch streams, checked against etcd's own history.

The checker of the reliability reference (section 6). kstore, like etcd, exposes its
linearization order: every successful write returns a unique revision. So no search is needed:

1. the **ground truth** is etcd's history of the workload's prefix, read after the run with a
   raw etcd watch from the start revision (no compaction happens during a run);
2. every acknowledged write is in it, at its returned revision, with its unique value; a write
   that failed definitely (409, 404, refused before proposing) is not; an unknown outcome
   (timeout) may be there at most once;
3. **real-time order**: a write that returned before another was invoked has a lower
   revision; a read sees the latest write that returned before it was invoked, or newer, and
   what it sees is in the history at the revision it reports;
4. **compare-and-swap**: an update or delete that expected revision ``r`` and succeeded was
   applied to the key's state at ``r``; one that failed with a conflict saw a key that had
   changed after ``r`` (or was gone);
5. **watches**: every kstore watch delivered, from its start revision to the last event it saw,
   exactly the history's changes of its range, in order, once each, with ADDED for creates.

Each check returns a list of human-readable problems; an empty list is a pass.
"""

from __future__ import annotations

import bisect
import itertools
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import grpc
import orjson
from etcd3 import etcdrpc

from kstore.errors import AlreadyExists, Conflict, NotFound, Timeout, Unavailable

__all__ = [
    "Event",
    "Op",
    "Recorder",
    "WatchRecord",
    "check_operations",
    "check_watch",
    "read_history",
]

#: Outcomes of a recorded operation.
OK, FAIL, UNKNOWN = "ok", "fail", "unknown"


@dataclass
class Op:
    """One storage call: ``kind`` is create, update, delete or get; ``value`` the unique value
    a write stores (None for delete and get); ``expected`` the revision an update or delete
    required; ``rv`` the revision returned (the object's, or the delete's); ``read`` the value
    a get saw (None: not found)."""

    client: str
    kind: str
    key: str
    value: str | None
    expected: int | None
    invoked: float
    returned: float = 0.0
    outcome: str = ""
    rv: int | None = None
    read: str | None = None
    error: str = ""


@dataclass(frozen=True)
class Event:
    """One change in etcd's history: ``value`` is the object's unique value, None for a
    delete; ``created`` says the key did not exist before."""

    revision: int
    key: str
    value: str | None
    created: bool

    @property
    def kind(self) -> str:
        if self.value is None:
            return "DELETED"
        return "ADDED" if self.created else "MODIFIED"


@dataclass
class WatchRecord:
    """What one kstore watch delivered: (type, key, revision, value) per event."""

    name: str
    start_revision: int
    prefix: str
    events: list[tuple[str, str, int, str | None]] = field(default_factory=list)
    error: str = ""


class Recorder:
    """Thread-safe log of operations; :meth:`call` runs one and records its outcome."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.ops: list[Op] = []

    def call(self, op: Op, run: Callable[[], tuple[int | None, str | None]]) -> Op:
        """Run ``run`` (returning the revision and, for a read, the value seen) and record it.

        Conflict, AlreadyExists and NotFound are definite failures, as is Unavailable (kstore
        raises it for a write only when no attempt can have reached etcd); Timeout is an
        unknown outcome. Anything else is a bug and propagates."""
        try:
            op.rv, op.read = run()
            op.outcome = OK
        except NotFound as exc:
            if op.kind == "get":
                op.outcome, op.read = OK, None
            else:
                op.outcome, op.error = FAIL, type(exc).__name__
        except (Conflict, AlreadyExists, Unavailable) as exc:
            op.outcome, op.error = FAIL, f"{type(exc).__name__}: {exc}"
        except Timeout as exc:
            op.outcome, op.error = UNKNOWN, f"{type(exc).__name__}: {exc}"
        finally:
            op.returned = time.monotonic()
            with self._lock:
                self.ops.append(op)
        return op


def _value_of(raw: bytes) -> str | None:
    annotations = orjson.loads(raw).get("metadata", {}).get("annotations") or {}
    value = annotations.get("v")
    return value if isinstance(value, str) else None


def read_history(endpoint: str, prefix: bytes, after: int, timeout: float = 20.0) -> list[Event]:
    """etcd's changes under ``prefix`` after revision ``after``, up to now, from a raw watch
    with prev_kv. A sentinel key written first marks "now"; it is not part of the result."""
    channel = grpc.insecure_channel(endpoint)
    sentinel = prefix + b"~history-end"
    try:
        kv = etcdrpc.KVStub(channel)
        put = kv.Put(etcdrpc.PutRequest(key=sentinel, value=b"{}"), timeout=10)
        upto = int(put.header.revision)
        end = bytearray(prefix)
        end[-1] += 1
        create = etcdrpc.WatchRequest(
            create_request=etcdrpc.WatchCreateRequest(
                key=prefix, range_end=bytes(end), start_revision=after + 1, prev_kv=True
            )
        )
        done = threading.Event()

        def requests() -> Any:
            yield create
            done.wait(timeout)

        events: list[Event] = []
        call = etcdrpc.WatchStub(channel).Watch(requests(), timeout=timeout)
        try:
            for response in call:
                if response.canceled:
                    raise RuntimeError(f"history watch cancelled: {response.cancel_reason}")
                for event in response.events:
                    rev = int(event.kv.mod_revision)
                    if bytes(event.kv.key) == sentinel:
                        if rev >= upto:
                            return events
                        continue
                    deleted = event.type == 1
                    events.append(
                        Event(
                            revision=rev,
                            key=bytes(event.kv.key).decode(),
                            value=None if deleted else _value_of(event.kv.value),
                            created=not deleted
                            and event.kv.create_revision == event.kv.mod_revision,
                        )
                    )
        finally:
            done.set()
            call.cancel()
        raise RuntimeError("the history watch ended before reaching its sentinel")
    finally:
        channel.close()


def check_operations(ops: Iterable[Op], history: list[Event], *, key_prefix: str) -> list[str]:
    """Checks 2-4 of the module docstring. ``key_prefix`` maps kstore keys to etcd keys."""
    problems: list[str] = []
    ops = list(ops)
    by_rev = {e.revision: e for e in history}
    revisions = [e.revision for e in history]
    if revisions != sorted(set(revisions)):
        problems.append("etcd history is not strictly ordered")
    per_key: dict[str, list[Event]] = defaultdict(list)
    for e in history:
        per_key[e.key].append(e)
    value_events: dict[str, list[Event]] = defaultdict(list)
    for e in history:
        if e.value is not None:
            value_events[e.value].append(e)

    def etcd_key(op: Op) -> str:
        return key_prefix + op.key.lstrip("/")

    explained: set[int] = set()
    for op in ops:
        if op.kind == "get":
            continue
        if op.kind in ("create", "update"):
            assert op.value is not None
            found = value_events.get(op.value, [])
            if len(found) > 1:
                problems.append(f"value {op.value} written {len(found)} times")
            if op.outcome == OK:
                if not found:
                    problems.append(f"acknowledged {op.kind} {op.value} @{op.rv} lost")
                elif found[0].revision != op.rv or found[0].key != etcd_key(op):
                    problems.append(
                        f"acknowledged {op.kind} {op.value} @{op.rv} is in history at "
                        f"{found[0].key}@{found[0].revision}"
                    )
            elif op.outcome == FAIL and found:
                problems.append(f"failed {op.kind} {op.value} ({op.error}) was applied")
            explained.update(e.revision for e in found)
        elif op.kind == "delete" and op.outcome == OK:
            event = by_rev.get(op.rv or -1)
            if event is None or event.value is not None or event.key != etcd_key(op):
                problems.append(f"acknowledged delete of {op.key} @{op.rv} not in history")
            else:
                explained.add(event.revision)
    unknown_deletes = defaultdict(int)
    for op in ops:
        if op.kind == "delete" and op.outcome == UNKNOWN:
            unknown_deletes[etcd_key(op)] += 1
    for e in history:
        if e.revision in explained:
            continue
        if e.value is None and unknown_deletes[e.key] > 0:
            unknown_deletes[e.key] -= 1
            continue
        problems.append(f"history has a change nobody made: {e}")

    problems += _check_real_time(ops)
    problems += _check_reads(ops, per_key, by_rev, etcd_key)
    problems += _check_cas(ops, per_key, etcd_key)
    return problems


def _check_real_time(ops: list[Op]) -> list[str]:
    problems: list[str] = []
    writes = sorted(
        (op for op in ops if op.kind != "get" and op.outcome == OK and op.rv is not None),
        key=lambda op: op.returned,
    )
    returned_times = [op.returned for op in writes]
    # prefix_max[i] = highest revision among writes[:i]
    prefix_max = [0]
    for op in writes:
        prefix_max.append(max(prefix_max[-1], op.rv or 0))
    for op in writes:
        before = bisect.bisect_left(returned_times, op.invoked)
        if prefix_max[before] >= (op.rv or 0):
            problems.append(
                f"{op.kind} {op.key} @{op.rv} was invoked after a write with revision "
                f"{prefix_max[before]} had returned"
            )
    return problems


def _check_reads(
    ops: list[Op],
    per_key: dict[str, list[Event]],
    by_rev: dict[int, Event],
    etcd_key: Callable[[Op], str],
) -> list[str]:
    problems: list[str] = []
    writes_by_key: dict[str, list[Op]] = defaultdict(list)
    for op in ops:
        if op.kind != "get" and op.outcome == OK and op.rv is not None:
            writes_by_key[etcd_key(op)].append(op)
    for op in ops:
        if op.kind != "get" or op.outcome != OK:
            continue
        key = etcd_key(op)
        floor = max((w.rv or 0 for w in writes_by_key[key] if w.returned < op.invoked), default=0)
        if op.read is None:
            gone = any(e.value is None and e.revision >= floor for e in per_key[key])
            if floor and not gone:
                problems.append(f"get {op.key} saw nothing, but the write @{floor} is live")
            continue
        event = by_rev.get(op.rv or -1)
        if event is None or event.key != key or event.value != op.read:
            problems.append(f"get {op.key} saw {op.read}@{op.rv}, which history does not have")
        elif (op.rv or 0) < floor:
            problems.append(f"get {op.key} saw @{op.rv}, older than the returned write @{floor}")
    return problems


def _check_cas(
    ops: list[Op], per_key: dict[str, list[Event]], etcd_key: Callable[[Op], str]
) -> list[str]:
    problems: list[str] = []
    for op in ops:
        if op.kind not in ("update", "delete") or op.expected is None:
            continue
        events = per_key[etcd_key(op)]
        revisions = [e.revision for e in events]
        if op.outcome == OK and op.rv is not None:
            index = bisect.bisect_left(revisions, op.rv)
            previous = events[index - 1] if index > 0 else None
            if previous is None or previous.revision != op.expected or previous.value is None:
                shown = previous.revision if previous else "none"
                problems.append(
                    f"{op.kind} {op.key} @{op.rv} expected @{op.expected} but applied on @{shown}"
                )
        elif op.outcome == FAIL and op.error.startswith("Conflict"):
            changed = any(r > op.expected for r in revisions)
            existed = op.expected in revisions
            if existed and not changed:
                problems.append(f"{op.kind} {op.key} conflicted but @{op.expected} is current")
    return problems


def check_watch(record: WatchRecord, history: list[Event]) -> list[str]:
    """Check 5 of the module docstring for one watch of ``record.prefix``."""
    problems: list[str] = []
    got = record.events
    revisions = [rev for _, _, rev, _ in got]
    for a, b in itertools.pairwise(revisions):
        if b <= a:
            problems.append(f"{record.name}: event @{b} after @{a} (order or duplicate)")
    if not got:
        return problems
    last = revisions[-1]
    expected = [
        (e.kind, e.key, e.revision, e.value)
        for e in history
        if e.key.startswith(record.prefix) and record.start_revision < e.revision <= last
    ]
    # A DELETED event carries the deleted object's last value; history records None for it.
    seen = [(t, k, r, None if t == "DELETED" else v) for t, k, r, v in got]
    if seen != expected:
        missing = sorted(set(expected) - set(seen), key=lambda x: x[2])[:5]
        extra = sorted(set(seen) - set(expected), key=lambda x: x[2])[:5]
        problems.append(
            f"{record.name}: {len(seen)} events differ from history's {len(expected)} in "
            f"({record.start_revision}, {last}]: missing {missing}, unexpected {extra}"
        )
    return problems
