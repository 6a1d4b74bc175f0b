"""TokenReview over HTTP against a real ``kstore serve`` (token file, RBAC): who may ask,
the answer for a listed, an unlisted and a missing token, and the protobuf request body
client-go sends."""

from __future__ import annotations

import pytest

from kstore.codec._pb_values import length_prefixed
from tests.auth.conftest import ADMIN, ALICE, ROBOT, bearer
from tests.server.harness import RunningServer

TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"


def _review(token: str | None = None, **spec: object) -> dict[str, object]:
    if token is not None:
        spec["token"] = token
    return {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec}


def test_a_listed_token_is_its_user(rbac_server: RunningServer) -> None:
    with rbac_server.client() as client:
        response = client.post(TOKEN_REVIEWS, json=_review(ROBOT), headers=bearer(ADMIN))
        assert response.status_code == 201, response.text
        answer = response.json()
    assert answer["kind"] == "TokenReview"
    assert answer["spec"] == {"token": ROBOT}
    assert answer["status"] == {
        "authenticated": True,
        "user": {
            "username": "system:serviceaccount:team-a:robot",
            "uid": "uid-robot",
            "groups": ["system:authenticated"],
        },
    }


def test_an_unlisted_token_is_not_authenticated(rbac_server: RunningServer) -> None:
    with rbac_server.client() as client:
        response = client.post(TOKEN_REVIEWS, json=_review("wrong"), headers=bearer(ADMIN))
    assert response.status_code == 201
    assert response.json()["status"] == {"user": {}, "error": "invalid bearer token"}


@pytest.mark.parametrize("body", [_review(), _review("")])
def test_a_missing_token_is_a_bad_request(rbac_server: RunningServer, body: object) -> None:
    with rbac_server.client() as client:
        response = client.post(TOKEN_REVIEWS, json=body, headers=bearer(ADMIN))
    assert response.status_code == 400
    assert response.json()["message"] == "token is required for TokenReview in authentication"


def test_a_token_of_the_wrong_type_is_the_decoders_error(rbac_server: RunningServer) -> None:
    with rbac_server.client() as client:
        response = client.post(TOKEN_REVIEWS, json=_review(7), headers=bearer(ADMIN))
    assert response.status_code == 400
    assert "TokenReviewSpec" in response.json()["message"]


def test_creating_a_token_review_needs_the_right(rbac_server: RunningServer) -> None:
    with rbac_server.client() as client:
        response = client.post(TOKEN_REVIEWS, json=_review(ADMIN), headers=bearer(ALICE))
    assert response.status_code == 403
    assert response.json()["message"] == (
        'tokenreviews.authentication.k8s.io is forbidden: User "alice" cannot create resource '
        '"tokenreviews" in API group "authentication.k8s.io" at the cluster scope'
    )


def _field(number: int, payload: bytes) -> bytes:
    return bytes([number << 3 | 2]) + length_prefixed(payload)


def test_a_protobuf_request_body(rbac_server: RunningServer) -> None:
    # runtime.Unknown{typeMeta{apiVersion, kind}, raw: TokenReview{spec{token, audiences}}}
    spec = _field(1, ALICE.encode()) + _field(2, b"aud-1")
    raw = _field(1, b"") + _field(2, spec)
    type_meta = _field(1, b"authentication.k8s.io/v1") + _field(2, b"TokenReview")
    body = b"k8s\x00" + _field(1, type_meta) + _field(2, raw)
    headers = {
        **bearer(ADMIN),
        "Content-Type": "application/vnd.kubernetes.protobuf",
        "Accept": "application/json",
    }
    with rbac_server.client() as client:
        response = client.post(TOKEN_REVIEWS, content=body, headers=headers)
    assert response.status_code == 201, response.text
    status = response.json()["status"]
    assert status["user"]["username"] == "alice"
    assert status["audiences"] == ["aud-1"]
