"""Moving a store to another backend while it keeps serving: copy at a revision, then follow.

A migration has two steps, both over stored bytes (nothing is decoded, encrypted values stay
encrypted, keys keep their layout without the backend's prefix):

1. **copy**: the source's keys at one revision ``R``, read as ``kstore snapshot save`` reads
   them (one LMDB read transaction, or an etcd prefix pinned at ``R``), written into the
   target as ``kstore snapshot restore`` writes them (the target must be empty unless
   ``force``). Into etcd (``stream``) the keys go straight from the read to the restore's
   transactions; into LMDB through a snapshot file in a work directory, checked whole and
   restored (the LMDB restore looks at every key before it writes: revisions shared by two
   keys of an etcd source, the map size), then removed. Keys keep their TTLs.
2. **follow**: the source's changes after ``R`` are applied to the target in revision order,
   puts with their TTL left and deletes (expiries too), in batches, until the target has
   every change up to the source's revision at that moment (caught up). An LMDB source's
   changes are read from its history log (:mod:`._lmdb_migrate`); an etcd source's from
   the prefix's keys at each round compared with the previous round's, plus the values of
   the keys whose mod revision is past the last round (:mod:`._etcd_migrate`): exact for
   the state, not for the intermediate changes, which no client of the target has seen yet.

Without ``follow`` the migration ends as soon as it has caught up once. With ``follow`` it
keeps following (every ``poll_interval`` seconds) until told to stop (``stop`` is set: the
command line sets it on SIGINT or SIGTERM) or, for an LMDB source, until no process holds the
source directory any more (its ``kstore serve`` stopped); it then takes the source's lock
itself, so no server can start on it, catches up one last time and ends. That is the
minimal-downtime move: stop the old server, the migration finishes within one poll, start the
new one.

**Verify** (:func:`compare_stores`) reads both stores at one point in time each and compares
them key by key: equal stored bytes match; different bytes match when both decode (JSON or
Kubernetes protobuf) to the same object, ``metadata.resourceVersion`` aside; anything else,
and keys on one side only, is a difference. A source still being written differs from its
copy by its latest writes: the comparison catches up and compares again (up to ``rounds``
times) before it reports.
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from kstore.storage.snapshot import (
    SnapshotEntry,
    SnapshotSource,
    SnapshotTarget,
    resource_of_key,
    restore_snapshot,
    save_snapshot,
)

__all__ = [
    "Change",
    "ChangeFeed",
    "ChangeTarget",
    "Difference",
    "MigrationResult",
    "compare_stores",
    "migrate",
]

#: Changes read and applied per round.
_BATCH = 5000


@dataclass(frozen=True, slots=True)
class Change:
    """One change of a source: ``value`` None for a delete (or expiry)."""

    key: bytes
    revision: int
    value: bytes | None
    ttl_ms: int = 0


class ChangeFeed(Protocol):
    """A source's changes after a revision."""

    def changes(self, after: int, limit: int) -> tuple[list[Change], int, int]:
        """Up to about ``limit`` changes after ``after``, in revision order; the revision
        they cover up to and the source's revision (equal: nothing more pending)."""
        ...

    def begin(self, revision: int) -> None:
        """Note the state at ``revision`` (the copy's), before the target is written: a
        target on the same etcd compacts its history."""
        ...

    def held(self) -> bool:
        """Whether a server still holds the source (True when that cannot be known)."""
        ...

    def hold(self) -> None:
        """Keep servers off the source until :meth:`close` (LMDB: take its lock)."""
        ...

    def close(self) -> None: ...


