"""Impersonation headers against a real ``kstore serve`` in RBAC mode: who may act as whom,
what the request then is allowed, the user it goes on as (SelfSubjectReview), the errors the
API server gives, and what audit records."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.auth.conftest import ADMIN, ALICE, CAROL, RBAC, bearer
from tests.auth.test_audit_user import _events_for
from tests.server.harness import RunningServer

SSR = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
_REVIEW = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}


def _acting(client: httpx.Client, token: str, **headers: str) -> dict[str, Any]:
    response = client.post(SSR, json=_REVIEW, headers={**bearer(token), **headers})
    assert response.status_code == 201, response.text
    user: dict[str, Any] = response.json()["status"]["userInfo"]
    return user


@pytest.fixture(scope="module")
def carol_impersonates_alice(rbac_server: RunningServer) -> RunningServer:
    """A ClusterRole letting carol impersonate the user alice and the group dev (only)."""
    rbac = f"/apis/{RBAC}/v1"
    role = {
        "metadata": {"name": "impersonate-alice"},
        "rules": [
            {
                "apiGroups": [""],
                "resources": ["users"],
                "resourceNames": ["alice"],
                "verbs": ["impersonate"],
            },
            {
                "apiGroups": [""],
                "resources": ["groups"],
                "resourceNames": ["dev"],
                "verbs": ["impersonate"],
            },
        ],
    }
    binding = {
        "metadata": {"name": "carol-impersonates-alice"},
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "impersonate-alice"},
        "subjects": [{"kind": "User", "name": "carol"}],
    }
    with rbac_server.client() as client:
        writes = ((f"{rbac}/clusterroles", role), (f"{rbac}/clusterrolebindings", binding))
        for path, body in writes:
            response = client.post(path, json=body, headers=bearer(ADMIN))
            assert response.status_code == 201, response.text
    return rbac_server


def test_a_granted_impersonation_acts_with_the_impersonated_users_rights(
    carol_impersonates_alice: RunningServer,
) -> None:
    cms = "/api/v1/namespaces/team-a/configmaps"
    with carol_impersonates_alice.client() as client:
        # carol herself may not list team-a's ConfigMaps; alice may (cm-reader).
        assert client.get(cms, headers=bearer(CAROL)).status_code == 403
        as_alice = client.get(cms, headers={**bearer(CAROL), "Impersonate-User": "alice"})
        assert as_alice.status_code == 200, as_alice.text
        assert _acting(client, CAROL, **{"Impersonate-User": "alice"}) == {
            "username": "alice",
            "groups": ["system:authenticated"],
        }


def test_an_impersonation_not_granted_is_the_api_servers_forbidden(
    carol_impersonates_alice: RunningServer,
) -> None:
    with carol_impersonates_alice.client() as client:
        response = client.get(
            "/api/v1/namespaces", headers={**bearer(CAROL), "Impersonate-User": "bob"}
        )
        assert response.status_code == 403
        assert response.json()["message"] == (
            'users "bob" is forbidden: User "carol" cannot impersonate resource "users" in '
            'API group "" at the cluster scope'
        )
        # The user is allowed, one of the groups is not: refused on the group.
        response = client.get(
            "/api/v1/namespaces",
            headers={**bearer(CAROL), "Impersonate-User": "alice", "Impersonate-Group": "qa"},
        )
        assert response.status_code == 403
        assert response.json()["message"].startswith('groups "qa" is forbidden: User "carol"')
        assert response.json()["details"] == {"name": "qa", "kind": "groups"}
        # alice holds no impersonate rights at all.
        response = client.get(
            "/api/v1/namespaces", headers={**bearer(ALICE), "Impersonate-User": "carol"}
        )
        assert response.status_code == 403


def test_groups_given_replace_the_users_and_add_authenticated(
    carol_impersonates_alice: RunningServer,
) -> None:
    headers = {"Impersonate-User": "alice", "Impersonate-Group": "dev"}
    with carol_impersonates_alice.client() as client:
        assert _acting(client, CAROL, **headers) == {
            "username": "alice",
            "groups": ["dev", "system:authenticated"],
        }
        # As alice in group dev, team-b's ConfigMaps are editable (dev's RoleBinding there).
        response = client.delete(
            "/api/v1/namespaces/team-b/configmaps/cm2", headers={**bearer(CAROL), **headers}
        )
        assert response.status_code == 200, response.text


def test_service_account_uid_and_extra(rbac_server: RunningServer) -> None:
    headers = {
        "Impersonate-User": "system:serviceaccount:team-a:robot",
        "Impersonate-Uid": "uid-42",
        "Impersonate-Extra-Scopes%2Fread": "one",
    }
    with rbac_server.client() as client:
        response = client.post(
            SSR,
            json=_REVIEW,
            headers=[
                *bearer(ADMIN).items(),
                *headers.items(),
                ("Impersonate-Extra-scopes%2Fread", "two"),
            ],
        )
        assert response.status_code == 201, response.text
        assert response.json()["status"]["userInfo"] == {
            "username": "system:serviceaccount:team-a:robot",
            "uid": "uid-42",
            "groups": [
                "system:serviceaccounts",
                "system:serviceaccounts:team-a",
                "system:authenticated",
            ],
            "extra": {"scopes/read": ["one", "two"]},
        }
        # carol may impersonate neither the service account nor its namespace's accounts.
        response = client.post(SSR, json=_REVIEW, headers={**bearer(CAROL), **headers})
        assert response.status_code == 403
        assert response.json()["message"] == (
            'serviceaccounts "robot" is forbidden: User "carol" cannot impersonate resource '
            '"serviceaccounts" in API group "" in the namespace "team-a"'
        )


def test_groups_extra_or_uid_without_a_user_is_a_bad_request(rbac_server: RunningServer) -> None:
    with rbac_server.client() as client:
        for header in ("Impersonate-Group", "Impersonate-Uid", "Impersonate-Extra-Scopes"):
            response = client.get("/api/v1/namespaces", headers={**bearer(ADMIN), header: "x"})
            assert response.status_code == 400, header
            assert response.json()["reason"] == "BadRequest"
            assert "without impersonating a user" in response.json()["message"]


def test_anonymous_may_not_impersonate_under_rbac(rbac_server: RunningServer) -> None:
    with rbac_server.client() as client:
        response = client.get("/api/v1/namespaces", headers={"Impersonate-User": "admin"})
        assert response.status_code == 403
        assert 'User "system:anonymous" cannot impersonate' in response.json()["message"]


def test_audit_records_who_asked_and_whom_they_acted_as(
    carol_impersonates_alice: RunningServer,
) -> None:
    uri = "/api/v1/namespaces/team-a/configmaps?limit=11"
    with carol_impersonates_alice.client() as client:
        response = client.get(uri, headers={**bearer(CAROL), "Impersonate-User": "alice"})
        assert response.status_code == 200
    [event] = _events_for(carol_impersonates_alice, uri)
    assert event["user"] == {
        "username": "carol",
        "uid": "uid-carol",
        "groups": ["system:authenticated"],
    }
    assert event["impersonatedUser"] == {"username": "alice", "groups": ["system:authenticated"]}
