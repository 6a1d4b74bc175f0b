"""Privilege-escalation prevention, in process: rule coverage as ``policy_comparator.go``, and
the admission hook over an LMDB registry for a user given in the request context."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kstore.api.kinds import builtin_scheme
from kstore.errors import Forbidden, NotFound
from kstore.registry.interface import CreateOptions, RequestContext, UserInfo
from kstore.registry.registry import RegistryConfig, StoreRegistry, build_registry
from kstore.server.filters.rbac import RBACAuthorizer
from kstore.server.filters.rbac_escalation import covers, escalation_check
from kstore.storage.lmdb import LmdbBackend, LmdbConfig

RBAC = "rbac.authorization.k8s.io"
CM_READ = {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}
CAROL = UserInfo(name="carol", groups=("system:authenticated",))
ROOT = UserInfo(name="root", groups=("system:masters", "system:authenticated"))
_KINDS = {
    "roles": "Role",
    "clusterroles": "ClusterRole",
    "rolebindings": "RoleBinding",
    "clusterrolebindings": "ClusterRoleBinding",
}


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[StoreRegistry]:
    backend = LmdbBackend(
        LmdbConfig(path=tmp_path / "lmdb", durable=False, compaction_interval_s=0)
    )
    registry = build_registry(builtin_scheme(), backend, RegistryConfig(watch_cache=False))
    registry.add_admission(validating=escalation_check(RBACAuthorizer(registry)))
    try:
        yield registry
    finally:
        registry.close()
        backend.close()


def _create(
    registry: StoreRegistry,
    resource: str,
    obj: dict[str, Any],
    *,
    namespace: str = "",
    user: UserInfo | None = None,
) -> None:
    external = {"apiVersion": f"{RBAC}/v1", "kind": _KINDS[resource], **obj}
    registry.scheme.default(external)
    registry.store(RBAC, resource).create(
        RequestContext(namespace=namespace, user=user),
        registry.scheme.to_hub(external),
        CreateOptions(),
    )


def _setup(registry: StoreRegistry) -> None:
    """Namespace ns with carol allowed to write roles and bindings and read ConfigMaps there."""
    ns = registry.scheme.to_hub(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}}
    )
    registry.store("", "namespaces").create(RequestContext(), ns, CreateOptions())
    writer = {"apiGroups": [RBAC], "resources": ["roles", "rolebindings"], "verbs": ["create"]}
    _create(
        registry, "roles", {"metadata": {"name": "w"}, "rules": [writer, CM_READ]}, namespace="ns"
    )
    _create(
        registry,
        "rolebindings",
        {
            "metadata": {"name": "w"},
            "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "w"},
            "subjects": [{"kind": "User", "name": "carol"}],
        },
        namespace="ns",
    )


def _binding(name: str, kind: str, role: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "roleRef": {"apiGroup": RBAC, "kind": kind, "name": role},
        "subjects": [{"kind": "User", "name": "dave"}],
    }


def test_role_within_held_rules_is_created(registry: StoreRegistry) -> None:
    _setup(registry)
    _create(
        registry,
        "roles",
        {"metadata": {"name": "r"}, "rules": [CM_READ]},
        namespace="ns",
        user=CAROL,
    )


def test_role_beyond_held_rules_is_forbidden(registry: StoreRegistry) -> None:
    _setup(registry)
    secrets = {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}
    with pytest.raises(Forbidden) as error:
        _create(
            registry,
            "roles",
            {"metadata": {"name": "r"}, "rules": [secrets]},
            namespace="ns",
            user=CAROL,
        )
    assert error.value.message == (
        f'roles.{RBAC} "r" is forbidden: user "carol" (groups=["system:authenticated"]) is'
        " attempting to grant RBAC permissions not currently held:\n"
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}'
    )


def test_binding_to_a_role_not_held_is_forbidden_and_to_a_missing_role_not_found(
    registry: StoreRegistry,
) -> None:
    _setup(registry)
    _create(
        registry,
        "clusterroles",
        {
            "metadata": {"name": "big"},
            "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}],
        },
    )
    with pytest.raises(Forbidden):
        _create(
            registry,
            "rolebindings",
            _binding("b", "ClusterRole", "big"),
            namespace="ns",
            user=CAROL,
        )
    with pytest.raises(NotFound):
        _create(
            registry, "rolebindings", _binding("m", "Role", "missing"), namespace="ns", user=CAROL
        )
    _create(registry, "rolebindings", _binding("w2", "Role", "w"), namespace="ns", user=CAROL)


def test_masters_and_user_less_calls_are_not_checked(registry: StoreRegistry) -> None:
    _setup(registry)
    _create(
        registry,
        "clusterroles",
        {
            "metadata": {"name": "big"},
            "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}],
        },
        user=ROOT,
    )
    _create(registry, "rolebindings", _binding("b", "ClusterRole", "big"), namespace="ns")


@pytest.mark.parametrize(
    ("held", "granted", "missing"),
    [
        ([CM_READ], [{**CM_READ, "verbs": ["get"]}], 0),
        ([CM_READ], [{**CM_READ, "verbs": ["get", "watch"]}], 1),
        ([{**CM_READ, "verbs": ["*"]}], [{**CM_READ, "verbs": ["delete", "patch"]}], 0),
        ([{**CM_READ, "resources": ["*/status"]}], [{**CM_READ, "resources": ["pods/status"]}], 0),
        ([{**CM_READ, "resourceNames": ["a"]}], [CM_READ], 2),
        ([CM_READ], [{**CM_READ, "resourceNames": ["a", "b"]}], 0),
        (
            [{"verbs": ["get"], "nonResourceURLs": ["/api/*"]}],
            [{"verbs": ["get"], "nonResourceURLs": ["/api/v1", "/apis"]}],
            1,
        ),
    ],
    ids=[
        "subset",
        "one-verb-more",
        "verb-star",
        "subresource-star",
        "names-held",
        "names-granted",
        "urls",
    ],
)
def test_covers_breaks_rules_down(
    held: list[dict[str, Any]], granted: list[dict[str, Any]], missing: int
) -> None:
    assert len(covers(held, granted)) == missing
