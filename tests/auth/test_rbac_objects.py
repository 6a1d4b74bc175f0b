"""The RBAC kinds as served objects: discovery, defaults, validation, roleRef immutability,
the protobuf wire, and the bootstrap policy the server creates in RBAC mode."""

from __future__ import annotations

from typing import Any

import httpx

from kstore.codec.protobuf import ProtobufSerializer
from tests.auth.conftest import ADMIN, RBAC, bearer
from tests.server.harness import RunningServer

BASE = f"/apis/{RBAC}/v1"
PROTOBUF = "application/vnd.kubernetes.protobuf"


def _admin(server: RunningServer) -> httpx.Client:
    return server.client(headers=bearer(ADMIN))


def _invalid(response: httpx.Response) -> tuple[str, list[dict[str, Any]]]:
    assert response.status_code == 422, response.text
    status = response.json()
    assert status["reason"] == "Invalid"
    return status["message"], status["details"]["causes"]


def test_rbac_group_is_discoverable(rbac_server: RunningServer) -> None:
    with _admin(rbac_server) as client:
        groups = client.get("/apis").json()["groups"]
        resources = client.get(BASE).json()["resources"]
    [group] = [g for g in groups if g["name"] == RBAC]
    assert group["preferredVersion"]["groupVersion"] == f"{RBAC}/v1"
    assert {(r["name"], r["namespaced"], r["kind"]) for r in resources} == {
        ("roles", True, "Role"),
        ("rolebindings", True, "RoleBinding"),
        ("clusterroles", False, "ClusterRole"),
        ("clusterrolebindings", False, "ClusterRoleBinding"),
    }


def test_bootstrap_policy_exists(rbac_server: RunningServer) -> None:
    with _admin(rbac_server) as client:
        admin = client.get(f"{BASE}/clusterrolebindings/cluster-admin").json()
        discovery = client.get(f"{BASE}/clusterroles/system:discovery").json()
        public = client.get(f"{BASE}/clusterrolebindings/system:public-info-viewer").json()
    assert admin["roleRef"] == {"apiGroup": RBAC, "kind": "ClusterRole", "name": "cluster-admin"}
    assert admin["subjects"] == [{"apiGroup": RBAC, "kind": "Group", "name": "system:masters"}]
    assert admin["metadata"]["labels"] == {"kubernetes.io/bootstrapping": "rbac-defaults"}
    # RBAC strategies set no generation (unlike custom resources).
    assert "generation" not in admin["metadata"]
    assert "/apis/*" in discovery["rules"][0]["nonResourceURLs"]
    assert [s["name"] for s in public["subjects"]] == [
        "system:authenticated",
        "system:unauthenticated",
    ]


def test_binding_defaults_subject_and_role_ref_groups(rbac_server: RunningServer) -> None:
    with _admin(rbac_server) as client:
        created = client.post(
            f"{BASE}/namespaces/team-b/rolebindings",
            json={
                "metadata": {"name": "defaults"},
                "roleRef": {"kind": "ClusterRole", "name": "view"},
                "subjects": [
                    {"kind": "User", "name": "carol"},
                    {"kind": "Group", "name": "ops"},
                    {"kind": "ServiceAccount", "name": "builder"},
                ],
            },
        )
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["roleRef"]["apiGroup"] == RBAC
    assert [s.get("apiGroup") for s in body["subjects"]] == [RBAC, RBAC, None]


def test_role_rules_are_validated(rbac_server: RunningServer) -> None:
    with _admin(rbac_server) as client:
        response = client.post(
            f"{BASE}/namespaces/team-b/roles",
            json={
                "metadata": {"name": "bad"},
                "rules": [{"apiGroups": [""]}, {"verbs": ["get"], "nonResourceURLs": ["/x"]}],
            },
        )
    message, causes = _invalid(response)
    assert message.startswith(f'Role.{RBAC} "bad" is invalid: [')
    assert [(c["field"], c["message"]) for c in causes] == [
        ("rules[0].verbs", "Required value: verbs must contain at least one value"),
        ("rules[0].resources", "Required value: resource rules must supply at least one resource"),
        (
            "rules[1].nonResourceURLs",
            'Invalid value: ["/x"]: namespaced rules cannot apply to non-resource URLs',
        ),
    ]


def test_cluster_role_binding_needs_a_cluster_role_and_known_subjects(
    rbac_server: RunningServer,
) -> None:
    with _admin(rbac_server) as client:
        response = client.post(
            f"{BASE}/clusterrolebindings",
            json={
                "metadata": {"name": "bad"},
                "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "x"},
                "subjects": [
                    {"kind": "ServiceAccount", "name": "sa"},
                    {"kind": "Robot", "name": "r"},
                ],
            },
        )
    _, causes = _invalid(response)
    assert [(c["field"], c["message"]) for c in causes] == [
        ("roleRef.kind", 'Unsupported value: "Role": supported values: "ClusterRole"'),
        ("subjects[0].namespace", "Required value"),
        (
            "subjects[1].kind",
            'Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"',
        ),
    ]


def test_role_ref_cannot_change(rbac_server: RunningServer) -> None:
    path = f"{BASE}/namespaces/team-a/rolebindings/cm-reader"
    with _admin(rbac_server) as client:
        current = client.get(path).json()
        current["roleRef"]["name"] = "other"
        response = client.put(path, json=current)
        subjects_only = client.get(path).json()
        subjects_only["subjects"] = [*subjects_only["subjects"], {"kind": "User", "name": "dave"}]
        allowed = client.put(f"{path}?dryRun=All", json=subjects_only)
    message, causes = _invalid(response)
    assert message == (
        f'RoleBinding.{RBAC} "cm-reader" is invalid: roleRef: Invalid value: '
        f'{{"APIGroup":"{RBAC}","Kind":"Role","Name":"other"}}: cannot change roleRef'
    )
    assert [c["field"] for c in causes] == ["roleRef"]
    assert allowed.status_code == 200, allowed.text


def test_rbac_objects_on_the_protobuf_wire(rbac_server: RunningServer) -> None:
    path = f"{BASE}/namespaces/team-a/rolebindings/cm-reader"
    with _admin(rbac_server) as client:
        as_json = client.get(path).json()
        response = client.get(path, headers={"Accept": PROTOBUF})
        listed = client.get(f"{BASE}/clusterroles", headers={"Accept": PROTOBUF})
        created = client.post(
            f"{BASE}/namespaces/team-a/roles?dryRun=All",
            content=ProtobufSerializer().encode(
                {
                    "apiVersion": f"{RBAC}/v1",
                    "kind": "Role",
                    "metadata": {"name": "from-protobuf"},
                    "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}],
                }
            ),
            headers={"Content-Type": PROTOBUF},
        )
    assert response.headers["content-type"] == PROTOBUF
    assert response.content.startswith(b"k8s\x00")
    assert ProtobufSerializer().decode(response.content) == as_json
    assert listed.status_code == 200
    names = {i["metadata"]["name"] for i in ProtobufSerializer().decode(listed.content)["items"]}
    assert {"cluster-admin", "system:discovery"} <= names
    assert created.status_code == 201, created.text
    assert created.json()["rules"] == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]
