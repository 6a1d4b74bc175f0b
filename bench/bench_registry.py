"""Registry benchmark: create, get and update through the registry beside the storage it writes
through, same run, same store, same durability.

Run: ``python -m bench.bench_registry`` (``--objects`` per figure and round, ``--repeats``
rounds, ``--writers`` concurrent creators, ``--no-sync`` to turn fsync off). The registry is
the one ``kstore serve`` builds (LMDB, watch cache on, built-in kinds); the baseline is that
registry's own storage (:attr:`GenericStore.storage`) given the object the registry would
store, so the difference is the registry's work: system fields, managedFields, namespace
lookup, strategy, validation, admission. Each figure is the median over rounds of the median
per-call time; ``cpu`` is this process's CPU time per call (all threads: the LMDB writer and
the watch cache included), the steadier figure on a shared machine. Objects: a small ConfigMap
(what ``kstore bench rest`` creates) and a ~3.5 KiB Pod with three containers. Prints a table;
gates nothing.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from kstore.api.gvk import GroupVersion, Object
from kstore.api.kinds import builtin_scheme
from kstore.benchmarks.storage import sample_pod
from kstore.registry.interface import CreateOptions, RequestContext, UpdateOptions
from kstore.registry.registry import StoreRegistry, build_registry
from kstore.registry.store import GenericStore
from kstore.storage.lmdb import LmdbBackend, LmdbConfig

NAMESPACE = "bench"
_names = itertools.count()


def _config_map(name: str) -> Object:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"run": "bench"}},
        "data": {"key": "value", "index": name},
    }


def _pod(name: str) -> Object:
    pod = sample_pod(NAMESPACE, name)
    pod.pop("status", None)
    for field in ("uid", "creationTimestamp", "resourceVersion", "managedFields"):
        pod["metadata"].pop(field, None)
    return pod


@dataclass(frozen=True, slots=True)
class Kind:
    label: str
    plural: str
    make: Callable[[str], Object]


KINDS = (Kind("ConfigMap", "configmaps", _config_map), Kind("Pod (3 containers)", "pods", _pod))


@dataclass(slots=True)
class Sample:
    wall: float  # median seconds per call
    cpu: float  # process CPU seconds per call


def _timed(calls: list[Callable[[], object]]) -> Sample:
    times: list[float] = []
    cpu0 = time.process_time()
    for call in calls:
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return Sample(statistics.median(times), (time.process_time() - cpu0) / len(calls))


def _concurrent(calls: list[Callable[[], object]], writers: int) -> float:
    """Calls per second from ``writers`` threads sharing ``calls``."""
    barrier = threading.Barrier(writers + 1)

    def run(k: int) -> None:
        barrier.wait()
        for call in calls[k::writers]:
            call()

    threads = [threading.Thread(target=run, args=(k,)) for k in range(writers)]
    for thread in threads:
        thread.start()
    barrier.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    return len(calls) / (time.perf_counter() - started)


class Bench:
    def __init__(self, registry: StoreRegistry, kind: Kind) -> None:
        self.scheme = registry.scheme
        store = registry.store("", kind.plural)
        assert isinstance(store, GenericStore)
        self.store = store
        self.kind = kind
        self.ctx = RequestContext(namespace=NAMESPACE, request_version=GroupVersion("", "v1"))
        # What the registry stores, to hand the storage directly (a dry run fills it in).
        self.prepared = self.store.create(
            self.ctx, self._hub("template"), CreateOptions(dry_run=True, field_manager="bench")
        ).object

    def _hub(self, name: str) -> Object:
        return self.scheme.to_hub(self.kind.make(name))

    def _key(self, name: str) -> str:
        return self.store.key(self.ctx, name)

    def registry_creates(self, count: int) -> tuple[list[Callable[[], object]], list[str]]:
        names = [f"r{next(_names)}" for _ in range(count)]
        bodies = [self._hub(n) for n in names]
        opts = CreateOptions(field_manager="bench")
        return [lambda b=b: self.store.create(self.ctx, b, opts) for b in bodies], names

    def storage_creates(self, count: int) -> tuple[list[Callable[[], object]], list[str]]:
        names = [f"s{next(_names)}" for _ in range(count)]
        objs = []
        for n in names:
            obj = orjson.loads(orjson.dumps(self.prepared))
            obj["metadata"]["name"] = n
            objs.append(obj)
        storage = self.store.storage
        return [
            lambda n=n, o=o: storage.create(self._key(n), o)
            for n, o in zip(names, objs, strict=True)
        ], names

    def registry_gets(self, names: list[str]) -> list[Callable[[], object]]:
        return [lambda n=n: self.store.get(self.ctx, n) for n in names]

    def storage_gets(self, names: list[str]) -> list[Callable[[], object]]:
        storage = self.store.storage
        return [lambda n=n: storage.get(self._key(n)) for n in names]

    def registry_updates(self, names: list[str]) -> list[Callable[[], object]]:
        """A PUT as clients send it: the object read back with one new label (managedFields
        included), a field manager of its own."""
        opts = UpdateOptions(field_manager="editor")
        calls: list[Callable[[], object]] = []
        for n in names:
            body = orjson.loads(orjson.dumps(self.store.get(self.ctx, n)))
            body["metadata"].setdefault("labels", {})["edited"] = "yes"
            calls.append(lambda n=n, b=body: self.store.update(self.ctx, n, lambda _: b, opts))
        return calls

    def storage_updates(self, names: list[str]) -> list[Callable[[], object]]:
        storage = self.store.storage

        def edit(current: Object) -> Object:
            out: dict[str, Any] = orjson.loads(orjson.dumps(current))
            out["metadata"].setdefault("labels", {})["edited"] = "yes"
            return out

        return [lambda n=n: storage.guaranteed_update(self._key(n), edit) for n in names]


def run(objects: int, repeats: int, writers: int, durable: bool) -> str:
    samples: dict[tuple[str, str], list[Sample]] = {}
    rates: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="kstore-bench-registry-") as tmp:
        backend = LmdbBackend(LmdbConfig(path=Path(tmp) / "data", durable=durable))
        registry = build_registry(builtin_scheme(), backend)
        try:
            namespaces = registry.store("", "namespaces")
            namespaces.create(
                RequestContext(),
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
                CreateOptions(),
            )
            benches = [Bench(registry, kind) for kind in KINDS]
            for bench in benches:  # warm up: imports, type trees, caches
                calls, _ = bench.registry_creates(50)
                _timed(calls)
            for _ in range(repeats):
                for bench in benches:
                    k = bench.kind.label

                    def add(what: str, sample: Sample, k: str = k) -> None:
                        samples.setdefault((k, what), []).append(sample)

                    s_calls, s_names = bench.storage_creates(objects)
                    add("storage create", _timed(s_calls))
                    r_calls, r_names = bench.registry_creates(objects)
                    add("registry create", _timed(r_calls))
                    add("storage get", _timed(bench.storage_gets(s_names)))
                    add("registry get", _timed(bench.registry_gets(r_names)))
                    add("storage update", _timed(bench.storage_updates(s_names)))
                    add("registry update", _timed(bench.registry_updates(r_names)))
                    s_calls, _ = bench.storage_creates(objects * 2)
                    rates.setdefault((k, "storage"), []).append(_concurrent(s_calls, writers))
                    r_calls, _ = bench.registry_creates(objects * 2)
                    rates.setdefault((k, "registry"), []).append(_concurrent(r_calls, writers))
        finally:
            registry.close()
            backend.close()
    return _report(samples, rates, writers, durable)


def _report(
    samples: dict[tuple[str, str], list[Sample]],
    rates: dict[tuple[str, str], list[float]],
    writers: int,
    durable: bool,
) -> str:
    def med(key: tuple[str, str]) -> Sample:
        got = samples[key]
        return Sample(statistics.median(s.wall for s in got), statistics.median(s.cpu for s in got))

    lines = [
        f"kstore bench registry: LMDB ({'fsync' if durable else 'no fsync'}), watch cache on,"
        " one thread unless noted",
        f"{'kind':<20} {'operation':<18} {'wall us':>9} {'cpu us':>9} "
        f"{'storage wall':>13} {'storage cpu':>12} {'wall x':>7} {'cpu x':>6}",
    ]
    for kind in KINDS:
        k = kind.label
        for op in ("create", "get", "update"):
            reg, sto = med((k, f"registry {op}")), med((k, f"storage {op}"))
            lines.append(
                f"{k:<20} {op:<18} {reg.wall * 1e6:9.1f} {reg.cpu * 1e6:9.1f} "
                f"{sto.wall * 1e6:13.1f} {sto.cpu * 1e6:12.1f} "
                f"{reg.wall / sto.wall:7.2f} {reg.cpu / sto.cpu:6.2f}"
            )
        reg_rate = statistics.median(rates[(k, "registry")])
        sto_rate = statistics.median(rates[(k, "storage")])
        lines.append(
            f"{k:<20} {f'create x{writers}':<18} {reg_rate:9,.0f}/s (storage {sto_rate:,.0f}/s, "
            f"{reg_rate / sto_rate:.2f}x)"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--objects", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--writers", type=int, default=16)
    parser.add_argument("--no-sync", action="store_true", help="LMDB without fsync")
    args = parser.parse_args()
    print(run(args.objects, args.repeats, args.writers, not args.no_sync))


if __name__ == "__main__":
    main()
