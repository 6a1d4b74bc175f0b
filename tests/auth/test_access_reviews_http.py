"""The review resources over HTTP, in process: SelfSubjectAccessReview, SubjectAccessReview,
LocalSubjectAccessReview and SelfSubjectReview answered by the configured authorizer, bad
bodies refused with the API server's codes, and discovery listing them as create-only.

The app is ``build_app`` over an LMDB registry with the token file of
:mod:`tests.auth.conftest` and ``--authorization-mode`` chosen per fixture.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from starlette.types import ASGIApp

from kstore.server.app import build_app
from kstore.server.filters import FilterConfig
from kstore.server.serve import ServeConfig, open_registry
from tests.auth.conftest import ADMIN, ALICE, BOB, CAROL, bearer, write_tokens

AUTHZ = "/apis/authorization.k8s.io/v1"
SSAR = f"{AUTHZ}/selfsubjectaccessreviews"
SAR = f"{AUTHZ}/subjectaccessreviews"
SSR = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
RBAC = "/apis/rbac.authorization.k8s.io/v1"


class TestClient:
    """Synchronous requests to an ASGI app in this process (one event loop per request;
    Starlette's own TestClient warns under this anyio)."""

    __test__ = False

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        async def main() -> httpx.Response:
            transport = httpx.ASGITransport(app=self._app)
            async with httpx.AsyncClient(transport=transport, base_url="http://kstore") as c:
                return await c.request(method, path, **kwargs)

        return anyio.run(main)

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("POST", path, **kwargs)


def _client(tmp_path: Path, modes: tuple[str, ...], tokens: bool = True) -> Iterator[TestClient]:
    registry, backend = open_registry(ServeConfig(data_dir=tmp_path / "data"))
    config = FilterConfig(
        token_auth_file=write_tokens(tmp_path) if tokens else None,
        authorization_modes=modes,
    )
    try:
        yield TestClient(build_app(registry, filters=config))
    finally:
        registry.close()
        backend.close()


@pytest.fixture
def rbac(tmp_path: Path) -> Iterator[TestClient]:
    """RBAC; alice may get configmaps in team-a (a Role and its RoleBinding)."""
    for client in _client(tmp_path, ("RBAC",)):
        role = {
            "metadata": {"name": "cm-reader"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}],
        }
        binding = {
            "metadata": {"name": "cm-reader"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "Role",
                "name": "cm-reader",
            },
            "subjects": [{"kind": "User", "name": "alice"}],
        }
        for path, body in (
            ("/api/v1/namespaces", {"metadata": {"name": "team-a"}}),
            (f"{RBAC}/namespaces/team-a/roles", role),
            (f"{RBAC}/namespaces/team-a/rolebindings", binding),
        ):
            response = client.post(path, json=body, headers=bearer(ADMIN))
            assert response.status_code == 201, response.text
        yield client


def _ssar(attributes: dict[str, Any], key: str = "resourceAttributes") -> dict[str, Any]:
    return {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "metadata": {"creationTimestamp": None},
        "spec": {key: attributes},
    }


def _status(client: TestClient, token: str, body: dict[str, Any], path: str = SSAR) -> Any:
    response = client.post(path, json=body, headers=bearer(token))
    assert response.status_code == 201, response.text
    return response.json()["status"]


def test_self_access_review_follows_the_role_binding(rbac: TestClient) -> None:
    get_cm = {"namespace": "team-a", "verb": "get", "resource": "configmaps"}
    assert _status(rbac, ALICE, _ssar(get_cm)) == {
        "allowed": True,
        "reason": 'RBAC: allowed by RoleBinding "cm-reader/team-a" of Role "cm-reader" to User '
        '"alice"',
    }
    elsewhere = {**get_cm, "namespace": "team-b"}
    assert _status(rbac, ALICE, _ssar(elsewhere)) == {"allowed": False}
    assert _status(rbac, CAROL, _ssar(get_cm)) == {"allowed": False}


def test_self_access_review_echoes_the_spec_with_kind_and_version(rbac: TestClient) -> None:
    attributes = {"namespace": "team-a", "verb": "get", "resource": "configmaps", "name": "x"}
    response = rbac.post(SSAR, json=_ssar(attributes), headers=bearer(ALICE))
    assert response.status_code == 201
    assert response.json() == {
        "kind": "SelfSubjectAccessReview",
        "apiVersion": "authorization.k8s.io/v1",
        "metadata": {"creationTimestamp": None},
        "spec": {"resourceAttributes": attributes},
        "status": {
            "allowed": True,
            "reason": 'RBAC: allowed by RoleBinding "cm-reader/team-a" of Role "cm-reader" to '
            'User "alice"',
        },
    }


