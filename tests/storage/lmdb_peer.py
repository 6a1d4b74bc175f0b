"""A second process on an LMDB store, driven by the multi-process tests over its stdin/stdout.

``python -m tests.storage.lmdb_peer STORE`` opens the store, prints ``ready`` and then answers
one line per command:

- ``create NAME`` / ``update NAME`` / ``delete NAME``: one write to ``/pods/ns/NAME``; prints
  ``ack NAME REVISION`` once it is acknowledged;
- ``burst PREFIX COUNT THREADS``: COUNT creates of ``PREFIX-i`` from THREADS threads (group
  commits), printing ``ack NAME REVISION`` after each, then ``burst-done``;
- ``watch FROM COUNT``: watches every pod from revision FROM in a thread, printing ``watching``
  at once and later ``event TYPE NAME REVISION`` for each event up to COUNT of them, then
  ``watch-done`` (or ``watch-error MESSAGE``);
- ``compact REVISION``; ``leads`` (prints ``leads True|False``); ``revision``; ``quit``.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

from kstore.storage.interface import EventType, ListOptions
from kstore.storage.lmdb import LmdbBackend

from .conftest import open_backend, pod, pod_config, rv

_print_lock = threading.Lock()


def say(line: str) -> None:
    with _print_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def _watch(backend: LmdbBackend, start: int, count: int) -> None:
    pods = backend.storage_for(pod_config())
    watcher = pods.watch("/pods/", ListOptions(resource_version=str(start), recursive=True))
    say("watching")
    seen = 0
    while seen < count:
        event = watcher.next(timeout=30.0)
        if event is None:
            say(f"watch-error timed out after {seen} events")
            return
        if event.type == EventType.ERROR:
            say(f"watch-error {event.object.get('message', '')}")
            return
        seen += 1
        meta = event.object["metadata"]
        say(f"event {event.type.value} {meta['name']} {event.resource_version}")
    watcher.stop()
    say("watch-done")


def _burst(backend: LmdbBackend, prefix: str, count: int, threads: int) -> None:
    pods = backend.storage_for(pod_config())

    def share(first: int) -> None:
        for i in range(first, count, threads):
            name = f"{prefix}-{i}"
            say(f"ack {name} {rv(pods.create(f'/pods/ns/{name}', pod('ns', name)))}")

    workers = [threading.Thread(target=share, args=(k,)) for k in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    say("burst-done")


def main(store: str) -> None:
    backend = open_backend(Path(store))
    pods = backend.storage_for(pod_config())
    say("ready")
    for line in sys.stdin:
        verb, *args = line.split()
        if verb == "create":
            name = args[0]
            say(f"ack {name} {rv(pods.create(f'/pods/ns/{name}', pod('ns', name)))}")
        elif verb == "update":
            name = args[0]
            updated = pods.guaranteed_update(
                f"/pods/ns/{name}", lambda obj: {**obj, "spec": {"n": time.time_ns()}}
            )
            say(f"ack {name} {rv(updated)}")
        elif verb == "delete":
            name = args[0]
            say(f"ack {name} {rv(pods.delete(f'/pods/ns/{name}'))}")
        elif verb == "burst":
            threading.Thread(
                target=_burst, args=(backend, args[0], int(args[1]), int(args[2])), daemon=True
            ).start()
        elif verb == "watch":
            threading.Thread(
                target=_watch, args=(backend, int(args[0]), int(args[1])), daemon=True
            ).start()
        elif verb == "compact":
            say(f"compacted {backend.compact(int(args[0]))}")
        elif verb == "leads":
            say(f"leads {backend.leads}")
        elif verb == "revision":
            say(f"revision {backend.current_revision()}")
        elif verb == "quit":
            break
    backend.close()
    say("closed")


if __name__ == "__main__":
    main(sys.argv[1])