class ChangeTarget(Protocol):
    def apply(self, changes: list[Change]) -> None:
        """Apply ``changes`` in order; the last change of a key decides its state."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Difference:
    key: str
    reason: str


@dataclass(kw_only=True, slots=True)
class MigrationResult:
    revision: int
    copied: int
    applied: int = 0
    caught_up_at: int = 0
    copy_seconds: float = 0.0
    follow_seconds: float = 0.0
    stopped_by: str = ""
    resources: dict[str, int] = field(default_factory=dict)
    verified: bool = False
    differences: list[Difference] = field(default_factory=list)


def _catch_up(feed: ChangeFeed, target: ChangeTarget, applied: int) -> tuple[int, int]:
    """Apply every pending change; the revision reached and how many changes."""
    count = 0
    while True:
        changes, covered, head = feed.changes(applied, _BATCH)
        if changes:
            target.apply(changes)
            count += len(changes)
        applied = max(applied, covered)
        if covered >= head:
            return applied, count


def migrate(
    *,
    source: SnapshotSource,
    restore_target: SnapshotTarget,
    open_feed: Callable[[], ChangeFeed],
    open_target: Callable[[], ChangeTarget],
    work_dir: Path,
    force: bool = False,
    follow: bool = False,
    stop: threading.Event | None = None,
    poll_interval: float = 0.05,
    on_progress: Callable[[str], None] | None = None,
    verify: tuple[Callable[[], SnapshotSource], Callable[[], SnapshotSource]] | None = None,
    stream: bool = False,
) -> MigrationResult:
    """Copy ``source`` into the target and follow it (see the module docstring); with
    ``verify`` (openers of the source and the target as snapshot sources), compare them.

    ``restore_target`` is the target as a snapshot restore fills it (it must not be
    held open afterwards: it is closed by the caller or between the steps by its context);
    ``open_target`` opens it for the changes once the copy is in."""
    stop = stop or threading.Event()
    say = on_progress or (lambda _line: None)
    # The target's emptiness is checked before the copy is read, so that a refusal is quick.
    restore_target.check(force=force)
    started = time.monotonic()
    feed = open_feed()
    try:
        try:
            if stream:
                revision, copied, resources = _stream(source, restore_target, feed, force)
            else:
                work_dir.mkdir(parents=True, exist_ok=True)
                snapshot = work_dir / f"kstore-migrate-{os.getpid()}.snap"
                try:
                    saved = save_snapshot(snapshot, source)
                    feed.begin(saved.revision)
                    info, _revision = restore_snapshot(snapshot, restore_target, force=force)
                finally:
                    snapshot.unlink(missing_ok=True)
                revision, copied, resources = info.revision, info.entries, info.resources
        finally:
            close = getattr(restore_target, "close", None)
            if close is not None:
                close()
        result = MigrationResult(
            revision=revision,
            copied=copied,
            copy_seconds=time.monotonic() - started,
            resources=dict(resources),
        )
        say(f"copied {copied} keys at revision {revision} in {result.copy_seconds:.1f}s")
        followed = time.monotonic()
        target = open_target()
        try:
            applied = revision
            while True:
                applied, count = _catch_up(feed, target, applied)
                result.applied += count
                if not follow:
                    result.stopped_by = "caught up"
                    break
                if stop.is_set() or not feed.held():
                    # Keep servers off the source, then take its last changes.
                    feed.hold()
                    applied, count = _catch_up(feed, target, applied)
                    result.applied += count
                    result.stopped_by = "stop requested" if stop.is_set() else "source released"
                    break
                stop.wait(poll_interval)
            result.caught_up_at = applied
        finally:
            target.close()
        result.follow_seconds = time.monotonic() - followed
        if verify is not None:

            def catch_up() -> None:
                nonlocal applied
                again = open_target()
                try:
                    applied, count = _catch_up(feed, again, applied)
                    result.applied += count
                finally:
                    again.close()

            result.differences = compare_stores(*verify, catch_up=catch_up)
            result.verified = True
            result.caught_up_at = applied
        say(
            f"applied {result.applied} changes; caught up with revision {applied} "
            f"({result.stopped_by})"
        )
        return result
    finally:
        feed.close()


def _stream(
    source: SnapshotSource, target: SnapshotTarget, feed: ChangeFeed, force: bool
) -> tuple[int, int, dict[str, int]]:
    """The copy without a file: the source's entries straight into the target's load."""
    revision, entries = source.read()
    resources: Counter[str] = Counter()
    try:
        feed.begin(revision)

        def counted() -> Iterator[SnapshotEntry]:
            for entry in entries:
                resources[resource_of_key(entry.key)] += 1
                yield entry

        target.load(counted(), revision, force=force)
    finally:
        close = getattr(entries, "close", None)
        if close is not None:
            close()
    return revision, sum(resources.values()), dict(resources)


def _decoded(value: bytes) -> object:
    from kstore.codec.recognizer import serializer_for_content

    obj = serializer_for_content(value).decode(value)
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        meta.pop("resourceVersion", None)
    return obj


def _same(a: bytes, b: bytes) -> bool:
    if a == b:
        return True
    try:
        return _decoded(a) == _decoded(b)
    except Exception:
        return False


def _keyed(source: SnapshotSource) -> Iterator[tuple[bytes, bytes]]:
    _revision, entries = source.read()
    try:
        for entry in entries:
            yield entry.key, entry.value
    finally:
        for thing in (entries, source):
            close = getattr(thing, "close", None)
            if close is not None:
                close()


def diff_stores(left: SnapshotSource, right: SnapshotSource) -> list[Difference]:
    """Every key whose value differs between the two stores, or that only one holds."""
    out: list[Difference] = []
    a, b = _keyed(left), _keyed(right)
    x, y = next(a, None), next(b, None)
    while x is not None or y is not None:
        if y is None or (x is not None and x[0] < y[0]):
            assert x is not None
            out.append(Difference(x[0].decode("utf-8", "replace"), "missing in the target"))
            x = next(a, None)
        elif x is None or y[0] < x[0]:
            out.append(Difference(y[0].decode("utf-8", "replace"), "not in the source"))
            y = next(b, None)
        else:
            if not _same(x[1], y[1]):
                out.append(Difference(x[0].decode("utf-8", "replace"), "values differ"))
            x, y = next(a, None), next(b, None)
    return out


def compare_stores(
    left: Callable[[], SnapshotSource],
    right: Callable[[], SnapshotSource],
    *,
    catch_up: Callable[[], None] | None = None,
    rounds: int = 3,
) -> list[Difference]:
    """:func:`diff_stores`, retried after ``catch_up`` while differences remain (see the
    module docstring)."""
    differences: list[Difference] = []
    for attempt in range(max(rounds, 1)):
        if attempt and catch_up is not None:
            catch_up()
        differences = diff_stores(left(), right())
        if not differences or catch_up is None:
            break
    return differences


def count_resources(keys: Iterator[bytes]) -> dict[str, int]:
    counts: Counter[str] = Counter(resource_of_key(k) for k in keys)
    return dict(counts)
