"""Real ``kstore serve`` processes with authentication and authorization turned on.

The token file (:data:`TOKENS`) names the users of every scenario: ``admin`` (in
``system:masters``), ``alice`` (no groups: everything she may do comes from RoleBindings),
``bob`` (in the group ``dev``), ``carol`` (nothing bound by :func:`seed_policy`) and a
ServiceAccount user. :func:`rbac_server` serves with
``--authorization-mode RBAC``; :func:`seed_policy` creates, as ``admin``, the namespaces,
objects, roles and bindings the matrix is about.
"""

from __future__ import annotations

import datetime
import ipaddress
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.server.harness import RunningServer, start_server

ADMIN = "admin-token-0f3b"
ALICE = "alice-token-9c1d"
BOB = "bob-token-77e2"
ROBOT = "robot-token-41aa"
CAROL = "carol-token-5b06"

#: token,user,uid,"groups" as Kubernetes' static token file.
TOKENS = (
    f'{ADMIN},admin,uid-admin,"system:masters"\n'
    f"{ALICE},alice,uid-alice\n"
    f'{BOB},bob,uid-bob,"dev,qa"\n'
    f"{ROBOT},system:serviceaccount:team-a:robot,uid-robot\n"
    f"{CAROL},carol,uid-carol\n"
)

RBAC = "rbac.authorization.k8s.io"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def write_tokens(directory: Path) -> Path:
    path = directory / "tokens.csv"
    path.write_text(TOKENS)
    return path


def _created(client: httpx.Client, path: str, body: dict[str, object]) -> None:
    response = client.post(path, json=body, headers=bearer(ADMIN))
    assert response.status_code == 201, response.text


def self_signed_cert(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key (PEM files): kubectl sends a token only over
    TLS, so the kubectl scenarios need an HTTPS server."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kstore-auth-test")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "tls.crt", directory / "tls.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def seed_policy(server: RunningServer, **client_options: Any) -> None:
    """Namespaces team-a and team-b, ConfigMaps cm1 and cm2 in each, Pod p1 in team-a, and:

    - Role ``cm-reader`` in team-a: get/list/watch configmaps; update/patch/delete only cm1;
      get pods/status. Bound to User alice and to ServiceAccount robot (no namespace: the
      binding's own).
    - ClusterRole ``cm-editor``: every verb on configmaps, bound to Group dev by a RoleBinding
      in team-b only.
    - ClusterRole ``ns-lister``: list namespaces, bound to Group dev cluster-wide.
    """
    with server.client(**client_options) as client:
        for ns in ("team-a", "team-b"):
            _created(client, "/api/v1/namespaces", {"metadata": {"name": ns}})
            for name in ("cm1", "cm2"):
                _created(
                    client,
                    f"/api/v1/namespaces/{ns}/configmaps",
                    {"metadata": {"name": name}, "data": {"k": name}},
                )
        # The account the ServiceAccount admission plugin wants, unless the service account
        # controller made it already.
        account = client.post(
            "/api/v1/namespaces/team-a/serviceaccounts",
            json={"metadata": {"name": "default"}},
            headers=bearer(ADMIN),
        )
        assert account.status_code in (201, 409), account.text
        _created(
            client,
            "/api/v1/namespaces/team-a/pods",
            {
                "metadata": {"name": "p1"},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
            },
        )
        rbac = f"/apis/{RBAC}/v1"
        _created(
            client,
            f"{rbac}/namespaces/team-a/roles",
            {
                "metadata": {"name": "cm-reader"},
                "rules": [
                    {
                        "apiGroups": [""],
                        "resources": ["configmaps"],
                        "verbs": ["get", "list", "watch"],
                    },
                    {
                        "apiGroups": [""],
                        "resources": ["configmaps"],
                        "resourceNames": ["cm1"],
                        "verbs": ["update", "patch", "delete"],
                    },
                    {"apiGroups": [""], "resources": ["pods/status"], "verbs": ["get"]},
                ],
            },
        )
        _created(
            client,
            f"{rbac}/namespaces/team-a/rolebindings",
            {
                "metadata": {"name": "cm-reader"},
                "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "cm-reader"},
                "subjects": [
                    {"kind": "User", "name": "alice"},
                    {"kind": "ServiceAccount", "name": "robot"},
                ],
            },
        )
        _created(
            client,
            f"{rbac}/clusterroles",
            {
                "metadata": {"name": "cm-editor"},
                "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["*"]}],
            },
        )
        _created(
            client,
            f"{rbac}/namespaces/team-b/rolebindings",
            {
                "metadata": {"name": "dev-edits"},
                "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "cm-editor"},
                "subjects": [{"kind": "Group", "name": "dev"}],
            },
        )
        _created(
            client,
            f"{rbac}/clusterroles",
            {
                "metadata": {"name": "ns-lister"},
                "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["list"]}],
            },
        )
        _created(
            client,
            f"{rbac}/clusterrolebindings",
            {
                "metadata": {"name": "dev-lists-namespaces"},
                "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "ns-lister"},
                "subjects": [{"kind": "Group", "name": "dev"}],
            },
        )


@pytest.fixture(scope="module")
def rbac_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """``--authorization-mode RBAC`` with the token file; anonymous requests allowed; the
    policy of :func:`seed_policy` in place; audit log in ``audit.log`` beside the data."""
    root = tmp_path_factory.mktemp("rbac")
    server = start_server(
        root / "data",
        "--token-auth-file",
        str(write_tokens(root)),
        "--authorization-mode",
        "RBAC",
        "--audit-log-path",
        str(root / "audit.log"),
    )
    try:
        seed_policy(server)
        yield server
    finally:
        server.stop()
