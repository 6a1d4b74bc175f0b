"""ReplicaSets in the generic store: Kubernetes' replicaset strategy, on a real LMDB store.

Every write test runs twice: through the blocking and the asyncio faces (``write_face``)."""

from __future__ import annotations

from typing import Any

import pytest

from kstore.api.gvk import GroupVersion
from kstore.api.scheme import Scheme
from kstore.api.selectors import FieldSelector
from kstore.errors import Invalid
from kstore.registry.interface import (
    CreateOptions,
    DeleteOptions,
    ListOptions,
    RequestContext,
    UpdateOptions,
)
from kstore.registry.registry import StoreRegistry
from kstore.registry.strategies import strategy_for
from kstore.registry.strategies.base import DELETE_DEPENDENTS
from tests.registry.objects import changed, ctx, hub

pytestmark = pytest.mark.usefixtures("write_face")

APPS = ctx("default", "apps/v1")
STATUS = UpdateOptions(subresource="status")


def replica_set(name: str = "web", replicas: int | None = 2) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
        },
    }
    if replicas is not None:
        spec["replicas"] = replicas
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name, "labels": {"app": "web"}},
        "spec": spec,
    }


def _create(registry: StoreRegistry, scheme: Scheme, obj: dict[str, Any]) -> Any:
    return registry.store("apps", "replicasets").create(APPS, hub(scheme, obj), CreateOptions())


