"""The cross-process change feed: every process sharing one LMDB store sees every change.

Several processes may open one store (``kstore serve --workers N``, or ``kstore.open`` beside a
server). LMDB serialises their write transactions; each process keeps its own watch hub
(:mod:`kstore.storage._watch_hub`), which its watchers and watch caches read. This module keeps
each hub complete and in order, whoever committed a change.

**The feed is the history log.** Every commit, in any process, writes one ``r`` entry per
revision (:mod:`kstore.storage._lmdb_records`), and revisions are taken inside the write
transaction from the store itself (never from a counter of one process), so the log holds
every change of every process, in revision order, with no gaps. A process's hub has published
everything up to its ``last_revision`` L; bringing it up to date means reading the log after L
and publishing what it finds. All publication in a process goes through :meth:`ChangeFeed`
under one lock and only ever publishes revisions above L, so a change read from the log by the
feed's thread and the same change handed over by this process's own writer are published once,
in order.

**A process's own commits** publish, before their writers are answered, the other processes'
changes that precede them (read in the same write transaction, so they cannot have been
purged) and then their own. So the hand-over invariant of the hub holds: a writer that watches
from its new resourceVersion finds every change up to it already dispatched.

**The other processes' commits** reach a hub after a wake-up: each process binds an abstract
unix datagram socket named in its peer file ``<dir>/kstore.peers/<pid>`` (held under an
``flock`` for the life of the process, so a file left by a killed process is recognised and
removed), and every commit sends one empty datagram to each other process. The feed thread
then reads the log. It also reads it every :data:`POLL_S` whatever happens, the safety net for
a lost datagram or a peer not yet known.

**Consistent reads across processes.** :meth:`ChangeFeed.sync` reads the store's current
revision R (one short read transaction) and publishes everything up to R before it returns.
A reader that calls it after another process acknowledged a write (whose revision is at most
R) then finds that write in its hub, and a watch cache fed by the hub answers only once it has
applied it (:class:`kstore.cache.freshness.LocalChangeClock`).

**When the log is gone.** Compaction purges history. If a process fell so far behind that
part of the log after its L was purged (``mpurged`` above L: a process stopped for longer than
the history retention), the changes in between cannot be replayed: every subscription of its
hub is cut off (its watcher ends with an ERROR and watches again, getting 410 below the
compacted revision, as on etcd) and the hub continues from the store's revision.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import secrets
import socket
import threading
import time
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

from kstore.errors import Expired
from kstore.storage._lmdb_board import RevisionBoard
from kstore.storage._lmdb_records import (
    HIST_HEADER,
    KIND_PUT,
    META_COMPACTED,
    META_PURGED,
    hist_key,
    hist_value,
    meta_int,
    revision_of,
)
from kstore.storage._lmdb_sync import PEERS_DIR
from kstore.storage._watch_hub import RawEvent, WatchHub

__all__ = ["POLL_S", "ChangeFeed", "Peers", "read_changes"]

_log = logging.getLogger(__name__)

#: The feed thread reads the log at least this often, wake-up or not (the safety net).
POLL_S = 0.05
#: How often the peer registry is read again (a new process is woken by datagrams from then
#: on; until then the poll finds its changes).
_REFRESH_S = 0.5
#: Revisions read from the log per read transaction.
_CHUNK = 1000
_HDR = HIST_HEADER.size


def read_changes(
    txn: Any, after_revision: int, upto_revision: int, limit: int
) -> tuple[list[RawEvent], int, int]:
    """Every change in ``(after_revision, upto_revision]``, at most ``limit`` revisions; the
    last revision covered; and the earliest expiry the changes set (0: none)."""
    events: list[RawEvent] = []
    cursor = txn.cursor()
    if not cursor.set_range(hist_key(after_revision + 1)):
        return events, upto_revision, 0
    unpack_from = HIST_HEADER.unpack_from
    min_expiry = 0
    scanned = after_revision
    for raw_rev, record in cursor.iternext():
        rev = int.from_bytes(raw_rev[1:], "big")
        if rev > upto_revision:
            return events, upto_revision, min_expiry
        if len(events) == limit:
            return events, scanned, min_expiry
        scanned = rev
        kind, _create, prev_rev, expiry, key_len = unpack_from(record)
        key = bytes(record[_HDR : _HDR + key_len])
        value = bytes(record[_HDR + key_len :]) if kind == KIND_PUT else None
        prev = hist_value(txn, prev_rev) if prev_rev else None
        if kind == KIND_PUT and expiry and (not min_expiry or expiry < min_expiry):
            min_expiry = expiry
        events.append(RawEvent(key.decode(), rev, value, prev))
    return events, upto_revision, min_expiry


class Peers:
    """This process's entry in the store's peer registry, and the wake-ups sent to the rest."""

    def __init__(self, directory: Path) -> None:
        self._dir = directory / PEERS_DIR
        self._dir.mkdir(exist_ok=True)
        pid = os.getpid()
        # Abstract names: no path length limit, nothing left on disk by a killed process.
        self._name = f"\0kstore-feed-{pid}-{secrets.token_hex(8)}".encode()
        self.inbox = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.inbox.bind(self._name)
        self._outbox = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._outbox.setblocking(False)
        # Written under a temporary name, locked, then renamed: a file is never seen unlocked
        # while its process lives, so an unlocked one is a dead process's.
        self._file = self._dir / str(pid)
        staging = self._dir / f".{pid}.{secrets.token_hex(4)}"
        self._fd = os.open(staging, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        os.write(self._fd, self._name)
        os.rename(staging, self._file)
        self._targets: dict[str, bytes] = {}
        self._refreshed = 0.0
        self.refresh()

    def refresh(self) -> None:
        """Read the registry again: the other live processes; remove dead ones' files."""
        self._refreshed = time.monotonic()
        targets: dict[str, bytes] = {}
        own = self._file.name
        try:
            names = os.listdir(self._dir)
        except OSError:
            return
        for name in names:
            if name == own or not name.isdigit():
                continue
            if name in self._targets:
                targets[name] = self._targets[name]
                continue
            path = self._dir / name
            try:
                fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                try:
                    fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                except BlockingIOError:
                    targets[name] = os.pread(fd, 128, 0)
                    continue
                # Nobody holds it: its process is gone.
                with contextlib.suppress(OSError):
                    path.unlink()
            finally:
                os.close(fd)
        self._targets = targets

    def refresh_due(self) -> bool:
        return time.monotonic() - self._refreshed >= _REFRESH_S

    @property
    def others(self) -> int:
        return len(self._targets)

    def wake_others(self) -> None:
        """One datagram to every other process (a full or gone inbox is ignored: a full one
        has a wake-up pending already, a gone one is dropped at the next refresh)."""
        send = self._outbox.sendto
        for target in self._targets.values():
            with contextlib.suppress(OSError):
                send(b"", target)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._file.unlink()
        os.close(self._fd)
        self.inbox.close()
        self._outbox.close()


