"""Real ``kubectl auth can-i`` and ``kubectl auth whoami`` against ``kstore serve``: the
answers RBAC gives (with and without a RoleBinding), kubectl's exit codes (0 yes, 1 no), and
the default ``AlwaysAllow`` mode saying yes to everything.

The RBAC server serves TLS (kubectl sends a token only over HTTPS) with the token file and
policy of :mod:`tests.auth.conftest`.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import Iterator

import pytest

from tests.auth.conftest import (
    ADMIN,
    ALICE,
    BOB,
    CAROL,
    bearer,
)
from tests.auth.test_kubectl_auth import TokenKubectl, tls_rbac_kubectl
from tests.clients.kubectl import Kubectl, kubectl_binary
from tests.server.harness import RunningServer, start_server

RBAC = "rbac.authorization.k8s.io"


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[TokenKubectl, RunningServer]]:
    with tls_rbac_kubectl(tmp_path_factory.mktemp("kubectl-can-i")) as served:
        yield served


@pytest.fixture(scope="module")
def k(served: tuple[TokenKubectl, RunningServer]) -> TokenKubectl:
    return served[0]


def test_can_i_says_yes_with_exit_zero_for_what_a_role_binding_grants(k: TokenKubectl) -> None:
    result = k.run(ALICE, "auth", "can-i", "list", "configmaps", "-n", "team-a")
    assert (result.code, result.stdout.strip()) == (0, "yes"), result


def test_can_i_says_no_with_exit_one_without_a_binding(k: TokenKubectl) -> None:
    result = k.run(ALICE, "auth", "can-i", "create", "pods", "-n", "team-a")
    assert (result.code, result.stdout.strip()) == (1, "no"), result
    result = k.run(CAROL, "auth", "can-i", "list", "configmaps", "-n", "team-a")
    assert (result.code, result.stdout.strip()) == (1, "no"), result


def test_can_i_follows_a_new_role_binding(served: tuple[TokenKubectl, RunningServer]) -> None:
    k, server = served
    before = k.run(CAROL, "auth", "can-i", "create", "pods", "-n", "team-b")
    assert (before.code, before.stdout.strip()) == (1, "no"), before
    rbac = f"/apis/{RBAC}/v1/namespaces/team-b"
    with server.client(verify=ssl.create_default_context(cafile=str(k.ca))) as client:
        role = {
            "metadata": {"name": "pod-maker"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["create"]}],
        }
        binding = {
            "metadata": {"name": "carol-makes-pods"},
            "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "pod-maker"},
            "subjects": [{"kind": "User", "name": "carol"}],
        }
        for path, body in ((f"{rbac}/roles", role), (f"{rbac}/rolebindings", binding)):
            response = client.post(path, json=body, headers=bearer(ADMIN))
            assert response.status_code == 201, response.text
    after = k.run(CAROL, "auth", "can-i", "create", "pods", "-n", "team-b")
    assert (after.code, after.stdout.strip()) == (0, "yes"), after
    # The binding is namespaced: elsewhere carol still may not.
    elsewhere = k.run(CAROL, "auth", "can-i", "create", "pods", "-n", "team-a")
    assert (elsewhere.code, elsewhere.stdout.strip()) == (1, "no"), elsewhere


def test_can_i_asks_about_a_named_object(k: TokenKubectl) -> None:
    # alice may update cm1 only (a resourceNames rule).
    yes = k.run(ALICE, "auth", "can-i", "update", "configmaps/cm1", "-n", "team-a")
    assert (yes.code, yes.stdout.strip()) == (0, "yes"), yes
    no = k.run(ALICE, "auth", "can-i", "update", "configmaps/cm2", "-n", "team-a")
    assert (no.code, no.stdout.strip()) == (1, "no"), no


def test_can_i_on_a_non_resource_url(k: TokenKubectl) -> None:
    assert k.run(CAROL, "auth", "can-i", "get", "/healthz").stdout.strip() == "yes"
    result = k.run(CAROL, "auth", "can-i", "get", "/metrics")
    assert (result.code, result.stdout.strip()) == (1, "no"), result


def test_masters_can_do_anything(k: TokenKubectl) -> None:
    assert k.ok(ADMIN, "auth", "can-i", "*", "*", "--all-namespaces").strip() == "yes"


def test_quiet_can_i_answers_by_exit_code_alone(k: TokenKubectl) -> None:
    result = k.run(ALICE, "auth", "can-i", "delete", "namespaces", "--quiet")
    assert (result.code, result.stdout) == (1, ""), result


def test_whoami_prints_the_token_user(k: TokenKubectl) -> None:
    review = json.loads(k.ok(BOB, "auth", "whoami", "-o", "json"))
    assert review["apiVersion"] == "authentication.k8s.io/v1"
    assert review["kind"] == "SelfSubjectReview"
    assert review["status"]["userInfo"] == {
        "username": "bob",
        "uid": "uid-bob",
        "groups": ["dev", "qa", "system:authenticated"],
    }


def test_whoami_table_names_the_user(k: TokenKubectl) -> None:
    out = k.ok(ALICE, "auth", "whoami")
    rows = [line.split() for line in out.splitlines()]
    assert ["Username", "alice"] in rows
    assert ["UID", "uid-alice"] in rows


@pytest.fixture(scope="module")
def open_kubectl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    """The default mode, AlwaysAllow, without credentials (plain HTTP)."""
    root = tmp_path_factory.mktemp("kubectl-always-allow")
    server = start_server(root / "data")
    try:
        yield Kubectl(kubectl_binary(), root / "home", server.url)
    finally:
        server.stop()


def test_always_allow_says_yes(open_kubectl: Kubectl) -> None:
    assert open_kubectl.ok("auth", "can-i", "create", "pods").strip() == "yes"
    assert open_kubectl.ok("auth", "can-i", "delete", "nodes", "--all-namespaces").strip() == (
        "yes"
    )


def test_whoami_without_credentials_is_anonymous(open_kubectl: Kubectl) -> None:
    review = json.loads(open_kubectl.ok("auth", "whoami", "-o", "json"))
    assert review["status"]["userInfo"] == {
        "username": "system:anonymous",
        "groups": ["system:unauthenticated"],
    }


def _rows(out: str) -> list[list[str]]:
    return [line.split() for line in out.splitlines()]


def test_can_i_list_shows_the_bound_rules(k: TokenKubectl) -> None:
    rows = _rows(k.ok(ALICE, "auth", "can-i", "--list", "-n", "team-a"))
    assert rows[0] == ["Resources", "Non-Resource", "URLs", "Resource", "Names", "Verbs"]
    assert ["configmaps", "[]", "[]", "[get", "list", "watch]"] in rows
    assert ["configmaps", "[]", "[cm1]", "[update", "patch", "delete]"] in rows
    assert ["selfsubjectaccessreviews.authorization.k8s.io", "[]", "[]", "[create]"] in rows
    # Non-resource rules have an empty first column (system:public-info-viewer's /healthz).
    assert ["[/healthz]", "[]", "[get]"] in rows
    assert ["pods/status", "[]", "[]", "[get]"] in rows


def test_can_i_list_in_another_namespace_lacks_the_role(k: TokenKubectl) -> None:
    rows = _rows(k.ok(ALICE, "auth", "can-i", "--list", "-n", "team-b"))
    assert not any(r[0] == "configmaps" for r in rows)


def test_always_allow_lists_everything(open_kubectl: Kubectl) -> None:
    rows = _rows(open_kubectl.ok("auth", "can-i", "--list"))
    assert ["*.*", "[]", "[]", "[*]"] in rows
    assert ["[*]", "[]", "[*]"] in rows


_SUBJECT_ACCESS_REVIEW = """\
apiVersion: authorization.k8s.io/v1
kind: SubjectAccessReview
spec:
  user: alice
  resourceAttributes: {namespace: team-a, verb: list, resource: configmaps}
