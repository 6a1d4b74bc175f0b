"""What a backend hands the conformance suite: a ConformanceEnv and its Capabilities.

A backend plugs in with one pytest fixture named ``conformance_env`` that yields a fresh
``ConformanceEnv`` per test (a new, empty store) and closes the backend afterwards. Only
``backend`` is required; everything else has a backend-agnostic default:

- ``make_storage``: the storage under test for a resource config (default
  ``backend.storage_for``; the watch cache wraps that storage here);
- ``increase_rv``: one write outside every tested prefix, returning its revision (Kubernetes'
  ``IncreaseRVFunc``; default: an update of a counter object under its own prefix);
- ``compact``: history compaction at a revision (default ``backend.compact``);
- ``write_raw``: put exact bytes at a key as stored, i.e. after the value transformer (default:
  a write through a storage whose transformer substitutes the bytes);
- ``capabilities``: the behaviours Kubernetes itself marks implementation-specific.

Invariants the suite relies on: the store is empty when a test starts and nothing but the test
writes to it; every write, including ``increase_rv``, moves the global revision by exactly one.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from kstore.api.gvk import Object
from kstore.storage.interface import Backend, ResourceStorageConfig, Storage, ValueTransformer
from kstore.testing.objects import (
    cluster_pod_config,
    pod,
    pod_attrs,
    pod_codec,
    pod_config,
    rv_of,
)
from kstore.testing.transformers import PrefixTransformer, RawBytesTransformer

__all__ = ["STORAGE_PREFIX_BYTES", "Capabilities", "ConformanceEnv"]

#: What the suite's main transformer prepends to every stored value.
STORAGE_PREFIX_BYTES = b"kstore-test!"

_BUMP_PREFIX = "/conformance-revision-bumps"
_BUMP_KEY = _BUMP_PREFIX + "/counter"
# Makes every raw write's object distinct, so no write is skipped as a no-op.
_RAW_WRITES = itertools.count()


@dataclass(frozen=True, kw_only=True, slots=True)
class Capabilities:
    """Behaviours that differ between correct implementations, as Kubernetes' suite allows.

    ``watch_cache``: reads that accept staleness (RV "0") are served from an in-memory cache
    that may lag the backend, and a list at RV "0" ignores ``limit`` (Kubernetes #108003).
    ``consistent_reads_from_cache``: a consistent read syncs that cache, so a later RV "0"
    read returns exactly the synced revision (KEP-2340).
    ``bookmark_interval``: seconds within which an idle watch with ``allow_bookmarks`` gets a
    BOOKMARK; None when the implementation sends none on its own (etcd3 does not).
    ``progress_notify``: a watch with ``progress_notify`` gets BOOKMARKs as the revision moves.
    ``estimates_object_size``: ``Stats.estimated_average_object_size_bytes`` is computed.
    ``expires_before_reaping``: an object is unreadable as soon as its TTL passes, before its
    DELETED event (etcd leases may outlive their TTL a little).
    ``closes_slow_watchers``: a watcher that does not read may be ended (never skipped over).
    ``shares_objects``: returned objects are shared and read-only (the watch cache's choice)
    instead of fresh copies the caller owns.
    """

    watch_cache: bool = False
    consistent_reads_from_cache: bool = False
    bookmark_interval: float | None = None
    progress_notify: bool = False
    estimates_object_size: bool = True
    expires_before_reaping: bool = False
    closes_slow_watchers: bool = False
    shares_objects: bool = False


@dataclass(kw_only=True)
class ConformanceEnv:
    """One fresh store under test, and the hooks the suite needs around it."""

    backend: Backend
    make_storage: Callable[[ResourceStorageConfig], Storage] | None = None
    increase_rv: Callable[[], int] | None = None
    compact: Callable[[int], object] | None = None
    write_raw: Callable[[ResourceStorageConfig, str, bytes], int] | None = None
    capabilities: Capabilities = field(default_factory=Capabilities)

    #: The main transformer of the suite's Pods; tests build views around it.
    transformer: PrefixTransformer = field(
        default_factory=lambda: PrefixTransformer(STORAGE_PREFIX_BYTES), init=False, repr=False
    )
    _storages: dict[ResourceStorageConfig, Storage] = field(
        default_factory=dict, init=False, repr=False
    )
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def storage(self, config: ResourceStorageConfig) -> Storage:
        """The storage under test for ``config`` (one per config, reused)."""
        with self._lock:
            existing = self._storages.get(config)
            if existing is None:
                make = self.make_storage or self.backend.storage_for
                existing = self._storages[config] = make(config)
            return existing

    def pods(self, transformer: ValueTransformer | None = None) -> Storage:
        """The namespaced Pods, through the main transformer unless a view's is given."""
        return self.storage(pod_config(transformer or self.transformer))

    def cluster_pods(self, transformer: ValueTransformer | None = None) -> Storage:
        """The cluster-scoped Pods (keys ``/pods/<name>``)."""
        return self.storage(cluster_pod_config(transformer or self.transformer))

    def pod_writer(self, transformer: ValueTransformer) -> Storage:
        """A storage of the namespaced Pods straight on the backend (past any cache), through
        ``transformer``: how tests put bytes the storage under test cannot read."""
        return self.backend.storage_for(pod_config(transformer))

    def bump_revision(self) -> int:
        """Write once outside the Pod prefix; the new global revision."""
        if self.increase_rv is not None:
            return self.increase_rv()
        bumps = self.backend.storage_for(
            ResourceStorageConfig(
                resource_prefix=_BUMP_PREFIX,
                codec=pod_codec(),
                get_attrs=pod_attrs,
                namespaced=False,
            )
        )

        def count_one_more(current: Object) -> Object:
            annotations = (current.get("metadata") or {}).get("annotations") or {}
            return pod("counter", annotations={"count": str(int(annotations.get("count", 0)) + 1)})

        return rv_of(bumps.guaranteed_update(_BUMP_KEY, count_one_more, ignore_not_found=True))

    def compact_and_bump(self, revision: int) -> int:
        """Compact history below ``revision`` and leave the revision exactly one higher, as
        Kubernetes' compaction helper does (etcd's compaction writes ``compact_rev_key``).
        Returns the new current revision."""
        before = self.backend.current_revision()
        if self.compact is not None:
            self.compact(revision)
        else:
            self.backend.compact(revision)
        after = self.backend.current_revision()
        if after == before:
            after = self.bump_revision()
        assert after == before + 1, (
            f"compaction moved the revision from {before} to {after}; the suite expects +1"
        )
        return after

    def write_stored_bytes(self, key: str, data: bytes) -> int:
        """Put ``data`` at the Pod ``key`` exactly as stored (after the transformer), creating
        or overwriting it in one write; its revision."""
        config = pod_config(self.transformer)
        if self.write_raw is not None:
            return self.write_raw(config, key, data)
        writer = self.pod_writer(RawBytesTransformer(self.transformer, data))
        name = key.rsplit("/", 1)[-1]

        def replace(current: Object) -> Object:
            # Any change will do: the transformer stores ``data`` instead of the encoding.
            return pod(name, annotations={"raw-write": str(next(_RAW_WRITES))})

        return rv_of(writer.guaranteed_update(key, replace, ignore_not_found=True))
