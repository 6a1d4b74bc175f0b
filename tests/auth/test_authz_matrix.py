"""The authn/authz matrix through a real ``kstore serve --authorization-mode RBAC``.

Each row is one request: who sends it (no credentials, an unknown token, or a user of the
token file), the method and path, and the exact HTTP code. Mutations carry ``dryRun=All`` so
that the rows do not change the objects later rows read (authorization happens before
dry-run is looked at, so a dry run is refused exactly as the real write would be).
"""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from tests.auth.conftest import ADMIN, ALICE, BOB, RBAC, ROBOT, bearer
from tests.server.harness import RunningServer

CM_A = "/api/v1/namespaces/team-a/configmaps"
CM_B = "/api/v1/namespaces/team-b/configmaps"
DRY = "?dryRun=All"
MERGE = "application/merge-patch+json"


def _cm(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"x": "y"}}


#: (row id, token: None for no credentials, method, path, body, expected code)
MATRIX: list[tuple[str, str | None, str, str, Any, int]] = [
    ("anonymous-list-cm", None, "GET", CM_A, None, 403),
    ("bad-token-list-cm", "not-a-token", "GET", CM_A, None, 401),
    ("bad-token-healthz", "not-a-token", "GET", "/healthz", None, 401),
    ("alice-list-cm-own-ns", ALICE, "GET", CM_A, None, 200),
    ("alice-get-cm-own-ns", ALICE, "GET", f"{CM_A}/cm2", None, 200),
    ("alice-watch-cm-own-ns", ALICE, "GET", f"{CM_A}?watch=1&timeoutSeconds=1", None, 200),
    ("alice-list-cm-other-ns", ALICE, "GET", CM_B, None, 403),
    ("alice-get-cm-other-ns", ALICE, "GET", f"{CM_B}/cm1", None, 403),
    ("alice-list-cm-all-ns", ALICE, "GET", "/api/v1/configmaps", None, 403),
    ("alice-create-cm", ALICE, "POST", CM_A + DRY, _cm("new"), 403),
    ("alice-update-named-cm1", ALICE, "PUT", f"{CM_A}/cm1{DRY}", _cm("cm1"), 200),
    ("alice-update-unnamed-cm2", ALICE, "PUT", f"{CM_A}/cm2{DRY}", _cm("cm2"), 403),
    ("alice-patch-named-cm1", ALICE, "PATCH", f"{CM_A}/cm1{DRY}", {"data": {"p": "q"}}, 200),
    ("alice-patch-unnamed-cm2", ALICE, "PATCH", f"{CM_A}/cm2{DRY}", {"data": {"p": "q"}}, 403),
    ("alice-delete-named-cm1", ALICE, "DELETE", f"{CM_A}/cm1{DRY}", None, 200),
    ("alice-delete-unnamed-cm2", ALICE, "DELETE", f"{CM_A}/cm2{DRY}", None, 403),
    ("alice-deletecollection", ALICE, "DELETE", CM_A + DRY, None, 403),
    ("alice-get-pod", ALICE, "GET", "/api/v1/namespaces/team-a/pods/p1", None, 403),
    ("alice-get-pod-status", ALICE, "GET", "/api/v1/namespaces/team-a/pods/p1/status", None, 200),
    ("alice-list-pods", ALICE, "GET", "/api/v1/namespaces/team-a/pods", None, 403),
    ("alice-list-secrets", ALICE, "GET", "/api/v1/namespaces/team-a/secrets", None, 403),
    ("alice-list-namespaces", ALICE, "GET", "/api/v1/namespaces", None, 403),
    ("alice-get-namespace", ALICE, "GET", "/api/v1/namespaces/team-a", None, 403),
    ("alice-list-roles", ALICE, "GET", f"/apis/{RBAC}/v1/namespaces/team-a/roles", None, 403),
    ("alice-discovery-api", ALICE, "GET", "/api", None, 200),
    ("alice-discovery-apis", ALICE, "GET", "/apis", None, 200),
    ("alice-discovery-rbac", ALICE, "GET", f"/apis/{RBAC}/v1", None, 200),
    ("alice-version", ALICE, "GET", "/version", None, 200),
    ("alice-metrics", ALICE, "GET", "/metrics", None, 403),
    ("bob-list-cm-bound-ns", BOB, "GET", CM_B, None, 200),
    ("bob-create-cm-bound-ns", BOB, "POST", CM_B + DRY, _cm("new"), 201),
    ("bob-delete-cm-bound-ns", BOB, "DELETE", f"{CM_B}/cm2{DRY}", None, 200),
    ("bob-deletecollection-bound-ns", BOB, "DELETE", CM_B + DRY, None, 200),
    ("bob-list-cm-unbound-ns", BOB, "GET", CM_A, None, 403),
    ("bob-list-cm-all-ns", BOB, "GET", "/api/v1/configmaps", None, 403),
    ("bob-list-namespaces", BOB, "GET", "/api/v1/namespaces", None, 200),
    ("bob-get-namespace", BOB, "GET", "/api/v1/namespaces/team-a", None, 403),
    (
        "bob-create-namespace",
        BOB,
        "POST",
        "/api/v1/namespaces" + DRY,
        {"metadata": {"name": "x"}},
        403,
    ),
    ("robot-sa-list-cm-own-ns", ROBOT, "GET", CM_A, None, 200),
    ("robot-sa-list-cm-other-ns", ROBOT, "GET", CM_B, None, 403),
    ("masters-list-cm-all-ns", ADMIN, "GET", "/api/v1/configmaps", None, 200),
    ("masters-delete-cm", ADMIN, "DELETE", f"{CM_A}/cm2{DRY}", None, 200),
    ("masters-list-clusterroles", ADMIN, "GET", f"/apis/{RBAC}/v1/clusterroles", None, 200),
    ("masters-metrics", ADMIN, "GET", "/metrics", None, 200),
    ("anonymous-healthz", None, "GET", "/healthz", None, 200),
    ("anonymous-readyz", None, "GET", "/readyz", None, 200),
    ("anonymous-livez", None, "GET", "/livez", None, 200),
    ("anonymous-version", None, "GET", "/version", None, 200),
    ("anonymous-discovery", None, "GET", "/api", None, 403),
    ("anonymous-list-namespaces", None, "GET", "/api/v1/namespaces", None, 403),
]


