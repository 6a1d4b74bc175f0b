"""kill -9 of ``kstore serve`` under write and watch load over HTTP, then a restart.

Writers create, update (compare-and-swap) and delete ConfigMaps of their own with unique
values; watchers watch the namespace and resume from the last revision they received whenever
their connection ends. The server is killed with SIGKILL several times (many with
``KSTORE_LONG=1``) and started again on the same port and the same data directory (LMDB, with
and without the watch cache) or etcd prefix (etcd, watch cache on). Afterwards the whole
history is read back with one watch from the start revision (on a server without the watch
cache, so from storage), and:

- every acknowledged create and update is in it at the revision it returned (none lost), and
  no revision is used twice, before or after a crash; each acknowledged conditional update
  replaced exactly the revision it named, and revisions agree with real time;
- what a final list shows is the history's final state;
- after each restart the server answered ``/readyz`` within 5 s (or, on a machine so loaded
  that its first start took longer, within twice that), and its revision is at least the
  highest revision acknowledged before the kill;
- each watcher received exactly the history from its start to the end, in order and once
  each, across every connection; the only break allowed is a 410, which a client can see (with
  the watch cache a restarted server's window begins at its first list, so a watcher behind it
  gets 410 and relists; without the cache, storage keeps the whole history and no 410 is
  allowed at all).

A process kill keeps the kernel's page cache, so this checks the commit protocol and revision
bookkeeping end to end, not fsync (reliability.md 4; the durable flags have their own test).
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import httpx
import orjson
import pytest

from kstore.testing.http_workload import (
    ConfigMapApi,
    HttpWatcher,
    Interner,
    change_of,
    read_history,
)
from kstore.testing.serve_process import ServeProcess
from kstore.testing.watch_history import (
    Change,
    check_acknowledged,
    check_compare_and_swap,
    check_history,
    check_real_time,
    check_watch,
    final_state,
)
from kstore.testing.writers import MixedWriter
from tests.clients.servers import storage_args

pytestmark = [pytest.mark.fault, pytest.mark.slow]

LONG = os.environ.get("KSTORE_LONG") == "1"
#: kill -9s per run: a few in CI, many in the opt-in long form.
KILLS = 20 if LONG else 3
WRITERS = 4
WATCHERS = 4
NAMESPACE = "robust"
#: Longest time a restarted server may take to be ready (goal C9 of reliability.md).
READY_WITHIN = 5.0


@pytest.mark.parametrize(
    ("backend", "watch_cache"),
    [
        pytest.param("lmdb", True, id="lmdb-watch-cache"),
        pytest.param("lmdb", False, id="lmdb-no-watch-cache"),
        pytest.param("etcd", True, id="etcd-watch-cache", marks=pytest.mark.etcd),
    ],
)
@pytest.mark.timeout(120 + KILLS * 30)
def test_kill9_under_load_loses_no_acknowledged_write_and_no_watch_event(
    request: pytest.FixtureRequest, tmp_path: Path, backend: str, watch_cache: bool
) -> None:
    with storage_args(request.config, backend) as backend_args:
        _kill_under_load(tmp_path, [*backend_args], watch_cache)


def _kill_under_load(tmp_path: Path, backend_args: list[str], watch_cache: bool) -> None:
    rng = random.Random(8)
    # No compaction during the run: the history read at the end must still be there.
    args = [
        *backend_args,
        "--etcd-compaction-interval",
        "0",
        f"--watch-cache={str(watch_cache).lower()}",
    ]
    server = ServeProcess(tmp_path / "data", args).start()
    cold_start = server.ready_seconds
    deadline = time.monotonic() + 60 + KILLS * 20
    writers: list[MixedWriter] = []
    watchers: list[HttpWatcher] = []
    ready_times: list[float] = []
    try:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            api = ConfigMapApi(client, NAMESPACE)
            assert api.create_namespace() == 201
            start, _ = api.list_all()
        interner = Interner()
        watchers = [
            HttpWatcher(
                server.url, NAMESPACE, start, name=f"watch{i}", interner=interner, deadline=deadline
            )
            for i in range(WATCHERS)
        ]
        writers = [
            MixedWriter(
                server.url,
                NAMESPACE,
                name=f"w{i}",
                deadline=deadline,
                max_ops=100_000,
                rate=None,
                seed=i,
            )
            for i in range(WRITERS)
        ]
        for thread in [*watchers, *writers]:
            thread.start()
        for _ in range(KILLS):
            time.sleep(rng.uniform(1.0, 2.0))
            server.kill()
            highest_acked = max(
                (a.revision for w in writers for a in w.tally.acks if a.revision is not None),
                default=start,
            )
            time.sleep(rng.uniform(0.0, 0.3))
            server.start()
            ready_times.append(server.ready_seconds)
            with httpx.Client(base_url=server.url, timeout=30) as client:
                revision, _ = ConfigMapApi(client, NAMESPACE).list_all()
            assert revision >= highest_acked, "the revision went back after the restart"
        time.sleep(1.0)
        for writer in writers:
            writer.request_stop()
        for writer in writers:
            writer.join(60)
            assert not writer.is_alive()
        with httpx.Client(base_url=server.url, timeout=30) as client:
            final_revision, listed = ConfigMapApi(client, NAMESPACE).list_all()
        caught_up = [w.wait_reached(final_revision, timeout=30) for w in watchers]
        for watcher in watchers:
            watcher.request_stop()
        for watcher in watchers:
            watcher.join(30)
        assert server.stop() == 0, server.log_tail()
        server.start(["--watch-cache=false"])
        history = read_history(server.url, NAMESPACE, start, final_revision)
    finally:
        for thread in [*writers, *watchers]:
            thread.request_stop()
        server.stop()

    acks = [ack for writer in writers for ack in writer.tally.acks]
    problems = check_history(history) + check_acknowledged(acks, history)
    problems += check_compare_and_swap(acks, history) + check_real_time(acks)
    state = final_state(history)
    shown = {name: (change.revision, change.value) for name, change in listed.items()}
    if shown != state:
        problems.append(f"final list {shown} is not the history's final state {state}")
    for watcher in watchers:
        problems += check_watch(watcher.record, history, until=final_revision)
        if not watch_cache and watcher.record.expirations():
            problems.append(f"{watcher.name}: 410 although storage holds the whole history")
    errors = [error for writer in writers for error in writer.tally.errors]
    print(
        f"\nkill -9 x{KILLS} ({' '.join(backend_args[:2]) or 'lmdb'}, watch cache "
        f"{watch_cache}): {len(acks)} writes acknowledged, "
        f"{sum(w.tally.unknown for w in writers)} unknown, "
        f"{sum(w.tally.refused for w in writers)} refused, {len(history)} in history, "
        f"ready after restart {[f'{t:.2f}s' for t in ready_times]} (cold start "
        f"{cold_start:.2f}s, loadavg {os.getloadavg()[0]:.1f}), watch connections "
        f"{sum(len(w.record.segments) for w in watchers)}, 410s "
        f"{sum(w.record.expirations() for w in watchers)}"
    )
    assert not errors, errors
    assert all(caught_up), "a watcher did not reach the final revision"
    assert not problems, "\n".join(problems[:30])
    # Ready within 5 s; on a machine so loaded that even the first start took longer, within
    # twice that start (a crash must cost no recovery work beyond a plain start).
    bound = max(READY_WITHIN, 2 * cold_start)
    assert all(seconds <= bound for seconds in ready_times), (ready_times, cold_start)
    assert len(acks) > 50, "too few writes acknowledged to mean anything"


def _watch_from(
    url: str, start: int, until: int, errors: dict[int, str] | None = None
) -> list[Change] | int:
    """The changes after ``start`` up to ``until`` from one watch, or the HTTP code of the
    error that ended it (its message goes to ``errors[start]``)."""
    events: list[Change] = []
    params = {"watch": "true", "resourceVersion": str(start), "timeoutSeconds": "10"}
    with (
        httpx.Client(base_url=url, timeout=15) as client,
        client.stream("GET", f"/api/v1/namespaces/{NAMESPACE}/configmaps", params=params) as r,
    ):
        if r.status_code != 200:
            if errors is not None:
                errors[start] = r.read().decode(errors="replace")
            return r.status_code
        for line in r.iter_lines():
            if not line:
                continue
            event = orjson.loads(line)
            if event["type"] == "ERROR":
                if errors is not None:
                    errors[start] = str(event["object"].get("message"))
                return int(event["object"]["code"])
            events.append(change_of(event["type"], event["object"]))
            if events[-1].revision >= until:
                break
    return events


def _wait_for_watch_cache(url: str) -> None:
    """Return once a watch of the namespace's ConfigMaps was answered (after the watch cache,
    if any, made its first list)."""
    params = {"watch": "true", "timeoutSeconds": "1"}
    with (
        httpx.Client(base_url=url, timeout=30) as client,
        client.stream("GET", f"/api/v1/namespaces/{NAMESPACE}/configmaps", params=params) as r,
    ):
        assert r.status_code == 200, r.status_code


def _revision_served_now(url: str) -> int:
    """The revision a LIST at resourceVersion "0" is served at: the watch cache's, if any."""
    with httpx.Client(base_url=url, timeout=30) as client:
        response = client.get(
            f"/api/v1/namespaces/{NAMESPACE}/configmaps", params={"resourceVersion": "0"}
        )
        response.raise_for_status()
        return int(response.json()["metadata"]["resourceVersion"])


