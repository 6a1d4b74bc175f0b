"""The process the crash test kills: writes through the LMDB backend and reports every
acknowledged write on stdout, one line each, flushed before the next write starts.

Even seeds write from four creator threads and one counter thread at once (group commits);
odd seeds from one thread doing both in turn (lone writes, committed on that thread).

Lines: ``READY <revision>`` once open; ``C <key> <rev>`` (create), ``X <key>`` (a delete is
about to be sent), ``D <key> <rev>`` (that delete was acknowledged), ``U <rev> <count>``
(counter update). Run as
``python writer_child.py <store dir> <seed>``; it writes until it is killed.
"""

from __future__ import annotations

import random
import sys
import threading
from typing import Any

import orjson

from kstore.storage.interface import ResourceStorageConfig
from kstore.storage.lmdb import LmdbBackend, LmdbConfig


class _Codec:
    def encode(self, obj: dict[str, Any]) -> bytes:
        return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)

    def decode(self, data: bytes) -> dict[str, Any]:
        decoded: dict[str, Any] = orjson.loads(data)
        return decoded


def _attrs(obj: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    return {}, {"metadata.name": obj["metadata"]["name"]}


def main() -> None:
    path, seed = sys.argv[1], int(sys.argv[2])
    backend = LmdbBackend(LmdbConfig(path=path, compaction_interval_s=0))
    pods = backend.storage_for(
        ResourceStorageConfig(resource_prefix="/pods", codec=_Codec(), get_attrs=_attrs)
    )
    out_lock = threading.Lock()

    def report(line: str) -> None:
        with out_lock:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    report(f"READY {backend.current_revision()}")

    def create_step(slot: int, n: int, rng: random.Random) -> None:
        key = f"/pods/s{seed}-t{slot}/p{n}"
        obj = {"metadata": {"name": f"p{n}", "namespace": f"s{seed}-t{slot}"}, "pad": "x" * 500}
        created = pods.create(key, obj)
        report(f"C {key} {created['metadata']['resourceVersion']}")
        if rng.random() < 0.2:
            # Announced first: a delete cut by the kill may or may not have committed.
            report(f"X {key}")
            deleted = pods.delete(key)
            report(f"D {key} {deleted['metadata']['resourceVersion']}")

    def counter_step() -> None:
        out = pods.guaranteed_update(
            "/pods/shared/counter",
            lambda o: {
                "metadata": {"name": "counter", "namespace": "shared"},
                "count": o.get("count", 0) + 1,
            },
            ignore_not_found=True,
        )
        report(f"U {out['metadata']['resourceVersion']} {out['count']}")

    def creator(slot: int) -> None:
        rng = random.Random(seed * 100 + slot)
        n = 0
        while True:
            create_step(slot, n, rng)
            n += 1

    def counter() -> None:
        while True:
            counter_step()

    def solo() -> None:
        # One writer thread (not the main one): every write is a lone write, committed on
        # this thread rather than handed to the backend's writer thread.
        rng = random.Random(seed * 100)
        n = 0
        while True:
            create_step(0, n, rng)
            counter_step()
            n += 1

    if seed % 2:
        threads = [threading.Thread(target=solo, daemon=True)]
    else:
        threads = [threading.Thread(target=creator, args=(k,), daemon=True) for k in range(4)]
        threads.append(threading.Thread(target=counter, daemon=True))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


if __name__ == "__main__":
    main()
