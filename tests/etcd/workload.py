"""A Kubernetes-like write + watch workload through kstore, recorded for the history checker.

Writers share a small set of Pods (so compare-and-swap conflicts happen) and each keeps its
own view of every key's revision: a key it thinks absent is created; otherwise it updates
(75 %), deletes (15 %) or reads (10 %) it, always expecting the revision it last saw, and
re-reads after any failure (as etcd's Kubernetes traffic does). Every written value is unique.
Watchers follow the whole prefix from the start revision and record what they see.

Bounded in time (``run`` takes a duration) and in rate (a short pause between operations),
so a loaded 2-core machine stays responsive.
"""

from __future__ import annotations

import itertools
import random
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field

from kstore.api.gvk import Object
from kstore.storage.etcd import EtcdBackend
from kstore.storage.interface import (
    EventType,
    IdentityTransformer,
    ListOptions,
    Preconditions,
    Storage,
)
from kstore.testing.objects import pod, pod_config, rv_of
from tests.etcd.history import Op, Recorder, WatchRecord

__all__ = ["Workload"]

NAMESPACE = "chaos"


@dataclass
class Workload:
    """``writers`` writer threads over ``keys`` Pods and ``watchers`` watches, through
    ``backend``; ``pause`` seconds between one writer's operations."""

    backend: EtcdBackend
    writers: int = 3
    watchers: int = 2
    keys: int = 10
    pause: float = 0.005
    seed: int = 7
    recorder: Recorder = field(default_factory=Recorder)
    watches: list[WatchRecord] = field(default_factory=list)
    start_revision: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _watch_stop: threading.Event = field(default_factory=threading.Event)
    _watch_threads: list[threading.Thread] = field(default_factory=list)
    #: Unexpected exceptions of writer threads (a storage call raised something that is not
    #: a kstore error with a known meaning): each one is a bug the test reports.
    crashes: list[str] = field(default_factory=list)
    _values: itertools.count[int] = field(default_factory=itertools.count)

    @property
    def pods(self) -> Storage:
        return self.backend.storage_for(pod_config(IdentityTransformer()))

    @property
    def etcd_prefix(self) -> str:
        """The etcd key prefix of the workload's Pods."""
        prefix = self.backend.config.prefix.strip("/")
        return f"/{prefix}/pods/{NAMESPACE}/"

    def key(self, index: int) -> str:
        return f"/pods/{NAMESPACE}/p{index}"

    # -- writers ---------------------------------------------------------------------------

    def _value(self, client: str) -> str:
        return f"{client}-{next(self._values)}"

    def _writer(self, client: str, rng: random.Random) -> None:
        try:
            self._write_loop(client, rng)
        except BaseException:
            self.crashes.append(f"{client}: {traceback.format_exc()}")

    def _write_loop(self, client: str, rng: random.Random) -> None:
        pods = self.pods
        known: dict[str, int | None] = {}
        while not self._stop.is_set():
            key = self.key(rng.randrange(self.keys))
            if key not in known:
                self._get(pods, client, key, known)
                continue
            rv = known[key]
            roll = rng.random()
            name = key.rsplit("/", 1)[1]
            if rv is None:
                op = self._create(pods, client, key, name)
            elif roll < 0.75:
                op = self._update(pods, client, key, name, rv)
            elif roll < 0.9:
                op = self._delete(pods, client, key, rv)
            else:
                self._get(pods, client, key, known)
                continue
            if op.outcome == "ok":
                known[key] = None if op.kind == "delete" else op.rv
            else:
                self._get(pods, client, key, known)
            if self.pause:
                time.sleep(self.pause)

    def _create(self, pods: Storage, client: str, key: str, name: str) -> Op:
        value = self._value(client)

        def create() -> tuple[int | None, str | None]:
            obj = pods.create(key, pod(name, NAMESPACE, annotations={"v": value}))
            return rv_of(obj), None

        return self.recorder.call(Op(client, "create", key, value, None, time.monotonic()), create)

    def _update(self, pods: Storage, client: str, key: str, name: str, rv: int) -> Op:
        value = self._value(client)

        def replace(current: Object) -> Object:
            return pod(name, NAMESPACE, annotations={"v": value})

        def update() -> tuple[int | None, str | None]:
            expected = Preconditions(resource_version=str(rv))
            return rv_of(pods.guaranteed_update(key, replace, preconditions=expected)), None

        return self.recorder.call(Op(client, "update", key, value, rv, time.monotonic()), update)

    def _delete(self, pods: Storage, client: str, key: str, rv: int) -> Op:
        def delete() -> tuple[int | None, str | None]:
            expected = Preconditions(resource_version=str(rv))
            return rv_of(pods.delete(key, preconditions=expected)), None

        return self.recorder.call(Op(client, "delete", key, None, rv, time.monotonic()), delete)

    def _get(self, pods: Storage, client: str, key: str, known: dict[str, int | None]) -> None:
        def read() -> tuple[int | None, str | None]:
            obj = pods.get(key)
            return rv_of(obj), obj["metadata"].get("annotations", {}).get("v")

        op = self.recorder.call(Op(client, "get", key, None, None, time.monotonic()), read)
        if op.outcome == "ok":
            known[key] = op.rv if op.read is not None else None
        else:
            known.pop(key, None)

    # -- watchers --------------------------------------------------------------------------

    def _watcher(self, record: WatchRecord) -> None:
        pods = self.pods
        watcher = pods.watch(
            f"/pods/{NAMESPACE}", ListOptions(resource_version=str(record.start_revision))
        )
        key_prefix = self.etcd_prefix
        try:
            while not self._watch_stop.is_set():
                event = watcher.next(timeout=0.2)
                if event is None:
                    if watcher.stopped:
                        return
                    continue
                if event.type is EventType.ERROR:
                    record.error = str(event.object.get("message"))
                    return
                if event.type is EventType.BOOKMARK:
                    continue
                meta = event.object["metadata"]
                record.events.append(
                    (
                        event.type.value,
                        key_prefix + meta["name"],
                        event.resource_version,
                        (meta.get("annotations") or {}).get("v"),
                    )
                )
        finally:
            watcher.stop()

    # -- running ---------------------------------------------------------------------------

    def run(self, duration: float, during: Callable[[], None] | None = None) -> None:
        """Run the workload for ``duration`` seconds while ``during`` (the fault schedule)
        runs in this thread; then stop the writers. Watchers keep running until
        :meth:`drain_watchers`."""
        self.start_revision = self.backend.current_revision()
        for index in range(self.watchers):
            record = WatchRecord(f"watch-{index}", self.start_revision, self.etcd_prefix)
            self.watches.append(record)
            thread = threading.Thread(target=self._watcher, args=(record,), daemon=True)
            thread.start()
            self._watch_threads.append(thread)
        threads = [
            threading.Thread(
                target=self._writer,
                args=(f"w{i}", random.Random(self.seed * 100 + i)),
                daemon=True,
            )
            for i in range(self.writers)
        ]
        for thread in threads:
            thread.start()
        started = time.monotonic()
        try:
            if during is not None:
                during()
            remaining = duration - (time.monotonic() - started)
            if remaining > 0:
                time.sleep(remaining)
        finally:
            self._stop.set()
            for thread in threads:
                thread.join(timeout=60)
        if any(t.is_alive() for t in threads):
            raise AssertionError("a writer did not stop: some storage call hangs")

    def drain_watchers(self, revision: int, timeout: float = 20.0) -> None:
        """Wait until every watcher has seen ``revision`` (or ended), then stop them."""
        deadline = time.monotonic() + timeout
        for record, thread in zip(self.watches, self._watch_threads, strict=True):
            while thread.is_alive() and time.monotonic() < deadline:
                if record.events and record.events[-1][2] >= revision:
                    break
                time.sleep(0.05)
        self._watch_stop.set()
        for thread in self._watch_threads:
            thread.join(timeout=5)

    def stats(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for op in self.recorder.ops:
            out[f"{op.kind}:{op.outcome}"] = out.get(f"{op.kind}:{op.outcome}", 0) + 1
        return out


def last_acknowledged_revision(ops: list[Op]) -> int:
    return max((op.rv or 0 for op in ops if op.outcome == "ok" and op.kind != "get"), default=0)
