"""``/metrics``: request, watch and storage figures in the Prometheus text format (0.0.4).

Names and labels follow kube-apiserver's, so existing dashboards read them:

- ``apiserver_request_total{verb,group,version,resource,subresource,scope,component,code}``;
- ``apiserver_request_duration_seconds`` (histogram, Kubernetes' buckets) for every request but
  watches, whose duration is the client's choice;
- ``apiserver_longrunning_requests{verb="WATCH",...}``: watches open now;
- ``apiserver_watch_events_total{group,version,kind}``: events sent to watchers;
- ``apiserver_requested_deprecated_apis{group,version,resource,subresource,removed_release}``:
  1 for each deprecated version's endpoint requested since the start;
- whatever a :data:`FigureSource` adds (storage object counts, watch-cache sizes...).

Verbs are Kubernetes' metric verbs (``GET``, ``LIST``, ``WATCH``, ``POST``, ``PUT``, ``PATCH``,
``APPLY``, ``DELETE``, ``DELETECOLLECTION``); non-resource requests are counted with their
path as ``resource`` only for the few fixed paths this server has, so label sets stay bounded.
Recording takes one lock per request; rendering copies under it and formats outside.
"""

from __future__ import annotations

import os
import threading
import time
from bisect import bisect_left
from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = ["Figure", "FigureSource", "Metrics", "RequestLabels"]

