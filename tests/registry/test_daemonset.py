"""DaemonSets in the generic store: Kubernetes' daemonset strategy, on a real LMDB store.

Every write test runs twice: through the blocking and the asyncio faces (``write_face``)."""

from __future__ import annotations

from typing import Any

import pytest

from kstore.api.gvk import GroupVersion
from kstore.api.scheme import Scheme
from kstore.errors import Invalid, NotFound
from kstore.registry.interface import CreateOptions, RequestContext, UpdateOptions
from kstore.registry.registry import StoreRegistry
from kstore.registry.strategies import strategy_for
from kstore.registry.strategies.base import DELETE_DEPENDENTS, ORPHAN_DEPENDENTS
from tests.registry.objects import changed, ctx, hub

pytestmark = pytest.mark.usefixtures("write_face")

APPS = ctx("default", "apps/v1")
STATUS = UpdateOptions(subresource="status")
ZERO_STATUS = {
    "currentNumberScheduled": 0,
    "numberMisscheduled": 0,
    "desiredNumberScheduled": 0,
    "numberReady": 0,
}


def daemon_set(name: str = "agent", annotations: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": {"app": "agent"}}
    if annotations is not None:
        meta["annotations"] = annotations
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": meta,
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "agent", "image": "fluent-bit:3.2"}]},
            },
        },
    }


def _create(registry: StoreRegistry, scheme: Scheme, obj: dict[str, Any]) -> dict[str, Any]:
    store = registry.store("apps", "daemonsets")
    created: dict[str, Any] = store.create(APPS, hub(scheme, obj), CreateOptions()).object
    return created


def _image(image: str) -> Any:
    return changed(lambda o: o["spec"]["template"]["spec"]["containers"][0].update(image=image))


