"""The deadline of a write (``?timeout=`` capped at 34 s) and Go's duration syntax, in-process
and on an LMDB app whose admission holds a write past its deadline.

The same behaviour through a real ``kstore serve`` on a stopped etcd member is in
``test_write_deadline_etcd.py``.
"""

from __future__ import annotations

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
from starlette.applications import Starlette

from kstore.errors import BadRequest, Timeout, to_status
from kstore.registry.interface import AdmissionAttributes
from kstore.server.app import build_app
from kstore.server.handlers import deadline
from kstore.server.handlers.deadline import (
    REQUEST_TIMEOUT_UPPER_BOUND,
    Handler,
    parse_go_duration,
    request_timeout,
    run_write,
    write_budget_seconds,
)
from kstore.server.handlers.scope import Call, Reply, ResourceScope
from kstore.server.serve import ServeConfig, open_registry
from tests.server.calls import post_call


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("1s", 1.0),
        ("500ms", 0.5),
        ("1m30s", 90.0),
        ("1.5h", 5400.0),
        (".5s", 0.5),
        ("5.s", 5.0),
        ("-2s", -2.0),
        ("+0", 0.0),
        ("0", 0.0),
        ("1h2m3.5s", 3723.5),
        ("250us", 250e-6),
        ("3\u00b5s", 3e-6),
        ("10ns", 10e-9),
    ],
)
def test_go_durations_parse_as_go_parses_them(text: str, seconds: float) -> None:
    assert parse_go_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("abc", 'time: invalid duration "abc"'),
        ("5", 'time: missing unit in duration "5"'),
        ("5x", 'time: unknown unit "x" in duration "5x"'),
        ("1s5", 'time: missing unit in duration "1s5"'),
        (".s", 'time: invalid duration ".s"'),
        ("-", 'time: invalid duration "-"'),
    ],
)
def test_malformed_go_durations_are_reported_with_gos_wording(text: str, message: str) -> None:
    with pytest.raises(ValueError, match="^" + message.replace(".", r"\.") + "$"):
        parse_go_duration(text)


def test_a_malformed_timeout_parameter_is_a_bad_request() -> None:
    with pytest.raises(BadRequest) as caught:
        request_timeout({"timeout": "soon"})
    assert str(caught.value) == (
        'invalid timeout specified in the request URL - time: invalid duration "soon"'
    )


def test_no_zero_or_negative_timeout_means_no_timeout_of_the_clients() -> None:
    assert request_timeout({}) is None
    assert request_timeout({"timeout": "0s"}) is None
    assert request_timeout({"timeout": "-5s"}) is None
    assert request_timeout({"timeout": "2s"}) == 2.0


def test_a_write_budget_is_the_clients_timeout_capped_at_34_seconds() -> None:
    assert write_budget_seconds({"timeout": "1500ms"}) == 1.5
    assert write_budget_seconds({"timeout": "35s"}) == 34.0
    assert write_budget_seconds({"timeout": "0"}) == 34.0
    assert write_budget_seconds({}) == REQUEST_TIMEOUT_UPPER_BOUND
    with pytest.raises(BadRequest):
        write_budget_seconds({"timeout": "1.5"})


def _reply(text: str) -> Reply:
    return Reply(201, text.encode(), "text/plain")


def _run(handler: Handler, query: dict[str, str]) -> Reply:
    # The handlers never touch the scope here: run_write only hands it on.
    scope = cast(ResourceScope, None)

    async def main() -> Reply:
        return await run_write(handler, scope, post_call(query))

    return anyio.run(main)


def test_a_write_done_before_its_deadline_answers_with_its_reply_or_its_error() -> None:
    assert _run(lambda scope, call: _reply("stored"), {"timeout": "5s"}).body == b"stored"

    def fails(scope: ResourceScope, call: Call) -> Reply:
        raise BadRequest("no")

    with pytest.raises(BadRequest, match=r"^no$"):
        _run(fails, {})


def test_a_write_runs_on_a_worker_thread_in_the_callers_context() -> None:
    user: contextvars.ContextVar[str] = contextvars.ContextVar("user")
    seen: list[tuple[str, int]] = []

    def handler(scope: ResourceScope, call: Call) -> Reply:
        seen.append((user.get("nobody"), threading.get_ident()))
        return _reply("ok")

    async def main() -> None:
        user.set("alice")
        await run_write(handler, cast(ResourceScope, None), post_call({}))

    anyio.run(main)
    assert seen[0][0] == "alice"
    assert seen[0][1] != threading.get_ident()


def test_a_malformed_timeout_fails_a_write_before_its_handler_runs() -> None:
    ran = threading.Event()

    def handler(scope: ResourceScope, call: Call) -> Reply:
        ran.set()
        return _reply("stored")

    with pytest.raises(BadRequest, match="invalid timeout specified in the request URL"):
        _run(handler, {"timeout": "1"})
    assert not ran.is_set()


