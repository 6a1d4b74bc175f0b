"""Privilege-escalation prevention through a real server: a user who may write RBAC objects
grants no more than they hold, unless allowed ``escalate`` (roles) or ``bind`` (bindings);
``system:masters`` may.

``carol`` gets, in team-b only, the right to write Roles and RoleBindings and to read
ConfigMaps; each scenario is one write she attempts there.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.auth.conftest import ADMIN, CAROL, RBAC, bearer
from tests.server.harness import RunningServer

BASE = f"/apis/{RBAC}/v1"
ROLES = f"{BASE}/namespaces/team-b/roles"
BINDINGS = f"{BASE}/namespaces/team-b/rolebindings"
CM_READ = {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}


@pytest.fixture(scope="module")
def carol(rbac_server: RunningServer) -> Iterator[httpx.Client]:
    with rbac_server.client(headers=bearer(ADMIN)) as admin:
        for path, body in (
            (
                ROLES,
                {
                    "metadata": {"name": "rbac-writer"},
                    "rules": [
                        {
                            "apiGroups": [RBAC],
                            "resources": ["roles", "rolebindings"],
                            "verbs": ["create", "update"],
                        },
                        CM_READ,
                    ],
                },
            ),
            (
                BINDINGS,
                {
                    "metadata": {"name": "carol-writes-rbac"},
                    "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "rbac-writer"},
                    "subjects": [{"kind": "User", "name": "carol"}],
                },
            ),
        ):
            response = admin.post(path, json=body)
            assert response.status_code == 201, response.text
    with rbac_server.client(headers=bearer(CAROL)) as client:
        yield client


def _role(name: str, *rules: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": name}, "rules": list(rules)}


def _binding(name: str, kind: str, role: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "roleRef": {"apiGroup": RBAC, "kind": kind, "name": role},
        "subjects": [{"kind": "User", "name": "dave"}],
    }


def test_role_with_held_rules_is_created(carol: httpx.Client) -> None:
    response = carol.post(ROLES, json=_role("cm-get", {**CM_READ, "verbs": ["get"]}))
    assert response.status_code == 201, response.text


def test_role_with_rules_not_held_is_forbidden(carol: httpx.Client) -> None:
    secrets = {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}
    response = carol.post(ROLES, json=_role("secret-get", CM_READ, secrets))
    assert response.status_code == 403, response.text
    assert response.json()["message"] == (
        f'roles.{RBAC} "secret-get" is forbidden: user "carol" (groups=["system:authenticated"])'
        " is attempting to grant RBAC permissions not currently held:\n"
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}'
    )


def test_binding_to_a_role_whose_rules_are_held_is_created(carol: httpx.Client) -> None:
    carol.post(ROLES, json=_role("cm-list", {**CM_READ, "verbs": ["list"]}))
    response = carol.post(BINDINGS, json=_binding("dave-lists", "Role", "cm-list"))
    assert response.status_code == 201, response.text


def test_binding_to_cluster_admin_is_forbidden(carol: httpx.Client) -> None:
    response = carol.post(BINDINGS, json=_binding("dave-admin", "ClusterRole", "cluster-admin"))
    assert response.status_code == 403, response.text
    message = response.json()["message"]
    assert message.startswith(
        f'rolebindings.{RBAC} "dave-admin" is forbidden: user "carol"'
        ' (groups=["system:authenticated"]) is attempting to grant RBAC permissions not'
        " currently held:\n"
    )
    assert '{APIGroups:["*"], Resources:["*"], Verbs:["*"]}' in message


def test_escalation_is_checked_on_writes_with_a_timeout_too(carol: httpx.Client) -> None:
    # ?timeout= moves the write to a writer thread of its own; the user must follow it there.
    response = carol.post(
        f"{BINDINGS}?timeout=30s", json=_binding("dave-admin-t", "ClusterRole", "cluster-admin")
    )
    assert response.status_code == 403, response.text


def test_bind_verb_allows_binding_a_role_not_held(
    rbac_server: RunningServer, carol: httpx.Client
) -> None:
    with rbac_server.client(headers=bearer(ADMIN)) as admin:
        for path, body in (
            (
                ROLES,
                _role(
                    "binder",
                    {
                        "apiGroups": [RBAC],
                        "resources": ["clusterroles"],
                        "verbs": ["bind"],
                        "resourceNames": ["cluster-admin"],
                    },
                ),
            ),
            (
                BINDINGS,
                {
                    "metadata": {"name": "carol-binds"},
                    "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "binder"},
                    "subjects": [{"kind": "User", "name": "carol"}],
                },
            ),
        ):
            assert admin.post(path, json=body).status_code == 201
    response = carol.post(
        f"{BINDINGS}?dryRun=All", json=_binding("dave-admin", "ClusterRole", "cluster-admin")
    )
    assert response.status_code == 201, response.text


def test_masters_grant_anything(rbac_server: RunningServer) -> None:
    with rbac_server.client(headers=bearer(ADMIN)) as admin:
        response = admin.post(
            f"{BINDINGS}?dryRun=All", json=_binding("x", "ClusterRole", "cluster-admin")
        )
    assert response.status_code == 201, response.text
