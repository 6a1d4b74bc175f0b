"""Namespaces: the system ones exist, deleting one empties and then removes it."""

from __future__ import annotations

from typing import Any

import pytest

from kstore.api.scheme import Scheme
from kstore.errors import Forbidden, NotFound
from kstore.registry.interface import CreateOptions, DeleteOptions, UpdateOptions
from kstore.registry.registry import StoreRegistry
from kstore.storage.interface import ListOptions
from kstore.storage.lmdb import LmdbBackend
from tests.registry.conftest import make_registry
from tests.registry.objects import changed, config_map, ctx, deployment, hub, pod, wait_for

NS = ctx("")


def _namespace(registry: StoreRegistry, scheme: Scheme, name: str) -> dict[str, Any]:
    obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    return registry.store("", "namespaces").create(NS, hub(scheme, obj), CreateOptions()).object


def _gone(registry: StoreRegistry, name: str) -> bool:
    try:
        registry.store("", "namespaces").get(NS, name)
    except NotFound:
        return True
    return False


def test_system_namespaces_exist_from_the_start(registry: StoreRegistry) -> None:
    names = [
        o["metadata"]["name"]
        for o in registry.store("", "namespaces").list(NS, ListOptions()).items
    ]
    assert names == ["default", "kube-node-lease", "kube-public", "kube-system"]


def test_system_namespaces_are_created_once(scheme: Scheme, backend: LmdbBackend) -> None:
    first = make_registry(scheme, backend)
    uid = first.store("", "namespaces").get(NS, "default")["metadata"]["uid"]
    first.close()
    second = make_registry(scheme, backend)
    try:
        assert second.store("", "namespaces").get(NS, "default")["metadata"]["uid"] == uid
    finally:
        second.close()


@pytest.mark.parametrize("name", ["default", "kube-system", "kube-public"])
def test_immortal_namespaces_cannot_be_deleted(registry: StoreRegistry, name: str) -> None:
    with pytest.raises(Forbidden) as caught:
        registry.store("", "namespaces").delete(NS, name, DeleteOptions())
    assert caught.value.message == (
        f'namespaces "{name}" is forbidden: this namespace may not be deleted'
    )


def test_deleting_a_namespace_marks_it_terminating(scheme: Scheme, backend: LmdbBackend) -> None:
    # A long retry keeps the finalizer from finishing while the test looks at the mark.
    registry = make_registry(scheme, backend, namespace_retry_seconds=60.0)
    try:
        _namespace(registry, scheme, "team")
        held = config_map("held")
        held["metadata"]["finalizers"] = ["example.com/hold"]
        registry.store("", "configmaps").create(ctx("team"), hub(scheme, held), CreateOptions())
        result = registry.store("", "namespaces").delete(NS, "team", DeleteOptions())
        assert result.deleted is False
        assert result.object["status"]["phase"] == "Terminating"
        assert result.object["metadata"]["deletionTimestamp"]
        assert result.object["spec"]["finalizers"] == ["kubernetes"]
    finally:
        registry.close()


