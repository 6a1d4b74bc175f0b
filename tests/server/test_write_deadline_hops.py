"""Which requests take the route's worker-thread hop: every write (under its deadline) and
every read, except a GET of one object at no resourceVersion (or ``0``) where the registry's
reads are local (LMDB), which the event loop answers itself."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import orjson
import pytest

from kstore.registry.registry import RegistryConfig, build_registry
from kstore.server import routes
from kstore.server.app import build_app
from kstore.server.handlers.scope import Call, Reply, ResourceScope
from kstore.server.serve import ServeConfig, open_backend, open_registry

CMS = "/api/v1/namespaces/default/configmaps"


@pytest.fixture
def get_threads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The thread each GET handler runs on, in request order."""
    threads: list[int] = []
    real = routes._HANDLERS["get"]

    def recording(scope: ResourceScope, call: Call) -> Reply:
        threads.append(threading.get_ident())
        return real(scope, call)

    monkeypatch.setitem(routes._HANDLERS, "get", recording)
    return threads


def _get_at_versions(app: object, versions: list[str | None]) -> list[int]:
    """Create a ConfigMap, then GET it at each resourceVersion (None: no parameter); the
    status codes."""

    async def main() -> list[int]:
        transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
        async with httpx.AsyncClient(transport=transport, base_url="http://kstore") as c:
            body = orjson.dumps({"metadata": {"name": "cm"}, "data": {"k": "v"}})
            created = await c.post(CMS, content=body)
            assert created.status_code == 201, created.text
            rv = created.json()["metadata"]["resourceVersion"]
            codes = []
            for version in versions:
                params = {} if version is None else {"resourceVersion": version or rv}
                codes.append((await c.get(f"{CMS}/cm", params=params)).status_code)
            return codes

    return anyio.run(main)


@pytest.fixture
def lmdb_app(tmp_path: Path) -> Iterator[object]:
    registry, backend = open_registry(ServeConfig(data_dir=tmp_path / "data"))
    try:
        yield build_app(registry)
    finally:
        registry.close()
        backend.close()


def test_lmdb_serves_a_get_at_the_latest_or_any_version_on_the_event_loop(
    lmdb_app: object, get_threads: list[int]
) -> None:
    # "" stands for the object's own resourceVersion: a GET that may wait for the cache. It
    # goes before "0" (any version, from the cache as it is), which could otherwise miss an
    # object the cache has not taken in yet.
    assert _get_at_versions(lmdb_app, [None, "", "0"]) == [200, 200, 200]
    loop_thread = threading.get_ident()
    assert get_threads[0] == loop_thread
    assert get_threads[1] != loop_thread
    assert get_threads[2] == loop_thread


def test_a_registry_whose_reads_are_not_local_serves_every_get_on_a_worker_thread(
    tmp_path: Path, get_threads: list[int]
) -> None:
    from kstore.api.kinds import builtin_scheme_builder

    backend = open_backend(ServeConfig(data_dir=tmp_path / "data"))
    registry = build_registry(builtin_scheme_builder().build({}), backend, RegistryConfig())
    try:
        assert not registry.reads_are_local
        # The GET at the object's own resourceVersion ("") waits for the watch cache to have
        # it, so the one at any version ("0"), which the cache answers, then finds it too.
        assert _get_at_versions(build_app(registry), [None, "", "0"]) == [200, 200, 200]
    finally:
        registry.close()
        backend.close()
    assert threading.get_ident() not in get_threads
    assert len(get_threads) == 3


def test_only_lmdb_registries_have_local_reads(tmp_path: Path) -> None:
    registry, backend = open_registry(ServeConfig(data_dir=tmp_path / "data"))
    try:
        assert registry.reads_are_local
    finally:
        registry.close()
        backend.close()
    assert not RegistryConfig().reads_are_local
