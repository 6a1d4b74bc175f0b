"""A bounded load run against a running ``kstore serve``: compare-and-swap writers and watchers.

:func:`run_load` creates ``objects`` ConfigMaps in a fresh namespace, starts ``watchers``
:class:`~kstore.testing.http_workload.HttpWatcher` threads from the list's revision and
``writers`` :class:`~kstore.testing.writers.CasWriter` threads (GET, then PUT with the read
resourceVersion, retry on 409) for ``duration`` seconds, samples the server's RSS once a
second, then stops the writers, waits until every watcher has received the last write, and
checks the run:

- zero errors: no request failed other than with the 409s a compare-and-swap expects, and
  none went unanswered;
- the acknowledged writes form the whole history (every write had a definite outcome), with
  strictly increasing revisions; each update replaced exactly the revision it read (no lost
  update); a write answered before another was sent has the lower revision; a final list
  equals the history's final state;
- every watcher received exactly that history from its start to the last write: nothing lost,
  nothing twice, in order, no 410.

It reports (:class:`LoadReport`) the p50/p99 write latency (the PUT that succeeded), the p99
watch lag (an event's arrival at a watcher minus the arrival of the writer's 200 for it; the
client's own scheduling is part of it, as it is for any client), and the server's RSS at the
end of the warm-up and at the end. Bounds on those figures are the caller's business: CI
asserts only correctness; the long form checks goal G11 of reliability.md.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import httpx

from kstore.testing.http_workload import ConfigMapApi, HttpWatcher, Interner
from kstore.testing.watch_history import (
    Acknowledged,
    Change,
    check_compare_and_swap,
    check_history,
    check_real_time,
    check_watch,
    final_state,
)
from kstore.testing.writers import CasWriter

__all__ = ["LoadReport", "percentile", "run_load"]


@dataclass(frozen=True, kw_only=True, slots=True)
class LoadReport:
    """Figures and problems of one load run (an empty ``problems`` is a pass)."""

    duration: float
    writes: int
    conflicts: int
    errors: list[str]
    watch_events: int
    write_p50: float
    write_p99: float
    lag_p50: float
    lag_p99: float
    rss_after_warmup: int
    rss_end: int
    rss_peak: int
    #: The server's RSS at each quarter of the run (where it plateaus shows whether growth
    #: is the watch cache's window filling or a leak).
    rss_quarters: tuple[int, ...] = ()
    problems: list[str] = field(default_factory=list)

    @property
    def rss_growth(self) -> float:
        """Relative RSS growth from the end of the warm-up to the end of the run."""
        return self.rss_end / self.rss_after_warmup - 1.0 if self.rss_after_warmup else 0.0

    def summary(self) -> str:
        mib = 1024 * 1024
        return (
            f"{self.writes} CAS writes in {self.duration:.1f} s "
            f"({self.writes / self.duration:.0f}/s, {self.conflicts} conflicts retried), "
            f"{self.watch_events} watch events delivered, errors {len(self.errors)}; "
            f"write latency p50 {self.write_p50 * 1000:.1f} ms p99 {self.write_p99 * 1000:.1f} "
            f"ms; watch lag p50 {self.lag_p50 * 1000:.1f} ms p99 {self.lag_p99 * 1000:.1f} ms; "
            f"server RSS {self.rss_after_warmup / mib:.1f} -> {self.rss_end / mib:.1f} MiB "
            f"({self.rss_growth:+.1%}, peak {self.rss_peak / mib:.1f} MiB; by quarter "
            f"{' '.join(f'{rss / mib:.1f}' for rss in self.rss_quarters)} MiB)"
        )


def percentile(values: Sequence[float], fraction: float) -> float:
    """The ``fraction`` quantile (nearest rank) of ``values``; 0.0 when empty."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))]


class _RssSampler(threading.Thread):
    def __init__(self, rss: Callable[[], int], stop: threading.Event) -> None:
        super().__init__(name="rss-sampler", daemon=True)
        self.samples: list[tuple[float, int]] = []
        self._rss = rss
        self._stop_now = stop

    def run(self) -> None:
        while not self._stop_now.is_set():
            self.samples.append((time.monotonic(), self._rss()))
            self._stop_now.wait(1.0)

    def at(self, moment: float) -> int:
        before = [rss for when, rss in self.samples if when <= moment]
        return before[-1] if before else (self.samples[0][1] if self.samples else 0)


