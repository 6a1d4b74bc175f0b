"""The filter chain through a real ``kstore serve``: 429 beyond the in-flight limits, 504 at
the request timeout, watches untouched by either, and the request id on every response.

A request is held in flight legitimately by sending its headers and only part of its body:
the server has started serving it (it is reading the body) and cannot finish it.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.server.harness import RunningServer, start_server

CMS = "/api/v1/namespaces/default/configmaps"


def _configmap(name: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}


def _hold_a_post(server: RunningServer) -> socket.socket:
    """A POST whose body is never finished: in flight until the socket closes."""
    parts = urlsplit(server.url)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=10)
    body = json.dumps(_configmap("held")).encode()
    head = (
        f"POST {CMS} HTTP/1.1\r\nHost: {parts.netloc}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body) + 100}\r\n\r\n"
    ).encode()
    sock.sendall(head + body)
    return sock


def _read_response_head(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


def _until(predicate: object, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.02)


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    running = start_server(
        tmp_path_factory.mktemp("kstore") / "data",
        "--max-requests-inflight",
        "1",
        "--max-mutating-requests-inflight",
        "1",
    )
    yield running
    assert running.stop() == 0, running.log()


@pytest.fixture(scope="module")
def timed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    running = start_server(tmp_path_factory.mktemp("kstore") / "data", "--request-timeout", "500ms")
    yield running
    assert running.stop() == 0, running.log()


def test_a_write_beyond_the_mutating_limit_gets_429_with_retry_after(
    limited: RunningServer,
) -> None:
    with limited.client() as client:
        held = _hold_a_post(limited)
        try:
            # The held POST is being served once the server reads its body; until then a
            # second POST may still get in, so wait for the first 429.
            def refused() -> bool:
                r = client.post(CMS, json=_configmap(f"w{time.monotonic_ns()}"))
                return r.status_code == 429

            _until(refused)
            r = client.post(CMS, json=_configmap("refused"))
            assert r.status_code == 429
            assert r.headers["retry-after"] == "1"
            # Go's http.Error, as kube-apiserver's filter answers: plain text, not a Status.
            assert r.content == b"Too many requests, please try again later.\n"
            assert r.headers["content-type"] == "text/plain; charset=utf-8"
            assert r.headers["x-content-type-options"] == "nosniff"
            # Reads have their own count.
            assert client.get(CMS).status_code == 200
        finally:
            held.close()
        # The slot frees once the held request ends.
        _until(lambda: client.post(CMS, json=_configmap("after")).status_code == 201)


def test_a_watch_does_not_take_a_read_slot(limited: RunningServer) -> None:
    with (
        limited.client() as client,
        client.stream("GET", CMS, params={"watch": "true", "timeoutSeconds": "5"}) as watch,
    ):
        assert watch.status_code == 200
        for _ in range(3):
            assert client.get(CMS).status_code == 200


def test_a_request_past_the_timeout_gets_504(timed: RunningServer) -> None:
    held = _hold_a_post(timed)
    try:
        started = time.monotonic()
        head = _read_response_head(held)
        assert time.monotonic() - started < 5
    finally:
        held.close()
    assert head.startswith(b"HTTP/1.1 504 ")
    with timed.client() as client:
        assert client.get("/version").status_code == 200


def test_the_timeout_status_is_kubernetes_one(timed: RunningServer) -> None:
    held = _hold_a_post(timed)
    held.settimeout(5)
    try:
        data = _read_response_head(held)
        head, _, body = data.partition(b"\r\n\r\n")
        length = int(
            next(
                line.split(b":", 1)[1]
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
        )
        while len(body) < length:
            body += held.recv(4096)
    finally:
        held.close()
    status = json.loads(body)
    assert status["code"] == 504
    assert status["reason"] == "Timeout"
    assert status["message"] == "Timeout: request did not complete within the allotted timeout"


def test_a_watch_outlives_the_request_timeout(timed: RunningServer) -> None:
    with timed.client() as client:
        rv = client.get(CMS).json()["metadata"]["resourceVersion"]
        params = {"watch": "true", "resourceVersion": rv, "timeoutSeconds": "10"}
        with client.stream("GET", CMS, params=params) as watch:
            assert watch.status_code == 200
            time.sleep(1.0)  # twice the request timeout
            with timed.client() as writer:
                assert writer.post(CMS, json=_configmap("late")).status_code == 201
            event = json.loads(next(watch.iter_lines()))
    assert event["type"] == "ADDED"
    assert event["object"]["metadata"]["name"] == "late"


def test_responses_carry_a_request_id(timed: RunningServer) -> None:
    with timed.client() as client:
        first = client.get("/version").headers["audit-id"]
        second = client.get(CMS).headers["audit-id"]
    assert first and second and first != second


# ------------------------------------------------------------------------- CORS

ALLOWED = "https://ok.example"


@pytest.fixture(scope="module")
def cors(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    running = start_server(
        tmp_path_factory.mktemp("kstore") / "data",
        "--cors-allowed-origins",
        r"^https://ok\.example$,^http://127\.0\.0\.1(:|$)",
    )
    yield running
    assert running.stop() == 0, running.log()


def test_a_preflight_from_an_allowed_origin_is_answered_204_with_cors_headers(
    cors: RunningServer,
) -> None:
    with cors.client() as client:
        r = client.options(
            CMS, headers={"Origin": ALLOWED, "Access-Control-Request-Method": "POST"}
        )
    assert r.status_code == 204
    assert r.headers["access-control-allow-origin"] == ALLOWED
    assert r.headers["access-control-allow-methods"] == "POST, GET, OPTIONS, PUT, DELETE, PATCH"
    assert r.headers["access-control-allow-headers"] == (
        "Content-Type, Content-Length, Accept-Encoding, X-CSRF-Token, Authorization, "
        "X-Requested-With, If-Modified-Since"
    )
    assert r.headers["access-control-expose-headers"] == "Date"
    assert r.headers["access-control-allow-credentials"] == "true"


def test_a_request_from_an_allowed_origin_gets_cors_headers_on_its_answer(
    cors: RunningServer,
) -> None:
    with cors.client() as client:
        created = client.post(CMS, json=_configmap("cors"), headers={"Origin": ALLOWED})
        missing = client.get(f"{CMS}/nothing", headers={"Origin": "http://127.0.0.1:3000"})
    assert created.status_code == 201
    assert created.headers["access-control-allow-origin"] == ALLOWED
    assert missing.status_code == 404
    assert missing.headers["access-control-allow-origin"] == "http://127.0.0.1:3000"


def test_other_origins_and_requests_without_origin_get_no_cors_headers(
    cors: RunningServer,
) -> None:
    with cors.client() as client:
        # The anchors matter: a pattern only matches the whole origin when anchored.
        foreign = client.get(CMS, headers={"Origin": "https://ok.example.evil"})
        plain = client.get(CMS)
        preflight = client.options(CMS, headers={"Origin": "https://evil.example"})
    assert foreign.status_code == 200
    assert "access-control-allow-origin" not in foreign.headers
    assert "access-control-allow-origin" not in plain.headers
    assert preflight.status_code != 204
    assert "access-control-allow-origin" not in preflight.headers


def test_cors_is_off_without_allowed_origins(timed: RunningServer) -> None:
    with timed.client() as client:
        r = client.get(CMS, headers={"Origin": ALLOWED})
    assert "access-control-allow-origin" not in r.headers


# ------------------------------------------------------------------------- audit


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningServer, Path]]:
    base = tmp_path_factory.mktemp("kstore")
    log = base / "audit" / "audit.log"
    running = start_server(base / "data", "--audit-log-path", str(log))
    yield running, log
    assert running.stop() == 0, running.log()


def _events_for(log: Path, audit_id: str) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 5
    while True:
        events = [json.loads(line) for line in log.read_text().splitlines()]
        found = [e for e in events if e["auditID"] == audit_id]
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.02)


def test_each_request_is_one_audit_event_in_kubernetes_shape(
    audited: tuple[RunningServer, Path],
) -> None:
    server, log = audited
    with server.client(headers={"User-Agent": "audit-test/1.0"}) as client:
        created = client.post(f"{CMS}?fieldManager=t", json=_configmap("audited"))
    assert created.status_code == 201
    (event,) = _events_for(log, created.headers["audit-id"])
    assert event["kind"] == "Event"
    assert event["apiVersion"] == "audit.k8s.io/v1"
    assert event["level"] == "Metadata"
    assert event["stage"] == "ResponseComplete"
    assert event["requestURI"] == f"{CMS}?fieldManager=t"
    assert event["verb"] == "create"
    assert event["user"] == {"username": "system:anonymous", "groups": ["system:unauthenticated"]}
    assert event["sourceIPs"] == ["127.0.0.1"]
    assert event["userAgent"] == "audit-test/1.0"
    assert event["objectRef"] == {
        "resource": "configmaps",
        "namespace": "default",
        "apiVersion": "v1",
    }
    assert event["responseStatus"] == {"metadata": {}, "code": 201}
    received = datetime.strptime(event["requestReceivedTimestamp"], "%Y-%m-%dT%H:%M:%S.%fZ")
    completed = datetime.strptime(event["stageTimestamp"], "%Y-%m-%dT%H:%M:%S.%fZ")
    assert received <= completed


def test_audit_events_name_the_verb_object_and_code_of_each_request(
    audited: tuple[RunningServer, Path],
) -> None:
    server, log = audited
    with server.client() as client:
        got = client.get(f"{CMS}/audited")
        missing = client.get("/apis/apps/v1/namespaces/kube-system/deployments/none")
        listed = client.get(CMS)
        version = client.get("/version")
        namespace = client.get("/api/v1/namespaces/default")
    (e,) = _events_for(log, got.headers["audit-id"])
    assert (e["verb"], e["objectRef"]["name"], e["responseStatus"]["code"]) == (
        "get",
        "audited",
        got.status_code,
    )
    (e,) = _events_for(log, missing.headers["audit-id"])
    assert e["verb"] == "get"
    assert e["objectRef"] == {
        "resource": "deployments",
        "namespace": "kube-system",
        "name": "none",
        "apiGroup": "apps",
        "apiVersion": "v1",
    }
    assert e["responseStatus"]["code"] == 404
    (e,) = _events_for(log, listed.headers["audit-id"])
    assert e["verb"] == "list"
    (e,) = _events_for(log, version.headers["audit-id"])
    assert e["verb"] == "get" and "objectRef" not in e
    (e,) = _events_for(log, namespace.headers["audit-id"])
    assert e["objectRef"] == {
        "resource": "namespaces",
        "namespace": "default",
        "name": "default",
        "apiVersion": "v1",
    }


def test_a_watch_is_audited_when_it_ends(audited: tuple[RunningServer, Path]) -> None:
    server, log = audited
    with (
        server.client() as client,
        client.stream("GET", CMS, params={"watch": "true", "timeoutSeconds": "1"}) as watch,
    ):
        audit_id = watch.headers["audit-id"]
        for _ in watch.iter_lines():
            pass
    (e,) = _events_for(log, audit_id)
    assert e["verb"] == "watch"
    assert e["responseStatus"]["code"] == 200


# ------------------------------------------------------------------- body limit

LIMIT = 3 * 1024 * 1024


def test_a_declared_body_over_3_mib_is_refused_before_it_is_sent(timed: RunningServer) -> None:
    parts = urlsplit(timed.url)
    with socket.create_connection((parts.hostname, parts.port), timeout=5) as sock:
        sock.sendall(
            (
                f"POST {CMS} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {LIMIT + 1}\r\n\r\n"
            ).encode()
        )
        head = _read_response_head(sock)
    assert head.startswith(b"HTTP/1.1 413 ")


def test_a_chunked_body_over_3_mib_gets_413(timed: RunningServer) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"k":"'
        for _ in range(5):
            yield b"x" * (1024 * 1024)
        yield b'"}}'

    with timed.client() as client:
        r = client.post(CMS, content=chunks(), headers={"Content-Type": "application/json"})
        assert r.status_code == 413
        status = r.json()
        assert status["reason"] == "RequestEntityTooLarge"
        assert status["message"] == f"Request entity too large: limit is {LIMIT}"
        assert client.get(f"{CMS}/big").status_code == 404


def test_a_body_just_under_the_limit_is_read(timed: RunningServer) -> None:
    body = json.dumps({**_configmap("near"), "data": {"k": "x" * (LIMIT - 200)}}).encode()
    assert len(body) <= LIMIT
    with timed.client() as client:
        r = client.post(CMS, content=body, headers={"Content-Type": "application/json"})
    # Valid size: whatever validation says of a 3 MiB ConfigMap, it is not a 413.
    assert r.status_code != 413


def test_a_list_of_many_objects_times_out_and_a_watch_does_not(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    data = tmp_path_factory.mktemp("kstore") / "data"
    filler = start_server(data)
    try:
        with filler.client() as client:
            for i in range(200):
                body = {**_configmap(f"many-{i}"), "data": {"k": "v" * 200}}
                assert client.post(CMS, json=body).status_code == 201
    finally:
        assert filler.stop() == 0, filler.log()
    hurried = start_server(data, "--request-timeout", "1ms")
    try:
        with hurried.client() as client:
            listed = client.get(CMS)
            assert listed.status_code == 504, listed.text
            assert listed.json()["reason"] == "Timeout"
            started = time.monotonic()
            with client.stream(
                "GET", CMS, params={"watch": "true", "timeoutSeconds": "1"}
            ) as watch:
                assert watch.status_code == 200
                added = sum(1 for line in watch.iter_lines() if line)
            # The watch ran its own course (it lists the 200 objects first as ADDED events).
            assert added == 200
            assert time.monotonic() - started >= 0.9
    finally:
        assert hurried.stop() == 0, hurried.log()


def test_requests_to_deprecated_versions_carry_kubernetes_audit_annotations(
    audited: tuple[RunningServer, Path],
) -> None:
    server, log = audited
    with server.client() as client:
        old = client.get("/apis/apps/v1beta1/namespaces/default/deployments")
        current = client.get("/apis/apps/v1/namespaces/default/deployments")
    (e,) = _events_for(log, old.headers["audit-id"])
    assert e["annotations"] == {"k8s.io/deprecated": "true", "k8s.io/removed-release": "1.16"}
    assert list(e)[-1] == "annotations"
    (e,) = _events_for(log, current.headers["audit-id"])
    assert "annotations" not in e