def test_deleting_a_namespace_removes_its_content_then_the_namespace(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    _namespace(registry, scheme, "team")
    team = ctx("team")
    registry.store("", "configmaps").create(team, hub(scheme, config_map("c")), CreateOptions())
    registry.store("", "pods").create(team, hub(scheme, pod("p")), CreateOptions())
    registry.store("apps", "deployments").create(
        ctx("team", "apps/v1"), hub(scheme, deployment()), CreateOptions()
    )
    other = (
        registry.store("", "configmaps")
        .create(ctx(), hub(scheme, config_map("c")), CreateOptions())
        .object
    )
    registry.store("", "namespaces").delete(NS, "team", DeleteOptions())
    assert wait_for(lambda: _gone(registry, "team"))
    for group, plural in (("", "configmaps"), ("", "pods"), ("apps", "deployments")):
        assert registry.store(group, plural).list(team, ListOptions()).items == []
    assert registry.store("", "configmaps").get(ctx(), "c") == other


def test_namespace_waits_for_content_finalizers(registry: StoreRegistry, scheme: Scheme) -> None:
    _namespace(registry, scheme, "team")
    held = config_map("held")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    configmaps = registry.store("", "configmaps")
    configmaps.create(ctx("team"), hub(scheme, held), CreateOptions())
    registry.store("", "namespaces").delete(NS, "team", DeleteOptions())
    assert wait_for(
        lambda: bool(configmaps.get(ctx("team"), "held")["metadata"].get("deletionTimestamp"))
    )
    assert not wait_for(lambda: _gone(registry, "team"), timeout=0.3)
    conditions = {
        c["type"]: c
        for c in registry.store("", "namespaces").get(NS, "team")["status"]["conditions"]
    }
    assert conditions["NamespaceContentRemaining"]["status"] == "True"
    assert conditions["NamespaceContentRemaining"]["message"] == (
        "Some resources are remaining: configmaps. has 1 resource instances"
    )
    assert conditions["NamespaceFinalizersRemaining"]["message"] == (
        "Some finalizers are remaining: example.com/hold in 1 resource instances"
    )
    assert conditions["NamespaceDeletionContentFailure"]["status"] == "False"
    configmaps.update(
        ctx("team"), "held", changed(lambda o: o["metadata"].pop("finalizers")), UpdateOptions()
    )
    assert wait_for(lambda: _gone(registry, "team"))


def test_namespace_deletion_force_deletes_pods_whose_grace_period_ran_out(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    _namespace(registry, scheme, "team")
    pods = registry.store("", "pods")
    pods.create(
        ctx("team"),
        hub(scheme, pod("p", nodeName="n", terminationGracePeriodSeconds=1)),
        CreateOptions(),
    )
    registry.store("", "namespaces").delete(NS, "team", DeleteOptions())
    assert wait_for(lambda: _gone(registry, "team"), timeout=8.0)


def test_orphan_propagation_on_a_namespace_is_honoured_then_cleared(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    _namespace(registry, scheme, "team")
    result = registry.store("", "namespaces").delete(
        NS, "team", DeleteOptions(propagation_policy="Orphan")
    )
    assert result.object["metadata"]["finalizers"] == ["orphan"]
    assert wait_for(lambda: _gone(registry, "team"))


def test_a_namespace_marked_before_a_restart_is_finished_after_it(
    scheme: Scheme, backend: LmdbBackend
) -> None:
    first = make_registry(scheme, backend, namespace_retry_seconds=60.0)
    _namespace(first, scheme, "team")
    held = config_map("held")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    first.store("", "configmaps").create(ctx("team"), hub(scheme, held), CreateOptions())
    first.store("", "namespaces").delete(NS, "team", DeleteOptions())
    first.store("", "configmaps").update(
        ctx("team"), "held", changed(lambda o: o["metadata"].pop("finalizers")), UpdateOptions()
    )
    first.close()
    second = make_registry(scheme, backend)
    try:
        assert wait_for(lambda: _gone(second, "team"))
    finally:
        second.close()


def test_dry_run_namespace_delete_keeps_it_active(registry: StoreRegistry, scheme: Scheme) -> None:
    _namespace(registry, scheme, "team")
    result = registry.store("", "namespaces").delete(NS, "team", DeleteOptions(dry_run=True))
    assert result.object["status"]["phase"] == "Terminating"
    assert registry.store("", "namespaces").get(NS, "team")["status"]["phase"] == "Active"


def test_namespace_main_update_cannot_change_phase_or_spec_finalizers(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    _namespace(registry, scheme, "team")

    def edit(o: dict[str, Any]) -> None:
        o["status"] = {"phase": "Terminating"}
        o["spec"] = {"finalizers": []}

    stored = (
        registry.store("", "namespaces").update(NS, "team", changed(edit), UpdateOptions()).object
    )
    assert stored["status"] == {"phase": "Active"}
    assert stored["spec"] == {"finalizers": ["kubernetes"]}