#: kube-apiserver's apiserver_request_duration_seconds buckets.
_BUCKETS = (
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0,
    6.0, 8.0, 10.0, 15.0, 20.0, 30.0, 45.0, 60.0,
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class RequestLabels:
    verb: str
    group: str = ""
    version: str = ""
    resource: str = ""
    subresource: str = ""
    scope: str = ""

    def render(self) -> str:
        return (
            f'verb="{self.verb}",group="{self.group}",version="{self.version}",'
            f'resource="{_escape(self.resource)}",subresource="{self.subresource}",'
            f'scope="{self.scope}",component="apiserver"'
        )


@dataclass(frozen=True, slots=True)
class Figure:
    """One sample from a :data:`FigureSource`; ``type`` is ``gauge`` or ``counter``."""

    name: str
    type: str
    help: str
    labels: tuple[tuple[str, str], ...]
    value: float


FigureSource = Callable[[], Iterable[Figure]]


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


class _Histogram:
    __slots__ = ("buckets", "count", "sum")

    def __init__(self) -> None:
        self.buckets = [0] * (len(_BUCKETS) + 1)
        self.sum = 0.0
        self.count = 0


class Metrics:
    """The server's counters. Thread-safe."""

    def __init__(self, sources: Iterable[FigureSource] = ()) -> None:
        self._lock = threading.Lock()
        self._requests: dict[tuple[RequestLabels, int], int] = {}
        self._latency: dict[RequestLabels, _Histogram] = {}
        self._watches: dict[RequestLabels, int] = {}
        self._watch_events: dict[tuple[str, str, str], int] = {}
        self._deprecated: set[tuple[str, str, str, str, str]] = set()
        self._sources = list(sources)
        self._started = time.time()

    def add_source(self, source: FigureSource) -> None:
        self._sources.append(source)

    def observe(self, labels: RequestLabels, code: int, seconds: float | None) -> None:
        """Count one finished request; ``seconds`` None for watches (no latency sample)."""
        with self._lock:
            key = (labels, code)
            self._requests[key] = self._requests.get(key, 0) + 1
            if seconds is None:
                return
            h = self._latency.get(labels)
            if h is None:
                h = self._latency[labels] = _Histogram()
            h.buckets[bisect_left(_BUCKETS, seconds)] += 1
            h.sum += seconds
            h.count += 1

    def watch_opened(self, labels: RequestLabels) -> None:
        with self._lock:
            self._watches[labels] = self._watches.get(labels, 0) + 1

    def watch_closed(self, labels: RequestLabels) -> None:
        with self._lock:
            self._watches[labels] = self._watches.get(labels, 1) - 1

    def watch_events(self, group: str, version: str, kind: str, count: int) -> None:
        with self._lock:
            key = (group, version, kind)
            self._watch_events[key] = self._watch_events.get(key, 0) + count

    def deprecated_requested(
        self, group: str, version: str, resource: str, subresource: str, removed_release: str
    ) -> None:
        """Note a request to a deprecated version (``removed_release`` as ``1.16``, or "")."""
        key = (group, version, resource, subresource, removed_release)
        if key in self._deprecated:  # read without the lock: a set only grows
            return
        with self._lock:
            self._deprecated.add(key)

    def open_watches(self) -> int:
        with self._lock:
            return sum(self._watches.values())

    def render(self) -> bytes:
        with self._lock:
            requests = dict(self._requests)
            latency = {k: (list(h.buckets), h.sum, h.count) for k, h in self._latency.items()}
            watches = dict(self._watches)
            events = dict(self._watch_events)
            deprecated = sorted(self._deprecated)
        out: list[str] = [
            "# HELP apiserver_request_total Counter of apiserver requests broken out by verb, "
            "group, version, resource, scope, component and HTTP response code.",
            "# TYPE apiserver_request_total counter",
        ]
        for (labels, code), n in sorted(requests.items(), key=lambda kv: str(kv[0])):
            out.append(f'apiserver_request_total{{{labels.render()},code="{code}"}} {n}')
        out += [
            "# HELP apiserver_request_duration_seconds Response latency distribution in seconds "
            "for each verb, group, version, resource, subresource, scope and component.",
            "# TYPE apiserver_request_duration_seconds histogram",
        ]
        for labels, (buckets, total, count) in sorted(latency.items(), key=lambda kv: str(kv[0])):
            rendered = labels.render()
            cumulative = 0
            for bound, n in zip(_BUCKETS, buckets, strict=False):
                cumulative += n
                out.append(
                    f'apiserver_request_duration_seconds_bucket{{{rendered},le="{bound:g}"}} '
                    f"{cumulative}"
                )
            out.append(f'apiserver_request_duration_seconds_bucket{{{rendered},le="+Inf"}} {count}')
            out.append(f"apiserver_request_duration_seconds_sum{{{rendered}}} {total:.6f}")
            out.append(f"apiserver_request_duration_seconds_count{{{rendered}}} {count}")
        out += [
            "# HELP apiserver_longrunning_requests Gauge of all active long-running apiserver "
            "requests broken out by verb, group, version, resource, scope and component.",
            "# TYPE apiserver_longrunning_requests gauge",
        ]
        for labels, n in sorted(watches.items(), key=lambda kv: str(kv[0])):
            out.append(f"apiserver_longrunning_requests{{{labels.render()}}} {n}")
        out += [
            "# HELP apiserver_watch_events_total Number of events sent in watch clients",
            "# TYPE apiserver_watch_events_total counter",
        ]
        for (group, version, kind), n in sorted(events.items()):
            out.append(
                f'apiserver_watch_events_total{{group="{group}",version="{version}",'
                f'kind="{kind}"}} {n}'
            )
        out += [
            "# HELP apiserver_requested_deprecated_apis Gauge of deprecated APIs that have been "
            "requested, broken out by API group, version, resource, subresource, and "
            "removed_release.",
            "# TYPE apiserver_requested_deprecated_apis gauge",
        ]
        for group, version, resource, subresource, removed in deprecated:
            out.append(
                f'apiserver_requested_deprecated_apis{{group="{group}",'
                f'removed_release="{removed}",resource="{resource}",'
                f'subresource="{subresource}",version="{version}"}} 1'
            )
        out += self._figures()
        out += [
            "# HELP process_start_time_seconds Start time of the process since unix epoch in "
            "seconds.",
            "# TYPE process_start_time_seconds gauge",
            f"process_start_time_seconds {self._started:.3f}",
        ]
        rss = _resident_bytes()
        if rss is not None:
            out += [
                "# HELP process_resident_memory_bytes Resident memory size in bytes.",
                "# TYPE process_resident_memory_bytes gauge",
                f"process_resident_memory_bytes {rss}",
            ]
        return ("\n".join(out) + "\n").encode()

    def _figures(self) -> list[str]:
        out: list[str] = []
        seen: set[str] = set()
        figures: list[Figure] = []
        for source in self._sources:
            try:
                figures.extend(source())
            except Exception:
                continue
        for f in sorted(figures, key=lambda f: f.name):
            if f.name not in seen:
                seen.add(f.name)
                out.append(f"# HELP {f.name} {f.help}")
                out.append(f"# TYPE {f.name} {f.type}")
            labels = ",".join(f'{k}="{_escape(v)}"' for k, v in f.labels)
            value = int(f.value) if float(f.value).is_integer() else f.value
            out.append(f"{f.name}{{{labels}}} {value}" if labels else f"{f.name} {value}")
        return out


def _resident_bytes() -> int | None:
    try:
        with open(f"/proc/{os.getpid()}/statm") as f:
            pages = int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE")
