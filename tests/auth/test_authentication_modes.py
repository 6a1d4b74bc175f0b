"""Authentication without RBAC, anonymous requests refused, and the default server unchanged.

- ``--anonymous-auth=false``: a request without credentials is 401, health checks included;
  a listed token still works (with RBAC deciding).
- A token file with the default ``AlwaysAllow``: every authenticated or anonymous request is
  allowed, an unknown token is still 401.
- No flags at all: a Bearer header is ignored (no authenticator claims it), as before.
- RBAC without a token file: everyone is anonymous, and RBAC decides for them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.auth.conftest import ALICE, bearer, seed_policy, write_tokens
from tests.server.harness import RunningServer, start_server

CM_A = "/api/v1/namespaces/team-a/configmaps"


@pytest.fixture(scope="module")
def closed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    root = tmp_path_factory.mktemp("closed")
    server = start_server(
        root / "data",
        "--token-auth-file",
        str(write_tokens(root)),
        "--anonymous-auth=false",
        "--authorization-mode",
        "RBAC",
    )
    try:
        seed_policy(server)
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def allow_all_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    root = tmp_path_factory.mktemp("allow")
    server = start_server(root / "data", "--token-auth-file", str(write_tokens(root)))
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.parametrize("path", [CM_A, "/healthz", "/version", "/api"])
def test_anonymous_off_refuses_requests_without_credentials(
    closed_server: RunningServer, path: str
) -> None:
    with closed_server.client() as client:
        response = client.get(path)
    assert response.status_code == 401, response.text
    assert response.json()["message"] == "Unauthorized"


def test_anonymous_off_still_serves_listed_tokens_through_rbac(
    closed_server: RunningServer,
) -> None:
    with closed_server.client() as client:
        assert client.get(CM_A, headers=bearer(ALICE)).status_code == 200
        assert client.get("/healthz", headers=bearer(ALICE)).status_code == 200
        denied = client.get("/api/v1/namespaces/team-b/configmaps", headers=bearer(ALICE))
    assert denied.status_code == 403


@pytest.mark.parametrize(
    ("headers", "code"),
    [({}, 200), (bearer(ALICE), 200), (bearer("nope"), 401)],
    ids=["anonymous", "alice", "bad-token"],
)
def test_always_allow_with_tokens(
    allow_all_server: RunningServer, headers: dict[str, str], code: int
) -> None:
    with allow_all_server.client() as client:
        assert client.get("/api/v1/configmaps", headers=headers).status_code == code
        namespace = client.post(
            "/api/v1/namespaces?dryRun=All", json={"metadata": {"name": "x"}}, headers=headers
        )
    assert namespace.status_code == (201 if code == 200 else code)


def test_default_server_ignores_bearer_tokens(tmp_path_factory: pytest.TempPathFactory) -> None:
    server = start_server(tmp_path_factory.mktemp("default") / "data")
    try:
        with server.client() as client:
            assert client.get("/api/v1/configmaps", headers=bearer("anything")).status_code == 200
            assert client.get("/api/v1/configmaps").status_code == 200
    finally:
        server.stop()


def test_rbac_without_token_file_authorizes_everyone_as_anonymous(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    server = start_server(
        tmp_path_factory.mktemp("anonymous-rbac") / "data", "--authorization-mode", "RBAC"
    )
    try:
        with server.client() as client:
            assert client.get("/healthz").status_code == 200
            denied = client.get("/api/v1/configmaps", headers=bearer("ignored"))
    finally:
        server.stop()
    assert denied.status_code == 403
    assert denied.json()["message"] == (
        'configmaps is forbidden: User "system:anonymous" cannot list resource "configmaps" in'
        ' API group "" at the cluster scope'
    )
