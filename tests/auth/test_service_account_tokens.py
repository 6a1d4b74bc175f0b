"""``serviceaccounts/token`` and the tokens it issues, over HTTP against real servers.

One server runs with ``--anonymous-auth=false`` and a token file holding only an admin, so
every request needs a credential: a ServiceAccount token is then the only way in for its
account. Tokens are checked as kube-apiserver checks them: signature, lifetime, audiences, and
that the ServiceAccount (and a bound Pod or Secret) is still the same object.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.auth.conftest import bearer
from tests.server.harness import RunningServer, start_server

ADMIN = "sa-admin-token-7d1"
NS = "tokens"
ISSUER = "https://issuer.example"


def _claims(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def _header(token: str) -> dict[str, Any]:
    head = token.split(".")[0]
    return json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))


@pytest.fixture(scope="module")
def rsa_key(tmp_path_factory: pytest.TempPathFactory) -> Path:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    path = tmp_path_factory.mktemp("keys") / "sa.key"
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
    )
    return path


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, rsa_key: Path) -> Iterator[RunningServer]:
    root = tmp_path_factory.mktemp("sa-tokens")
    tokens = root / "tokens.csv"
    tokens.write_text(f'{ADMIN},admin,uid-admin,"system:masters"\n')
    running = start_server(
        root / "data",
        "--token-auth-file",
        str(tokens),
        "--anonymous-auth=false",
        "--service-account-signing-key-file",
        str(rsa_key),
        "--service-account-issuer",
        ISSUER,
        "--service-account-issuer",
        "https://old-issuer.example",
        "--service-account-max-token-expiration",
        "48h",
    )
    try:
        with running.client(headers=bearer(ADMIN)) as client:
            r = client.post(
                "/api/v1/namespaces",
                json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
            )
            assert r.status_code == 201, r.text
        yield running
    finally:
        running.stop()


@pytest.fixture
def admin(server: RunningServer) -> Iterator[httpx.Client]:
    with server.client(headers=bearer(ADMIN)) as client:
        yield client


def _account(admin: httpx.Client, name: str) -> dict[str, Any]:
    r = admin.post(
        f"/api/v1/namespaces/{NS}/serviceaccounts",
        json={"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}},
    )
    assert r.status_code == 201, r.text
    return r.json()


def _token(admin: httpx.Client, name: str, spec: dict[str, Any] | None = None) -> httpx.Response:
    return admin.post(
        f"/api/v1/namespaces/{NS}/serviceaccounts/{name}/token",
        json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec or {}},
    )


def _review(admin: httpx.Client, token: str, audiences: list[str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"token": token}
    if audiences:
        spec["audiences"] = audiences
    r = admin.post(
        "/apis/authentication.k8s.io/v1/tokenreviews",
        json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec},
    )
    assert r.status_code == 201, r.text
    return r.json()["status"]


def _whoami(server: RunningServer, token: str) -> httpx.Response:
    with server.client() as client:
        return client.post(
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            json={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
            headers=bearer(token),
        )


def test_token_request_answers_a_signed_token_with_kubernetes_claims(
    admin: httpx.Client,
) -> None:
    account = _account(admin, "builder")
    before = int(time.time())
    r = _token(admin, "builder")
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["kind"] == "TokenRequest"
    assert body["apiVersion"] == "authentication.k8s.io/v1"
    assert body["metadata"]["name"] == "builder"
    assert body["metadata"]["namespace"] == NS
    assert body["spec"]["expirationSeconds"] == 3600
    assert body["spec"]["audiences"] == [ISSUER]
    token = body["status"]["token"]
    assert _header(token)["alg"] == "RS256"
    assert _header(token)["kid"]
    claims = _claims(token)
    assert claims["iss"] == ISSUER
    assert claims["sub"] == f"system:serviceaccount:{NS}:builder"
    assert claims["aud"] == [ISSUER]
    assert before <= claims["iat"] == claims["nbf"] <= int(time.time())
    assert claims["exp"] == claims["iat"] + 3600
    assert claims["jti"]
    assert claims["kubernetes.io"] == {
        "namespace": NS,
        "serviceaccount": {"name": "builder", "uid": account["metadata"]["uid"]},
    }
    expires = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(claims["exp"]))
    assert body["status"]["expirationTimestamp"] == expires


def test_token_authenticates_requests_as_the_service_account(
    server: RunningServer, admin: httpx.Client
) -> None:
    account = _account(admin, "reader")
    token = _token(admin, "reader").json()["status"]["token"]
    r = _whoami(server, token)
    assert r.status_code == 201, r.text
    assert r.json()["status"]["userInfo"] == {
        "username": f"system:serviceaccount:{NS}:reader",
        "uid": account["metadata"]["uid"],
        "groups": [
            "system:serviceaccounts",
            f"system:serviceaccounts:{NS}",
            "system:authenticated",
        ],
        "extra": {"authentication.kubernetes.io/credential-id": [f"JTI={_claims(token)['jti']}"]},
    }
    status = _review(admin, token)
    assert status["authenticated"] is True
    assert status["user"]["username"] == f"system:serviceaccount:{NS}:reader"


def test_token_for_a_deleted_service_account_is_refused(
    server: RunningServer, admin: httpx.Client
) -> None:
    _account(admin, "doomed")
    token = _token(admin, "doomed").json()["status"]["token"]
    assert _whoami(server, token).status_code == 201
    r = admin.delete(f"/api/v1/namespaces/{NS}/serviceaccounts/doomed")
    assert r.status_code == 200, r.text
    refused = _whoami(server, token)
    assert refused.status_code == 401
    assert refused.json()["message"] == "Unauthorized"
    status = _review(admin, token)
    assert status == {
        "user": {},
        "error": '[invalid bearer token, serviceaccounts "doomed" not found]',
    }
    # Re-created under the same name, it is another object: the old token stays refused.
    recreated = _account(admin, "doomed")
    status = _review(admin, token)
    assert status["error"] == (
        "[invalid bearer token, service account UID "
        f"({recreated['metadata']['uid']}) does not match claim "
        f"({_claims(token)['kubernetes.io']['serviceaccount']['uid']})]"
    )


def test_token_bound_to_a_pod_lives_as_long_as_the_pod(
    server: RunningServer, admin: httpx.Client
) -> None:
    _account(admin, "runner")
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "job-pod"},
        "spec": {"serviceAccountName": "runner", "containers": [{"name": "c", "image": "x"}]},
    }
    r = admin.post(f"/api/v1/namespaces/{NS}/pods", json=pod)
    assert r.status_code == 201, r.text
    pod_uid = r.json()["metadata"]["uid"]
    ref = {"apiVersion": "v1", "kind": "Pod", "name": "job-pod", "uid": pod_uid}
    r = _token(admin, "runner", {"boundObjectRef": ref, "audiences": ["vault"]})
    assert r.status_code == 201, r.text
    assert r.json()["spec"]["boundObjectRef"] == ref
    token = r.json()["status"]["token"]
    assert _claims(token)["kubernetes.io"]["pod"] == {"name": "job-pod", "uid": pod_uid}
    assert _claims(token)["aud"] == ["vault"]
    # Not for the API server's audience...
    assert _review(admin, token)["error"] == (
        '[invalid bearer token, token audiences ["vault"] is invalid for the target '
        f'audiences ["{ISSUER}"]]'
    )
    # ...but valid for the one asked.
    status = _review(admin, token, ["vault"])
    assert status["authenticated"] is True
    assert status["user"]["extra"] == {
        "authentication.kubernetes.io/credential-id": [f"JTI={_claims(token)['jti']}"],
        "authentication.kubernetes.io/pod-name": ["job-pod"],
        "authentication.kubernetes.io/pod-uid": [pod_uid],
    }
    r = admin.delete(f"/api/v1/namespaces/{NS}/pods/job-pod?gracePeriodSeconds=0")
    assert r.status_code == 200, r.text
    assert _review(admin, token, ["vault"])["error"] == (
        "[invalid bearer token, service account token has been invalidated]"
    )


def test_bound_object_must_exist_match_and_belong_to_the_account(admin: httpx.Client) -> None:
    _account(admin, "binder")
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "other-pod"},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    }
    assert admin.post(f"/api/v1/namespaces/{NS}/pods", json=pod).status_code == 201
    r = _token(
        admin,
        "binder",
        {"boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "other-pod"}},
    )
    assert r.status_code == 400
    # The ServiceAccount admission plugin gave the pod the namespace's default account.
    assert r.json()["message"] == (
        'cannot bind token for serviceaccount "binder" to pod running with serviceaccount "default"'
    )
    r = _token(
        admin, "binder", {"boundObjectRef": {"kind": "Secret", "apiVersion": "v1", "name": "nope"}}
    )
    assert r.status_code == 404
    assert r.json()["message"] == 'secrets "nope" not found'
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s1"}}
    assert admin.post(f"/api/v1/namespaces/{NS}/secrets", json=secret).status_code == 201
    ref = {"kind": "Secret", "apiVersion": "v1", "name": "s1", "uid": "not-its-uid"}
    r = _token(admin, "binder", {"boundObjectRef": ref})
    assert r.status_code == 409
    assert (
        "the UID in the bound object reference (not-its-uid) does not match" in r.json()["message"]
    )
    ref = {"kind": "ConfigMap", "apiVersion": "v1", "name": "x"}
    r = _token(admin, "binder", {"boundObjectRef": ref})
    assert r.status_code == 400
    assert r.json()["message"] == "cannot bind token to object of type /v1, Kind=ConfigMap"


def test_expiration_is_validated_with_kubernetes_words(admin: httpx.Client) -> None:
    _account(admin, "short")
    r = _token(admin, "short", {"expirationSeconds": 60})
    assert r.status_code == 422
    assert r.json()["message"] == (
        'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: '
        "Invalid value: 60: may not specify a duration less than 10 minutes"
    )
    r = _token(admin, "short", {"expirationSeconds": 600})
    assert r.status_code == 201
    claims = _claims(r.json()["status"]["token"])
    assert claims["exp"] - claims["iat"] == 600


def test_token_for_a_missing_service_account_is_not_found(admin: httpx.Client) -> None:
    r = _token(admin, "ghost")
    assert r.status_code == 404
    assert r.json()["message"] == 'serviceaccounts "ghost" not found'


def test_tampered_or_foreign_tokens_are_refused(server: RunningServer, admin: httpx.Client) -> None:
    _account(admin, "victim")
    token = _token(admin, "victim").json()["status"]["token"]
    head, _payload, signature = token.split(".")
    claims = _claims(token)
    claims["sub"] = "system:serviceaccount:kube-system:admin"
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    assert _whoami(server, f"{head}.{forged}.{signature}").status_code == 401
    status = _review(admin, f"{head}.{forged}.{signature}")
    assert status["error"].startswith("[invalid bearer token, ")


def test_discovery_lists_the_token_subresource(admin: httpx.Client) -> None:
    resources = admin.get("/api/v1").json()["resources"]
    entry = next(r for r in resources if r["name"] == "serviceaccounts/token")
    assert entry == {
        "name": "serviceaccounts/token",
        "singularName": "",
        "namespaced": True,
        "group": "authentication.k8s.io",
        "version": "v1",
        "kind": "TokenRequest",
        "verbs": ["create"],
    }


def test_a_server_without_a_key_file_keeps_its_key_across_restarts(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    first = start_server(data)
    try:
        with first.client() as client:
            client.post(
                "/api/v1/namespaces/default/serviceaccounts",
                json={"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "keep"}},
            )
            r = client.post("/api/v1/namespaces/default/serviceaccounts/keep/token", json={})
            assert r.status_code == 201, r.text
            token = r.json()["status"]["token"]
    finally:
        first.stop()
    key = data / "service-account.key"
    assert key.stat().st_mode & 0o777 == 0o600
    second = start_server(data)
    try:
        with second.client() as client:
            r = client.post(
                "/apis/authentication.k8s.io/v1/tokenreviews",
                json={
                    "apiVersion": "authentication.k8s.io/v1",
                    "kind": "TokenReview",
                    "spec": {"token": token},
                },
            )
            assert r.json()["status"]["authenticated"] is True, r.text
            assert _header(token)["alg"] == "ES256"
    finally:
        second.stop()


def _signed(rsa_key: Path, claims: dict[str, Any]) -> str:
    from kstore.tokens import load_signing_key

    return load_signing_key(rsa_key).sign(claims)


def test_expired_future_and_foreign_issuer_tokens(
    server: RunningServer, admin: httpx.Client, rsa_key: Path
) -> None:
    account = _account(admin, "clock")
    now = int(time.time())
    claims: dict[str, Any] = {
        "aud": [ISSUER],
        "iss": "https://old-issuer.example",
        "sub": f"system:serviceaccount:{NS}:clock",
        "jti": "x",
        "kubernetes.io": {
            "namespace": NS,
            "serviceaccount": {"name": "clock", "uid": account["metadata"]["uid"]},
        },
    }
    # Every configured issuer is accepted.
    valid = _signed(rsa_key, {**claims, "iat": now, "nbf": now, "exp": now + 600})
    assert _review(admin, valid)["authenticated"] is True
    expired = _signed(rsa_key, {**claims, "iat": now - 7200, "nbf": now - 7200, "exp": now - 3600})
    assert _review(admin, expired)["error"] == (
        "[invalid bearer token, service account token has expired]"
    )
    assert _whoami(server, expired).status_code == 401
    early = _signed(rsa_key, {**claims, "iat": now, "nbf": now + 3600, "exp": now + 7200})
    assert _review(admin, early)["error"] == (
        "[invalid bearer token, service account token is not valid yet]"
    )
    # A JWT of an issuer the server does not know is not a service-account token at all.
    foreign = _signed(rsa_key, {**claims, "iss": "https://elsewhere", "exp": now + 600})
    assert _review(admin, foreign)["error"] == "invalid bearer token"


def test_expiration_is_capped_by_the_server_maximum(admin: httpx.Client) -> None:
    _account(admin, "long")
    r = _token(admin, "long", {"expirationSeconds": 7 * 86400})
    assert r.status_code == 201, r.text
    assert r.json()["spec"]["expirationSeconds"] == 48 * 3600
    claims = _claims(r.json()["status"]["token"])
    assert claims["exp"] - claims["iat"] == 48 * 3600
