"""kstore's storage conformance suite with the watch cache in front of each backend.

Every suite class the backends run (``test_storage_conformance``) runs here again, through a
``conformance_env`` fixture of this module that wraps each resource's backend storage in a
:class:`~kstore.cache.Cacher`. The capabilities are the cacher's: RV "0" reads are served from
memory (and ignore ``limit``), consistent reads sync the cache, bookmarks come every
``BOOKMARK_INTERVAL`` seconds, slow watchers are closed, objects are shared and read-only, and
an expired object is gone from the cache only once its DELETED event arrives.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest

from kstore.cache import CacheConfig, Cacher
from kstore.storage.interface import Backend, ResourceStorageConfig, Storage
from kstore.storage.lmdb import LmdbBackend, LmdbConfig
from kstore.testing.env import Capabilities, ConformanceEnv
from tests.conformance import test_storage_conformance as suite
from tests.conftest_etcd import etcd_backend, etcd_single  # noqa: F401  (fixtures)

#: Suite classes this module does not run, and why. Kubernetes does not run the matching
#: tests (RunTestWatchError, RunWatchErrorIsBlockingFurtherEvents) against its cacher either:
#: a cache that cannot read its backend never becomes ready, and a watch on an unready cache
#: is refused with 429 rather than served; tests/cache/test_cacher.py covers that behaviour.
NOT_FOR_THE_CACHE = {
    "TestCorruptWatch": "an unreadable backend makes the cache unready: watches get 429",
}
for _name in suite.__all__:
    if _name not in NOT_FOR_THE_CACHE:
        globals()[_name] = getattr(suite, _name)

_FROM_REVISION_1 = (
    "watches from revision 1, but a cache on the shared test etcd starts its window at the "
    "revision it was created at, long after 1: 410 Expired is the cacher's answer"
)

#: Single cases whose expectation holds for a backend but not for a watch cache, by
#: (class, test, parameter values that must all be present): the reason is the cacher's
#: documented behaviour, which the suite grants elsewhere through ``Capabilities.watch_cache``.
CACHE_SPECIFIC_CASES: dict[tuple[str, str, frozenset[str]], str] = {
    (
        "TestGetListRecursivePrefix",
        "test_recursive_is_a_prefix_with_slash",
        frozenset({"NotOlderThan"}),
    ): 'lists at resourceVersion "0", which a cache may serve before it has seen the writes '
    "just made (as TestList's RV 0 cases allow)",
    (
        "TestListPaging",
        "test_compacted_continue_is_expired_with_an_inconsistent_token",
        frozenset(),
    ): 'pages with a limit at resourceVersion "0", which a watch cache ignores '
    "(Kubernetes #108003, as TestList's skip_for_watch_cache cases)",
    (
        "TestCreate",
        "test_create_writes_through_the_transformer_without_the_resource_version",
        frozenset(),
    ): "counts the transformer's reads around one get, but the cache's own backend watch "
    "decodes every stored value through that transformer too, whenever the event arrives",
    (
        "TestWatchSemantics",
        "test_watch_semantics",
        frozenset({"cache-etcd", "allowWatchBookmarks=true, sendInitialEvents=false, RV=1"}),
    ): _FROM_REVISION_1,
    (
        "TestWatchSemantics",
        "test_watch_semantics",
        frozenset({"cache-etcd", "allowWatchBookmarks=false, sendInitialEvents=false, RV=1"}),
    ): _FROM_REVISION_1,
}


@pytest.fixture(autouse=True)
def _cache_specific_cases(request: pytest.FixtureRequest) -> None:
    cls = request.node.cls.__name__ if request.node.cls else ""
    name = request.node.originalname
    params = getattr(request.node, "callspec", None)
    values = set(params.params.values()) if params is not None else set()
    for (case_cls, case_name, needed), reason in CACHE_SPECIFIC_CASES.items():
        if (case_cls, case_name) == (cls, name) and needed <= values:
            pytest.skip(f"backend-only expectation: {reason}")


#: Bookmark period of the caches under test: short, so the bookmark tests stay quick.
BOOKMARK_INTERVAL = 1.0

CACHE_CAPABILITIES = Capabilities(
    watch_cache=True,
    consistent_reads_from_cache=True,
    bookmark_interval=BOOKMARK_INTERVAL,
    progress_notify=False,
    expires_before_reaping=False,
    closes_slow_watchers=True,
    shares_objects=True,
)


class _Caches:
    """The caches of one test's store, and the hooks the suite calls around them."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.caches: list[Cacher] = []

    def make_storage(self, config: ResourceStorageConfig) -> Storage:
        cache = Cacher(
            CacheConfig(
                storage=self.backend.storage_for(config),
                resource=config,
                bookmark_interval_seconds=BOOKMARK_INTERVAL,
            )
        )
        self.caches.append(cache)
        # A resource whose stored bytes this view cannot read never gets ready; reads then
        # go to the backend, which is what the corruption tests check.
        cache.wait_first_sync(10.0)
        return cache

    def compact(self, revision: int) -> None:
        """Compact the backend and make every cache's watch window follow, as Kubernetes'
        cacher tests do (``compactWatch``): the cache's own window is time-based. The caches
        first catch up with ``revision``, so their backend watches are not behind it."""
        ready = [cache for cache in self.caches if cache.ready]
        for cache in ready:
            cache.wait_fresh(revision)
        self.backend.compact(revision)
        for cache in ready:
            cache.compact_history(revision)

    def stop(self) -> None:
        for cache in self.caches:
            cache.stop()


@contextmanager
def cache_on_lmdb(tmp_path: Path) -> Iterator[ConformanceEnv]:
    backend = LmdbBackend(
        LmdbConfig(
            path=tmp_path / "lmdb",
            compaction_interval_s=0,
            # The cache confirms consistent reads through the backend watch's progress
            # notifications; a short idle interval keeps those reads from waiting long.
            progress_notify_interval_s=0.1,
        )
    )
    try:
        with cache_on(backend) as env:
            yield env
    finally:
        backend.close()


@contextmanager
def cache_on(
    backend: Backend, capabilities: Capabilities = CACHE_CAPABILITIES
) -> Iterator[ConformanceEnv]:
    caches = _Caches(backend)
    try:
        yield ConformanceEnv(
            backend=backend,
            make_storage=caches.make_storage,
            compact=caches.compact,
            capabilities=capabilities,
        )
    finally:
        caches.stop()


@pytest.fixture(
    params=[
        "cache-lmdb",
        # etcd's progress notifications come every 0.5 s in the test cluster
        # (tests/conftest_etcd.py): that bounds how long a consistent read waits for them.
        pytest.param("cache-etcd", marks=pytest.mark.etcd),
    ]
)
def conformance_env(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ConformanceEnv]:
    if request.param == "cache-lmdb":
        with cache_on_lmdb(tmp_path) as env:
            yield env
    else:
        # Stats pass through to the backend: etcd estimates no object size.
        capabilities = replace(CACHE_CAPABILITIES, estimates_object_size=False)
        with cache_on(request.getfixturevalue("etcd_backend"), capabilities) as env:
            yield env
