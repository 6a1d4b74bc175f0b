"""The cacher as a Storage decorator: where each read is served, readiness, consistent reads,
freshness timeouts, re-listing after a broken backend watch, write hints."""

from __future__ import annotations

import time

import pytest

from kstore.cache import CachedListResult, Cacher
from kstore.errors import NotFound, TooLargeResourceVersion
from kstore.storage.continue_token import decode_continue
from kstore.storage.interface import (
    EventType,
    GetOptions,
    ListOptions,
    ResourceVersionMatch,
)
from kstore.testing.objects import pod, rv_of
from tests.cache.conftest import MakeCache
from tests.cache.fake_storage import FakeStorage

EXACT = ResourceVersionMatch.EXACT
NOT_OLDER = ResourceVersionMatch.NOT_OLDER_THAN


def backend_calls(storage: FakeStorage, name: str) -> int:
    return sum(1 for call, _ in storage.calls if call == name)


def seeded(make_cache: MakeCache, **options: object) -> tuple[Cacher, FakeStorage]:
    cache, storage = make_cache(**options)
    for index in range(3):
        storage.create(f"/pods/ns/p{index}", pod(f"p{index}", "ns"))
    cache.list("/pods/")  # consistent: the cache has everything
    storage.calls.clear()
    return cache, storage


def test_reads_at_zero_and_not_older_than_come_from_memory(make_cache: MakeCache) -> None:
    cache, storage = seeded(make_cache)
    listed = cache.list("/pods/ns", ListOptions(resource_version="0", limit=1))
    assert isinstance(listed, CachedListResult)
    assert len(listed.items) == 3 and not listed.continue_token  # limit ignored at "0"
    current = str(storage.revision)
    for opts in (
        ListOptions(resource_version=current, resource_version_match=NOT_OLDER),
        ListOptions(resource_version=current),  # legacy, no limit: not older than
    ):
        assert len(cache.list("/pods/ns", opts).items) == 3
    got = cache.get("/pods/ns/p1", GetOptions(resource_version="0"))
    assert got["metadata"]["name"] == "p1"
    with pytest.raises(NotFound, match='pods "nope" not found'):
        cache.get("/pods/ns/nope", GetOptions(resource_version="0"))
    assert cache.get("/pods/ns/nope", GetOptions(resource_version="0", ignore_not_found=True)) == {}
    assert backend_calls(storage, "list") == 0 and backend_calls(storage, "get") == 0


def test_exact_continue_and_legacy_limited_lists_go_to_the_backend(make_cache: MakeCache) -> None:
    cache, storage = seeded(make_cache)
    current = str(storage.revision)
    for opts in (
        ListOptions(resource_version=current, resource_version_match=EXACT),
        ListOptions(resource_version=current, limit=2),  # legacy: exact at that revision
        ListOptions(continue_token="anything"),
    ):
        storage.calls.clear()
        result = cache.list("/pods/ns", opts)
        assert not isinstance(result, CachedListResult)
        assert storage.calls == [("list", opts)]


def test_get_without_resource_version_reads_the_backend(make_cache: MakeCache) -> None:
    cache, storage = seeded(make_cache)
    cache.get("/pods/ns/p0")
    assert backend_calls(storage, "get") == 1


def test_consistent_list_pages_from_memory_with_a_backend_continue_token(
    make_cache: MakeCache,
) -> None:
    cache, storage = seeded(make_cache)
    page = cache.list("/pods/ns", ListOptions(limit=2))
    assert isinstance(page, CachedListResult)
    assert [o["metadata"]["name"] for o in page.items] == ["p0", "p1"]
    assert page.remaining_item_count == 1
    token = decode_continue(page.continue_token, "/pods/ns/")
    assert (token.start_key, token.resource_version) == ("/pods/ns/p1\x00", page.resource_version)
    assert backend_calls(storage, "list") == 0
    assert backend_calls(storage, "current_revision") == 1


def test_consistent_list_waits_for_progress_when_the_revision_moved_elsewhere(
    make_cache: MakeCache,
) -> None:
    cache, storage = seeded(make_cache)
    moved = storage.bump()  # a write to another resource
    result = cache.list("/pods/ns")
    assert isinstance(result, CachedListResult)
    assert result.resource_version == moved
    assert storage.progress_requests >= 1
    # Read your writes: a later "0" read sees at least what the consistent read saw.
    later = cache.list("/pods/ns", ListOptions(resource_version="0"))
    assert later.resource_version == moved


def test_consistent_list_without_progress_falls_back_to_the_backend(
    make_cache: MakeCache,
) -> None:
    cache, storage = seeded(make_cache, fake=FakeStorage(progress=False), fresh_timeout_seconds=0.3)
    storage.bump()
    started = time.monotonic()
    result = cache.list("/pods/ns")
    assert time.monotonic() - started >= 0.3
    assert not isinstance(result, CachedListResult)
    assert backend_calls(storage, "list") == 1


