"""A garbage-collector policy for processes that hold watch caches (opt-in, process-wide).

Why: CPython's cyclic collector stops every thread for a full (generation 2) pass over every
container object in the process. A watch cache keeps every object of its resource as dicts
and lists — a 5 KiB Pod is ~100 of them — so with tens of thousands of objects a full pass
takes hundreds of milliseconds, and it runs whenever a quarter of the long-lived objects are
new, i.e. regularly under churn. Measured in ``kstore bench watch``: 270-520 ms pauses and
p99 delivery latency above the 50 ms goal without this policy, none with it.

What :class:`LongLivedObjects` does: every ``freeze_interval`` seconds (0.25 s: at 1,000
writes/s of 5 KiB Pods a 1 s interval still let 50 ms full passes through, over the objects
created since the last freeze; freezing itself costs next to nothing) it calls
:func:`gc.freeze`, which moves every object tracked so far into the permanent generation that
collections never scan. The cache's objects are acyclic, so they are still freed by reference
counting the moment the cache drops them. The cost: a reference cycle that is alive at a
freeze and dies later is not reclaimed until the next full collection. So every
``full_collection_interval`` seconds (None: never) it unfreezes and runs one full collection:
one predictable pause instead of frequent unpredictable ones.

It affects the whole process, so only the process owner (e.g. ``kstore serve``, a benchmark)
should start it; the cache never does.
"""

from __future__ import annotations

import gc
import threading
import time

__all__ = ["LongLivedObjects"]


class LongLivedObjects:
    """Keeps long-lived objects out of the collector's full passes (see the module docstring).

    Use as a context manager or with :meth:`start` / :meth:`stop`."""

    def __init__(
        self, *, freeze_interval: float = 0.25, full_collection_interval: float | None = 600.0
    ) -> None:
        if freeze_interval <= 0:
            raise ValueError("freeze_interval must be positive")
        self._freeze_interval = freeze_interval
        self._full_interval = full_collection_interval
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self.freezes = 0
        self.full_collections = 0

    def start(self) -> LongLivedObjects:
        if self._thread is None:
            gc.freeze()
            self._thread = threading.Thread(target=self._run, name="kstore-gc-policy", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop freezing and give every frozen object back to the collector."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=10.0)
            self._thread = None
        gc.unfreeze()

    def __enter__(self) -> LongLivedObjects:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        next_full = None if self._full_interval is None else time.monotonic() + self._full_interval
        while not self._stopping.wait(self._freeze_interval):
            if next_full is not None and time.monotonic() >= next_full:
                gc.unfreeze()
                gc.collect()
                self.full_collections += 1
                assert self._full_interval is not None
                next_full = time.monotonic() + self._full_interval
            gc.freeze()
            self.freezes += 1
