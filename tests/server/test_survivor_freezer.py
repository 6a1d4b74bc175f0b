"""``kstore serve``'s garbage-collection policy: survivors of full collections are frozen,
and thawed again every reclaim interval so that dead cycles among them are found."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from kstore.server.serve import SurvivorFreezer


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> _Clock:
    return _Clock()


@pytest.fixture
def freezer(clock: _Clock) -> Iterator[SurvivorFreezer]:
    with SurvivorFreezer(reclaim_interval_seconds=60.0, clock=clock) as f:
        yield f
    assert gc.get_freeze_count() == 0
    assert f._after_collection not in gc.callbacks


def test_entering_freezes_what_exists_and_leaving_thaws_it(freezer: SurvivorFreezer) -> None:
    assert gc.get_freeze_count() > 0


def test_young_collections_wait_for_a_request_sized_burst_and_the_thresholds_come_back(
    clock: _Clock,
) -> None:
    before = gc.get_threshold()
    with SurvivorFreezer(clock=clock, young_threshold=20_000):
        assert gc.get_threshold() == (20_000, *before[1:])
        young = gc.get_stats()[0]["collections"]
        # A Pod create's worth of short-lived containers, held at once, collects nothing.
        burst = [{"name": str(i), "ports": [i]} for i in range(5_000)]
        assert gc.get_stats()[0]["collections"] == young
        del burst
    assert gc.get_threshold() == before


def test_survivors_of_a_full_collection_are_frozen(freezer: SurvivorFreezer) -> None:
    kept = [{"spec": {"containers": [{"name": str(i)}]}} for i in range(2000)]
    before = gc.get_freeze_count()
    gc.collect()
    assert freezer.freezes == 1
    assert gc.get_freeze_count() >= before + len(kept)
    gc.collect(0)  # a young collection freezes nothing
    assert freezer.freezes == 1


def test_a_full_collection_after_the_reclaim_interval_thaws_everything(
    freezer: SurvivorFreezer, clock: _Clock
) -> None:
    clock.now = 61.0
    gc.collect()
    assert (freezer.reclaims, gc.get_freeze_count()) == (1, 0)
    gc.collect()  # the next full collection sees everything, then freezes its survivors
    assert freezer.freezes == 1
    assert gc.get_freeze_count() > 0


def test_a_dead_cycle_among_frozen_objects_is_collected_after_a_reclaim(
    freezer: SurvivorFreezer, clock: _Clock
) -> None:
    class Node:
        other: object = None

    a, b = Node(), Node()
    a.other, b.other = b, a
    alive = weakref.ref(a)
    gc.collect()  # the live cycle is frozen
    del a, b
    gc.collect()
    assert alive() is not None, "a frozen cycle is not scanned until the reclaim"
    clock.now = 61.0
    gc.collect()  # thaws
    gc.collect()  # scans everything: the dead cycle goes
    assert alive() is None
