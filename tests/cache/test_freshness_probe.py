"""The watch cache's side of a freshness probe: a revision proved unchanged is claimed only
from the state the probe started from (same epoch, not behind its base), and wakes waiters."""

from __future__ import annotations

import threading

import pytest

from kstore.cache.watch_cache import CacheUnavailable, WatchCache
from kstore.storage.interface import EventType
from kstore.testing.objects import pod, pod_attrs, with_rv


def _cache() -> WatchCache:
    cache = WatchCache(resource_prefix="/pods/", get_attrs=pod_attrs)
    cache.replace([with_rv(pod("a", "ns"), 3), with_rv(pod("b", "ns"), 4)], revision=5)
    return cache


def test_probe_point_is_the_revision_and_count_read_together() -> None:
    cache = _cache()
    revision, count, _ = cache.probe_point()
    assert (revision, count) == (5, 2)
    cache.apply(EventType.DELETED, with_rv(pod("a", "ns"), 7), 7)
    revision, count, _ = cache.probe_point()
    assert (revision, count) == (7, 1)


def test_a_confirmed_revision_is_claimed_and_wakes_waiters() -> None:
    cache = _cache()
    base, _, epoch = cache.probe_point()
    woken = threading.Event()

    def wait() -> None:
        cache.wait_fresh(9, timeout=5.0)
        woken.set()

    waiter = threading.Thread(target=wait)
    waiter.start()
    assert cache.advance_confirmed(epoch, base, 9)
    waiter.join(5.0)
    assert woken.is_set()
    assert cache.resource_version == 9
    # Never backwards.
    assert not cache.advance_confirmed(epoch, base, 8)
    assert cache.resource_version == 9


def test_a_claim_from_before_a_relist_is_void() -> None:
    cache = _cache()
    base, _, epoch = cache.probe_point()
    cache.replace([with_rv(pod("c", "ns"), 6)], revision=6)
    assert not cache.advance_confirmed(epoch, base, 10)
    assert cache.resource_version == 6
    cache.invalidate()
    with pytest.raises(CacheUnavailable):
        cache.probe_point()


def test_events_applied_after_the_probe_began_do_not_void_the_claim() -> None:
    # The probe proved (5, 12] unchanged, so an event the cache applied meanwhile is newer
    # than 12 and the claim is a no-op, or (a progress bookmark) inside (5, 12] and the claim
    # still holds from there.
    cache = _cache()
    base, _, epoch = cache.probe_point()
    cache.advance(8)
    assert cache.advance_confirmed(epoch, base, 12)
    assert cache.resource_version == 12
    cache.apply(EventType.ADDED, with_rv(pod("z", "ns"), 15), 15)
    assert not cache.advance_confirmed(epoch, 12, 14)
    assert cache.resource_version == 15


def test_probe_point_counts_a_namespace_or_one_key() -> None:
    cache = _cache()
    cache.apply(EventType.ADDED, with_rv(pod("c", "other"), 6), 6)
    assert cache.probe_point("/pods/ns/")[:2] == (6, 2)
    assert cache.probe_point("/pods/other/")[:2] == (6, 1)
    assert cache.probe_point("/pods/n/")[:2] == (6, 0)
    assert cache.probe_point("/pods/ns/a")[:2] == (6, 1)
    assert cache.probe_point("/pods/ns/zz")[:2] == (6, 0)
    assert cache.probe_point("/pods/")[:2] == (6, 3)
