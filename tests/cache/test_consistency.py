"""The consistency checker on the real LMDB backend: the cache's list at its revision X has
the same (namespace, name, resourceVersion) digest as the backend's list at exactly X, also
while writers churn; a diverged cache is detected and repaired by a re-list."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kstore.cache import CacheConfig, Cacher, check_consistency
from kstore.cache.consistency import Digest, fnv1_64
from kstore.cache.watch_cache import Entry
from kstore.errors import AlreadyExists, NotFound
from kstore.storage.interface import IdentityTransformer, Storage
from kstore.storage.lmdb import LmdbBackend, LmdbConfig
from kstore.testing.objects import pod, pod_attrs, pod_config


def test_digest_is_go_fnv1_64() -> None:
    # Reference values of FNV-1 (64-bit), the hash Go's fnv.New64 computes.
    assert fnv1_64(b"") == 0xCBF29CE484222325
    assert fnv1_64(b"a") == 0xAF63BD4C8601B7BE
    assert fnv1_64(b"foobar") == 0x340D8765A4DDA9C2
    digest = Digest()
    digest.add(("ns", "name", "12"))
    assert digest.hexdigest() == f"{fnv1_64(b'ns/name/12/'):x}"


@pytest.fixture
def lmdb_pods(tmp_path: Path) -> Iterator[Storage]:
    backend = LmdbBackend(
        LmdbConfig(
            path=tmp_path / "lmdb",
            durable=False,
            compaction_interval_s=0,
            progress_notify_interval_s=0.1,
        )
    )
    try:
        yield backend.storage_for(pod_config(IdentityTransformer()))
    finally:
        backend.close()


def _churn(storage: Storage, stop: threading.Event, seed: int, writes: list[int]) -> None:
    rng = random.Random(seed)
    while not stop.is_set():
        name = f"p{rng.randrange(60):02d}"
        namespace = f"ns{rng.randrange(3)}"
        key = f"/pods/{namespace}/{name}"
        action = rng.random()
        try:
            if action < 0.4:
                storage.create(key, pod(name, namespace, labels={"v": str(rng.random())}))
            elif action < 0.8:
                storage.guaranteed_update(
                    key, lambda cur: {**cur, "metadata": {**cur["metadata"], "labels": {"v": "x"}}}
                )
            else:
                storage.delete(key)
            writes[0] += 1
        except (AlreadyExists, NotFound):
            pass


def test_cache_matches_the_backend_at_its_revision_under_churn(lmdb_pods: Storage) -> None:
    for index in range(100):
        lmdb_pods.create(f"/pods/ns0/seed{index:03d}", pod(f"seed{index:03d}", "ns0"))
    with Cacher(
        CacheConfig(storage=lmdb_pods, resource=pod_config(IdentityTransformer()))
    ) as cache:
        assert cache.wait_ready(10.0)
        stop = threading.Event()
        writes = [0]
        writers = [
            threading.Thread(target=_churn, args=(lmdb_pods, stop, seed, writes), daemon=True)
            for seed in range(3)
        ]
        for writer in writers:
            writer.start()
        reports = []
        try:
            deadline = time.monotonic() + 4.0
            while time.monotonic() < deadline and len(reports) < 200:
                reports.append(check_consistency(cache, lmdb_pods, "/pods"))
                time.sleep(0.01)
        finally:
            stop.set()
            for writer in writers:
                writer.join(10)
        assert writes[0] > 200, "the writers barely ran: no churn to check under"
        inconsistent = [r for r in reports if not r.consistent]
        assert not inconsistent, inconsistent[0]
        checked_at = {r.resource_version for r in reports}
        assert len(checked_at) >= 10, "checks must land on many different revisions"
        assert max(r.cache_items for r in reports) > 100


def test_a_diverged_cache_is_detected_and_relisted(lmdb_pods: Storage) -> None:
    for index in range(20):
        lmdb_pods.create(f"/pods/ns/p{index:02d}", pod(f"p{index:02d}", "ns"))
    config = CacheConfig(
        storage=lmdb_pods,
        resource=pod_config(IdentityTransformer()),
        consistency_check_interval_seconds=0.2,
    )
    with Cacher(config) as cache:
        assert cache.wait_ready(10.0)
        lmdb_pods.list("/pods/")
        cache.list("/pods/")  # synced
        # Corrupt the cache behind its back: an entry with a stale resourceVersion.
        state = cache.watch_cache
        with state.lock:
            good = state.entry("/pods/ns/p05")
            assert good is not None
            stale = {**good.object, "metadata": {**good.object["metadata"], "resourceVersion": "1"}}
            labels, fields = pod_attrs(stale)
            state._put(Entry(good.key, stale, labels, fields, 1), good)
        report = check_consistency(cache, lmdb_pods, "/pods")
        assert not report.consistent
        assert report.first_difference is not None
        index, ours, theirs = report.first_difference
        assert ours == ("ns", "p05", "1") and theirs is not None and theirs[:2] == ("ns", "p05")

        relists = cache.relists
        deadline = time.monotonic() + 10
        while cache.relists == relists and time.monotonic() < deadline:
            time.sleep(0.05)
        assert cache.relists > relists, "the periodic checker did not repair the cache"
        assert cache.wait_ready(10.0)
        assert check_consistency(cache, lmdb_pods, "/pods").consistent
