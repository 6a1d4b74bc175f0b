"""Consistent reads from the watch cache on etcd 3.4, confirmed by a quorum read of the prefix.

The etcd here reports watch progress only at its default interval (10 minutes), so nothing in
these tests can be made fresh by a progress notification: a consistent LIST served from memory
was confirmed by the cache's freshness probe (``EtcdStorage.confirm_unchanged``), and one the
probe could not confirm goes to the backend after the fresh timeout (counted here).
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from dataclasses import replace

import pytest

from kstore.cache import CacheConfig, Cacher, check_consistency
from kstore.cache.consistency import item_identity
from kstore.cache.freshness import UnchangedProbe
from kstore.errors import AlreadyExists, NotFound
from kstore.storage.etcd import EtcdBackend, EtcdStorage
from kstore.storage.interface import (
    IdentityTransformer,
    ListOptions,
    ListResult,
    ResourceStorageConfig,
    ResourceVersionMatch,
    Storage,
)
from kstore.testing.etcd_cluster import EtcdCluster
from kstore.testing.objects import pod, pod_config, rv_of
from tests.conftest_etcd import make_backend, require_etcd

pytestmark = pytest.mark.etcd

_CONFIG = pod_config(IdentityTransformer())
#: Another resource in the same etcd: its writes move the revision, not the pods' prefix.
_OTHER = replace(_CONFIG, resource_prefix="/otherpods")
_CONSISTENT = ListOptions()


class _CountingEtcdStorage(EtcdStorage):
    """The pods' etcd storage, counting the lists the cache sends to it."""

    def __init__(self, backend: EtcdBackend, config: ResourceStorageConfig) -> None:
        super().__init__(backend, config)
        self.lists = 0
        self.probed: list[str] = []

    def list(self, key: str, opts: ListOptions = _CONSISTENT) -> ListResult:
        self.lists += 1
        return super().list(key, opts)

    def confirm_unchanged(self, key: str, revision: int, count: int) -> tuple[int, bool]:
        self.probed.append(key)
        return super().confirm_unchanged(key, revision, count)


@pytest.fixture(scope="module")
def quiet_etcd() -> Iterator[EtcdCluster]:
    """One member with etcd's default (10 minute) progress-notify interval."""
    require_etcd()
    with EtcdCluster(
        1, extra_args=("--heartbeat-interval", "50", "--election-timeout", "250")
    ) as c:
        yield c


@pytest.fixture
def backends(quiet_etcd: EtcdCluster) -> Iterator[tuple[EtcdBackend, EtcdBackend]]:
    """Two kstore clients on one prefix: the cache's, and one writing behind its back."""
    ours = make_backend(quiet_etcd)
    theirs = EtcdBackend(replace(ours.config))
    try:
        yield ours, theirs
    finally:
        theirs.close()
        ours.close()


@pytest.fixture
def cached(
    backends: tuple[EtcdBackend, EtcdBackend],
) -> Iterator[tuple[Cacher, _CountingEtcdStorage]]:
    storage = _CountingEtcdStorage(backends[0], _CONFIG)
    with Cacher(CacheConfig(storage=storage, resource=_CONFIG)) as cache:
        assert cache.wait_ready(10.0)
        yield cache, storage


def _names(result: ListResult) -> list[str]:
    return [obj["metadata"]["name"] for obj in result.items]


def test_the_probe_counts_every_key_and_reports_only_later_writes(
    backends: tuple[EtcdBackend, EtcdBackend],
) -> None:
    # The etcd 3.4 semantics the probe rests on: with min_mod_revision set, count is still
    # the number of keys in the range, and the limit is not applied before the filter.
    pods = backends[0].storage_for(_CONFIG)
    assert isinstance(pods, UnchangedProbe)
    first = rv_of(pods.create("/pods/ns/a", pod("a", "ns")))
    pods.create("/pods/ns/b", pod("b", "ns"))
    last = rv_of(pods.create("/pods/ns/c", pod("c", "ns")))
    assert pods.confirm_unchanged("/pods/", last, 3) == (last, True)
    assert pods.confirm_unchanged("/pods/", last, 2) == (last, False)
    assert pods.confirm_unchanged("/pods/", first, 3) == (last, False)
    other = backends[0].storage_for(_OTHER)
    moved = rv_of(other.create("/otherpods/ns/x", pod("x", "ns")))
    assert pods.confirm_unchanged("/pods/", last, 3) == (moved, True)
    pods.delete("/pods/ns/b")
    current, unchanged = pods.confirm_unchanged("/pods/", moved, 3)
    assert current > moved and not unchanged
    assert pods.confirm_unchanged("/pods/", current, 2) == (current, True)


