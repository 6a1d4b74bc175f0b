"""Fixtures for the cache's unit tests: a Cacher over the in-memory fake storage."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

# These tests import kstore.testing helpers; have them loaded with assertion rewriting, as
# the conformance suite's conftest asks (it cannot once they were imported plainly).
pytest.register_assert_rewrite("kstore.testing")

from kstore.cache import CacheConfig, Cacher  # noqa: E402
from kstore.storage.interface import IdentityTransformer  # noqa: E402
from kstore.testing.objects import pod_config  # noqa: E402
from tests.cache.fake_storage import FakeStorage  # noqa: E402

MakeCache = Callable[..., tuple[Cacher, FakeStorage]]


@pytest.fixture
def make_cache() -> Iterator[MakeCache]:
    """``make_cache(fake=None, **config)``: a ready Cacher in front of a FakeStorage."""
    made: list[Cacher] = []

    def make(
        fake: FakeStorage | None = None, wait: bool = True, **options: object
    ) -> tuple[Cacher, FakeStorage]:
        storage = fake or FakeStorage()
        config = CacheConfig(
            storage=storage,
            resource=pod_config(IdentityTransformer()),
            **options,  # type: ignore[arg-type]
        )
        cache = Cacher(config)
        made.append(cache)
        if wait:
            assert cache.wait_ready(5.0)
        return cache, storage

    yield make
    for cache in made:
        cache.stop()
