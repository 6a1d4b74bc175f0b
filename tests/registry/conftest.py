"""Fixtures of the registry tests: a fresh LMDB store per test (in the test's temporary
directory) and the registry of the built-in kinds plus one custom kind over it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kstore.api.scheme import Scheme
from kstore.registry.registry import RegistryConfig, StoreRegistry, build_registry
from kstore.storage.lmdb import LmdbBackend, LmdbConfig
from tests.registry.objects import registry_scheme


@pytest.fixture
def backend(tmp_path: Path) -> Iterator[LmdbBackend]:
    b = LmdbBackend(LmdbConfig(path=tmp_path / "lmdb", durable=False, compaction_interval_s=0))
    try:
        yield b
    finally:
        b.close()


@pytest.fixture
def scheme() -> Scheme:
    return registry_scheme()


@pytest.fixture(params=[False, True], ids=["backend", "watch-cache"])
def watch_cache(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


def make_registry(
    scheme: Scheme, backend: LmdbBackend, *, watch_cache: bool = False, **config: object
) -> StoreRegistry:
    settings: dict[str, object] = {
        "watch_cache": watch_cache,
        "namespace_retry_seconds": 0.05,
    }
    settings.update(config)
    return build_registry(scheme, backend, RegistryConfig(**settings))  # type: ignore[arg-type]


@pytest.fixture
def registry(scheme: Scheme, backend: LmdbBackend) -> Iterator[StoreRegistry]:
    r = make_registry(scheme, backend)
    try:
        yield r
    finally:
        r.close()
