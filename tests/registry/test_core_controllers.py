"""PodTemplates and ReplicationControllers (core/v1) in the generic store: Kubernetes'
podtemplate and replicationcontroller strategies, on a real LMDB store.

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
from kstore.registry.strategies.base import ORPHAN_DEPENDENTS
from tests.registry.objects import changed, ctx, hub

pytestmark = pytest.mark.usefixtures("write_face")

CORE = ctx("default", "v1")
STATUS = UpdateOptions(subresource="status")


def pod_template(name: str = "tpl", image: str = "nginx:1.27") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PodTemplate",
        "metadata": {"name": name},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": image}]},
        },
    }


def controller(name: str = "web", replicas: int | None = 2) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
        },
    }
    if replicas is not None:
        spec["replicas"] = replicas
    return {
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": {"name": name},
        "spec": spec,
    }


def _create_rc(registry: StoreRegistry, scheme: Scheme, obj: dict[str, Any]) -> Any:
    return registry.store("", "replicationcontrollers").create(
        CORE, hub(scheme, obj), CreateOptions()
    )


# ------------------------------------------------------------------------------ PodTemplate


def test_pod_template_generation_follows_the_template(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    store = registry.store("", "podtemplates")
    created = store.create(CORE, hub(scheme, pod_template()), CreateOptions()).object
    assert created["metadata"]["generation"] == 1
    # The template's pod spec got the pod defaults.
    container = created["template"]["spec"]["containers"][0]
    assert container["imagePullPolicy"] == "IfNotPresent"
    assert created["template"]["spec"]["restartPolicy"] == "Always"

    def label(o: dict[str, Any]) -> None:
        o["metadata"]["labels"] = {"team": "a"}

    assert (
        store.update(CORE, "tpl", changed(label), UpdateOptions()).object["metadata"]["generation"]
        == 1
    )

    def retag(o: dict[str, Any]) -> None:
        o["template"]["spec"]["containers"][0]["image"] = "nginx:1.28"

    updated = store.update(CORE, "tpl", changed(retag), UpdateOptions()).object
    assert updated["metadata"]["generation"] == 2


def test_pod_template_is_validated_at_template(registry: StoreRegistry, scheme: Scheme) -> None:
    body = pod_template()
    body["template"]["spec"]["containers"][0]["name"] = "Web"
    with pytest.raises(Invalid) as caught:
        registry.store("", "podtemplates").create(CORE, hub(scheme, body), CreateOptions())
    assert caught.value.message.startswith(
        'PodTemplate "tpl" is invalid: template.spec.containers[0].name: Invalid value: "Web": '
    )


# ---------------------------------------------------------------------- ReplicationController


def test_create_defaults_the_selector_and_labels_and_zeroes_the_status(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    body = controller(replicas=None)
    body["status"] = {"replicas": 5}
    stored = _create_rc(registry, scheme, body).object
    assert stored["metadata"]["generation"] == 1
    assert stored["metadata"]["labels"] == {"app": "web"}
    assert stored["spec"]["selector"] == {"app": "web"}
    assert stored["spec"]["replicas"] == 1
    assert stored["status"] == {"replicas": 0}


def test_a_controller_name_that_is_not_a_dns_label_gets_a_warning(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    result = _create_rc(registry, scheme, controller("web.v1"))
    assert result.warnings == (
        "metadata.name: this is used in Pod names and hostnames, which can result in "
        "surprising behavior; a DNS label is recommended: [must not contain dots]",
    )


def test_controller_generation_and_status(registry: StoreRegistry, scheme: Scheme) -> None:
    store = registry.store("", "replicationcontrollers")
    _create_rc(registry, scheme, controller())

    def annotate(o: dict[str, Any]) -> None:
        o["metadata"]["annotations"] = {"note": "x"}
        o["status"] = {"replicas": 9}

    stored = store.update(CORE, "web", changed(annotate), UpdateOptions()).object
    assert stored["metadata"]["generation"] == 1
    assert stored["status"] == {"replicas": 0}

    def report(o: dict[str, Any]) -> None:
        o["spec"]["replicas"] = 7
        o["status"] = {"replicas": 2, "readyReplicas": 1, "observedGeneration": 1}

    stored = store.update(CORE, "web", changed(report), STATUS).object
    assert stored["spec"]["replicas"] == 2
    assert stored["status"] == {"replicas": 2, "readyReplicas": 1, "observedGeneration": 1}
    assert stored["metadata"]["generation"] == 1
    with pytest.raises(Invalid) as caught:
        store.update(
            CORE,
            "web",
            changed(lambda o: o.update(status={"replicas": 1, "availableReplicas": 2})),
            STATUS,
        )
    assert caught.value.message == (
        'ReplicationController "web" is invalid: [status.availableReplicas: Invalid value: 2: '
        "cannot be greater than status.replicas, status.availableReplicas: Invalid value: 2: "
        "cannot be greater than readyReplicas]"
    )
    scaled = store.update(
        CORE, "web", changed(lambda o: o["spec"].update(replicas=3)), UpdateOptions()
    ).object
    assert scaled["metadata"]["generation"] == 2


def test_scale_subresource_changes_only_the_replicas(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    store = registry.store("", "replicationcontrollers")
    _create_rc(registry, scheme, controller())

    def scale(o: dict[str, Any]) -> None:
        o["spec"]["replicas"] = 5
        o["spec"]["template"]["spec"]["containers"][0]["image"] = "sneaky:1"

    stored = store.update(
        CORE, "web", changed(scale), UpdateOptions(subresource="scale", field_manager="hpa")
    ).object
    assert stored["spec"]["replicas"] == 5
    assert stored["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"
    assert stored["metadata"]["generation"] == 2


def test_controllers_orphan_their_pods_by_default(registry: StoreRegistry, scheme: Scheme) -> None:
    definition = scheme.definition("", "ReplicationController")
    strategy = strategy_for(definition, event_ttl_seconds=0)
    versioned = RequestContext(namespace="default", request_version=GroupVersion("", "v1"))
    assert strategy.default_gc_policy(versioned) == ORPHAN_DEPENDENTS
    _create_rc(registry, scheme, controller())
    deleted = registry.store("", "replicationcontrollers").delete(CORE, "web", DeleteOptions())
    # Orphaning goes through the orphan finalizer, which the garbage collector removes.
    assert deleted.object["metadata"]["finalizers"] == ["orphan"]
    assert deleted.object["metadata"]["deletionTimestamp"]
    # A delete that asks for background propagation removes the controller at once.
    _create_rc(registry, scheme, controller("other"))
    gone = registry.store("", "replicationcontrollers").delete(
        CORE, "other", DeleteOptions(propagation_policy="Background")
    )
    assert "finalizers" not in gone.object["metadata"]


def test_controller_lists_select_on_status_replicas(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    store = registry.store("", "replicationcontrollers")
    for name in ("a", "b"):
        _create_rc(registry, scheme, controller(name))
    store.update(CORE, "b", changed(lambda o: o.update(status={"replicas": 2})), STATUS)
    for selector, names in (("status.replicas=2", ["b"]), ("status.replicas!=2", ["a"])):
        opts = ListOptions(field_selector=FieldSelector.parse(selector))
        assert [o["metadata"]["name"] for o in store.list(CORE, opts).items] == names


# ------------------------------------------------------------------------------ Endpoints


def test_endpoints_have_no_generation_and_are_validated(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    store = registry.store("", "endpoints")
    body = {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {"name": "web"},
        "subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}],
    }
    created = store.create(CORE, hub(scheme, body), CreateOptions()).object
    assert "generation" not in created["metadata"]
    assert created["subsets"][0]["ports"] == [{"port": 80, "protocol": "TCP"}]

    def loopback(o: dict[str, Any]) -> None:
        o["subsets"][0]["addresses"][0]["ip"] = "127.0.0.1"

    with pytest.raises(Invalid) as caught:
        store.update(CORE, "web", changed(loopback), UpdateOptions())
    assert caught.value.message == (
        'Endpoints "web" is invalid: subsets[0].addresses[0].ip: Invalid value: "127.0.0.1": '
        "may not be in the loopback range (127.0.0.0/8, ::1/128)"
    )
    moved = store.update(
        CORE, "web", changed(lambda o: o["subsets"][0]["ports"][0].update(port=81)), UpdateOptions()
    ).object
    assert "generation" not in moved["metadata"]
    assert moved["subsets"][0]["ports"][0]["port"] == 81


# ------------------------------------------------------------------ LimitRange, ResourceQuota


def test_limit_ranges_are_defaulted_and_validated(registry: StoreRegistry, scheme: Scheme) -> None:
    store = registry.store("", "limitranges")
    body = {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": "limits"},
        "spec": {"limits": [{"type": "Container", "max": {"memory": "1Gi"}}]},
    }
    created = store.create(CORE, hub(scheme, body), CreateOptions()).object
    assert "generation" not in created["metadata"]
    item = created["spec"]["limits"][0]
    assert (item["default"], item["defaultRequest"]) == ({"memory": "1Gi"}, {"memory": "1Gi"})

    def shrink(o: dict[str, Any]) -> None:
        o["spec"]["limits"][0]["min"] = {"memory": "2Gi"}

    with pytest.raises(Invalid) as caught:
        store.update(CORE, "limits", changed(shrink), UpdateOptions())
    assert caught.value.message.startswith(
        'LimitRange "limits" is invalid: [spec.limits[0].min[memory]: Invalid value: "2Gi": '
        "min value 2Gi is greater than max value 1Gi"
    )


def test_quota_status_is_its_own(registry: StoreRegistry, scheme: Scheme) -> None:
    store = registry.store("", "resourcequotas")
    body = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "quota"},
        "spec": {"hard": {"pods": "10"}, "scopes": ["NotTerminating"]},
        "status": {"hard": {"pods": "99"}},
    }
    created = store.create(CORE, hub(scheme, body), CreateOptions()).object
    assert created["status"] == {}
    assert "generation" not in created["metadata"]

    def report(o: dict[str, Any]) -> None:
        o["spec"]["hard"]["pods"] = "1"
        o["status"] = {"hard": {"pods": "10"}, "used": {"pods": "2"}}

    stored = store.update(CORE, "quota", changed(report), STATUS).object
    assert stored["spec"]["hard"] == {"pods": "10"}
    assert stored["status"] == {"hard": {"pods": "10"}, "used": {"pods": "2"}}
    kept = store.update(
        CORE, "quota", changed(lambda o: o.update(status={})), UpdateOptions()
    ).object
    assert kept["status"] == {"hard": {"pods": "10"}, "used": {"pods": "2"}}
    with pytest.raises(Invalid) as caught:
        store.update(CORE, "quota", changed(lambda o: o["spec"].update(scopes=[])), UpdateOptions())
    assert caught.value.message == (
        'ResourceQuota "quota" is invalid: spec.scopes: Invalid value: []: field is immutable'
    )
    with pytest.raises(Invalid) as caught:
        store.update(
            CORE, "quota", changed(lambda o: o["status"]["used"].update(pods="-1")), STATUS
        )
    assert caught.value.message == (
        'ResourceQuota "quota" is invalid: status.used[pods]: Invalid value: "-1": '
        "must be greater than or equal to 0"
    )


# ------------------------------------------------------------------------------------ Node


def test_nodes_keep_the_status_they_are_created_with(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    store = registry.store("", "nodes")
    cluster = RequestContext(request_version=GroupVersion("", "v1"))
    body = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "worker-1"},
        "spec": {
            "podCIDRs": ["10.244.1.0/24"],
            "configSource": {"configMap": {"namespace": "kube-system", "name": "k"}},
        },
        "status": {"capacity": {"cpu": "4"}, "conditions": [{"type": "Ready", "status": "True"}]},
    }
    created = store.create(cluster, hub(scheme, body), CreateOptions()).object
    assert "namespace" not in created["metadata"]
    assert "generation" not in created["metadata"]
    assert "configSource" not in created["spec"]
    assert created["status"]["allocatable"] == {"cpu": "4"}
    assert created["status"]["conditions"][0]["type"] == "Ready"

    def cordon(o: dict[str, Any]) -> None:
        o["spec"]["unschedulable"] = True
        o["status"]["capacity"] = {"cpu": "8"}

    stored = store.update(cluster, "worker-1", changed(cordon), UpdateOptions()).object
    assert stored["spec"]["unschedulable"] is True
    assert stored["status"]["capacity"] == {"cpu": "4"}
    stored = store.update(cluster, "worker-1", changed(cordon), STATUS).object
    assert stored["status"]["capacity"] == {"cpu": "8"}
    with pytest.raises(Invalid) as caught:
        store.update(
            cluster,
            "worker-1",
            changed(lambda o: o["spec"].update(podCIDRs=["10.244.2.0/24"])),
            UpdateOptions(),
        )
    assert caught.value.message == (
        'Node "worker-1" is invalid: spec.podCIDRs: Forbidden: node updates may not change '
        'podCIDR except from "" to valid'
    )
    opts = ListOptions(field_selector=FieldSelector.parse("spec.unschedulable=true"))
    assert [o["metadata"]["name"] for o in store.list(cluster, opts).items] == ["worker-1"]