def test_masters_are_allowed_everything(rbac: TestClient) -> None:
    anything = {"verb": "*", "group": "*", "resource": "*"}
    assert _status(rbac, ADMIN, _ssar(anything)) == {"allowed": True}


def test_non_resource_review_uses_the_bootstrap_policy(rbac: TestClient) -> None:
    # system:public-info-viewer grants /healthz to everyone; nothing grants /metrics.
    healthz = _ssar({"path": "/healthz", "verb": "get"}, "nonResourceAttributes")
    status = _status(rbac, CAROL, healthz)
    assert status["allowed"] is True
    assert status["reason"].startswith('RBAC: allowed by ClusterRoleBinding "system:')
    assert status["reason"].endswith('to Group "system:authenticated"')
    metrics = _ssar({"path": "/metrics", "verb": "get"}, "nonResourceAttributes")
    assert _status(rbac, CAROL, metrics) == {"allowed": False}


def test_anonymous_may_not_create_a_self_access_review_under_rbac(rbac: TestClient) -> None:
    response = rbac.post(SSAR, json=_ssar({"verb": "get", "resource": "pods"}))
    assert response.status_code == 403
    assert response.json()["message"] == (
        'selfsubjectaccessreviews.authorization.k8s.io is forbidden: User "system:anonymous" '
        'cannot create resource "selfsubjectaccessreviews" in API group '
        '"authorization.k8s.io" at the cluster scope'
    )


def test_review_without_attributes_is_invalid(rbac: TestClient) -> None:
    body = _ssar({})
    body["spec"] = {}
    response = rbac.post(SSAR, json=body, headers=bearer(ALICE))
    assert response.status_code == 422
    status = response.json()
    assert status["reason"] == "Invalid"
    assert status["message"] == (
        'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: '
        'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes '
        "must be specified"
    )
    assert status["details"]["causes"][0]["field"] == "spec.resourceAttributes"


def test_review_with_both_attributes_is_invalid(rbac: TestClient) -> None:
    body = _ssar({"verb": "get", "resource": "pods"})
    body["spec"]["nonResourceAttributes"] = {"path": "/x", "verb": "get"}
    response = rbac.post(SSAR, json=body, headers=bearer(ALICE))
    assert response.status_code == 422
    causes = response.json()["details"]["causes"]
    assert [c["field"] for c in causes] == ["spec.nonResourceAttributes"]
    assert causes[0]["message"].endswith(
        "cannot be specified in combination with resourceAttributes"
    )


def test_review_with_a_name_is_invalid(rbac: TestClient) -> None:
    body = _ssar({"verb": "get", "resource": "pods"})
    body["metadata"] = {"name": "mine"}
    response = rbac.post(SSAR, json=body, headers=bearer(ALICE))
    assert response.status_code == 422
    assert response.json()["details"]["causes"][0]["field"] == "metadata"


def test_review_of_the_wrong_kind_or_shape_is_a_bad_request(rbac: TestClient) -> None:
    wrong_kind = {**_ssar({"verb": "get"}), "kind": "SubjectAccessReview"}
    response = rbac.post(SSAR, json=wrong_kind, headers=bearer(ALICE))
    assert response.status_code == 400
    bad_verb = _ssar({"verb": 3, "resource": "pods"})
    response = rbac.post(SSAR, json=bad_verb, headers=bearer(ALICE))
    assert response.status_code == 400
    assert response.json()["message"] == (
        'SelfSubjectAccessReview in version "v1" cannot be handled as a SelfSubjectAccessReview: '
        "json: cannot unmarshal number into Go struct field "
        "ResourceAttributes.spec.resourceAttributes.verb of type string"
    )
    response = rbac.post(SSAR, content=b"", headers=bearer(ALICE))
    assert response.status_code == 400


def test_reviews_are_create_only(rbac: TestClient) -> None:
    assert rbac.get(SSAR, headers=bearer(ADMIN)).status_code == 405
    assert rbac.get(f"{SSAR}/x", headers=bearer(ADMIN)).status_code == 404
    assert rbac.post(f"{AUTHZ}/localsubjectaccessreviews", headers=bearer(ADMIN)).status_code == (
        404
    )


def test_subject_access_review_asks_about_another_user(rbac: TestClient) -> None:
    body = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": "alice",
            "resourceAttributes": {"namespace": "team-a", "verb": "get", "resource": "configmaps"},
        },
    }
    assert _status(rbac, ADMIN, body, SAR)["allowed"] is True
    body["spec"]["user"] = "carol"
    assert _status(rbac, ADMIN, body, SAR) == {"allowed": False}
    # Asking about others needs create on subjectaccessreviews, which alice lacks.
    assert rbac.post(SAR, json=body, headers=bearer(ALICE)).status_code == 403