def run_load(
    base_url: str,
    namespace: str,
    *,
    rss: Callable[[], int],
    duration: float,
    writers: int = 20,
    watchers: int = 50,
    objects: int = 40,
    writer_rate: float | None = None,
    warmup: float | None = None,
) -> LoadReport:
    """Run the load described in the module docstring; ``rss`` reads the server's RSS,
    ``writer_rate`` paces each writer (CAS updates per second; None: as fast as it can),
    ``warmup`` (default: 10 % of ``duration``, at least 2 s) ends the RSS baseline."""
    with httpx.Client(base_url=base_url, timeout=30) as client:
        api = ConfigMapApi(client, namespace)
        if api.create_namespace() != 201:
            raise RuntimeError(f"namespace {namespace} could not be created")
        names = [f"cm{index}" for index in range(objects)]
        creates = []
        for name in names:
            status, revision = api.create(name, f"{name}-0")
            if status != 201 or revision is None:
                raise RuntimeError(f"create {name}: HTTP {status}")
            creates.append(Acknowledged("create", name, f"{name}-0", revision))
        start, _ = api.list_all()

    began = time.monotonic()
    deadline = began + duration + 120  # a hard bound for every thread, whatever happens
    interner = Interner()
    watch_threads = [
        HttpWatcher(
            base_url, namespace, start, name=f"watch{i}", interner=interner, deadline=deadline
        )
        for i in range(watchers)
    ]
    for watcher in watch_threads:
        watcher.start()
    stop_sampling = threading.Event()
    sampler = _RssSampler(rss, stop_sampling)
    sampler.start()
    write_threads = [
        CasWriter(
            base_url,
            namespace,
            name=f"w{i}",
            deadline=began + duration,
            max_ops=int(duration * (writer_rate or 1000)) + 1,
            names=names,
            rate=writer_rate,
            seed=i,
        )
        for i in range(writers)
    ]
    for writer in write_threads:
        writer.start()
    for writer in write_threads:
        writer.join(duration + 60)
    written = time.monotonic()

    with httpx.Client(base_url=base_url, timeout=30) as client:
        final_revision, listed = ConfigMapApi(client, namespace).list_all()
    # The watchers must deliver the namespace's last change (the workload deletes nothing, so
    # it is the newest listed item). The list's own revision is the store's, which another
    # resource's write (a controller renewing its lease) may have moved past it: a watch
    # reaches that only by a bookmark, which these watchers do not ask for.
    last_change = max((change.revision for change in listed.values()), default=start)
    caught_up = [w.wait_reached(last_change, timeout=60) for w in watch_threads]
    stop_sampling.set()
    for watcher in watch_threads:
        watcher.request_stop()
    for watcher in watch_threads:
        watcher.join(30)
    sampler.join(5)

    problems: list[str] = []
    acks = [ack for w in write_threads for ack in w.tally.acks]
    acked_at: dict[int, float] = {}
    for w in write_threads:
        acked_at.update(w.tally.acked_at)
    history = sorted(
        (
            Change(a.revision, "ADDED" if a.kind == "create" else "MODIFIED", a.name, a.value)
            for a in [*creates, *acks]
            if a.revision is not None
        ),
        key=lambda change: change.revision,
    )
    problems += check_history(history)
    problems += check_compare_and_swap(acks, history)
    problems += check_real_time(acks)
    state = final_state(history)
    shown = {name: (change.revision, change.value) for name, change in listed.items()}
    if shown != state:
        problems.append("final list differs from the acknowledged writes' final state")
    lags: list[float] = []
    for watcher, reached in zip(watch_threads, caught_up, strict=True):
        if not reached:
            problems.append(
                f"{watcher.name} never reached revision {last_change}, the last change "
                f"listed at revision {final_revision}"
            )
        problems += check_watch(watcher.record, history, until=final_revision)
        if watcher.record.expirations():
            problems.append(f"{watcher.name} got 410 during a run without compaction")
        events = [e for segment in watcher.record.segments for e in segment.events]
        for event, received in zip(events, watcher.received_at, strict=True):
            acked = acked_at.get(event.revision)
            if acked is not None:
                lags.append(received - acked)
    errors = [error for w in write_threads for error in w.tally.errors]
    errors += [f"{w.name}: {w.tally.unknown} unanswered" for w in write_threads if w.tally.unknown]
    errors += [f"{w.name}: {w.tally.refused} refused" for w in write_threads if w.tally.refused]
    if any(w.is_alive() for w in [*write_threads, *watch_threads]):
        problems.append("a writer or watcher thread did not stop")
    latencies = [latency for w in write_threads for latency in w.tally.latencies]
    warmup_end = began + (warmup if warmup is not None else max(2.0, duration * 0.1))
    rss_values = [value for _, value in sampler.samples] or [0]
    return LoadReport(
        duration=written - began,
        writes=len(acks),
        conflicts=sum(w.tally.conflicts for w in write_threads),
        errors=errors,
        watch_events=sum(w.record.event_count() for w in watch_threads),
        write_p50=statistics.median(latencies) if latencies else 0.0,
        write_p99=percentile(latencies, 0.99),
        lag_p50=statistics.median(lags) if lags else 0.0,
        lag_p99=percentile(lags, 0.99),
        rss_after_warmup=sampler.at(warmup_end),
        rss_end=rss_values[-1],
        rss_peak=max(rss_values),
        rss_quarters=tuple(sampler.at(began + duration * q / 4) for q in range(1, 5)),
        problems=problems,
    )
