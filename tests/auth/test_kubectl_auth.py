"""Real kubectl with ``--token`` against ``kstore serve --authorization-mode RBAC``: what it
prints and its exit code when allowed, forbidden and unauthenticated.

kubectl applies a kubeconfig's credentials (and ``--token``) only to an HTTPS server, so this
module serves TLS with a self-signed certificate that kubectl is told to trust.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.auth.conftest import ADMIN, ALICE, BOB, seed_policy, self_signed_cert, write_tokens
from tests.clients.kubectl import Kubectl, Result, kubectl_binary
from tests.server.harness import RunningServer, start_server


@dataclass
class TokenKubectl:
    """kubectl trusting the server's certificate; every call names its token."""

    kubectl: Kubectl
    ca: Path

    def _args(self, token: str, args: tuple[str, ...]) -> tuple[str, ...]:
        return ("--certificate-authority", str(self.ca), "--token", token, *args)

    def ok(self, token: str, *args: str) -> str:
        return self.kubectl.ok(*self._args(token, args))

    def fails(self, token: str, *args: str) -> Result:
        return self.kubectl.fails(*self._args(token, args))

    def run(self, token: str, *args: str) -> Result:
        return self.kubectl.run(*self._args(token, args))


@contextmanager
def tls_rbac_kubectl(root: Path) -> Iterator[tuple[TokenKubectl, RunningServer]]:
    """A ``kstore serve`` in ``root`` with the token file, RBAC with the seeded policy and TLS
    (a self-signed certificate), and kubectl trusting it; the server stops on exit."""
    cert, key = self_signed_cert(root)
    server = start_server(
        root / "data",
        "--token-auth-file",
        str(write_tokens(root)),
        "--authorization-mode",
        "RBAC",
        "--tls-cert-file",
        str(cert),
        "--tls-private-key-file",
        str(key),
        "--secure-port",
        "0",
    )
    try:
        seed_policy(server, verify=ssl.create_default_context(cafile=str(cert)))
        yield TokenKubectl(Kubectl(kubectl_binary(), root / "home", server.url), cert), server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def k(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TokenKubectl]:
    with tls_rbac_kubectl(tmp_path_factory.mktemp("kubectl-rbac")) as (kubectl, _server):
        yield kubectl


def test_allowed_get_lists_the_objects(k: TokenKubectl) -> None:
    out = k.ok(ALICE, "get", "cm", "-n", "team-a", "-o", "name")
    # The server serves TLS, so its certificate is published in every namespace too.
    published = "configmap/kube-root-ca.crt"
    assert [n for n in out.split() if n != published] == ["configmap/cm1", "configmap/cm2"]


def test_allowed_get_prints_a_table(k: TokenKubectl) -> None:
    out = k.ok(ALICE, "get", "configmaps", "-n", "team-a")
    assert out.splitlines()[0].split() == ["NAME", "DATA", "AGE"]


def test_forbidden_get_prints_the_api_server_message(k: TokenKubectl) -> None:
    result = k.fails(ALICE, "get", "cm", "-n", "team-b")
    assert result.stderr.strip().splitlines()[-1] == (
        'Error from server (Forbidden): configmaps is forbidden: User "alice" cannot list '
        'resource "configmaps" in API group "" in the namespace "team-b"'
    )


def test_forbidden_delete_of_a_named_object(k: TokenKubectl) -> None:
    result = k.fails(ALICE, "delete", "cm", "cm2", "-n", "team-a", "--dry-run=server")
    assert result.stderr.strip().splitlines()[-1] == (
        'Error from server (Forbidden): configmaps "cm2" is forbidden: User "alice" cannot '
        'delete resource "configmaps" in API group "" in the namespace "team-a"'
    )


def test_group_binding_allows_create_in_its_namespace(k: TokenKubectl) -> None:
    out = k.ok(
        BOB,
        "create",
        "configmap",
        "from-bob",
        "-n",
        "team-b",
        "--from-literal=a=b",
        "--dry-run=server",
        "-o",
        "name",
    )
    assert out.strip() == "configmap/from-bob"


def test_bad_token_is_unauthorized(k: TokenKubectl) -> None:
    result = k.fails("wrong", "get", "cm", "-n", "team-a")
    assert "error: You must be logged in to the server (Unauthorized)" in result.stderr


def test_masters_see_the_rbac_objects_as_tables(k: TokenKubectl) -> None:
    out = k.ok(ADMIN, "get", "rolebindings", "-n", "team-a")
    header, row = out.splitlines()[:2]
    assert header.split() == ["NAME", "ROLE", "AGE"]
    assert row.split()[:2] == ["cm-reader", "Role/cm-reader"]
    roles = k.ok(ADMIN, "get", "clusterroles", "cluster-admin")
    assert roles.splitlines()[0].split() == ["NAME", "CREATED", "AT"]


def test_service_account_token_from_kubectl_create_token(k: TokenKubectl) -> None:
    # The seeded Role cm-reader is bound to ServiceAccount robot of team-a.
    k.ok(ADMIN, "create", "serviceaccount", "robot", "-n", "team-a")
    token = k.ok(ADMIN, "create", "token", "robot", "-n", "team-a").strip()
    out = k.ok(token, "get", "cm", "-n", "team-a", "-o", "name")
    assert [n for n in out.split() if n != "configmap/kube-root-ca.crt"] == [
        "configmap/cm1",
        "configmap/cm2",
    ]
    assert k.ok(token, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}") == (
        "system:serviceaccount:team-a:robot"
    )
    result = k.fails(token, "get", "cm", "-n", "team-b")
    assert result.stderr.strip().splitlines()[-1] == (
        "Error from server (Forbidden): configmaps is forbidden: User "
        '"system:serviceaccount:team-a:robot" cannot list resource "configmaps" in API group "" '
        'in the namespace "team-b"'
    )
    # Deleting the ServiceAccount revokes its tokens.
    k.ok(ADMIN, "delete", "serviceaccount", "robot", "-n", "team-a")
    result = k.fails(token, "get", "cm", "-n", "team-a")
    assert "error: You must be logged in to the server (Unauthorized)" in result.stderr
