"""Audit events record who asked: the authenticated user, anonymous, or no one (401)."""

from __future__ import annotations

import time
from typing import Any

import orjson

from tests.auth.conftest import ALICE, bearer
from tests.server.harness import RunningServer


def _events_for(server: RunningServer, uri: str) -> list[dict[str, Any]]:
    path = server.data_dir.parent / "audit.log"
    deadline = time.monotonic() + 10
    while True:
        events = [orjson.loads(line) for line in path.read_text().splitlines() if line.strip()]
        found = [e for e in events if e["requestURI"] == uri]
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def test_audit_records_the_authenticated_user(rbac_server: RunningServer) -> None:
    uri = "/api/v1/namespaces/team-a/configmaps?limit=7"
    with rbac_server.client() as client:
        assert client.get(uri, headers=bearer(ALICE)).status_code == 200
    [event] = _events_for(rbac_server, uri)
    assert event["user"] == {
        "username": "alice",
        "uid": "uid-alice",
        "groups": ["system:authenticated"],
    }
    assert event["verb"] == "list"
    assert event["responseStatus"]["code"] == 200


def test_audit_records_anonymous_and_denied_requests(rbac_server: RunningServer) -> None:
    uri = "/api/v1/namespaces/team-a/configmaps?limit=8"
    with rbac_server.client() as client:
        assert client.get(uri).status_code == 403
    [event] = _events_for(rbac_server, uri)
    assert event["user"] == {"username": "system:anonymous", "groups": ["system:unauthenticated"]}
    assert event["responseStatus"]["code"] == 403


def test_audit_records_an_unauthenticated_request_with_no_user(rbac_server: RunningServer) -> None:
    uri = "/api/v1/namespaces/team-a/configmaps?limit=9"
    with rbac_server.client() as client:
        assert client.get(uri, headers=bearer("nope")).status_code == 401
    [event] = _events_for(rbac_server, uri)
    assert event["user"] == {}
    assert event["responseStatus"]["code"] == 401
