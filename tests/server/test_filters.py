"""The filter chain on small in-process apps: recovery, in-flight limits, request timeout.

The failing and slow routes here exist only in these tests; the chain is the one
:func:`kstore.server.filters.filter_middleware` gives ``build_app``.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import orjson
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kstore.errors import BadRequest
from kstore.server.filters import AuditLog, FilterConfig, filter_middleware
from kstore.server.filters.max_inflight import MaxInFlight
from kstore.server.filters.timeout import RequestTimeout


async def _boom(request: Request) -> Response:
    raise RuntimeError("boom")


async def _ok(request: Request) -> Response:
    return Response(b"ok")


def _app(config: FilterConfig | None = None) -> Starlette:
    return Starlette(
        routes=[Route("/api/v1/namespaces/a/pods", _boom), Route("/version", _ok)],
        middleware=filter_middleware(config or FilterConfig()),
    )


# ------------------------------------------------------------------ raw ASGI calls


class _Held:
    """An ASGI app that holds each request until released."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.entered = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.entered += 1
        await self.release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"done"})


def _scope(method: str, path: str, query: bytes = b"") -> dict[str, Any]:
    return {"type": "http", "method": method, "path": path, "query_string": query, "headers": []}


async def _call(app: Any, scope: dict[str, Any]) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent


def _code(messages: list[dict[str, Any]]) -> int:
    return int(messages[0]["status"])


def test_reads_over_the_limit_get_429_with_retry_after_and_watches_are_not_counted() -> None:
    async def run() -> None:
        inner = _Held()
        app = MaxInFlight(inner, read_only_limit=2, mutating_limit=1)
        held = [asyncio.create_task(_call(app, _scope("GET", "/api/v1/pods"))) for _ in range(2)]
        watches = [
            asyncio.create_task(_call(app, _scope("GET", "/api/v1/pods", b"watch=true"))),
            asyncio.create_task(_call(app, _scope("GET", "/api/v1/watch/pods"))),
        ]
        await asyncio.sleep(0.01)
        assert inner.entered == 4
        refused = await _call(app, _scope("GET", "/api/v1/namespaces/a/pods/p"))
        assert _code(refused) == 429
        headers = dict(refused[0]["headers"])
        assert headers[b"retry-after"] == b"1"
        # The mutating count is separate: one write still gets in.
        write = asyncio.create_task(_call(app, _scope("POST", "/api/v1/namespaces/a/pods")))
        await asyncio.sleep(0.01)
        assert inner.entered == 5
        assert _code(await _call(app, _scope("DELETE", "/api/v1/namespaces/a/pods/p"))) == 429
        inner.release.set()
        for task in [*held, *watches, write]:
            assert _code(await task) == 200
        assert app.in_flight(mutating=False) == 0
        assert app.in_flight(mutating=True) == 0

    asyncio.run(run())


def test_a_zero_limit_turns_the_count_off() -> None:
    async def run() -> None:
        inner = _Held()
        app = MaxInFlight(inner, read_only_limit=0, mutating_limit=0)
        tasks = [asyncio.create_task(_call(app, _scope("PUT", "/api/v1/pods"))) for _ in range(5)]
        await asyncio.sleep(0.01)
        assert inner.entered == 5
        inner.release.set()
        assert [_code(await t) for t in tasks] == [200] * 5

    asyncio.run(run())


def test_a_slow_request_gets_504_at_the_timeout_and_its_late_answer_is_dropped() -> None:
    async def run() -> None:
        inner = _Held()
        app = RequestTimeout(inner, timeout_seconds=0.05)
        loop = asyncio.get_running_loop()
        started = loop.time()
        messages = await _call(app, _scope("GET", "/api/v1/pods"))
        assert loop.time() - started < 1.0
        assert _code(messages) == 504
        assert (
            b"Timeout: request did not complete within the allotted timeout"
            in (messages[1]["body"])
        )
        inner.release.set()
        await asyncio.sleep(0.01)
        assert len(messages) == 2  # the handler's own answer never reached the client

    asyncio.run(run())


def test_watches_have_no_request_timeout() -> None:
    async def run() -> None:
        inner = _Held()
        app = RequestTimeout(inner, timeout_seconds=0.01)
        task = asyncio.create_task(_call(app, _scope("GET", "/api/v1/pods", b"watch=1")))
        await asyncio.sleep(0.1)
        assert not task.done()
        inner.release.set()
        assert _code(await task) == 200

    asyncio.run(run())


