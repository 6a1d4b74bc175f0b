"""Creates, updates and patches run on the event loop where the registry allows it (local
reads, no admission hook that may block): the deadline runner for coroutine handlers, which
thread a write's registry work runs on, and writes past their deadline while the LMDB writer
is held."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import anyio
import httpx
import orjson
import pytest

from kstore.errors import BadRequest, Timeout
from kstore.registry.interface import AdmissionAttributes, Registry
from kstore.server.app import build_app
from kstore.server.handlers.deadline import run_write_on_loop
from kstore.server.handlers.scope import Call, Reply, ResourceScope
from kstore.server.serve import ServeConfig, open_registry
from kstore.storage.lmdb import LmdbBackend
from tests.server.calls import post_call

_CMS = "/api/v1/namespaces/default/configmaps"


_NO_SCOPE = cast(ResourceScope, None)


def test_a_coroutine_write_answers_with_its_reply_or_its_error_in_the_callers_context() -> None:
    user: contextvars.ContextVar[str] = contextvars.ContextVar("user")
    seen: list[tuple[str, int]] = []

    async def stored(scope: ResourceScope, call: Call) -> Reply:
        seen.append((user.get("nobody"), threading.get_ident()))
        await asyncio.sleep(0)
        return Reply(201, b"stored", "text/plain")

    async def fails(scope: ResourceScope, call: Call) -> Reply:
        raise BadRequest("no")

    async def main() -> None:
        user.set("alice")
        reply = await run_write_on_loop(stored, _NO_SCOPE, post_call({"timeout": "5s"}))
        assert reply.body == b"stored"
        with pytest.raises(BadRequest, match=r"^no$"):
            await run_write_on_loop(fails, _NO_SCOPE, post_call({}))

    anyio.run(main)
    assert seen == [("alice", threading.get_ident())]


def test_a_coroutine_write_past_its_deadline_is_a_timeout_and_ends_on_its_own_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def main() -> None:
        release = asyncio.Event()
        finished = asyncio.Event()

        async def slow(scope: ResourceScope, call: Call) -> Reply:
            await release.wait()
            finished.set()
            raise BadRequest("refused late")

        started = time.monotonic()
        with pytest.raises(Timeout):
            await run_write_on_loop(slow, _NO_SCOPE, post_call({"timeout": "200ms"}))
        assert 0.15 < time.monotonic() - started < 2
        assert not finished.is_set()
        release.set()
        await asyncio.wait_for(finished.wait(), 5)
        await asyncio.sleep(0.01)

    with caplog.at_level(logging.WARNING, logger="kstore.server"):
        anyio.run(main)
    assert [r.getMessage() for r in caplog.records] == [
        "POST of configmaps default/cm finished with BadRequest('refused late') after its deadline"
    ]


def test_a_malformed_timeout_fails_a_coroutine_write_before_it_runs() -> None:
    ran: list[bool] = []

    async def handler(scope: ResourceScope, call: Call) -> Reply:
        ran.append(True)
        return Reply(201, b"", "text/plain")

    async def main() -> None:
        with pytest.raises(BadRequest, match="invalid timeout specified in the request URL"):
            await run_write_on_loop(handler, _NO_SCOPE, post_call({"timeout": "1"}))

    anyio.run(main)
    assert not ran


@pytest.fixture
def lmdb_registry(tmp_path: Path) -> Iterator[tuple[Registry, LmdbBackend]]:
    registry, backend = open_registry(ServeConfig(data_dir=tmp_path / "data"))
    assert isinstance(backend, LmdbBackend)
    try:
        yield registry, backend
    finally:
        registry.close()
        backend.close()


def _body(name: str) -> bytes:
    return orjson.dumps({"metadata": {"name": name}, "data": {"k": "v"}})


def test_writes_run_on_the_loop_until_a_hook_that_may_block_is_added(
    lmdb_registry: tuple[Registry, LmdbBackend],
) -> None:
    registry, _ = lmdb_registry
    threads: list[tuple[str, int]] = []

    def record(attributes: AdmissionAttributes) -> None:
        threads.append((str(attributes.operation), threading.get_ident()))

    registry.add_admission(validating=record, blocking=False)
    assert registry.writes_on_loop
    app = build_app(registry)

    async def write(name: str) -> None:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://kstore") as c:
            r = await c.post(_CMS, content=_body(name))
            assert r.status_code == 201, r.text
            obj = r.json()
            obj["data"] = {"k": "put"}
            r = await c.put(f"{_CMS}/{name}", content=orjson.dumps(obj))
            assert (r.status_code, r.json()["data"]) == (200, {"k": "put"}), r.text
            r = await c.patch(
                f"{_CMS}/{name}",
                content=b'{"data": {"k": "patched"}}',
                headers={"Content-Type": "application/merge-patch+json"},
            )
            assert (r.status_code, r.json()["data"]) == (200, {"k": "patched"}), r.text

    def operations() -> list[str]:
        # An update's hooks run once more when its write meets a newer value (a retry, as in
        # Kubernetes): the operations in order, repeats merged.
        ops = [op for op, _ in threads]
        return [op for i, op in enumerate(ops) if i == 0 or ops[i - 1] != op]

    anyio.run(write, "on-loop")
    loop_thread = threading.get_ident()  # the test's thread runs the event loop
    assert operations() == ["CREATE", "UPDATE"] and len(threads) >= 3
    assert {ident for _, ident in threads} == {loop_thread}
    registry.add_admission(validating=lambda attributes: None)
    assert not registry.writes_on_loop
    threads.clear()
    anyio.run(write, "on-a-worker")
    assert operations() == ["CREATE", "UPDATE"] and len(threads) >= 3
    assert loop_thread not in {ident for _, ident in threads}


def test_a_create_on_the_loop_past_its_deadline_answers_504_and_is_stored_later(
    lmdb_registry: tuple[Registry, LmdbBackend],
) -> None:
    registry, backend = lmdb_registry
    assert registry.writes_on_loop
    app = build_app(registry)

    async def main() -> None:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://kstore") as c:
            # While the lock is held no write transaction can start: the create's commit waits.
            with backend._commit_lock:
                r = await c.post(_CMS, params={"timeout": "300ms"}, content=_body("held"))
                assert r.status_code == 504, r.text
                assert r.json()["reason"] == "Timeout"
                # Reads are served meanwhile, on the loop.
                assert (await c.get(f"{_CMS}/held")).status_code == 404
            for _ in range(500):
                if (await c.get(f"{_CMS}/held")).status_code == 200:
                    break
                await anyio.sleep(0.01)
            else:
                pytest.fail("the abandoned create was never stored")

    anyio.run(main)


def test_a_patch_on_the_loop_past_its_deadline_answers_504_and_is_applied_later(
    lmdb_registry: tuple[Registry, LmdbBackend],
) -> None:
    registry, backend = lmdb_registry
    app = build_app(registry)
    merge = {"Content-Type": "application/merge-patch+json"}

    async def main() -> None:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://kstore") as c:
            assert (await c.post(_CMS, content=_body("patched"))).status_code == 201
            with backend._commit_lock:
                r = await c.patch(
                    f"{_CMS}/patched",
                    params={"timeout": "300ms"},
                    content=b'{"data": {"k": "late"}}',
                    headers=merge,
                )
                assert r.status_code == 504, r.text
                assert (await c.get(f"{_CMS}/patched")).json()["data"] == {"k": "v"}
            for _ in range(500):
                if (await c.get(f"{_CMS}/patched")).json()["data"] == {"k": "late"}:
                    break
                await anyio.sleep(0.01)
            else:
                pytest.fail("the abandoned patch was never applied")

    anyio.run(main)
