"""The certificate admission plugins over a real ``kstore serve`` with token authentication
and RBAC: ``kubectl certificate approve`` needs ``approve`` on the CSR's signer as well as
the ``approval`` subresource, the client signer refuses ``system:masters``, and
``--disable-admission-plugins`` turns the approval check off."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.auth.conftest import ADMIN, ALICE, RBAC, bearer, write_tokens
from tests.auth.test_kubectl_auth import TokenKubectl, tls_rbac_kubectl
from tests.csr_pem import b64, csr_pem
from tests.server.harness import RunningServer, start_server

CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests"


def _csr(name: str, signer: str, organizations: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": name},
        "spec": {
            "request": b64(csr_pem(name, organizations)),
            "signerName": signer,
            "usages": ["client auth"],
        },
    }


def _post(client: httpx.Client, path: str, body: dict[str, Any], token: str = ADMIN) -> None:
    response = client.post(path, json=body, headers=bearer(token))
    assert response.status_code == 201, response.text


def _grant(client: httpx.Client, name: str, *rules: dict[str, Any]) -> None:
    """ClusterRole ``name`` with ``rules``, bound to the user alice."""
    rbac = f"/apis/{RBAC}/v1"
    _post(client, f"{rbac}/clusterroles", {"metadata": {"name": name}, "rules": list(rules)})
    _bind(client, name)


def _bind(client: httpx.Client, name: str) -> None:
    """The ClusterRole ``name`` bound to the user alice."""
    rbac = f"/apis/{RBAC}/v1"
    _post(
        client,
        f"{rbac}/clusterrolebindings",
        {
            "metadata": {"name": name},
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": name},
            "subjects": [{"kind": "User", "name": "alice"}],
        },
    )


#: What ``kubectl certificate approve`` needs of the CSR API itself.
APPROVAL_ACCESS: dict[str, Any] = {
    "apiGroups": ["certificates.k8s.io"],
    "resources": ["certificatesigningrequests", "certificatesigningrequests/approval"],
    "verbs": ["get", "list", "update"],
}


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[TokenKubectl, httpx.Client]]:
    with tls_rbac_kubectl(tmp_path_factory.mktemp("csr-admission")) as (kubectl, server):
        context = ssl.create_default_context(cafile=str(kubectl.ca))
        with server.client(verify=context) as client:
            _grant(client, "csr-approval-access", APPROVAL_ACCESS)
            yield kubectl, client


def _conditions(client: httpx.Client, name: str) -> list[str]:
    response = client.get(f"{CSRS}/{name}", headers=bearer(ADMIN))
    assert response.status_code == 200, response.text
    status = response.json().get("status") or {}
    return [c["type"] for c in status.get("conditions") or []]


def test_approving_needs_approve_on_the_signer(
    served: tuple[TokenKubectl, httpx.Client],
) -> None:
    kubectl, client = served
    _post(client, CSRS, _csr("team-one", "example.com/team"))
    refused = kubectl.fails(ALICE, "certificate", "approve", "team-one")
    assert (
        'certificatesigningrequests.certificates.k8s.io "team-one" is forbidden: user not '
        'permitted to approve requests with signerName "example.com/team"'
    ) in refused.stderr
    assert _conditions(client, "team-one") == []
    _grant(
        client,
        "example-signers-approver",
        {
            "apiGroups": ["certificates.k8s.io"],
            "resources": ["signers"],
            "resourceNames": ["example.com/*"],
            "verbs": ["approve"],
        },
    )
    out = kubectl.ok(ALICE, "certificate", "approve", "team-one")
    assert "approved" in out
    assert _conditions(client, "team-one") == ["Approved"]
    # The grant names one domain only.
    _post(client, CSRS, _csr("elsewhere", "other.io/signer"))
    refused = kubectl.fails(ALICE, "certificate", "approve", "elsewhere")
    assert 'user not permitted to approve requests with signerName "other.io/signer"' in (
        refused.stderr
    )


def test_the_bootstrap_approver_role_of_a_kubernetes_signer(
    served: tuple[TokenKubectl, httpx.Client],
) -> None:
    kubectl, client = served
    _post(client, CSRS, _csr("client-cert", "kubernetes.io/kube-apiserver-client", ("dev",)))
    refused = kubectl.fails(ALICE, "certificate", "approve", "client-cert")
    assert "user not permitted to approve requests with signerName" in refused.stderr
    _bind(client, "system:certificates.k8s.io:kube-apiserver-client-approver")
    kubectl.ok(ALICE, "certificate", "approve", "client-cert")
    assert _conditions(client, "client-cert") == ["Approved"]


def test_admin_approves_any_signer(served: tuple[TokenKubectl, httpx.Client]) -> None:
    kubectl, client = served
    _post(client, CSRS, _csr("by-admin", "kubernetes.io/kube-apiserver-client"))
    kubectl.ok(ADMIN, "certificate", "approve", "by-admin")
    assert _conditions(client, "by-admin") == ["Approved"]


def test_signing_needs_sign_on_the_signer(served: tuple[TokenKubectl, httpx.Client]) -> None:
    _, client = served
    _post(client, CSRS, _csr("to-sign", "example.com/team"))
    stored = client.get(f"{CSRS}/to-sign", headers=bearer(ADMIN)).json()
    stored["status"] = {
        "conditions": [{"type": "Failed", "status": "True", "reason": "R", "message": "m"}]
    }
    _grant(
        client,
        "csr-status-writer",
        {
            "apiGroups": ["certificates.k8s.io"],
            "resources": ["certificatesigningrequests/status"],
            "verbs": ["update"],
        },
    )
    response = client.put(f"{CSRS}/to-sign/status", json=stored, headers=bearer(ALICE))
    assert response.status_code == 403, response.text
    assert response.json()["message"].endswith(
        'user not permitted to sign requests with signerName "example.com/team"'
    )
    response = client.put(f"{CSRS}/to-sign/status", json=stored, headers=bearer(ADMIN))
    assert response.status_code == 200, response.text


def test_client_signer_refuses_system_masters(served: tuple[TokenKubectl, httpx.Client]) -> None:
    _, client = served
    body = _csr("masters", "kubernetes.io/kube-apiserver-client", ("system:masters",))
    response = client.post(CSRS, json=body, headers=bearer(ADMIN))
    assert response.status_code == 403, response.text
    status = response.json()
    assert status["reason"] == "Forbidden"
    assert status["message"] == (
        'certificatesigningrequests.certificates.k8s.io "masters" is forbidden: use of '
        "kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed"
    )


@pytest.fixture(scope="module")
def without_approval_check(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    root = tmp_path_factory.mktemp("csr-no-approval-check")
    server = start_server(
        root / "data",
        "--token-auth-file",
        str(write_tokens(root)),
        "--authorization-mode",
        "RBAC",
        "--disable-admission-plugins",
        "CertificateApproval",
    )
    try:
        yield server
    finally:
        server.stop()


def test_disabling_the_plugin_lets_the_subresource_grant_suffice(
    without_approval_check: RunningServer,
) -> None:
    with without_approval_check.client() as client:
        _grant(client, "csr-approval-access", APPROVAL_ACCESS)
        _post(client, CSRS, _csr("free", "example.com/team"))
        stored = client.get(f"{CSRS}/free", headers=bearer(ALICE)).json()
        stored["status"] = {
            "conditions": [{"type": "Approved", "status": "True", "reason": "R", "message": "ok"}]
        }
        response = client.put(f"{CSRS}/free/approval", json=stored, headers=bearer(ALICE))
        assert response.status_code == 200, response.text
        assert _conditions(client, "free") == ["Approved"]
