"""A second kstore process on the same etcd, driven by the two-instance tests.

Run as ``python -m tests.etcd.instance ENDPOINT PREFIX MODE [ARGS]``; prints one JSON line per
result so the parent can compare what each process saw. Modes:

- ``write N``: create Pods ``b0``..``b{N-1}`` in namespace ``two``, update each once, delete
  the first; one line ``{"op", "name", "rv"}`` per write;
- ``watch RV N``: watch namespace ``two`` after ``RV`` and print the first N events
  ``{"type", "name", "rv", "labels"}`` (exit 1 if they do not come within 30 s);
- ``increment N``: add 1 to the counter Pod ``two/counter`` N times with guaranteed_update.
"""

from __future__ import annotations

import json
import sys
import time

from kstore.api.gvk import Object
from kstore.storage.etcd import EtcdBackend, EtcdConfig
from kstore.storage.interface import IdentityTransformer, ListOptions, Storage
from kstore.testing.objects import pod, pod_config, rv_of

NAMESPACE = "two"


def _emit(**fields: object) -> None:
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


def increment(current: Object) -> Object:
    """The counter Pod with its ``count`` annotation one higher (created at 1 when absent)."""
    annotations = (current.get("metadata") or {}).get("annotations") or {}
    count = int(annotations.get("count", "0")) + 1
    return pod("counter", NAMESPACE, annotations={"count": str(count)})


def _write(pods: Storage, count: int) -> None:
    for i in range(count):
        out = pods.create(f"/pods/{NAMESPACE}/b{i}", pod(f"b{i}", NAMESPACE))
        _emit(op="create", name=f"b{i}", rv=rv_of(out))
    for i in range(count):
        out = pods.guaranteed_update(
            f"/pods/{NAMESPACE}/b{i}",
            lambda cur: {**cur, "metadata": {**cur["metadata"], "labels": {"by": "b"}}},
        )
        _emit(op="update", name=f"b{i}", rv=rv_of(out))
    out = pods.delete(f"/pods/{NAMESPACE}/b0")
    _emit(op="delete", name="b0", rv=rv_of(out))


def _watch(pods: Storage, after: int, count: int) -> int:
    watcher = pods.watch(f"/pods/{NAMESPACE}", ListOptions(resource_version=str(after)))
    # Tells the parent the watch is open: what it writes from now on must be seen.
    _emit(ready=True)
    deadline = time.monotonic() + 30
    seen = 0
    try:
        while seen < count:
            event = watcher.next(timeout=max(0.0, deadline - time.monotonic()))
            if event is None:
                return 1
            meta = event.object.get("metadata", {})
            _emit(
                type=event.type.value,
                name=meta.get("name"),
                rv=event.resource_version,
                labels=meta.get("labels") or {},
            )
            seen += 1
    finally:
        watcher.stop()
    return 0


def main(argv: list[str]) -> int:
    endpoint, prefix, mode, *args = argv
    backend = EtcdBackend(EtcdConfig(endpoints=(endpoint,), prefix=prefix, compaction_interval=0))
    try:
        pods = backend.storage_for(pod_config(IdentityTransformer()))
        if mode == "write":
            _write(pods, int(args[0]))
        elif mode == "watch":
            return _watch(pods, int(args[0]), int(args[1]))
        elif mode == "increment":
            for _ in range(int(args[0])):
                pods.guaranteed_update(
                    f"/pods/{NAMESPACE}/counter", increment, ignore_not_found=True
                )
            _emit(done=True)
        else:
            raise SystemExit(f"unknown mode {mode}")
        return 0
    finally:
        backend.close()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
