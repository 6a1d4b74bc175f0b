"""The watch-fed RBAC cache: what it allows follows the store, and it never refuses on its own.

Run in process over an LMDB registry (with and without the watch cache under it): bindings,
roles and cluster roles created, changed and deleted reach :meth:`PolicyCache.allows`, and
whatever the cache does not (yet) allow is still decided by the consistent authorizer.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kstore.api.kinds import builtin_scheme
from kstore.registry.interface import (
    CreateOptions,
    DeleteOptions,
    RequestContext,
    UpdateOptions,
    UserInfo,
)
from kstore.registry.registry import RegistryConfig, StoreRegistry, build_registry
from kstore.server.filters.authorization import Attributes
from kstore.server.filters.policy_cache import PolicyCache
from kstore.server.filters.rbac import RBACAuthorizer
from kstore.storage.lmdb import LmdbBackend, LmdbConfig

RBAC = "rbac.authorization.k8s.io"
ALICE = UserInfo(name="alice", groups=("system:authenticated",))
BOB = UserInfo(name="bob", groups=("ops", "system:authenticated"))


@pytest.fixture(params=[False, True], ids=["backend", "watch-cache"])
def registry(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreRegistry]:
    backend = LmdbBackend(
        LmdbConfig(path=tmp_path / "lmdb", durable=False, compaction_interval_s=0)
    )
    registry = build_registry(
        builtin_scheme(), backend, RegistryConfig(watch_cache=bool(request.param))
    )
    try:
        yield registry
    finally:
        registry.close()
        backend.close()


@pytest.fixture
def cache(registry: StoreRegistry) -> Iterator[PolicyCache]:
    cache = PolicyCache(registry)
    cache.start()
    assert cache.wait_synced(10)
    try:
        yield cache
    finally:
        cache.close()


def _create(registry: StoreRegistry, resource: str, namespace: str, obj: dict[str, Any]) -> None:
    kind = {
        "roles": "Role",
        "clusterroles": "ClusterRole",
        "rolebindings": "RoleBinding",
        "clusterrolebindings": "ClusterRoleBinding",
    }[resource]
    external = {"apiVersion": f"{RBAC}/v1", "kind": kind, **obj}
    registry.scheme.default(external)
    hub = registry.scheme.to_hub(external)
    registry.store(RBAC, resource).create(RequestContext(namespace=namespace), hub, CreateOptions())


def _namespace(registry: StoreRegistry, name: str) -> None:
    hub = registry.scheme.to_hub(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    )
    registry.store("", "namespaces").create(RequestContext(), hub, CreateOptions())


def _eventually(condition: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + 10
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _list_cm(user: UserInfo, namespace: str) -> Attributes:
    return Attributes(
        user=user,
        verb="list",
        resource_request=True,
        namespace=namespace,
        api_version="v1",
        resource="configmaps",
    )


def _reader_rules() -> list[dict[str, Any]]:
    return [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}]


def _binding(name: str, kind: str, role: str, subject: dict[str, str]) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "roleRef": {"apiGroup": RBAC, "kind": kind, "name": role},
        "subjects": [subject],
    }


def test_role_binding_reaches_the_cache_and_its_deletion_too(
    registry: StoreRegistry, cache: PolicyCache
) -> None:
    _namespace(registry, "ns1")
    attributes = _list_cm(ALICE, "ns1")
    assert not cache.allows(attributes)
    _create(registry, "roles", "ns1", {"metadata": {"name": "reader"}, "rules": _reader_rules()})
    _create(
        registry,
        "rolebindings",
        "ns1",
        _binding("alice-reads", "Role", "reader", {"kind": "User", "name": "alice"}),
    )
    assert _eventually(lambda: cache.allows(attributes))
    assert not cache.allows(_list_cm(ALICE, "other"))
    assert not cache.allows(_list_cm(BOB, "ns1"))
    registry.store(RBAC, "rolebindings").delete(
        RequestContext(namespace="ns1"), "alice-reads", DeleteOptions()
    )
    assert _eventually(lambda: not cache.allows(attributes))


def test_cluster_binding_to_a_group_and_a_changed_role(
    registry: StoreRegistry, cache: PolicyCache
) -> None:
    _create(registry, "clusterroles", "", {"metadata": {"name": "ops"}, "rules": []})
    _create(
        registry,
        "clusterrolebindings",
        "",
        _binding("ops", "ClusterRole", "ops", {"kind": "Group", "name": "ops"}),
    )
    attributes = _list_cm(BOB, "anywhere")
    time.sleep(0.2)
    assert not cache.allows(attributes)
    store = registry.store(RBAC, "clusterroles")

    def grant(current: dict[str, Any]) -> dict[str, Any]:
        return {**current, "rules": _reader_rules()}

    store.update(RequestContext(), "ops", grant, UpdateOptions())
    assert _eventually(lambda: cache.allows(attributes))
    assert not cache.allows(_list_cm(ALICE, "anywhere"))


def test_what_the_cache_has_not_seen_is_decided_by_the_store(registry: StoreRegistry) -> None:
    # A cache that was never started knows nothing: the authorizer still allows what the
    # stored policy grants, on its consistent path.
    authorizer = RBACAuthorizer(registry, PolicyCache(registry))
    _namespace(registry, "ns2")
    _create(registry, "roles", "ns2", {"metadata": {"name": "reader"}, "rules": _reader_rules()})
    _create(
        registry,
        "rolebindings",
        "ns2",
        _binding("alice-reads", "Role", "reader", {"kind": "User", "name": "alice"}),
    )
    attributes = _list_cm(ALICE, "ns2")
    assert not authorizer.allows_without_blocking(attributes)
    assert authorizer.authorize(attributes).allowed
