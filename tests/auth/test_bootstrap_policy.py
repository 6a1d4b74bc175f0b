"""The bootstrap policy at start: created once, then reconciled (missing rules and subjects
added back, additions kept) unless an object opts out with ``autoupdate: "false"``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kstore.api.kinds import builtin_scheme
from kstore.registry.interface import RequestContext, UpdateOptions
from kstore.registry.registry import RegistryConfig, StoreRegistry, build_registry
from kstore.server.filters.bootstrap_policy import ensure_bootstrap_policy
from kstore.storage.lmdb import LmdbBackend, LmdbConfig

RBAC = "rbac.authorization.k8s.io"


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[StoreRegistry]:
    backend = LmdbBackend(
        LmdbConfig(path=tmp_path / "lmdb", durable=False, compaction_interval_s=0)
    )
    registry = build_registry(builtin_scheme(), backend, RegistryConfig(watch_cache=False))
    try:
        yield registry
    finally:
        registry.close()
        backend.close()


def _edit(registry: StoreRegistry, resource: str, name: str, change: Any) -> None:
    def updated(current: dict[str, Any]) -> dict[str, Any]:
        out = {**current, "metadata": dict(current["metadata"])}
        change(out)
        return out

    registry.store(RBAC, resource).update(RequestContext(), name, updated, UpdateOptions())


def _get(registry: StoreRegistry, resource: str, name: str) -> dict[str, Any]:
    return registry.store(RBAC, resource).get(RequestContext(), name)


def test_created_once_then_left_alone(registry: StoreRegistry) -> None:
    created = ensure_bootstrap_policy(registry)
    assert "clusterroles/cluster-admin" in created
    assert "clusterrolebindings/system:public-info-viewer" in created
    version = _get(registry, "clusterroles", "system:discovery")["metadata"]["resourceVersion"]
    assert ensure_bootstrap_policy(registry) == []
    after = _get(registry, "clusterroles", "system:discovery")["metadata"]["resourceVersion"]
    assert after == version


def test_missing_rules_and_subjects_are_added_back_and_additions_kept(
    registry: StoreRegistry,
) -> None:
    ensure_bootstrap_policy(registry)
    extra = {"verbs": ["get"], "nonResourceURLs": ["/custom"]}

    def narrow(role: dict[str, Any]) -> None:
        urls = [u for u in role["rules"][0]["nonResourceURLs"] if u != "/version"]
        role["rules"] = [{**role["rules"][0], "nonResourceURLs": urls}, extra]

    _edit(registry, "clusterroles", "system:discovery", narrow)
    _edit(
        registry,
        "clusterrolebindings",
        "system:public-info-viewer",
        lambda b: b.update(subjects=[]),
    )
    assert ensure_bootstrap_policy(registry) == [
        "clusterroles/system:discovery",
        "clusterrolebindings/system:public-info-viewer",
    ]
    rules = _get(registry, "clusterroles", "system:discovery")["rules"]
    assert extra in rules
    assert any("/version" in r.get("nonResourceURLs", []) for r in rules)
    subjects = _get(registry, "clusterrolebindings", "system:public-info-viewer")["subjects"]
    assert [s["name"] for s in subjects] == ["system:authenticated", "system:unauthenticated"]


def test_autoupdate_false_opts_out(registry: StoreRegistry) -> None:
    ensure_bootstrap_policy(registry)

    def opt_out(role: dict[str, Any]) -> None:
        role["metadata"]["annotations"] = {"rbac.authorization.kubernetes.io/autoupdate": "false"}
        role["rules"] = []

    _edit(registry, "clusterroles", "system:public-info-viewer", opt_out)
    assert ensure_bootstrap_policy(registry) == []
    assert _get(registry, "clusterroles", "system:public-info-viewer")["rules"] == []