def test_create_sets_generation_template_generation_and_a_zero_status(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    body = daemon_set()
    body["status"] = {"numberReady": 3}
    stored = _create(registry, scheme, body)
    assert stored["metadata"]["generation"] == 1
    assert stored["spec"]["templateGeneration"] == 1
    assert stored["status"] == ZERO_STATUS
    assert stored["spec"]["updateStrategy"]["rollingUpdate"] == {"maxUnavailable": 1, "maxSurge": 0}
    external = scheme.from_hub(stored, "v1")
    assert external["metadata"]["annotations"] == {"deprecated.daemonset.template.generation": "1"}


def test_a_template_generation_set_on_create_is_kept(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    annotated = daemon_set(annotations={"deprecated.daemonset.template.generation": "5"})
    assert _create(registry, scheme, annotated)["spec"]["templateGeneration"] == 5
    zero = daemon_set("zero", annotations={"deprecated.daemonset.template.generation": "0"})
    assert _create(registry, scheme, zero)["spec"]["templateGeneration"] == 1


def test_template_changes_bump_both_generations_other_spec_changes_one(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    store = registry.store("apps", "daemonsets")
    _create(registry, scheme, daemon_set())
    rolled = store.update(APPS, "agent", _image("fluent-bit:3.3"), UpdateOptions()).object
    assert (rolled["metadata"]["generation"], rolled["spec"]["templateGeneration"]) == (2, 2)
    slower = store.update(
        APPS, "agent", changed(lambda o: o["spec"].update(minReadySeconds=10)), UpdateOptions()
    ).object
    assert (slower["metadata"]["generation"], slower["spec"]["templateGeneration"]) == (3, 2)

    def annotate(o: dict[str, Any]) -> None:
        o["metadata"]["annotations"] = {"note": "x"}
        o["metadata"]["labels"]["tier"] = "x"

    # Unlike a Deployment's, a DaemonSet's annotations are no new generation.
    same = store.update(APPS, "agent", changed(annotate), UpdateOptions()).object
    assert (same["metadata"]["generation"], same["spec"]["templateGeneration"]) == (3, 2)


def test_users_cannot_set_the_template_generation(registry: StoreRegistry, scheme: Scheme) -> None:
    store = registry.store("apps", "daemonsets")
    _create(registry, scheme, daemon_set())

    def forge(o: dict[str, Any]) -> None:
        o["spec"]["templateGeneration"] = 9

    stored = store.update(APPS, "agent", changed(forge), UpdateOptions()).object
    assert (stored["metadata"]["generation"], stored["spec"]["templateGeneration"]) == (1, 1)

    def forge_and_roll(o: dict[str, Any]) -> None:
        o["spec"]["templateGeneration"] = 0
        o["spec"]["template"]["metadata"]["labels"]["rev"] = "b"

    stored = store.update(APPS, "agent", changed(forge_and_roll), UpdateOptions()).object
    assert (stored["metadata"]["generation"], stored["spec"]["templateGeneration"]) == (2, 2)


def test_status_update_keeps_the_spec_but_not_the_labels(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    store = registry.store("apps", "daemonsets")
    _create(registry, scheme, daemon_set())

    def edit(o: dict[str, Any]) -> None:
        o["spec"]["template"]["spec"]["containers"][0]["image"] = "sneaky:1"
        o["spec"]["templateGeneration"] = 7
        o["metadata"]["labels"] = {"app": "agent", "seen": "yes"}
        o["status"] = {**ZERO_STATUS, "desiredNumberScheduled": 3, "observedGeneration": 1}

    stored = store.update(APPS, "agent", changed(edit), STATUS).object
    assert stored["spec"]["template"]["spec"]["containers"][0]["image"] == "fluent-bit:3.2"
    assert stored["spec"]["templateGeneration"] == 1
    assert stored["metadata"]["labels"] == {"app": "agent", "seen": "yes"}
    assert stored["status"]["desiredNumberScheduled"] == 3
    assert stored["metadata"]["generation"] == 1
    kept = store.update(
        APPS, "agent", changed(lambda o: o.update(status={})), UpdateOptions()
    ).object
    assert kept["status"]["desiredNumberScheduled"] == 3


def test_status_update_is_validated_by_the_status_rules(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    store = registry.store("apps", "daemonsets")
    _create(registry, scheme, daemon_set())
    store.update(APPS, "agent", changed(lambda o: o["status"].update(collisionCount=2)), STATUS)
    with pytest.raises(Invalid) as caught:
        store.update(APPS, "agent", changed(lambda o: o["status"].update(collisionCount=1)), STATUS)
    assert caught.value.message == (
        'DaemonSet.apps "agent" is invalid: status.collisionCount: Invalid value: 1: '
        "cannot be decremented"
    )


def test_invalid_update_strategy_is_rejected(registry: StoreRegistry, scheme: Scheme) -> None:
    body = daemon_set()
    body["spec"]["updateStrategy"] = {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": "10%", "maxSurge": 1},
    }
    with pytest.raises(Invalid) as caught:
        _create(registry, scheme, body)
    assert caught.value.message == (
        'DaemonSet.apps "agent" is invalid: spec.updateStrategy.rollingUpdate.maxSurge: '
        "Invalid value: 1: may not be set when maxUnavailable is non-zero"
    )


def test_selector_is_immutable_when_the_request_has_a_version(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    store = registry.store("apps", "daemonsets")
    _create(registry, scheme, daemon_set())

    def reselect(o: dict[str, Any]) -> None:
        o["spec"]["selector"] = {"matchLabels": {"app": "agent", "tier": "x"}}
        o["spec"]["template"]["metadata"]["labels"]["tier"] = "x"

    with pytest.raises(Invalid) as caught:
        store.update(APPS, "agent", changed(reselect), UpdateOptions())
    assert caught.value.message == (
        'DaemonSet.apps "agent" is invalid: spec.selector: Invalid value: '
        '{"matchLabels":{"app":"agent","tier":"x"}}: field is immutable'
    )
    unversioned = RequestContext(namespace="default")
    stored = store.update(unversioned, "agent", changed(reselect), UpdateOptions()).object
    assert stored["spec"]["selector"]["matchLabels"] == {"app": "agent", "tier": "x"}
    assert stored["spec"]["templateGeneration"] == 2


def test_default_garbage_collection_policy_per_version(scheme: Scheme) -> None:
    strategy = strategy_for(scheme.definition("apps", "DaemonSet"), event_ttl_seconds=0)
    policies = {
        gv: strategy.default_gc_policy(RequestContext(namespace="ns", request_version=gv))
        for gv in (
            GroupVersion("apps", "v1"),
            GroupVersion("apps", "v1beta2"),
            GroupVersion("extensions", "v1beta1"),
        )
    }
    assert list(policies.values()) == [DELETE_DEPENDENTS, ORPHAN_DEPENDENTS, ORPHAN_DEPENDENTS]
    assert strategy.default_gc_policy(RequestContext(namespace="ns")) == DELETE_DEPENDENTS


def test_daemon_sets_have_no_scale_subresource(registry: StoreRegistry, scheme: Scheme) -> None:
    _create(registry, scheme, daemon_set())
    with pytest.raises(NotFound):
        registry.store("apps", "daemonsets").update(
            APPS,
            "agent",
            changed(lambda o: o["spec"].update(replicas=3)),
            UpdateOptions(subresource="scale"),
        )