def test_a_write_behind_the_caches_back_is_in_the_very_next_consistent_list(
    backends: tuple[EtcdBackend, EtcdBackend], cached: tuple[Cacher, _CountingEtcdStorage]
) -> None:
    cache, storage = cached
    behind = backends[1].storage_for(_CONFIG)
    other = backends[1].storage_for(_OTHER)
    names: set[str] = set()
    for round_ in range(30):
        name = f"p{round_:02d}"
        if round_ % 3 == 2:
            gone = sorted(names)[0]
            written = rv_of(behind.delete(f"/pods/ns/{gone}"))
            names.discard(gone)
        elif round_ % 3 == 1 and names:
            target = sorted(names)[-1]
            written = rv_of(
                behind.guaranteed_update(
                    f"/pods/ns/{target}",
                    lambda cur: {**cur, "metadata": {**cur["metadata"], "labels": {"r": "1"}}},
                )
            )
        else:
            written = rv_of(behind.create(f"/pods/ns/{name}", pod(name, "ns")))
            names.add(name)
        if round_ % 2:
            # A later write elsewhere: the pods' watch has nothing to say about it.
            written = rv_of(other.create(f"/otherpods/ns/{name}", pod(name, "ns")))
        result = cache.list("/pods/", _CONSISTENT)
        assert result.resource_version >= written
        assert set(_names(result)) == names
        by_name = {obj["metadata"]["name"]: rv_of(obj) for obj in result.items}
        current = {
            obj["metadata"]["name"]: rv_of(obj) for obj in behind.list("/pods/", _CONSISTENT).items
        }
        assert by_name == current
    # Served from memory, not by the fallback to the backend after the fresh timeout.
    assert storage.lists == 0


def test_consistent_lists_come_from_memory_when_only_other_prefixes_change(
    backends: tuple[EtcdBackend, EtcdBackend], cached: tuple[Cacher, _CountingEtcdStorage]
) -> None:
    cache, storage = cached
    pods = backends[1].storage_for(_CONFIG)
    for index in range(50):
        pods.create(f"/pods/ns/p{index:02d}", pod(f"p{index:02d}", "ns"))
    synced = cache.list("/pods/", _CONSISTENT)
    assert len(synced.items) == 50
    hits = cache.probe_hits
    # Nothing changed: every consistent list is answered from memory at the current revision.
    for _ in range(20):
        result = cache.list("/pods/", _CONSISTENT)
        assert len(result.items) == 50
        assert result.resource_version == backends[0].current_revision()
    other = backends[1].storage_for(_OTHER)
    for index in range(20):
        moved = rv_of(other.create(f"/otherpods/ns/o{index:02d}", pod(f"o{index:02d}", "ns")))
        started = time.monotonic()
        result = cache.list("/pods/", _CONSISTENT)
        # The other prefix's write moved the revision; the probe proves the pods' prefix
        # unchanged up to it without waiting for any event of the pods' watch.
        assert result.resource_version >= moved
        assert time.monotonic() - started < 1.0
        assert len(result.items) == 50
    assert storage.lists == 0
    assert cache.probe_hits >= hits + 20