def test_subject_access_review_needs_a_user_or_group(rbac: TestClient) -> None:
    body = {"spec": {"resourceAttributes": {"verb": "get", "resource": "pods"}}}
    response = rbac.post(SAR, json=body, headers=bearer(ADMIN))
    assert response.status_code == 422
    assert response.json()["details"]["causes"][0] == {
        "reason": "FieldValueInvalid",
        "message": 'Invalid value: "": at least one of user or group must be specified',
        "field": "spec.user",
    }


def test_local_subject_access_review_is_about_its_namespace(rbac: TestClient) -> None:
    path = f"{AUTHZ}/namespaces/team-a/localsubjectaccessreviews"
    body: dict[str, Any] = {
        "spec": {
            "user": "alice",
            "resourceAttributes": {"namespace": "team-a", "verb": "get", "resource": "configmaps"},
        }
    }
    response = rbac.post(path, json=body, headers=bearer(ADMIN))
    assert response.status_code == 201, response.text
    answer = response.json()
    assert answer["metadata"]["namespace"] == "team-a"
    assert answer["status"]["allowed"] is True
    body["spec"]["resourceAttributes"]["namespace"] = "team-b"
    response = rbac.post(path, json=body, headers=bearer(ADMIN))
    assert response.status_code == 422
    assert response.json()["details"]["causes"][0]["field"] == ("spec.resourceAttributes.namespace")


def test_self_subject_review_returns_the_requester(rbac: TestClient) -> None:
    response = rbac.post(SSR, json={}, headers=bearer(BOB))
    assert response.status_code == 201, response.text
    assert response.json() == {
        "kind": "SelfSubjectReview",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"creationTimestamp": None},
        "status": {
            "userInfo": {
                "username": "bob",
                "uid": "uid-bob",
                "groups": ["dev", "qa", "system:authenticated"],
            }
        },
    }


def test_always_deny_after_rbac_gives_its_reason_without_a_denial(tmp_path: Path) -> None:
    # AlwaysDeny has no opinion (as in Kubernetes): not allowed, not denied, with its reason.
    for client in _client(tmp_path, ("RBAC", "AlwaysDeny")):
        status = _status(client, CAROL, _ssar({"verb": "create", "resource": "pods"}))
        assert status == {"allowed": False, "reason": "Everything is forbidden."}


def test_always_allow_allows_every_review(tmp_path: Path) -> None:
    for client in _client(tmp_path, ("AlwaysAllow",), tokens=False):
        status = _status(client, CAROL, _ssar({"verb": "delete", "resource": "nodes"}))
        assert status == {"allowed": True}
        who = client.post(SSR, json={}).json()["status"]["userInfo"]
        assert who == {"username": "system:anonymous", "groups": ["system:unauthenticated"]}


def test_discovery_lists_the_reviews_as_create_only(rbac: TestClient) -> None:
    listed = rbac.get(AUTHZ, headers=bearer(ALICE)).json()
    assert listed["groupVersion"] == "authorization.k8s.io/v1"
    by_name = {r["name"]: r for r in listed["resources"]}
    assert by_name["selfsubjectaccessreviews"] == {
        "name": "selfsubjectaccessreviews",
        "singularName": "selfsubjectaccessreview",
        "namespaced": False,
        "kind": "SelfSubjectAccessReview",
        "verbs": ["create"],
    }
    assert by_name["localsubjectaccessreviews"]["namespaced"] is True
    groups = {g["name"] for g in rbac.get("/apis", headers=bearer(ALICE)).json()["groups"]}
    assert {"authorization.k8s.io", "authentication.k8s.io"} <= groups


SSRR = f"{AUTHZ}/selfsubjectrulesreviews"


def _rules(client: TestClient, token: str | None, namespace: str) -> Any:
    body = {"apiVersion": "authorization.k8s.io/v1", "spec": {"namespace": namespace}}
    headers = bearer(token) if token else {}
    response = client.post(SSRR, json=body, headers=headers)
    assert response.status_code == 201, response.text
    answer = response.json()
    assert answer["kind"] == "SelfSubjectRulesReview"
    assert answer["spec"] == {}
    return answer["status"]


def test_rules_review_lists_the_role_bound_in_the_namespace(rbac: TestClient) -> None:
    status = _rules(rbac, ALICE, "team-a")
    assert status["incomplete"] is False
    assert "evaluationError" not in status
    assert {"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"]} in status[
        "resourceRules"
    ]
    assert any("/healthz" in r["nonResourceURLs"] for r in status["nonResourceRules"])
    elsewhere = _rules(rbac, ALICE, "team-b")
    assert not any("configmaps" in r.get("resources", ()) for r in elsewhere["resourceRules"])


