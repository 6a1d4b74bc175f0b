"""Several processes on one LMDB store: every guarantee of the storage contract across them.

The other process is a real one (``tests/storage/lmdb_peer.py``), driven over its stdin; this
process holds the store open at the same time, with a watch cache in front of it where the
guarantee is the cache's (consistent reads).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kstore.cache.cacher import CacheConfig, Cacher
from kstore.errors import Expired
from kstore.storage.interface import (
    EventType,
    GetOptions,
    ListOptions,
    ResourceVersionMatch,
    Storage,
    WatchEvent,
)
from kstore.storage.lmdb import LmdbBackend
from kstore.storage.read_point import single_sync

from .conftest import open_backend, pod, pod_config, rv

_ROOT = Path(__file__).resolve().parents[2]
LONG = os.environ.get("KSTORE_LONG") == "1"


class Peer:
    """The other process: commands in, lines out (kept, so that tests wait for what they
    need in whatever order the peer's threads print)."""

    def __init__(self, store: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.storage.lmdb_peer", str(store)],
            cwd=_ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self.lines: list[str] = []
        self._cond = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.wait_for(lambda line: line == "ready", timeout=60)

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with self._cond:
                self.lines.append(line.rstrip("\n"))
                self._cond.notify_all()
        with self._cond:
            self.lines.append("<eof>")
            self._cond.notify_all()

    def send(self, command: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()

    def wait_for(self, match: Callable[[str], bool], timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for line in self.lines:
                    if match(line):
                        return line
                if "<eof>" in self.lines:
                    raise AssertionError(f"peer ended: {self.lines[-5:]}")
                remaining = deadline - time.monotonic()
                assert remaining > 0, f"peer did not answer in time: {self.lines[-5:]}"
                self._cond.wait(remaining)

    def ask(self, command: str, answer: str) -> str:
        """Send ``command`` and return the first new line starting with ``answer``."""
        with self._cond:
            seen = len(self.lines)
        self.send(command)
        deadline = time.monotonic() + 30
        with self._cond:
            while True:
                for line in self.lines[seen:]:
                    if line.startswith(answer):
                        return line
                assert "<eof>" not in self.lines, f"peer ended: {self.lines[-5:]}"
                remaining = deadline - time.monotonic()
                assert remaining > 0, f"no {answer!r} from the peer: {self.lines[-5:]}"
                self._cond.wait(remaining)

    def acks(self) -> dict[str, int]:
        with self._cond:
            return {
                parts[1]: int(parts[2])
                for parts in (line.split() for line in self.lines)
                if parts[0] == "ack"
            }

    def stop(self) -> None:
        if self.process.poll() is None:
            self.send("quit")
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        self._reader.join(timeout=30)
        self.process.stdout.close()


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "store"


@pytest.fixture
def backend(store: Path) -> Iterator[LmdbBackend]:
    opened = open_backend(store)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def peer(store: Path, backend: LmdbBackend) -> Iterator[Peer]:
    other = Peer(store)
    try:
        yield other
    finally:
        other.stop()


@pytest.fixture
def cache(backend: LmdbBackend) -> Iterator[Cacher]:
    made = Cacher(
        CacheConfig(
            storage=backend.storage_for(pod_config()),
            resource=pod_config(),
            # A stale cache must fail the read (504), not hide behind the backend.
            consistent_read_fallback=False,
            consistent_gets_from_cache=True,
        )
    )
    assert made.wait_ready(10)
    try:
        yield made
    finally:
        made.stop()


def _collect(watcher_next: Callable[[float], WatchEvent | None], count: int) -> list[WatchEvent]:
    events: list[WatchEvent] = []
    deadline = time.monotonic() + 60
    while len(events) < count:
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"only {len(events)} of {count} events"
        event = watcher_next(min(remaining, 5.0))
        if event is None:
            continue
        assert event.type != EventType.ERROR, event.object
        if event.type != EventType.BOOKMARK:
            events.append(event)
    return events


def test_a_write_acknowledged_by_another_process_is_read_at_once_even_from_the_cache(
    backend: LmdbBackend, peer: Peer, cache: Cacher
) -> None:
    pods = backend.storage_for(pod_config())
    # Without the feed's thread (wake-ups and poll), so that only the read's own catch-up
    # can make the cache current: the guarantee must not rest on timing.
    backend._feed.stop()
    for i in range(20 if not LONG else 300):
        name = f"p{i}"
        acked = int(peer.ask(f"create {name}", f"ack {name}").split()[2])
        # Straight after the answer: no time for the wake-up or the poll to have run.
        assert rv(pods.get(f"/pods/ns/{name}")) == acked
        assert rv(cache.get(f"/pods/ns/{name}", GetOptions())) == acked
        listed = cache.list("/pods/", ListOptions(recursive=True))
        assert listed.resource_version >= acked
        assert f"{name}" in {item["metadata"]["name"] for item in listed.items}
        updated = int(peer.ask(f"update {name}", f"ack {name}").split()[2])
        assert rv(cache.get(f"/pods/ns/{name}", GetOptions())) == updated
    assert backend.current_revision() == int(peer.ask("revision", "revision").split()[1])


def test_in_one_single_sync_scope_reads_catch_up_once_and_after_it_again(
    backend: LmdbBackend, peer: Peer, cache: Cacher
) -> None:
    """An admission pass's reads: the first catches up with the other process, the later
    ones in the same scope read as of that moment; a read after the scope sees everything
    acknowledged before it."""
    backend._feed.stop()  # only the reads' own catch-up moves this process's hub
    first = int(peer.ask("create p", "ack p").split()[2])
    with single_sync():
        assert rv(cache.get("/pods/ns/p", GetOptions())) == first
        updated = int(peer.ask("update p", "ack p").split()[2])
        assert backend.sync() == first  # not again within the scope
        assert rv(cache.get("/pods/ns/p", GetOptions())) == first
    assert rv(cache.get("/pods/ns/p", GetOptions())) == updated
    assert backend.sync() == updated


def test_a_consistent_read_reads_the_store_only_when_another_process_committed_since(
    backend: LmdbBackend, peer: Peer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The revision board spares the read transaction when nothing is new, and never hides
    what another process acknowledged."""
    backend._feed.stop()  # only the reads' own catch-up moves this process's hub
    reads = 0
    real_read = backend.read

    def counted_read() -> Any:
        nonlocal reads
        reads += 1
        return real_read()

    monkeypatch.setattr(backend, "read", counted_read)
    start = backend.sync()
    reads = 0
    assert backend.sync() == start
    assert reads == 0
    for i in range(5):
        acked = int(peer.ask(f"create q{i}", f"ack q{i}").split()[2])
        assert backend.sync() == acked
        assert reads > 0
        reads = 0
        assert backend.sync() == acked
        assert reads == 0


def test_every_watcher_in_both_processes_gets_every_write_of_both_in_order_exactly_once(
    backend: LmdbBackend, peer: Peer, cache: Cacher
) -> None:
    count = 150 if not LONG else 2000
    pods: Storage = backend.storage_for(pod_config())
    start = backend.current_revision()
    options = ListOptions(resource_version=str(start), recursive=True)
    here = pods.watch("/pods/", options)
    cached = cache.watch("/pods/", options)
    peer.ask(f"watch {start} {2 * count}", "watching")
    mine: dict[str, int] = {}

    def write_here(first: int) -> None:
        for i in range(first, count, 4):
            name = f"here-{i}"
            mine[name] = rv(pods.create(f"/pods/ns/{name}", pod("ns", name)))

    writers = [threading.Thread(target=write_here, args=(k,)) for k in range(4)]
    peer.send(f"burst there {count} 4")
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    peer.wait_for(lambda line: line == "burst-done", timeout=120)
    theirs = {name: r for name, r in peer.acks().items() if name.startswith("there-")}
    assert len(theirs) == count and len(mine) == count
    expected = sorted([*mine.values(), *theirs.values()])
    assert len(set(expected)) == 2 * count  # one revision per write, whoever wrote it

    for watcher in (here, cached):
        events = _collect(watcher.next, 2 * count)
        assert [e.resource_version for e in events] == expected
        assert {e.object["metadata"]["name"] for e in events} == {*mine, *theirs}
        assert all(e.type == EventType.ADDED for e in events)
        watcher.stop()
    peer.wait_for(lambda line: line.startswith("watch-"), timeout=60)
    assert "watch-done" in peer.lines
    seen_there = [int(line.split()[3]) for line in peer.lines if line.startswith("event ")]
    assert seen_there == expected


def test_a_process_killed_mid_burst_loses_nothing_it_acknowledged(
    backend: LmdbBackend, store: Path
) -> None:
    pods = backend.storage_for(pod_config())
    start = backend.current_revision()
    watcher = pods.watch("/pods/", ListOptions(resource_version=str(start), recursive=True))
    victim = Peer(store)
    try:
        victim.send("burst doomed 100000 8")
        victim.wait_for(lambda line: line.startswith("ack doomed-") and line.endswith("0"), 30)
        # Writing here meanwhile: the victim may die holding LMDB's write lock.
        done_here: list[int] = []

        def write_here() -> None:
            for i in range(200):
                done_here.append(rv(pods.create(f"/pods/ns/here-{i}", pod("ns", f"here-{i}"))))

        writer = threading.Thread(target=write_here, daemon=True)
        writer.start()
        time.sleep(0.2)
        victim.process.send_signal(signal.SIGKILL)
        victim.process.wait(timeout=30)
        victim.wait_for(lambda line: line == "<eof>")
        writer.join(timeout=60)
        assert not writer.is_alive(), "writes here stalled after the other process died"
    finally:
        victim.stop()
    acked = victim.acks()
    assert len(acked) >= 10
    for name, revision in acked.items():
        assert rv(pods.get(f"/pods/ns/{name}")) == revision
    # Still writable, and the watcher here got every acknowledged write, in order.
    after = rv(pods.create("/pods/ns/after", pod("ns", "after")))
    events = _collect(watcher.next, len(pods.list("/pods/", ListOptions(recursive=True)).items))
    revisions = [e.resource_version for e in events]
    assert revisions == sorted(set(revisions))
    assert set(acked.values()) | set(done_here) | {after} <= set(revisions)
    watcher.stop()


def test_housekeeping_has_one_leader_and_another_process_takes_over(store: Path) -> None:
    first = open_backend(store)
    peer = Peer(store)
    try:
        assert first.leads
        assert peer.ask("leads", "leads") == "leads False"
        first.close()
        deadline = time.monotonic() + 10
        while peer.ask("leads", "leads") != "leads True":
            assert time.monotonic() < deadline, "the other process never took the lead"
            time.sleep(0.1)
    finally:
        peer.stop()
        first.close()


def test_a_watch_from_before_a_compaction_made_elsewhere_is_expired(
    backend: LmdbBackend, peer: Peer
) -> None:
    pods = backend.storage_for(pod_config())
    first = rv(pods.create("/pods/ns/a", pod("ns", "a")))
    acked = int(peer.ask("update a", "ack a").split()[2])
    peer.ask(f"compact {acked}", "compacted")
    watcher = pods.watch("/pods/", ListOptions(resource_version=str(first), recursive=True))
    event = watcher.next(timeout=10)
    assert event is not None and event.type == EventType.ERROR
    assert event.object["code"] == 410


def test_a_watch_from_now_starts_after_what_another_process_acknowledged(
    backend: LmdbBackend, peer: Peer
) -> None:
    pods = backend.storage_for(pod_config())
    # Without the feed's thread: only the watch's own catch-up can bring the other process's
    # writes into this hub before the watch starts.
    backend._feed.stop()
    acked = [int(peer.ask(f"create w{i}", f"ack w{i}").split()[2]) for i in range(3)]
    starts = {
        "unset": ListOptions(recursive=True),
        "0": ListOptions(resource_version="0", recursive=True),
        "initial events from the first write": ListOptions(
            resource_version=str(acked[0]), send_initial_events=True, recursive=True
        ),
    }
    for label, options in starts.items():
        watcher = pods.watch("/pods/", options)
        initial = _collect(watcher.next, 3)
        assert [e.resource_version for e in initial] == acked, label
        watcher.stop()
    # The other process's compaction is this backend's compacted revision at once.
    peer.ask(f"compact {acked[1]}", "compacted")
    assert backend.compacted_revision == acked[1]


def test_a_compaction_by_one_process_under_writes_from_both_expires_older_watches_in_both(
    backend: LmdbBackend, peer: Peer
) -> None:
    count = 150 if not LONG else 2000
    pods = backend.storage_for(pod_config())
    mine: dict[str, int] = {}

    def write_here(first: int) -> None:
        for i in range(first, count, 4):
            name = f"here-{i}"
            mine[name] = rv(pods.create(f"/pods/ns/{name}", pod("ns", name)))

    writers = [threading.Thread(target=write_here, args=(k,)) for k in range(4)]
    peer.send(f"burst there {count} 4")
    for writer in writers:
        writer.start()
    # Compacted by the other process while both are writing.
    peer.wait_for(lambda line: line.startswith(f"ack there-{count // 3} "))
    compacted = int(peer.ask(f"compact {backend.current_revision()}", "compacted").split()[1])
    for writer in writers:
        writer.join(120)
    peer.wait_for(lambda line: line == "burst-done", timeout=120)
    theirs = {name: r for name, r in peer.acks().items() if name.startswith("there-")}
    assert len(mine) == count and len(theirs) == count
    assert backend.compacted_revision == compacted

    # Below the compaction: 410, here (which did not compact) and there.
    expired = pods.watch("/pods/", ListOptions(resource_version=str(compacted - 1)))
    event = expired.next(timeout=10)
    assert event is not None and event.type == EventType.ERROR, event
    assert event.object["code"] == 410
    with pytest.raises(Expired):
        pods.list(
            "/pods/",
            ListOptions(
                resource_version=str(compacted - 1),
                resource_version_match=ResourceVersionMatch.EXACT,
            ),
        )
    assert peer.ask(f"watch {compacted - 1} 1", "watch-").startswith("watch-error")

    # From the compaction on: every acknowledged write after it, in order, exactly once.
    after = sorted(r for r in [*mine.values(), *theirs.values()] if r > compacted)
    assert after, "the compaction came after every write"
    watcher = pods.watch("/pods/", ListOptions(resource_version=str(compacted)))
    assert [e.resource_version for e in _collect(watcher.next, len(after))] == after
    assert watcher.next(timeout=0.2) is None
    watcher.stop()
