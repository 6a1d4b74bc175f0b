"""Writer threads for robustness runs over HTTP, recording every outcome.

- :class:`MixedWriter` owns a few ConfigMaps and creates, updates (compare-and-swap on the
  revision it last saw) and deletes (with a resourceVersion precondition) them, as the
  Kubernetes traffic of etcd's robustness suite does. It survives a server that dies under it:
  a request without an answer is an **unknown** outcome (the write may or may not have
  committed), after which the writer re-reads the object before touching it again.
- :class:`CasWriter` updates ConfigMaps shared with the other writers the way a controller
  does: GET, change, PUT with the read ``resourceVersion``, and on 409 Conflict read again and
  retry (a bounded number of times).

Both record acknowledged writes (:class:`~kstore.testing.watch_history.Acknowledged`, with the
precondition, when the request was sent and when its answer arrived) and count every other
outcome (a request that got no answer is *unknown*; one that found no server to connect to is
*refused*, a definite failure: nothing was sent). Every value written is unique
(``<writer>-<sequence>``). Each loop is bounded by a deadline and an operation count, and may be
paced to a rate, so a run on a shared machine stays bounded.
"""

from __future__ import annotations

import random
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace

import httpx

from kstore.testing.http_workload import ConfigMapApi
from kstore.testing.watch_history import Acknowledged

__all__ = ["CasWriter", "MixedWriter", "WriterTally"]


@dataclass(slots=True)
class WriterTally:
    """What one writer saw. ``acked_at`` maps a returned revision to ``time.monotonic()`` at
    the answer; ``latencies`` holds the seconds each acknowledged write request took."""

    acks: list[Acknowledged] = field(default_factory=list)
    acked_at: dict[int, float] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    unknown: int = 0
    refused: int = 0
    conflicts: int = 0
    not_found: int = 0
    errors: list[str] = field(default_factory=list)

    def acknowledge(self, ack: Acknowledged, began: float) -> None:
        now = time.monotonic()
        self.acks.append(replace(ack, invoked=began, returned=now))
        self.latencies.append(now - began)
        if ack.revision is not None:
            self.acked_at[ack.revision] = now


class _PacedWriter(threading.Thread, ABC):
    def __init__(
        self,
        base_url: str,
        namespace: str,
        *,
        name: str,
        deadline: float,
        max_ops: int,
        rate: float | None,
        seed: int,
    ) -> None:
        super().__init__(name=name, daemon=True)
        self.base_url = base_url
        self.namespace = namespace
        self.tally = WriterTally()
        self.ops = 0
        self._deadline = deadline
        self._max_ops = max_ops
        self._interval = 1.0 / rate if rate else 0.0
        self._rng = random.Random(seed)
        self._stop_now = threading.Event()
        self._sequence = 0

    def request_stop(self) -> None:
        self._stop_now.set()

    def _value(self) -> str:
        self._sequence += 1
        return f"{self.name}-{self._sequence}"

    def run(self) -> None:
        next_at = time.monotonic()
        with httpx.Client(base_url=self.base_url, timeout=httpx.Timeout(30.0)) as client:
            api = ConfigMapApi(client, self.namespace)
            while (
                not self._stop_now.is_set()
                and self.ops < self._max_ops
                and time.monotonic() < self._deadline
            ):
                if self._interval:
                    delay = next_at - time.monotonic()
                    if delay > 0:
                        time.sleep(delay)
                    next_at = max(next_at + self._interval, time.monotonic() - self._interval)
                self.ops += 1
                try:
                    self.step(api)
                except httpx.ConnectError:
                    # No connection, so no request sent: a definite failure, nothing to forget.
                    self.tally.refused += 1
                    time.sleep(0.05)
                except httpx.TransportError:
                    self.tally.unknown += 1
                    self.lost_track()
                    time.sleep(0.05)  # the server is down or restarting: do not spin

    @abstractmethod
    def step(self, api: ConfigMapApi) -> None:
        """One operation (or one attempt of it) against the server."""

    def lost_track(self) -> None:
        """An answer never came: forget what is known of the objects touched."""


