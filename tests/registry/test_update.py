"""Update as Kubernetes' generic store does it (reference 7.3), on a real LMDB store.

Every test runs twice: through ``update`` and through ``update_async`` (the ``write_face``
fixture)."""

from __future__ import annotations

from typing import Any

import pytest

from kstore.api.scheme import Scheme
from kstore.errors import Conflict, Invalid, NotFound
from kstore.registry.interface import CreateOptions, DeleteOptions, UpdateOptions
from kstore.registry.registry import StoreRegistry
from kstore.storage.interface import Preconditions
from tests.registry.objects import (
    changed,
    config_map,
    ctx,
    deployment,
    hub,
    pod,
    replace_with,
    widget,
)

pytestmark = pytest.mark.usefixtures("write_face")

STATUS = UpdateOptions(subresource="status")
APPS = "apps/v1"


def _created(
    registry: StoreRegistry,
    scheme: Scheme,
    group: str,
    plural: str,
    obj: Any,
    api_version: str = "v1",
) -> dict[str, Any]:
    store = registry.store(group, plural)
    return store.create(ctx("default", api_version), hub(scheme, obj), CreateOptions()).object


def test_update_without_resource_version_overwrites_when_the_kind_allows_it(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    _created(registry, scheme, "", "configmaps", config_map("c", k="1"))
    result = registry.store("", "configmaps").update(
        ctx(), "c", replace_with(hub(scheme, config_map("c", k="2"))), UpdateOptions()
    )
    assert result.object["data"] == {"k": "2"}
    assert result.created is False


def test_update_without_resource_version_is_invalid_for_leases(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"}}
    store = registry.store("coordination.k8s.io", "leases")
    store.create(ctx("default", "coordination.k8s.io/v1"), hub(scheme, lease), CreateOptions())
    with pytest.raises(Invalid) as caught:
        store.update(ctx(), "l", replace_with(hub(scheme, lease)), UpdateOptions())
    assert caught.value.message == (
        'leases.coordination.k8s.io "l" is invalid: metadata.resourceVersion: Invalid value: 0: '
        "must be specified for an update"
    )


def test_update_with_a_stale_resource_version_conflicts(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    first = _created(registry, scheme, "", "configmaps", config_map("c", k="1"))
    store = registry.store("", "configmaps")
    store.update(ctx(), "c", changed(lambda o: o["data"].update(k="2")), UpdateOptions())
    with pytest.raises(Conflict) as caught:
        store.update(ctx(), "c", replace_with(first), UpdateOptions())
    assert caught.value.message == (
        'Operation cannot be fulfilled on configmaps "c": the object has been modified; please '
        "apply your changes to the latest version and try again"
    )


def test_no_op_update_keeps_the_resource_version(registry: StoreRegistry, scheme: Scheme) -> None:
    first = _created(registry, scheme, "", "configmaps", config_map("c", k="1"))
    result = registry.store("", "configmaps").update(
        ctx(), "c", changed(lambda o: None), UpdateOptions(field_manager="kubectl")
    )
    assert result.object["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    assert result.object["metadata"]["managedFields"] == first["metadata"]["managedFields"]


def test_update_of_a_missing_object_is_not_found(registry: StoreRegistry, scheme: Scheme) -> None:
    with pytest.raises(NotFound) as caught:
        registry.store("", "configmaps").update(
            ctx(), "ghost", replace_with(hub(scheme, config_map("ghost"))), UpdateOptions()
        )
    assert caught.value.message == 'configmaps "ghost" not found'


def test_update_creates_a_missing_service(registry: StoreRegistry, scheme: Scheme) -> None:
    svc = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s"},
        "spec": {"ports": [{"port": 80}]},
    }
    result = registry.store("", "services").update(
        ctx(), "s", replace_with(hub(scheme, svc)), UpdateOptions()
    )
    assert result.created is True
    assert result.object["metadata"]["uid"]
    assert result.object["status"] == {"loadBalancer": {}}


def test_update_with_a_uid_precondition_of_another_object_conflicts(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    first = _created(registry, scheme, "", "configmaps", config_map("c"))
    with pytest.raises(Conflict) as caught:
        registry.store("", "configmaps").update(
            ctx(),
            "c",
            replace_with(first),
            UpdateOptions(preconditions=Preconditions(uid="someone-else")),
        )
    assert caught.value.message == (
        'Operation cannot be fulfilled on configmaps "c": Precondition failed: UID in '
        f"precondition: someone-else, UID in object meta: {first['metadata']['uid']}"
    )


def test_system_fields_survive_an_update_that_omits_them(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    first = _created(registry, scheme, "", "configmaps", config_map("c"))
    body = hub(scheme, config_map("c", k="2"))
    body["metadata"]["resourceVersion"] = first["metadata"]["resourceVersion"]
    stored = (
        registry.store("", "configmaps")
        .update(ctx(), "c", replace_with(body), UpdateOptions())
        .object
    )
    assert stored["metadata"]["uid"] == first["metadata"]["uid"]
    assert stored["metadata"]["creationTimestamp"] == first["metadata"]["creationTimestamp"]


def test_changing_the_uid_is_invalid(registry: StoreRegistry, scheme: Scheme) -> None:
    _created(registry, scheme, "", "configmaps", config_map("c"))
    with pytest.raises(Invalid) as caught:
        registry.store("", "configmaps").update(
            ctx(), "c", changed(lambda o: o["metadata"].update(uid="other")), UpdateOptions()
        )
    assert 'metadata.uid: Invalid value: "other": field is immutable' in caught.value.message


def test_generation_follows_spec_changes_only(registry: StoreRegistry, scheme: Scheme) -> None:
    store = registry.store("apps", "deployments")
    _created(registry, scheme, "apps", "deployments", deployment(), APPS)
    apps = ctx("default", APPS)
    labelled = store.update(
        apps, "web", changed(lambda o: o["metadata"]["labels"].update(tier="x")), UpdateOptions()
    ).object
    assert labelled["metadata"]["generation"] == 1
    scaled = store.update(
        apps, "web", changed(lambda o: o["spec"].update(replicas=3)), UpdateOptions()
    ).object
    assert scaled["metadata"]["generation"] == 2
    # Deployment annotations are copied to ReplicaSets: Kubernetes bumps them too.
    annotated = store.update(
        apps,
        "web",
        changed(lambda o: o["metadata"].update(annotations={"a": "b"})),
        UpdateOptions(),
    ).object
    assert annotated["metadata"]["generation"] == 3


def test_custom_kind_generation_follows_everything_but_metadata_and_status(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    store = registry.store("example.com", "widgets")
    w = ctx("default", "example.com/v1")
    store.create(w, hub(scheme, widget(size=1)), CreateOptions())
    relabelled = store.update(
        w, "w", changed(lambda o: o["metadata"].update(labels={"a": "b"})), UpdateOptions()
    ).object
    assert relabelled["metadata"]["generation"] == 1
    resized = store.update(
        w, "w", changed(lambda o: o["spec"].update(size=2)), UpdateOptions()
    ).object
    assert resized["metadata"]["generation"] == 2


def test_main_resource_update_keeps_the_stored_status(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    store = registry.store("apps", "deployments")
    _created(registry, scheme, "apps", "deployments", deployment(), APPS)
    apps = ctx("default", APPS)
    store.update(apps, "web", changed(lambda o: o.update(status={"replicas": 1})), STATUS)
    stored = store.update(
        apps, "web", changed(lambda o: o.update(status={"replicas": 99})), UpdateOptions()
    ).object
    assert stored["status"] == {"replicas": 1}


def test_status_update_ignores_spec_and_labels_of_a_deployment(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    store = registry.store("apps", "deployments")
    _created(registry, scheme, "apps", "deployments", deployment(), APPS)

    def edit(o: dict[str, Any]) -> None:
        o["spec"]["replicas"] = 5
        o["metadata"]["labels"] = {"app": "changed"}
        o["metadata"]["annotations"] = {"note": "kept"}
        o["status"] = {"replicas": 1, "observedGeneration": 1}

    stored = store.update(ctx("default", APPS), "web", changed(edit), STATUS).object
    assert stored["spec"]["replicas"] == 1
    assert stored["metadata"]["labels"] == {"app": "web"}
    assert stored["metadata"]["annotations"] == {"note": "kept"}
    assert stored["status"] == {"replicas": 1, "observedGeneration": 1}
    assert stored["metadata"]["generation"] == 1


def test_deployment_status_update_is_validated_by_the_status_rules(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    store = registry.store("apps", "deployments")
    _created(registry, scheme, "apps", "deployments", deployment(), APPS)
    with pytest.raises(Invalid) as caught:
        store.update(
            ctx("default", APPS),
            "web",
            changed(lambda o: o.update(status={"replicas": -1})),
            STATUS,
        )
    assert "status.replicas" in caught.value.message


def test_custom_kind_status_update_changes_nothing_but_status(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    store = registry.store("example.com", "widgets")
    w = ctx("default", "example.com/v1")
    store.create(w, hub(scheme, widget(size=1)), CreateOptions())

    def edit(o: dict[str, Any]) -> None:
        o["spec"] = {"size": 9}
        o["metadata"]["labels"] = {"x": "y"}
        o["status"] = {"ready": True}

    stored = store.update(w, "w", changed(edit), STATUS).object
    assert stored["spec"] == {"size": 1}
    assert "labels" not in stored["metadata"]
    assert stored["status"] == {"ready": True}


def test_pod_status_update_keeps_spec_and_owner_references(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    _created(registry, scheme, "", "pods", pod("p"))
    store = registry.store("", "pods")

    def edit(o: dict[str, Any]) -> None:
        o["spec"]["nodeName"] = "sneaky"
        o["metadata"]["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "u"}
        ]
        o["status"] = {"phase": "Running"}

    stored = store.update(ctx(), "p", changed(edit), STATUS).object
    assert "nodeName" not in stored["spec"]
    assert "ownerReferences" not in stored["metadata"]
    assert stored["status"] == {"phase": "Running", "qosClass": "BestEffort"}


def test_subresource_the_kind_lacks_is_not_found(registry: StoreRegistry, scheme: Scheme) -> None:
    _created(registry, scheme, "", "configmaps", config_map("c"))
    with pytest.raises(NotFound):
        registry.store("", "configmaps").update(ctx(), "c", changed(lambda o: None), STATUS)


def test_removing_the_last_finalizer_of_a_deleted_object_deletes_it(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    obj = config_map("held")
    obj["metadata"]["finalizers"] = ["example.com/hold"]
    _created(registry, scheme, "", "configmaps", obj)
    store = registry.store("", "configmaps")
    marked = store.delete(ctx(), "held", DeleteOptions())
    assert marked.deleted is False
    result = store.update(
        ctx(), "held", changed(lambda o: o["metadata"].pop("finalizers")), UpdateOptions()
    )
    assert result.object["metadata"]["deletionTimestamp"]
    with pytest.raises(NotFound):
        store.get(ctx(), "held")


def test_update_cannot_clear_the_deletion_timestamp(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    obj = config_map("held")
    obj["metadata"]["finalizers"] = ["example.com/hold", "example.com/other"]
    _created(registry, scheme, "", "configmaps", obj)
    store = registry.store("", "configmaps")
    marked = store.delete(ctx(), "held", DeleteOptions()).object

    def edit(o: dict[str, Any]) -> None:
        del o["metadata"]["deletionTimestamp"]
        o["metadata"]["finalizers"] = ["example.com/other"]

    stored = store.update(ctx(), "held", changed(edit), UpdateOptions()).object
    assert stored["metadata"]["deletionTimestamp"] == marked["metadata"]["deletionTimestamp"]
    assert stored["metadata"]["finalizers"] == ["example.com/other"]


def test_no_finalizer_may_be_added_while_deleting(registry: StoreRegistry, scheme: Scheme) -> None:
    obj = config_map("held")
    obj["metadata"]["finalizers"] = ["example.com/hold"]
    _created(registry, scheme, "", "configmaps", obj)
    store = registry.store("", "configmaps")
    store.delete(ctx(), "held", DeleteOptions())
    with pytest.raises(Invalid) as caught:
        store.update(
            ctx(),
            "held",
            changed(lambda o: o["metadata"]["finalizers"].append("example.com/more")),
            UpdateOptions(),
        )
    assert "no new finalizers can be added if the object is being deleted" in (caught.value.message)


def test_dry_run_update_is_validated_and_not_persisted(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    first = _created(registry, scheme, "", "configmaps", config_map("c", k="1"))
    store = registry.store("", "configmaps")
    result = store.update(
        ctx(), "c", changed(lambda o: o["data"].update(k="2")), UpdateOptions(dry_run=True)
    )
    assert result.object["data"] == {"k": "2"}
    assert store.get(ctx(), "c") == first
    with pytest.raises(Invalid):
        store.update(
            ctx(),
            "c",
            changed(lambda o: o["metadata"].update(uid="x")),
            UpdateOptions(dry_run=True),
        )


def test_deployment_selector_is_immutable_in_apps_v1_only(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    store = registry.store("apps", "deployments")
    _created(registry, scheme, "apps", "deployments", deployment(), APPS)

    def reselect(o: dict[str, Any]) -> None:
        o["spec"]["selector"] = {"matchLabels": {"app": "web", "tier": "x"}}
        o["spec"]["template"]["metadata"]["labels"]["tier"] = "x"

    with pytest.raises(Invalid) as caught:
        store.update(ctx("default", APPS), "web", changed(reselect), UpdateOptions())
    assert "spec.selector" in caught.value.message and "field is immutable" in (
        caught.value.message
    )
    stored = store.update(
        ctx("default", "apps/v1beta1"), "web", changed(reselect), UpdateOptions()
    ).object
    assert stored["spec"]["selector"]["matchLabels"] == {"app": "web", "tier": "x"}


def test_service_update_keeps_cluster_ips_it_omits(registry: StoreRegistry, scheme: Scheme) -> None:
    svc = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s"},
        "spec": {"clusterIP": "10.0.0.7", "ports": [{"port": 80}]},
    }
    _created(registry, scheme, "", "services", svc)
    body = hub(scheme, {**svc, "spec": {"ports": [{"port": 81}]}})
    stored = (
        registry.store("", "services")
        .update(ctx(), "s", replace_with(body), UpdateOptions())
        .object
    )
    assert stored["spec"]["clusterIP"] == "10.0.0.7"
    assert stored["spec"]["clusterIPs"] == ["10.0.0.7"]
    assert stored["spec"]["ports"][0]["port"] == 81


def test_update_moves_field_ownership_to_the_updating_manager(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    store = registry.store("", "configmaps")
    store.create(
        ctx(), hub(scheme, config_map("c", a="1", b="1")), CreateOptions(field_manager="one")
    )
    stored = store.update(
        ctx(), "c", changed(lambda o: o["data"].update(b="2")), UpdateOptions(field_manager="two")
    ).object
    entries = {e["manager"]: e["fieldsV1"] for e in stored["metadata"]["managedFields"]}
    assert entries == {
        "one": {"f:data": {".": {}, "f:a": {}}},
        "two": {"f:data": {"f:b": {}}},
    }


def test_update_managers_beyond_ten_merge_into_ancient_changes(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    store = registry.store("", "configmaps")
    store.create(ctx(), hub(scheme, config_map("c")), CreateOptions(field_manager="m0"))
    for i in range(1, 12):
        store.update(
            ctx(),
            "c",
            changed(lambda o, i=i: o.setdefault("data", {}).update({f"k{i}": "v"})),
            UpdateOptions(field_manager=f"m{i}"),
        )
    managers = [e["manager"] for e in store.get(ctx(), "c")["metadata"]["managedFields"]]
    assert len(managers) == 10
    assert "ancient-changes" in managers
    assert "m11" in managers


def test_scale_subresource_changes_only_the_replicas(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    store = registry.store("apps", "deployments")
    _created(registry, scheme, "apps", "deployments", deployment(), APPS)

    def scale(o: dict[str, Any]) -> None:
        o["spec"]["replicas"] = 5
        o["spec"]["template"]["spec"]["containers"][0]["image"] = "sneaky:1"
        o["metadata"]["labels"] = {"app": "changed"}

    stored = store.update(
        ctx("default", APPS),
        "web",
        changed(scale),
        UpdateOptions(subresource="scale", field_manager="kubectl"),
    ).object
    assert stored["spec"]["replicas"] == 5
    assert stored["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"
    assert stored["metadata"]["labels"] == {"app": "web"}
    assert stored["metadata"]["generation"] == 2
    scale_entry = [e for e in stored["metadata"]["managedFields"] if e.get("subresource")]
    assert scale_entry[0]["subresource"] == "scale"


def test_errors_of_the_update_function_reach_the_caller_unchanged(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    _created(registry, scheme, "", "configmaps", config_map("c"))

    def refuse(current: dict[str, Any]) -> dict[str, Any]:
        raise Conflict('Apply failed with 1 conflict: conflict with "alice": .data.k')

    with pytest.raises(Conflict) as caught:
        registry.store("", "configmaps").update(ctx(), "c", refuse, UpdateOptions())
    assert caught.value.message == 'Apply failed with 1 conflict: conflict with "alice": .data.k'


def test_apply_updates_create_missing_objects_without_an_update_entry(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    applied = hub(scheme, config_map("a", k="v"))
    applied["metadata"]["managedFields"] = [
        {
            "manager": "alice",
            "operation": "Apply",
            "apiVersion": "v1",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {"f:k": {}}},
        }
    ]
    result = registry.store("", "configmaps").update(
        ctx(), "a", replace_with(applied), UpdateOptions(apply=True, field_manager="alice")
    )
    assert result.created is True
    assert [e["operation"] for e in result.object["metadata"]["managedFields"]] == ["Apply"]