def test_a_write_past_its_deadline_is_a_timeout_and_runs_to_its_end_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    release = threading.Event()
    finished = threading.Event()

    def slow(scope: ResourceScope, call: Call) -> Reply:
        release.wait(10)
        finished.set()
        return _reply("stored")

    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="kstore.server"), pytest.raises(Timeout) as caught:
        _run(slow, {"timeout": "200ms"})
    assert 0.15 < time.monotonic() - started < 2
    status = to_status(caught.value)
    assert (status["code"], status["reason"]) == (504, "Timeout")
    assert status["message"] == (
        "Timeout: request did not complete within requested timeout - context deadline exceeded"
    )
    assert not finished.is_set()
    with caplog.at_level(logging.WARNING, logger="kstore.server"):
        release.set()
        assert finished.wait(5), "the abandoned write did not run to its end"
        deadline = time.monotonic() + 5
        while not caplog.records and time.monotonic() < deadline:
            time.sleep(0.01)
    assert [r.getMessage() for r in caplog.records] == [
        "POST of configmaps default/cm finished successfully after its deadline"
    ]


def test_a_write_cancelled_from_outside_is_abandoned_and_its_outcome_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    release = threading.Event()

    def slow(scope: ResourceScope, call: Call) -> Reply:
        release.wait(10)
        raise BadRequest("refused late")

    async def main() -> bool:
        # As the --request-timeout filter cancels the request before the write deadline.
        with anyio.move_on_after(0.2) as outer:
            await run_write(slow, cast(ResourceScope, None), post_call({"timeout": "30s"}))
        return outer.cancelled_caught

    with caplog.at_level(logging.WARNING, logger="kstore.server"):
        assert anyio.run(main)
        release.set()
        deadline = time.monotonic() + 5
        while not caplog.records and time.monotonic() < deadline:
            time.sleep(0.01)
    assert [r.getMessage() for r in caplog.records] == [
        "POST of configmaps default/cm finished with BadRequest('refused late') after its deadline"
    ]


@pytest.fixture
def slow_app(tmp_path: Path) -> Iterator[tuple[Starlette, threading.Event]]:
    """An app on LMDB whose admission holds every write of an object named "slow" until the
    event is set (a storage call that does not return, as far as the route can tell)."""
    registry, backend = open_registry(ServeConfig(data_dir=tmp_path / "data"))
    release = threading.Event()

    def hold_slow(attributes: AdmissionAttributes) -> None:
        if attributes.name == "slow":
            release.wait(10)

    registry.add_admission(validating=hold_slow)
    try:
        yield build_app(registry), release
    finally:
        release.set()
        registry.close()
        backend.close()


def test_a_write_on_lmdb_past_its_deadline_answers_504_and_the_server_keeps_serving(
    slow_app: tuple[Starlette, threading.Event],
) -> None:
    app, release = slow_app
    cms = "/api/v1/namespaces/default/configmaps"

    def body(name: str) -> bytes:
        return orjson.dumps({"metadata": {"name": name}, "data": {"k": "v"}})

    async def main() -> None:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://kstore") as c:
            started = time.monotonic()
            r = await c.post(cms, params={"timeout": "500ms"}, content=body("slow"))
            elapsed = time.monotonic() - started
            assert r.status_code == 504, r.text
            assert r.json()["reason"] == "Timeout"
            assert 0.4 < elapsed < 3, elapsed
            # The held write still occupies its thread; other requests are served meanwhile.
            assert (await c.post(cms, content=body("quick"))).status_code == 201
            assert (await c.get(f"{cms}/quick")).status_code == 200
            assert (await c.get(f"{cms}/slow")).status_code == 404
            release.set()
            # The abandoned write carries on and is stored, as in Kubernetes.
            for _ in range(500):
                if (await c.get(f"{cms}/slow")).status_code == 200:
                    break
                await anyio.sleep(0.01)
            else:
                pytest.fail("the abandoned write was never stored")

    anyio.run(main)


def test_writes_on_lmdb_honour_a_timeout_and_reject_a_malformed_one(client: httpx.Client) -> None:
    cms = "/api/v1/namespaces/default/configmaps"
    body = orjson.dumps({"metadata": {"name": "timed"}, "data": {"k": "v"}})
    assert client.post(cms, params={"timeout": "5s"}, content=body).status_code == 201
    r = client.delete(f"{cms}/timed", params={"timeout": "10"})
    assert r.status_code == 400, r.text
    assert r.json()["message"] == (
        'invalid timeout specified in the request URL - time: missing unit in duration "10"'
    )
    assert client.delete(f"{cms}/timed").status_code == 200
    r = client.get(f"{cms}/timed", params={"timeout": "x"})
    assert (r.status_code, r.json()["reason"]) == (400, "BadRequest")


def test_a_write_on_lmdb_without_a_timeout_is_held_to_the_upper_bound(
    slow_app: tuple[Starlette, threading.Event], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The bound itself is 34 s; a shorter one shows that it applies with no ?timeout= at all.
    monkeypatch.setattr(deadline, "REQUEST_TIMEOUT_UPPER_BOUND", 0.3)
    app, _ = slow_app
    cms = "/api/v1/namespaces/default/configmaps"
    slow = orjson.dumps({"metadata": {"name": "slow"}})

    async def main() -> tuple[int, float]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://kstore") as c:
            started = time.monotonic()
            r = await c.post(cms, content=slow)
            return r.status_code, time.monotonic() - started

    status, elapsed = anyio.run(main)
    assert status == 504
    assert 0.25 < elapsed < 3, elapsed
