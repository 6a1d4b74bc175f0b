"""Fixtures of the registry tests: a fresh LMDB store per test (in the test's temporary
directory) and the registry of the built-in kinds plus one custom kind over it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kstore.api.scheme import Scheme
from kstore.registry.interface import CreateOptions, UpdateOptions
from kstore.registry.registry import RegistryConfig, StoreRegistry, build_registry
from kstore.registry.store import GenericStore
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


@pytest.fixture(params=["blocking", "asyncio"])
def write_face(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """For the second run of a test, every store's create and update go through
    ``create_async`` and ``update_async`` (the forms the REST routes await on the event loop
    where the registry allows it), each on an event loop of its own: both must behave alike."""
    if request.param == "asyncio":

        def create(self: GenericStore, ctx: Any, obj: Any, opts: CreateOptions) -> Any:
            return asyncio.run(self.create_async(ctx, obj, opts))

        def update(
            self: GenericStore, ctx: Any, name: str, updated: Any, opts: UpdateOptions
        ) -> Any:
            return asyncio.run(self.update_async(ctx, name, updated, opts))

        monkeypatch.setattr(GenericStore, "create", create)
        monkeypatch.setattr(GenericStore, "update", update)
    return str(request.param)