def test_rules_review_names_a_binding_to_a_missing_role(rbac: TestClient) -> None:
    binding = {
        "metadata": {"name": "dangling"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "gone"},
        "subjects": [{"kind": "User", "name": "carol"}],
    }
    path = f"{RBAC}/namespaces/team-a/rolebindings"
    assert rbac.post(path, json=binding, headers=bearer(ADMIN)).status_code == 201
    status = _rules(rbac, CAROL, "team-a")
    assert status["evaluationError"] == 'role.rbac.authorization.k8s.io "gone" not found'
    assert status["incomplete"] is False


def test_rules_review_needs_a_namespace(rbac: TestClient) -> None:
    response = rbac.post(SSRR, json={"spec": {}}, headers=bearer(ALICE))
    assert response.status_code == 400
    assert response.json()["message"] == "no namespace on request"


def test_rules_review_under_always_allow_lists_everything(tmp_path: Path) -> None:
    for client in _client(tmp_path, ("AlwaysAllow",), tokens=False):
        status = _rules(client, None, "default")
        assert status == {
            "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
            "incomplete": False,
        }


def test_rules_review_with_always_deny_adds_nothing(tmp_path: Path) -> None:
    for client in _client(tmp_path, ("RBAC", "AlwaysDeny")):
        status = _rules(client, CAROL, "default")
        # RBAC's rules only (system:basic-user and friends), nothing from AlwaysDeny.
        assert status["incomplete"] is False
        resources = [name for r in status["resourceRules"] for name in r.get("resources", ())]
        assert "selfsubjectaccessreviews" in resources
        assert "*" not in resources


def _pb_string(number: int, value: str) -> bytes:
    data = value.encode()
    return bytes([number << 3 | 2, len(data)]) + data


def _pb_message(number: int, value: bytes) -> bytes:
    return bytes([number << 3 | 2, len(value)]) + value


def test_protobuf_body_is_answered_in_json(rbac: TestClient) -> None:
    attributes = _pb_string(1, "team-a") + _pb_string(2, "get") + _pb_string(5, "configmaps")
    raw = _pb_message(2, _pb_message(1, attributes))
    type_meta = _pb_string(1, "authorization.k8s.io/v1") + _pb_string(2, "SelfSubjectAccessReview")
    body = b"k8s\x00" + _pb_message(1, type_meta) + _pb_message(2, raw)
    headers = {
        **bearer(ALICE),
        "Content-Type": "application/vnd.kubernetes.protobuf",
        "Accept": "application/vnd.kubernetes.protobuf, application/json",
    }
    response = rbac.post(SSAR, content=body, headers=headers)
    assert response.status_code == 201, response.text
    assert response.headers["content-type"] == "application/json"
    assert response.json()["status"]["allowed"] is True
    response = rbac.post(SSAR, content=b"k8s\x00\x0a\x7f", headers=headers)
    assert response.status_code == 400


def test_openapi_publishes_the_review_post_operations(rbac: TestClient) -> None:
    index = rbac.get("/openapi/v3", headers=bearer(ALICE)).json()["paths"]
    url = index["apis/authorization.k8s.io/v1"]["serverRelativeURL"]
    paths = rbac.get(url, headers=bearer(ALICE)).json()["paths"]
    collection = paths["/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"]
    assert set(collection) == {"parameters", "post"}
    assert collection["post"]["x-kubernetes-group-version-kind"] == {
        "group": "authorization.k8s.io",
        "version": "v1",
        "kind": "SelfSubjectAccessReview",
    }
    assert "/apis/authorization.k8s.io/v1/namespaces/{namespace}/localsubjectaccessreviews" in (
        paths
    )
    assert "apis/authentication.k8s.io/v1" in index


def test_review_answer_media_types(rbac: TestClient) -> None:
    body = _ssar({"namespace": "team-a", "verb": "get", "resource": "configmaps"})
    only_protobuf = {**bearer(ALICE), "Accept": "application/vnd.kubernetes.protobuf"}
    response = rbac.post(SSAR, json=body, headers=only_protobuf)
    assert response.status_code == 406
    as_yaml = {**bearer(ALICE), "Accept": "application/vnd.kubernetes.protobuf, application/yaml"}
    response = rbac.post(SSAR, json=body, headers=as_yaml)
    assert response.status_code == 201
    assert response.headers["content-type"] == "application/yaml"
    assert "allowed: true" in response.text