def _send(
    server: RunningServer, token: str | None, method: str, path: str, body: Any
) -> httpx.Response:
    headers = bearer(token) if token else {}
    if method == "PATCH":
        headers["Content-Type"] = MERGE
    with server.client() as client:
        return client.request(method, path, json=body, headers=headers)


@pytest.mark.parametrize(
    ("token", "method", "path", "body", "code"),
    [pytest.param(*row[1:], id=row[0]) for row in MATRIX],
)
def test_matrix_answers_the_exact_code(
    rbac_server: RunningServer, token: str | None, method: str, path: str, body: Any, code: int
) -> None:
    response = _send(rbac_server, token, method, path, body)
    assert response.status_code == code, response.text
    if code in (401, 403):
        status = response.json()
        assert status["kind"] == "Status"
        assert status["code"] == code
        assert status["reason"] == ("Unauthorized" if code == 401 else "Forbidden")


def test_denial_is_kubernetes_forbidden_status(rbac_server: RunningServer) -> None:
    status = _send(rbac_server, ALICE, "GET", CM_B, None).json()
    assert status["message"] == (
        'configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group ""'
        ' in the namespace "team-b"'
    )
    assert status["details"] == {"kind": "configmaps"}


def test_denial_of_a_named_object_names_it(rbac_server: RunningServer) -> None:
    status = _send(rbac_server, ALICE, "PUT", f"{CM_A}/cm2{DRY}", _cm("cm2")).json()
    assert status["message"] == (
        'configmaps "cm2" is forbidden: User "alice" cannot update resource "configmaps" in API'
        ' group "" in the namespace "team-a"'
    )
    assert status["details"] == {"name": "cm2", "kind": "configmaps"}


