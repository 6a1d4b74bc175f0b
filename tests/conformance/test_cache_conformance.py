"""kstore's storage conformance suite with the watch cache in front of each backend.

Every suite class the backends run (``test_storage_conformance``) runs here again, through a
``conformance_env`` fixture of this module that wraps each resource's backend storage in a
:class:`~kstore.cache.Cacher`. The capabilities are the cacher's: RV "0" reads are served from
memory (and ignore ``limit``), consistent reads sync the cache, bookmarks come every
``BOOKMARK_INTERVAL`` seconds, slow watchers are closed, objects are shared and read-only, and
an expired object is gone from the cache only once its DELETED event arrives.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest

from kstore.cache import CacheConfig, Cacher
from kstore.storage.interface import Backend, ResourceStorageConfig, Storage
from kstore.storage.lmdb import LmdbBackend, LmdbConfig
from kstore.testing.env import Capabilities, ConformanceEnv
from tests.conformance import test_storage_conformance as suite

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

#: Single cases whose expectation holds for a backend but not for a watch cache, by
#: (class, test, parameter value or None): the reason is the cacher's documented behaviour,
#: which the suite already grants elsewhere through ``Capabilities.watch_cache``.
CACHE_SPECIFIC_CASES = {
    (
        "TestGetListRecursivePrefix",
        "test_recursive_is_a_prefix_with_slash",
        "NotOlderThan",
    ): 'lists at resourceVersion "0", which a cache may serve before it has seen the writes '
    "just made (as TestList's RV 0 cases allow)",
    (
        "TestListPaging",
        "test_compacted_continue_is_expired_with_an_inconsistent_token",
        None,
    ): 'pages with a limit at resourceVersion "0", which a watch cache ignores '
    "(Kubernetes #108003, as TestList's skip_for_watch_cache cases)",
}


@pytest.fixture(autouse=True)
def _cache_specific_cases(request: pytest.FixtureRequest) -> None:
    cls = request.node.cls.__name__ if request.node.cls else ""
    name = request.node.originalname
    params = getattr(request.node, "callspec", None)
    values = set(params.params.values()) if params is not None else set()
    for (case_cls, case_name, value), reason in CACHE_SPECIFIC_CASES.items():
        if (case_cls, case_name) == (cls, name) and (value is None or value in values):
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
        cacher tests do (``compactWatch``): the cache's own window is time-based."""
        self.backend.compact(revision)
        for cache in self.caches:
            if cache.ready:
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
    caches = _Caches(backend)
    try:
        yield ConformanceEnv(
            backend=backend,
            make_storage=caches.make_storage,
            compact=caches.compact,
            capabilities=CACHE_CAPABILITIES,
        )
    finally:
        caches.stop()
        backend.close()


IMPLEMENTATIONS: dict[str, Callable[[Path], AbstractContextManager[ConformanceEnv]]] = {
    "cache-lmdb": cache_on_lmdb,
}


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def conformance_env(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ConformanceEnv]:
    with IMPLEMENTATIONS[request.param](tmp_path) as env:
        yield env