# ------------------------------------------------------------------ the whole chain


def _body(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return dict(orjson.loads(b"".join(m.get("body", b"") for m in messages[1:])))


def _header(messages: list[dict[str, Any]], name: bytes) -> bytes:
    return dict(messages[0]["headers"])[name]


def test_exception_escaping_the_handler_is_a_500_logged_with_the_request_id(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = _app()

    async def run() -> None:
        with caplog.at_level(logging.ERROR, "kstore.server"):
            failed = await _call(app, _scope("GET", "/api/v1/namespaces/a/pods"))
        assert _code(failed) == 500
        # kube-apiserver's WithPanicRecovery: http.Error's plain text, not a Status.
        body = b"".join(m.get("body", b"") for m in failed[1:])
        assert body == b"This request caused apiserver to panic. Look in the logs for details.\n"
        assert _header(failed, b"content-type") == b"text/plain; charset=utf-8"
        request_id = _header(failed, b"audit-id").decode()
        assert any(request_id in r.getMessage() and r.exc_info for r in caplog.records)
        # The server carries on serving.
        served = await _call(app, _scope("GET", "/version"))
        assert _code(served) == 200

    asyncio.run(run())


def test_every_response_carries_a_distinct_audit_id() -> None:
    app = _app()

    async def run() -> set[bytes]:
        return {_header(await _call(app, _scope("GET", "/version")), b"audit-id") for _ in range(3)}

    assert len(asyncio.run(run())) == 3


def test_a_cors_pattern_that_does_not_compile_is_refused() -> None:
    with pytest.raises(BadRequest, match="--cors-allowed-origins"):
        filter_middleware(FilterConfig(cors_allowed_origins=("^https://(",)))


def test_the_audit_log_dash_is_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    log = AuditLog("-")
    log.write({"kind": "Event"})
    log.close()
    assert capsys.readouterr().out == '{"kind":"Event"}\n'


async def _read_all(request: Request) -> Response:
    body = b""
    async for chunk in request.stream():
        body += chunk
    return Response(str(len(body)).encode())


def test_an_undeclared_body_over_the_limit_is_a_413_status(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = Starlette(
        routes=[Route("/upload", _read_all, methods=["POST"])],
        middleware=filter_middleware(FilterConfig(max_request_body_bytes=10)),
    )
    chunks = iter([b"12345", b"67890", b"1", b""])

    async def run() -> list[dict[str, Any]]:
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            chunk = next(chunks)
            return {"type": "http.request", "body": chunk, "more_body": bool(chunk)}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        await app(_scope("POST", "/upload"), receive, send)
        return sent

    with caplog.at_level(logging.INFO, "kstore.server"):
        messages = asyncio.run(run())
    assert _code(messages) == 413
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert _body(messages)["message"] == "Request entity too large: limit is 10"


def test_a_client_audit_id_is_kept() -> None:
    app = _app()
    scope = _scope("GET", "/version")
    scope["headers"] = [(b"audit-id", b"from-the-client")]
    assert _header(asyncio.run(_call(app, scope)), b"audit-id") == b"from-the-client"


def test_cancelling_a_timed_request_cancels_its_handler() -> None:
    async def run() -> None:
        inner = _Held()
        app = RequestTimeout(inner, timeout_seconds=10)
        outer = asyncio.create_task(_call(app, _scope("GET", "/api/v1/pods")))
        await asyncio.sleep(0.01)
        assert inner.entered == 1
        outer.cancel()
        with pytest.raises(asyncio.CancelledError):
            await outer
        await asyncio.sleep(0)
        pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        assert pending == []

    asyncio.run(run())


def test_a_response_still_unfinished_at_the_timeout_is_cut_off() -> None:
    async def run() -> list[dict[str, Any]]:
        release = asyncio.Event()

        async def slow_body(scope: Any, receive: Any, send: Any) -> None:
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"[", "more_body": True})
            await release.wait()
            await send({"type": "http.response.body", "body": b"]"})

        app = RequestTimeout(slow_body, timeout_seconds=0.05)
        messages = await asyncio.wait_for(_call(app, _scope("GET", "/api/v1/pods")), 2)
        release.set()
        await asyncio.sleep(0.01)
        return messages

    messages = asyncio.run(run())
    assert [m.get("body") for m in messages] == [None, b"["]
    assert messages[-1]["more_body"] is True