def test_denial_of_a_subresource_names_resource_and_subresource(rbac_server: RunningServer) -> None:
    status = _send(rbac_server, ALICE, "GET", "/api/v1/namespaces/team-a/pods/p1/log", None).json()
    assert status["message"] == (
        'pods "p1" is forbidden: User "alice" cannot get resource "pods/log" in API group ""'
        ' in the namespace "team-a"'
    )


def test_cluster_scoped_denial_says_cluster_scope(rbac_server: RunningServer) -> None:
    status = _send(rbac_server, ALICE, "GET", f"/apis/{RBAC}/v1/clusterroles", None).json()
    assert status["message"] == (
        'clusterroles.rbac.authorization.k8s.io is forbidden: User "alice" cannot list'
        ' resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope'
    )
    assert status["details"] == {"group": RBAC, "kind": "clusterroles"}


def test_non_resource_denial_names_the_path(rbac_server: RunningServer) -> None:
    status = _send(rbac_server, None, "GET", "/apis", None).json()
    assert status["message"] == 'forbidden: User "system:anonymous" cannot get path "/apis"'
    # NewForbidden always sets details; with no resource and no name they are empty.
    assert status["details"] == {}


def test_bad_token_is_kubernetes_unauthorized_status(rbac_server: RunningServer) -> None:
    response = _send(rbac_server, "nope", "GET", CM_A, None)
    assert response.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Unauthorized",
        "reason": "Unauthorized",
        "code": 401,
    }


def test_bearer_scheme_is_case_insensitive(rbac_server: RunningServer) -> None:
    with rbac_server.client() as client:
        response = client.get(CM_A, headers={"Authorization": f"bearer {ALICE}"})
    assert response.status_code == 200, response.text


def test_binding_to_a_missing_role_is_reported_with_the_denial(rbac_server: RunningServer) -> None:
    with rbac_server.client() as client:
        response = client.post(
            f"/apis/{RBAC}/v1/namespaces/team-b/rolebindings",
            json={
                "metadata": {"name": "dangling"},
                "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "no-such-role"},
                "subjects": [{"kind": "User", "name": "alice"}],
            },
            headers=bearer(ADMIN),
        )
        assert response.status_code == 201, response.text
        try:
            status = client.get(CM_B, headers=bearer(ALICE)).json()
        finally:
            client.delete(
                f"/apis/{RBAC}/v1/namespaces/team-b/rolebindings/dangling", headers=bearer(ADMIN)
            )
    assert status["code"] == 403
    assert status["message"].endswith(
        ': RBAC: role.rbac.authorization.k8s.io "no-such-role" not found'
    )


def test_grant_takes_effect_at_once_and_revocation_soon(rbac_server: RunningServer) -> None:
    path = "/api/v1/namespaces/team-b/secrets"
    with rbac_server.client() as client:
        assert client.get(path, headers=bearer(ALICE)).status_code == 403
        for kind, body in (
            (
                "clusterroles",
                {
                    "metadata": {"name": "secret-lister"},
                    "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["list"]}],
                },
            ),
            (
                "namespaces/team-b/rolebindings",
                {
                    "metadata": {"name": "alice-secrets"},
                    "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "secret-lister"},
                    "subjects": [{"kind": "User", "name": "alice"}],
                },
            ),
        ):
            created = client.post(f"/apis/{RBAC}/v1/{kind}", json=body, headers=bearer(ADMIN))
            assert created.status_code == 201, created.text
        assert client.get(path, headers=bearer(ALICE)).status_code == 200
        # The ClusterRole applies through the RoleBinding in team-b only.
        assert (
            client.get("/api/v1/namespaces/team-a/secrets", headers=bearer(ALICE)).status_code
            == 403
        )
        client.delete(
            f"/apis/{RBAC}/v1/namespaces/team-b/rolebindings/alice-secrets", headers=bearer(ADMIN)
        )
        # A revocation reaches the authorizer's watch-fed cache within the watch delay (as
        # the API server's informers): poll for it rather than expect it at once.
        deadline = time.monotonic() + 10
        while client.get(path, headers=bearer(ALICE)).status_code != 403:
            assert time.monotonic() < deadline, "the deleted RoleBinding still allows"
            time.sleep(0.05)