def _churn(
    storage: Storage, stop: threading.Event, seed: int, writes: list[int], prefix: str
) -> None:
    rng = random.Random(seed)
    while not stop.is_set():
        name = f"p{rng.randrange(40):02d}"
        key = f"{prefix}/ns{rng.randrange(2)}/{name}"
        action = rng.random()
        try:
            if action < 0.4:
                storage.create(key, pod(name, key.split("/")[2]))
            elif action < 0.8:
                storage.guaranteed_update(
                    key,
                    lambda cur: {**cur, "metadata": {**cur["metadata"], "labels": {"v": "x"}}},
                )
            else:
                storage.delete(key)
            writes[0] += 1
        except (AlreadyExists, NotFound):
            pass


def test_consistent_lists_under_churn_equal_the_backend_at_their_revision(
    backends: tuple[EtcdBackend, EtcdBackend], cached: tuple[Cacher, _CountingEtcdStorage]
) -> None:
    cache, storage = cached
    behind = backends[1].storage_for(_CONFIG)
    other = backends[1].storage_for(_OTHER)
    stop = threading.Event()
    writes = [0]
    writers = [
        threading.Thread(target=_churn, args=(behind, stop, 1, writes, "/pods"), daemon=True),
        threading.Thread(target=_churn, args=(other, stop, 2, writes, "/otherpods"), daemon=True),
    ]
    for writer in writers:
        writer.start()
    checked = 0
    try:
        deadline = time.monotonic() + 4.0
        while time.monotonic() < deadline:
            before = backends[1].current_revision()
            result = cache.list("/pods/", _CONSISTENT)
            # Linearizable: not older than a revision read before the list began...
            assert result.resource_version >= before
            # ...and exactly the backend's state at the revision it claims.
            exact = behind.list(
                "/pods/",
                ListOptions(
                    resource_version=str(result.resource_version),
                    resource_version_match=ResourceVersionMatch.EXACT,
                ),
            )
            assert [item_identity(o) for o in result.items] == [
                item_identity(o) for o in exact.items
            ]
            checked += 1
            report = check_consistency(cache, behind, "/pods")
            assert report.consistent, report
    finally:
        stop.set()
        for writer in writers:
            writer.join(10)
    assert writes[0] > 100, "the writers barely ran: no churn to check under"
    assert checked >= 10
    served_by_backend = storage.lists
    assert served_by_backend < checked / 4, (
        f"{served_by_backend} of {checked} consistent lists fell back to the backend"
    )


def test_a_namespace_list_of_a_large_resource_probes_only_its_namespace(
    backends: tuple[EtcdBackend, EtcdBackend], cached: tuple[Cacher, _CountingEtcdStorage]
) -> None:
    cache, storage = cached
    behind = backends[1].storage_for(_CONFIG)
    for index in range(10):
        behind.create(f"/pods/a/p{index}", pod(f"p{index}", "a"))

    def fill(first: int) -> None:
        # Large enough that probing the whole resource is not worth it (> 4 x 20 + 1,000).
        for index in range(first, 1100, 4):
            behind.create(f"/pods/b/p{index}", pod(f"p{index}", "b"))

    fillers = [threading.Thread(target=fill, args=(k,)) for k in range(4)]
    for filler in fillers:
        filler.start()
    for filler in fillers:
        filler.join(60)
    assert len(cache.list("/pods/", _CONSISTENT).items) == 1110
    storage.probed.clear()
    for round_ in range(10):
        # Writes to the other namespace, then to this one, behind the cache's back.
        behind.guaranteed_update(
            "/pods/b/p0", lambda cur: {**cur, "metadata": {**cur["metadata"], "labels": {}}}
        )
        written = rv_of(behind.create(f"/pods/a/new{round_}", pod(f"new{round_}", "a")))
        result = cache.list("/pods/a", _CONSISTENT)
        assert result.resource_version >= written
        assert len(result.items) == 11 + round_
        exact = behind.list(
            "/pods/a",
            ListOptions(
                resource_version=str(result.resource_version),
                resource_version_match=ResourceVersionMatch.EXACT,
            ),
        )
        assert [item_identity(o) for o in result.items] == [item_identity(o) for o in exact.items]
    assert storage.lists == 0
    assert storage.probed and set(storage.probed) == {"/pods/a/"}