class MixedWriter(_PacedWriter):
    """Creates, updates and deletes ``objects`` ConfigMaps of its own (see module docstring)."""

    def __init__(
        self,
        base_url: str,
        namespace: str,
        *,
        name: str,
        deadline: float,
        max_ops: int,
        rate: float | None = None,
        seed: int = 0,
        objects: int = 3,
    ) -> None:
        super().__init__(
            base_url, namespace, name=name, deadline=deadline, max_ops=max_ops, rate=rate, seed=seed
        )
        self.names = [f"{self.name}-o{index}" for index in range(objects)]
        #: name -> revision last seen (None: absent); a name missing from it must be re-read.
        self.known: dict[str, int | None] = dict.fromkeys(self.names)
        self._current: str | None = None

    def lost_track(self) -> None:
        if self._current is not None:
            self.known.pop(self._current, None)

    def step(self, api: ConfigMapApi) -> None:
        name = self._current = self._rng.choice(self.names)
        if name not in self.known:
            status, seen = api.get(name)
            if status not in (200, 404):
                self.tally.errors.append(f"GET {name}: {status}")
                return
            self.known[name] = seen.revision if seen is not None else None
            return
        revision = self.known[name]
        value = self._value()
        began = time.monotonic()
        if revision is None:
            status, new = api.create(name, value)
            if status == 201 and new is not None:
                self.tally.acknowledge(Acknowledged("create", name, value, new), began)
                self.known[name] = new
            else:
                self._refused("create", name, status)
        elif self._rng.random() < 0.8:
            status, new = api.update(name, value, revision)
            if status == 200 and new is not None:
                self.tally.acknowledge(Acknowledged("update", name, value, new, revision), began)
                self.known[name] = new
            else:
                self._refused("update", name, status)
        else:
            status = api.delete(name, revision)
            if status == 200:
                self.tally.acknowledge(Acknowledged("delete", name, None, None, revision), began)
                self.known[name] = None
            else:
                self._refused("delete", name, status)

    def _refused(self, verb: str, name: str, status: int) -> None:
        # A definite refusal. The writer is the only one writing its objects, so a conflict
        # or a surprise 404/409 means a write of its own committed without an answer (an
        # unknown outcome before a crash): re-read instead of guessing.
        if status == 409:
            self.tally.conflicts += 1
        elif status == 404:
            self.tally.not_found += 1
        else:
            self.tally.errors.append(f"{verb} {name}: HTTP {status}")
        self.known.pop(name, None)


class CasWriter(_PacedWriter):
    """GET-then-PUT updates of shared ConfigMaps, retrying on 409 (see module docstring)."""

    #: Conflicts tolerated for one update before it counts as an error (with 20 writers on a
    #: few dozen objects, a handful of retries is plenty; an endless streak would be a bug).
    MAX_RETRIES = 50

    def __init__(
        self,
        base_url: str,
        namespace: str,
        *,
        name: str,
        deadline: float,
        max_ops: int,
        names: list[str],
        rate: float | None = None,
        seed: int = 0,
    ) -> None:
        super().__init__(
            base_url, namespace, name=name, deadline=deadline, max_ops=max_ops, rate=rate, seed=seed
        )
        self.names = names

    def step(self, api: ConfigMapApi) -> None:
        name = self._rng.choice(self.names)
        value = self._value()
        for _ in range(self.MAX_RETRIES):
            status, seen = api.get(name)
            if seen is None:
                self.tally.errors.append(f"GET {name}: HTTP {status}")
                return
            began = time.monotonic()
            status, new = api.update(name, value, seen.revision)
            if status == 200 and new is not None:
                ack = Acknowledged("update", name, value, new, seen.revision)
                self.tally.acknowledge(ack, began)
                return
            if status != 409:
                self.tally.errors.append(f"PUT {name}: HTTP {status}")
                return
            self.tally.conflicts += 1
        self.tally.errors.append(f"PUT {name}: {self.MAX_RETRIES} conflicts in a row")