@pytest.mark.parametrize("watch_cache", [True, False], ids=["watch-cache", "no-watch-cache"])
def test_a_watch_from_before_a_kill_resumes_exactly_or_gets_410(
    tmp_path: Path, watch_cache: bool
) -> None:
    """After kill -9 and a restart, a watch from any revision before the crash delivers exactly
    the changes since, or gets 410 Expired; never a silent gap. Without the watch cache storage
    serves them all. With it, the window starts at the cache's first list after the restart:
    revisions before that get 410 (as from Kubernetes' cacher), even the last ConfigMap change
    before the crash when the store's revision moved on without one (a lease renewed, a
    ServiceAccount made), and a watch from the revision the cache serves at once it is ready
    resumes exactly."""
    args = ["--etcd-compaction-interval", "0", f"--watch-cache={str(watch_cache).lower()}"]
    server = ServeProcess(tmp_path / "data", args).start()
    try:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            api = ConfigMapApi(client, NAMESPACE)
            assert api.create_namespace() == 201
            start, _ = api.list_all()
            _, first = api.create("a", "a1")
            assert first is not None
            _, second = api.update("a", "a2", first)
            _, third = api.create("b", "b1")
        server.kill()
        server.start()
        # A LIST at "0" is served by the cache only once it has made its first list, which a
        # watch waits for: the revision read is then the cache's, and "c" is written after it.
        _wait_for_watch_cache(server.url)
        resumable = _revision_served_now(server.url)
        with httpx.Client(base_url=server.url, timeout=30) as client:
            api = ConfigMapApi(client, NAMESPACE)
            _, fourth = api.create("c", "c1")
            assert api.delete("a") == 200
            final, _ = api.list_all()
        assert second is not None and third is not None and fourth is not None
        errors: dict[int, str] = {}
        points = (start, first, third, resumable)
        outcomes = {point: _watch_from(server.url, point, final, errors) for point in points}
        server.stop()
        server.start(["--watch-cache=false"])
        history = read_history(server.url, NAMESPACE, start, final)
    finally:
        server.stop()
    assert [c.value for c in history] == ["a1", "a2", "b1", "c1", "a2"]
    for point, outcome in outcomes.items():
        expected = [change for change in history if change.revision > point]
        if isinstance(outcome, int):
            assert watch_cache and outcome == 410, (point, outcome)
        else:
            assert outcome == expected, point
    assert third <= resumable < fourth
    assert outcomes[resumable] == [c for c in history if c.revision > resumable], (
        f"revisions: start {start}, first {first}, third {third}, resumable {resumable}, "
        f"final {final}; errors {errors}\n{server.log_tail(80)}"
    )
    if not watch_cache:
        assert all(not isinstance(outcome, int) for outcome in outcomes.values())