class _FeedHost(Protocol):
    def read(self) -> AbstractContextManager[Any]: ...

    def note_foreign(self, compacted: int, min_expiry: int) -> None: ...

    def check_readers(self) -> None: ...


class ChangeFeed:
    """Publishes every committed change of a shared store to this process's hub, in order."""

    def __init__(
        self,
        host: _FeedHost,
        hub: WatchHub,
        peers: Peers,
        *,
        name: str,
        board: RevisionBoard | None = None,
    ) -> None:
        self._host = host
        self._board = board
        self._hub = hub
        self._peers = peers
        self._lock = threading.Lock()
        self._stopping = False
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopping = True
        # Wake the thread now rather than at its next poll (never waiting: a full inbox has
        # a wake-up pending already).
        with (
            contextlib.suppress(OSError),
            socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as poke,
        ):
            poke.setblocking(False)
            poke.sendto(b"", self._peers.inbox.getsockname())
        if threading.current_thread() is not self._thread:
            self._thread.join()

    # -- the writer's side ----------------------------------------------------------------

    def foreign_before(self, txn: Any, revision: int) -> list[RawEvent]:
        """Inside a write transaction at store revision ``revision``: the changes committed
        since this hub's last publication (by other processes), to publish before the
        transaction's own. Empty when the hub is current."""
        last = self._hub.last_revision
        if revision <= last or meta_int(txn, META_PURGED) > last:
            return []  # current; or a gap the feed thread reports
        out: list[RawEvent] = []
        while last < revision:
            events, last, _expiry = read_changes(txn, last, revision, _CHUNK)
            out += events
        return out

    def publish_commit(
        self, foreign: list[RawEvent], events: list[RawEvent], revision: int
    ) -> None:
        """After a commit of this process: publish what preceded it, then its own changes
        (each only if not published already), then wake the other processes."""
        hub = self._hub
        with self._lock:
            last = hub.last_revision
            if foreign and foreign[-1].revision > last:
                hub.publish([e for e in foreign if e.revision > last], foreign[-1].revision)
                last = hub.last_revision
            if revision > last:
                if events and events[0].revision <= last:
                    events = [e for e in events if e.revision > last]
                hub.publish(events, revision)
        if self._peers.others:
            self._peers.wake_others()

    # -- every reader's side --------------------------------------------------------------

    def sync_for_read(self) -> int:
        """:meth:`sync` for a consistent read: without a read transaction when the revision
        board (:mod:`kstore.storage._lmdb_board`) shows no commit beyond this hub's revision.
        The feed thread always reads the store: it also notes other processes' compactions,
        which commit no revision."""
        board = self._board
        if board is not None:
            last = self._hub.last_revision
            if board.read() <= last:
                return last
        return self.sync()

    def sync(self) -> int:
        """Publish every change committed by any process up to the store's current revision;
        return that revision.

        The log is read outside the publication lock (a read must never wait behind it: the
        writer takes that lock while it holds the commit lock), then what is still new is
        published under it: the hub only ever advances without gaps, so of a chunk read after
        revision L, the changes above the hub's revision at publication are exactly the ones
        it lacks."""
        host, hub = self._host, self._hub
        while True:
            last = hub.last_revision
            with host.read() as txn:
                current = revision_of(txn)
                if current <= last:
                    return current
                compacted = meta_int(txn, META_COMPACTED)
                gap = meta_int(txn, META_PURGED) > last
                if not gap:
                    events, covered, min_expiry = read_changes(txn, last, current, _CHUNK)
            with self._lock:
                if gap:
                    if hub.last_revision == last:
                        _log.warning(
                            "history after revision %d was purged before this process read "
                            "it; its watches are cut off and continue from revision %d",
                            last,
                            current,
                        )
                        hub.cut_off_all(
                            current,
                            Expired(f"too old resource version: {last} ({compacted})"),
                        )
                    min_expiry = 0
                else:
                    now = hub.last_revision
                    if covered > now:
                        if now > last:
                            events = [e for e in events if e.revision > now]
                        hub.publish(events, covered)
            self._host.note_foreign(compacted, min_expiry)

    def _loop(self) -> None:
        inbox = self._peers.inbox
        inbox.settimeout(POLL_S)
        while not self._stopping:
            with contextlib.suppress(TimeoutError, OSError):
                inbox.recv(16)
                # Several commits may have rung: one read serves them all.
                inbox.setblocking(False)
                with contextlib.suppress(BlockingIOError):
                    while True:
                        inbox.recv(16)
                inbox.settimeout(POLL_S)
            if self._stopping:
                return
            try:
                self.sync()
                if self._peers.refresh_due():
                    self._peers.refresh()
                    self._host.check_readers()
            except Exception:
                if self._stopping:
                    return
                # The store stays usable; the next poll tries again.
                _log.exception("LMDB change feed failed")
                time.sleep(POLL_S)