"""


def test_create_subject_access_review_from_a_file(k: TokenKubectl) -> None:
    # kubectl's client-side validation of a create-only kind needs the OpenAPI v2 document,
    # which kstore does not serve: --validate=false sends it as is.
    args = ("create", "-f", "-", "-o", "json", "--validate=false")
    result = k.kubectl.run(
        "--certificate-authority", str(k.ca), "--token", ADMIN, *args, stdin=_SUBJECT_ACCESS_REVIEW
    )
    assert result.code == 0, result
    review = json.loads(result.stdout)
    # alice's RoleBinding in team-a grants it (the review is about her, asked by admin).
    assert review["status"] == {
        "allowed": True,
        "reason": 'RBAC: allowed by RoleBinding "cm-reader/team-a" of Role "cm-reader" to User '
        '"alice"',
    }
    assert review["spec"]["user"] == "alice"


def test_access_review_reason_names_a_service_account_binding(
    served: tuple[TokenKubectl, RunningServer],
) -> None:
    k, server = served
    body = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": "system:serviceaccount:team-a:robot",
            "resourceAttributes": {"namespace": "team-a", "verb": "get", "resource": "configmaps"},
        },
    }
    with server.client(verify=ssl.create_default_context(cafile=str(k.ca))) as client:
        response = client.post(
            "/apis/authorization.k8s.io/v1/subjectaccessreviews", json=body, headers=bearer(ADMIN)
        )
    assert response.status_code == 201, response.text
    # The subject has no namespace: the binding's own is named.
    assert response.json()["status"] == {
        "allowed": True,
        "reason": 'RBAC: allowed by RoleBinding "cm-reader/team-a" of Role "cm-reader" to '
        'ServiceAccount "robot/team-a"',
    }


# ------------------------------------------------------------------- --as (impersonation)


def test_as_and_as_group_act_as_another_user(k: TokenKubectl) -> None:
    review = json.loads(
        k.ok(ADMIN, "auth", "whoami", "--as", "alice", "--as-group", "dev", "-o", "json")
    )
    assert review["status"]["userInfo"] == {
        "username": "alice",
        "groups": ["dev", "system:authenticated"],
    }
    # can-i answers for the impersonated user: alice's RoleBinding, not admin's masters.
    yes = k.run(ADMIN, "auth", "can-i", "list", "configmaps", "-n", "team-a", "--as", "alice")
    assert (yes.code, yes.stdout.strip()) == (0, "yes"), yes
    no = k.run(ADMIN, "auth", "can-i", "create", "pods", "-n", "team-a", "--as", "alice")
    assert (no.code, no.stdout.strip()) == (1, "no"), no


def test_as_without_the_right_to_impersonate_is_forbidden(k: TokenKubectl) -> None:
    result = k.run(ALICE, "get", "configmaps", "-n", "team-a", "--as", "bob")
    assert result.code == 1
    assert result.stderr.strip() == (
        'Error from server (Forbidden): users "bob" is forbidden: User "alice" cannot '
        'impersonate resource "users" in API group "" at the cluster scope'
    )


def test_always_allow_lets_anybody_act_as_anybody(open_kubectl: Kubectl) -> None:
    review = json.loads(open_kubectl.ok("auth", "whoami", "--as", "alice", "-o", "json"))
    assert review["status"]["userInfo"] == {
        "username": "alice",
        "groups": ["system:authenticated"],
    }
