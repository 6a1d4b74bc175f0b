"""Delete and DeleteCollection as Kubernetes' generic store does them (reference 7.4, 7.5)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kstore.api.scheme import Scheme
from kstore.api.selectors import LabelSelector
from kstore.errors import Conflict, Invalid, NotFound
from kstore.registry.interface import CreateOptions, DeleteOptions, UpdateOptions
from kstore.registry.registry import StoreRegistry
from kstore.storage.interface import ListOptions, Preconditions
from tests.registry.objects import changed, config_map, ctx, deployment, hub, pod


def _create(
    registry: StoreRegistry,
    scheme: Scheme,
    group: str,
    plural: str,
    obj: Any,
    namespace: str = "default",
    api_version: str = "v1",
) -> dict[str, Any]:
    store = registry.store(group, plural)
    return store.create(ctx(namespace, api_version), hub(scheme, obj), CreateOptions()).object


def _seconds_from_now(timestamp: str) -> float:
    return (datetime.fromisoformat(timestamp) - datetime.now(UTC)).total_seconds()


def test_delete_removes_the_object_and_returns_its_last_state(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    created = _create(registry, scheme, "", "configmaps", config_map("c", k="v"))
    store = registry.store("", "configmaps")
    result = store.delete(ctx(), "c", DeleteOptions())
    assert result.deleted is True
    assert result.object["data"] == {"k": "v"}
    assert result.object["metadata"]["uid"] == created["metadata"]["uid"]
    with pytest.raises(NotFound):
        store.get(ctx(), "c")


def test_delete_of_a_missing_object_is_not_found(registry: StoreRegistry) -> None:
    with pytest.raises(NotFound) as caught:
        registry.store("apps", "deployments").delete(
            ctx("default", "apps/v1"), "x", DeleteOptions()
        )
    assert caught.value.message == 'deployments.apps "x" not found'


def test_delete_uid_precondition_mismatch_conflicts(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    created = _create(registry, scheme, "", "configmaps", config_map("c"))
    with pytest.raises(Conflict) as caught:
        registry.store("", "configmaps").delete(
            ctx(), "c", DeleteOptions(preconditions=Preconditions(uid="stale"))
        )
    assert caught.value.message == (
        'Operation cannot be fulfilled on ConfigMap "c": the UID in the precondition (stale) '
        f"does not match the UID in record ({created['metadata']['uid']}). The object might "
        "have been deleted and then recreated"
    )


def test_delete_resource_version_precondition_mismatch_conflicts(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    created = _create(registry, scheme, "", "configmaps", config_map("c"))
    rv = created["metadata"]["resourceVersion"]
    with pytest.raises(Conflict) as caught:
        registry.store("", "configmaps").delete(
            ctx(), "c", DeleteOptions(preconditions=Preconditions(resource_version="1"))
        )
    assert caught.value.message == (
        'Operation cannot be fulfilled on ConfigMap "c": the ResourceVersion in the '
        f"precondition (1) does not match the ResourceVersion in record ({rv}). The object "
        "might have been modified"
    )
    deleted = registry.store("", "configmaps").delete(
        ctx(), "c", DeleteOptions(preconditions=Preconditions(resource_version=rv))
    )
    assert deleted.deleted is True


def test_finalizers_keep_a_deleted_object_with_a_deletion_timestamp(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    obj = config_map("held")
    obj["metadata"]["finalizers"] = ["example.com/hold"]
    _create(registry, scheme, "", "configmaps", obj)
    store = registry.store("", "configmaps")
    result = store.delete(ctx(), "held", DeleteOptions())
    assert result.deleted is False
    meta = store.get(ctx(), "held")["metadata"]
    assert abs(_seconds_from_now(meta["deletionTimestamp"])) < 5
    assert meta["deletionGracePeriodSeconds"] == 0
    again = store.delete(ctx(), "held", DeleteOptions())
    assert again.deleted is False
    assert again.object["metadata"]["deletionTimestamp"] == meta["deletionTimestamp"]


@pytest.mark.parametrize(
    ("policy", "finalizer"), [("Orphan", "orphan"), ("Foreground", "foregroundDeletion")]
)
def test_propagation_policy_adds_its_finalizer(
    registry: StoreRegistry, scheme: Scheme, policy: str, finalizer: str
) -> None:
    _create(registry, scheme, "", "configmaps", config_map("c"))
    store = registry.store("", "configmaps")
    result = store.delete(ctx(), "c", DeleteOptions(propagation_policy=policy))
    assert result.deleted is False
    assert store.get(ctx(), "c")["metadata"]["finalizers"] == [finalizer]


def test_background_propagation_deletes_at_once(registry: StoreRegistry, scheme: Scheme) -> None:
    _create(registry, scheme, "", "configmaps", config_map("c"))
    result = registry.store("", "configmaps").delete(
        ctx(), "c", DeleteOptions(propagation_policy="Background")
    )
    assert result.deleted is True


def test_unknown_propagation_policy_is_invalid(registry: StoreRegistry, scheme: Scheme) -> None:
    _create(registry, scheme, "", "configmaps", config_map("c"))
    with pytest.raises(Invalid) as caught:
        registry.store("", "configmaps").delete(
            ctx(), "c", DeleteOptions(propagation_policy="Sideways")
        )
    assert caught.value.message == (
        'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: '
        '"Sideways": supported values: "Foreground", "Background", "Orphan", "nil"'
    )


def test_deleting_a_deployment_through_apps_v1beta1_orphans_by_default(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    _create(registry, scheme, "apps", "deployments", deployment(), api_version="apps/v1")
    store = registry.store("apps", "deployments")
    result = store.delete(ctx("default", "apps/v1beta1"), "web", DeleteOptions())
    assert result.deleted is False
    assert result.object["metadata"]["finalizers"] == ["orphan"]


def test_scheduled_pod_is_deleted_gracefully_with_its_termination_grace_period(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    _create(registry, scheme, "", "pods", pod("p", nodeName="node-1"))
    store = registry.store("", "pods")
    result = store.delete(ctx(), "p", DeleteOptions())
    assert result.deleted is False
    meta = store.get(ctx(), "p")["metadata"]
    assert meta["deletionGracePeriodSeconds"] == 30
    assert 25 < _seconds_from_now(meta["deletionTimestamp"]) <= 31
    assert meta["generation"] == 2


def test_a_shorter_grace_period_brings_the_deadline_forward(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    _create(registry, scheme, "", "pods", pod("p", nodeName="node-1"))
    store = registry.store("", "pods")
    store.delete(ctx(), "p", DeleteOptions())
    same = store.delete(ctx(), "p", DeleteOptions(grace_period_seconds=60))
    assert same.deleted is False
    assert store.get(ctx(), "p")["metadata"]["deletionGracePeriodSeconds"] == 30
    store.delete(ctx(), "p", DeleteOptions(grace_period_seconds=10))
    meta = store.get(ctx(), "p")["metadata"]
    assert meta["deletionGracePeriodSeconds"] == 10
    assert 5 < _seconds_from_now(meta["deletionTimestamp"]) <= 11


def test_grace_period_zero_deletes_a_terminating_pod(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    _create(registry, scheme, "", "pods", pod("p", nodeName="node-1"))
    store = registry.store("", "pods")
    store.delete(ctx(), "p", DeleteOptions())
    result = store.delete(ctx(), "p", DeleteOptions(grace_period_seconds=0))
    assert result.deleted is True
    with pytest.raises(NotFound):
        store.get(ctx(), "p")


def test_unscheduled_pod_is_deleted_immediately(registry: StoreRegistry, scheme: Scheme) -> None:
    _create(registry, scheme, "", "pods", pod("p"))
    store = registry.store("", "pods")
    result = store.delete(ctx(), "p", DeleteOptions())
    assert result.deleted is True
    assert result.object["metadata"]["deletionGracePeriodSeconds"] == 0
    with pytest.raises(NotFound):
        store.get(ctx(), "p")


def test_dry_run_delete_deletes_nothing(registry: StoreRegistry, scheme: Scheme) -> None:
    _create(registry, scheme, "", "configmaps", config_map("c"))
    _create(registry, scheme, "", "pods", pod("p", nodeName="n"))
    configmaps, pods = registry.store("", "configmaps"), registry.store("", "pods")
    assert configmaps.delete(ctx(), "c", DeleteOptions(dry_run=True)).deleted is True
    marked = pods.delete(ctx(), "p", DeleteOptions(dry_run=True))
    assert marked.object["metadata"]["deletionGracePeriodSeconds"] == 30
    assert "deletionTimestamp" not in configmaps.get(ctx(), "c")["metadata"]
    assert "deletionTimestamp" not in pods.get(ctx(), "p")["metadata"]


def test_delete_collection_deletes_what_the_selector_matches(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    for name, app in (("a", "x"), ("b", "x"), ("c", "y")):
        obj = config_map(name)
        obj["metadata"]["labels"] = {"app": app}
        _create(registry, scheme, "", "configmaps", obj)
    store = registry.store("", "configmaps")
    deleted = store.delete_collection(
        ctx(), ListOptions(label_selector=LabelSelector.parse("app=x")), DeleteOptions()
    )
    assert sorted(o["metadata"]["name"] for o in deleted) == ["a", "b"]
    remaining = store.list(ctx(), ListOptions()).items
    assert [o["metadata"]["name"] for o in remaining] == ["c"]


def test_delete_collection_with_a_limit_deletes_one_page(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    for i in range(5):
        _create(registry, scheme, "", "configmaps", config_map(f"c{i}"))
    store = registry.store("", "configmaps")
    deleted = store.delete_collection(ctx(), ListOptions(limit=2), DeleteOptions())
    assert len(deleted) == 2
    assert len(store.list(ctx(), ListOptions()).items) == 3


def test_delete_collection_across_namespaces(registry: StoreRegistry, scheme: Scheme) -> None:
    _create(registry, scheme, "", "configmaps", config_map("a"), namespace="default")
    _create(registry, scheme, "", "configmaps", config_map("b"), namespace="kube-public")
    store = registry.store("", "configmaps")
    deleted = store.delete_collection(ctx(""), ListOptions(), DeleteOptions())
    assert sorted(o["metadata"]["name"] for o in deleted) == ["a", "b"]
    assert store.list(ctx(""), ListOptions()).items == []


def test_delete_collection_dry_run_keeps_everything(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    _create(registry, scheme, "", "configmaps", config_map("a"))
    store = registry.store("", "configmaps")
    deleted = store.delete_collection(ctx(), ListOptions(), DeleteOptions(dry_run=True))
    assert [o["metadata"]["name"] for o in deleted] == ["a"]
    assert len(store.list(ctx(), ListOptions()).items) == 1


def test_finalizer_removal_after_delete_collection_removes_the_object(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    obj = config_map("held")
    obj["metadata"]["finalizers"] = ["example.com/hold"]
    _create(registry, scheme, "", "configmaps", obj)
    store = registry.store("", "configmaps")
    store.delete_collection(ctx(), ListOptions(), DeleteOptions())
    assert store.get(ctx(), "held")["metadata"]["deletionTimestamp"]
    store.update(ctx(), "held", changed(lambda o: o["metadata"].pop("finalizers")), UpdateOptions())
    with pytest.raises(NotFound):
        store.get(ctx(), "held")