def test_consistent_list_can_answer_504_instead_of_falling_back(make_cache: MakeCache) -> None:
    cache, storage = seeded(
        make_cache,
        fake=FakeStorage(progress=False),
        fresh_timeout_seconds=0.3,
        consistent_read_fallback=False,
    )
    revision = storage.bump()
    with pytest.raises(TooLargeResourceVersion) as raised:
        cache.list("/pods/ns")
    assert raised.value.code == 504 and raised.value.requested == revision


def test_a_resource_version_the_cache_cannot_reach_is_504_after_the_wait(
    make_cache: MakeCache,
) -> None:
    cache, storage = seeded(make_cache, fresh_timeout_seconds=0.3)
    future = str(storage.revision + 5)
    for read in (
        lambda: cache.get("/pods/ns/p0", GetOptions(resource_version=future)),
        lambda: cache.list("/pods/ns", ListOptions(resource_version=future)),
    ):
        started = time.monotonic()
        with pytest.raises(TooLargeResourceVersion, match="Too large resource version"):
            read()
        assert time.monotonic() - started >= 0.3


def test_updates_and_deletes_carry_the_cached_object_as_hint(make_cache: MakeCache) -> None:
    cache, storage = seeded(make_cache)
    cached = cache.get("/pods/ns/p0", GetOptions(resource_version="0"))
    cache.guaranteed_update("/pods/ns/p0", lambda cur: cur, cached_existing={"ignored": 1})
    cache.delete("/pods/ns/p2")
    hints = [hint for call, hint in storage.calls if call in ("guaranteed_update", "delete")]
    # The cached version, not the caller's hint (each read of the cache decodes a new object).
    assert hints[0] == cached and hints[0] is not cached
    assert hints[1]["metadata"]["name"] == "p2"


def test_a_broken_backend_watch_ends_watches_and_relists(make_cache: MakeCache) -> None:
    cache, storage = seeded(make_cache, relist_backoff_seconds=0.05)
    watcher = cache.watch("/pods/ns", ListOptions(resource_version=str(storage.revision)))
    relists = cache.relists
    storage.fail_watches()
    assert watcher.next(5.0) is None and watcher.stopped  # ended, not errored
    deadline = time.monotonic() + 5
    while cache.relists == relists and time.monotonic() < deadline:
        time.sleep(0.01)
    assert cache.wait_ready(5.0)
    created = storage.create("/pods/ns/after", pod("after", "ns"))
    fresh = cache.watch("/pods/ns", ListOptions(resource_version=str(rv_of(created) - 1)))
    event = fresh.next(5.0)
    assert event is not None and (event.type, event.object) == (EventType.ADDED, created)
    fresh.stop()


def test_reads_go_to_the_backend_until_the_cache_is_ready(make_cache: MakeCache) -> None:
    fake = FakeStorage()
    fake.create("/pods/ns/a", pod("a", "ns"))
    fake.fail_initial_list = True
    cache, _ = make_cache(fake, wait=False)
    assert not cache.wait_first_sync(5.0)
    assert not cache.ready
    fake.calls.clear()
    assert len(cache.list("/pods/ns", ListOptions(resource_version="0")).items) == 1
    assert cache.get("/pods/ns/a", GetOptions(resource_version="0"))["metadata"]["name"] == "a"
    assert [call for call, _ in fake.calls] == ["list", "get"]


def test_consistent_reads_can_be_left_to_the_backend(make_cache: MakeCache) -> None:
    cache, storage = seeded(make_cache, consistent_reads_from_cache=False)
    result = cache.list("/pods/ns")
    assert not isinstance(result, CachedListResult)
    assert backend_calls(storage, "list") == 1
    assert isinstance(cache.list("/pods/ns", ListOptions(resource_version="0")), CachedListResult)


def test_a_consistent_get_is_answered_from_memory_when_the_cache_is_current(
    make_cache: MakeCache,
) -> None:
    cache, storage = seeded(make_cache, consistent_gets_from_cache=True)
    got = cache.get("/pods/ns/p1")
    assert got["metadata"]["name"] == "p1"
    assert rv_of(got) == rv_of(storage.get("/pods/ns/p1"))
    storage.calls.clear()
    cache.get("/pods/ns/p1")
    assert backend_calls(storage, "get") == 0


def test_a_consistent_get_reads_the_backend_while_the_cache_lags(make_cache: MakeCache) -> None:
    cache, storage = seeded(make_cache, consistent_gets_from_cache=True)
    storage.bump()  # a write elsewhere: the cache has not seen that revision yet
    cache.get("/pods/ns/p1")
    assert backend_calls(storage, "get") == 1


def test_a_consistent_get_of_a_missing_object_is_the_backends_answer(
    make_cache: MakeCache,
) -> None:
    cache, storage = seeded(make_cache, consistent_gets_from_cache=True)
    with pytest.raises(NotFound):
        cache.get("/pods/ns/nope")
    assert cache.get("/pods/ns/nope", GetOptions(ignore_not_found=True)) == {}
    assert backend_calls(storage, "get") == 2