def test_create_sets_generation_and_an_empty_status(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    body = replica_set(replicas=None)
    body["status"] = {"replicas": 5}
    result = _create(registry, scheme, body)
    stored = result.object
    assert stored["metadata"]["generation"] == 1
    assert stored["status"] == {"replicas": 0}
    assert stored["spec"]["replicas"] == 1
    assert result.warnings == ()


def test_a_name_that_is_not_a_dns_label_gets_a_warning(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    result = _create(registry, scheme, replica_set("web.v1"))
    assert result.warnings == (
        "metadata.name: this is used in Pod names and hostnames, which can result in "
        "surprising behavior; a DNS label is recommended: [must not contain dots]",
    )


def test_generation_follows_the_spec_only(registry: StoreRegistry, scheme: Scheme) -> None:
    store = registry.store("apps", "replicasets")
    _create(registry, scheme, replica_set())

    def annotate(o: dict[str, Any]) -> None:
        o["metadata"]["annotations"] = {"deployment.kubernetes.io/revision": "2"}
        o["metadata"]["labels"]["tier"] = "x"

    # Unlike a Deployment's, a ReplicaSet's annotations are no new generation.
    assert (
        store.update(APPS, "web", changed(annotate), UpdateOptions()).object["metadata"][
            "generation"
        ]
        == 1
    )
    scaled = store.update(
        APPS, "web", changed(lambda o: o["spec"].update(replicas=3)), UpdateOptions()
    ).object
    assert scaled["metadata"]["generation"] == 2


def test_main_resource_update_keeps_the_status(registry: StoreRegistry, scheme: Scheme) -> None:
    store = registry.store("apps", "replicasets")
    _create(registry, scheme, replica_set())
    store.update(APPS, "web", changed(lambda o: o.update(status={"replicas": 2})), STATUS)
    stored = store.update(
        APPS, "web", changed(lambda o: o.update(status={"replicas": 9})), UpdateOptions()
    ).object
    assert stored["status"] == {"replicas": 2}


def test_status_update_keeps_the_spec_but_not_the_labels(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    """Kubernetes' replicaset status strategy resets the spec only (a Deployment's keeps its
    labels too)."""
    store = registry.store("apps", "replicasets")
    _create(registry, scheme, replica_set())

    def edit(o: dict[str, Any]) -> None:
        o["spec"]["replicas"] = 7
        o["metadata"]["labels"] = {"app": "web", "seen": "yes"}
        o["status"] = {"replicas": 2, "readyReplicas": 1, "observedGeneration": 1}

    stored = store.update(APPS, "web", changed(edit), STATUS).object
    assert stored["spec"]["replicas"] == 2
    assert stored["metadata"]["labels"] == {"app": "web", "seen": "yes"}
    assert stored["status"] == {"replicas": 2, "readyReplicas": 1, "observedGeneration": 1}
    assert stored["metadata"]["generation"] == 1


def test_status_update_is_validated_by_the_status_rules(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    store = registry.store("apps", "replicasets")
    _create(registry, scheme, replica_set())
    with pytest.raises(Invalid) as caught:
        store.update(
            APPS,
            "web",
            changed(lambda o: o.update(status={"replicas": 1, "readyReplicas": 2})),
            STATUS,
        )
    assert caught.value.message == (
        'ReplicaSet.apps "web" is invalid: status.readyReplicas: Invalid value: 2: '
        "cannot be greater than status.replicas"
    )


def test_scale_subresource_changes_only_the_replicas(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    store = registry.store("apps", "replicasets")
    _create(registry, scheme, replica_set())

    def scale(o: dict[str, Any]) -> None:
        o["spec"]["replicas"] = 5
        o["spec"]["template"]["spec"]["containers"][0]["image"] = "sneaky:1"
        o["metadata"]["labels"] = {"app": "changed"}

    stored = store.update(
        APPS, "web", changed(scale), UpdateOptions(subresource="scale", field_manager="hpa")
    ).object
    assert stored["spec"]["replicas"] == 5
    assert stored["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"
    assert stored["metadata"]["labels"] == {"app": "web"}
    assert stored["metadata"]["generation"] == 2
    (entry,) = [e for e in stored["metadata"]["managedFields"] if e.get("subresource")]
    assert (entry["manager"], entry["subresource"]) == ("hpa", "scale")
    with pytest.raises(Invalid):
        store.update(
            APPS,
            "web",
            changed(lambda o: o["spec"].update(replicas=-1)),
            UpdateOptions(subresource="scale"),
        )


def test_selector_is_immutable_when_the_request_has_a_version(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    store = registry.store("apps", "replicasets")
    _create(registry, scheme, replica_set())

    def reselect(o: dict[str, Any]) -> None:
        o["spec"]["selector"] = {"matchLabels": {"app": "web", "tier": "x"}}
        o["spec"]["template"]["metadata"]["labels"]["tier"] = "x"

    with pytest.raises(Invalid) as caught:
        store.update(APPS, "web", changed(reselect), UpdateOptions())
    assert caught.value.message == (
        'ReplicaSet.apps "web" is invalid: spec.selector: Invalid value: '
        '{"matchLabels":{"app":"web","tier":"x"}}: field is immutable'
    )
    # Without a request version Kubernetes keeps the old, mutable behaviour.
    unversioned = RequestContext(namespace="default")
    stored = store.update(unversioned, "web", changed(reselect), UpdateOptions()).object
    assert stored["spec"]["selector"]["matchLabels"] == {"app": "web", "tier": "x"}


def test_dependents_are_deleted_by_default(registry: StoreRegistry, scheme: Scheme) -> None:
    definition = scheme.definition("apps", "ReplicaSet")
    strategy = strategy_for(definition, event_ttl_seconds=0)
    for version in ("v1", "v1beta2"):
        versioned = RequestContext(
            namespace="default", request_version=GroupVersion("apps", version)
        )
        assert strategy.default_gc_policy(versioned) == DELETE_DEPENDENTS
    body = replica_set()
    body["metadata"]["finalizers"] = ["example.com/hold"]
    _create(registry, scheme, body)
    deleted = registry.store("apps", "replicasets").delete(APPS, "web", DeleteOptions())
    assert deleted.object["metadata"]["finalizers"] == ["example.com/hold"]


def test_lists_select_on_status_replicas(registry: StoreRegistry, scheme: Scheme) -> None:
    store = registry.store("apps", "replicasets")
    for name in ("a", "b"):
        _create(registry, scheme, replica_set(name))
    store.update(APPS, "b", changed(lambda o: o.update(status={"replicas": 2})), STATUS)
    for selector, names in (("status.replicas=2", ["b"]), ("status.replicas!=2", ["a"])):
        opts = ListOptions(field_selector=FieldSelector.parse(selector))
        assert [o["metadata"]["name"] for o in store.list(APPS, opts).items] == names
