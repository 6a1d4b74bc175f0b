"""What the generic store caches or shortcuts still behaves as without the shortcut.

- The field manager's inputs are kept per (version, subresource, reset fields): a strategy
  whose reset fields change is followed, and each subresource keeps its own.
- Generated uids are random version-4 UUIDs written as ``str(uuid.uuid4())`` writes them;
  creation and managedFields timestamps are the current second.
- The namespace lookup served from the cache still sees a namespace deleted a moment ago.
- Skipping empty admission chains changes nothing for a chain that gains hooks later.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from kstore.api.scheme import KindDefinition, Scheme
from kstore.errors import Forbidden
from kstore.registry.interface import (
    AdmissionAttributes,
    CreateOptions,
    DeleteOptions,
    UpdateOptions,
)
from kstore.registry.registry import StoreRegistry
from kstore.registry.store import new_uid
from kstore.registry.strategies.base import Strategy
from kstore.storage.lmdb import LmdbBackend
from tests.registry.conftest import make_registry
from tests.registry.objects import ctx, hub


class _SwitchableStrategy(Strategy):
    """A custom kind's strategy whose reset fields an embedder may change at any time."""

    resets: frozenset[tuple[str, ...]] = frozenset()

    def reset_fields(self, subresource: str) -> frozenset[tuple[str, ...]]:
        return self.resets


def _widget(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name},
        "spec": {"size": 1},
        "status": {"ready": True},
    }


def _owned(obj: dict[str, Any]) -> dict[str, Any]:
    (entry,) = obj["metadata"]["managedFields"]
    fields: dict[str, Any] = entry["fieldsV1"]
    return fields


def test_the_field_manager_follows_reset_fields_that_change(
    scheme: Scheme, backend: LmdbBackend
) -> None:
    strategies: list[_SwitchableStrategy] = []

    def factory(definition: KindDefinition, ttl: int) -> Strategy:
        strategy = _SwitchableStrategy(definition)
        strategies.append(strategy)
        return strategy

    registry = make_registry(scheme, backend, strategies={("example.com", "Widget"): factory})
    try:
        widgets = registry.store("example.com", "widgets")
        first = widgets.create(
            ctx(api_version="example.com/v1"), hub(scheme, _widget("a")), _opts()
        )
        assert "f:spec" in _owned(first.object)
        (strategy,) = strategies
        strategy.resets = frozenset({("spec",)})
        second = widgets.create(
            ctx(api_version="example.com/v1"), hub(scheme, _widget("b")), _opts()
        )
        assert "f:spec" not in _owned(second.object)
        strategy.resets = frozenset()
        third = widgets.create(
            ctx(api_version="example.com/v1"), hub(scheme, _widget("c")), _opts()
        )
        assert _owned(third.object) == _owned(first.object)
    finally:
        registry.close()


def _opts() -> CreateOptions:
    return CreateOptions(field_manager="tester")


def test_status_and_main_resource_writes_own_their_own_fields(registry: StoreRegistry) -> None:
    scheme = registry.scheme
    deployments = registry.store("apps", "deployments")
    c = ctx(api_version="apps/v1")
    body = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }
    created = deployments.create(c, hub(scheme, body), CreateOptions(field_manager="main"))

    def with_status(current: dict[str, Any]) -> dict[str, Any]:
        out = dict(current)
        out["status"] = {"replicas": 3}
        return out

    deployments.update(
        c, "web", with_status, UpdateOptions(field_manager="ctl", subresource="status")
    )

    def with_replicas(current: dict[str, Any]) -> dict[str, Any]:
        out = dict(current)
        out["spec"] = {**current["spec"], "replicas": 5}
        return out

    deployments.update(c, "web", with_replicas, UpdateOptions(field_manager="main"))
    stored = deployments.get(c, "web")
    entries = {e["manager"]: e for e in stored["metadata"]["managedFields"]}
    assert entries["ctl"]["subresource"] == "status"
    assert set(entries["ctl"]["fieldsV1"]) == {"f:status"}
    assert "f:status" not in entries["main"]["fieldsV1"]
    assert "f:replicas" in entries["main"]["fieldsV1"]["f:spec"]
    assert created.object["metadata"]["uid"] == stored["metadata"]["uid"]


def test_generated_uids_are_random_version_4_uuids() -> None:
    uids = {new_uid() for _ in range(2000)}
    assert len(uids) == 2000
    for text in list(uids)[:200]:
        parsed = uuid.UUID(text)
        assert parsed.version == 4
        assert parsed.variant == uuid.RFC_4122
        assert str(parsed) == text


def test_creation_and_field_manager_times_are_the_current_second(
    registry: StoreRegistry,
) -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    created = registry.store("", "configmaps").create(
        ctx(),
        hub(
            registry.scheme,
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "t"},
                "data": {"a": "b"},
            },
        ),
        CreateOptions(field_manager="m"),
    )
    after = datetime.now(UTC)
    meta = created.object["metadata"]
    for stamp in (meta["creationTimestamp"], meta["managedFields"][0]["time"]):
        assert stamp.endswith("Z") and len(stamp) == len("2026-01-01T00:00:00Z")
        moment = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        assert before <= moment <= after


def test_a_namespace_deleted_a_moment_ago_refuses_new_content(
    scheme: Scheme, backend: LmdbBackend
) -> None:
    registry = make_registry(scheme, backend, watch_cache=True)
    try:
        namespaces = registry.store("", "namespaces")
        cms = registry.store("", "configmaps")
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "brief"}}
        namespaces.create(ctx(""), hub(scheme, body), CreateOptions())
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}
        cms.create(ctx("brief"), hub(scheme, cm), CreateOptions())
        namespaces.delete(ctx(""), "brief", DeleteOptions())
        cm2 = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}}
        try:
            cms.create(ctx("brief"), hub(scheme, cm2), CreateOptions())
        except Forbidden as exc:
            assert "because it is being terminated" in exc.message
        else:
            raise AssertionError("a create in a terminating namespace was admitted")
    finally:
        registry.close()


def test_hooks_added_after_the_first_writes_see_later_writes(registry: StoreRegistry) -> None:
    cms = registry.store("", "configmaps")
    scheme = registry.scheme
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "before"}}
    cms.create(ctx(), hub(scheme, cm), CreateOptions())
    seen: list[str] = []

    def label(attributes: AdmissionAttributes) -> None:
        assert attributes.object is not None
        attributes.object["metadata"].setdefault("labels", {})["admitted"] = "yes"
        seen.append(attributes.name)

    registry.add_admission(mutating=label)
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "after"}}
    created = cms.create(ctx(), hub(scheme, cm), CreateOptions())
    assert seen == ["after"]
    assert created.object["metadata"]["labels"] == {"admitted": "yes"}
