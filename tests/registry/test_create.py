"""Create as Kubernetes' generic store does it (reference 7.2), on a real LMDB store.

Every test runs twice: through ``create`` and through ``create_async`` (the ``write_face``
fixture).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest

from kstore.api.scheme import Scheme
from kstore.errors import AlreadyExists, BadRequest, Forbidden, Invalid, NotFound
from kstore.registry import names
from kstore.registry.interface import CreateOptions, DeleteOptions, UpdateOptions
from kstore.registry.registry import StoreRegistry
from tests.registry.objects import config_map, ctx, deployment, hub, pod, widget

_SUFFIX = re.compile(r"[bcdfghjklmnpqrstvwxz2456789]{5}")


pytestmark = pytest.mark.usefixtures("write_face")


def _create(
    registry: StoreRegistry,
    scheme: Scheme,
    group: str,
    plural: str,
    obj: Any,
    namespace: str = "default",
    api_version: str = "v1",
) -> Any:
    store = registry.store(group, plural)
    return store.create(ctx(namespace, api_version), hub(scheme, obj), CreateOptions())


def test_create_fills_uid_creation_timestamp_and_resource_version(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    obj = config_map("a", k="v")
    obj["metadata"].update(uid="forged", creationTimestamp="2001-01-01T00:00:00Z")
    stored = _create(registry, scheme, "", "configmaps", obj).object
    meta = stored["metadata"]
    assert meta["uid"] != "forged" and len(meta["uid"]) == 36
    created = datetime.fromisoformat(meta["creationTimestamp"])
    assert abs((datetime.now(UTC) - created).total_seconds()) < 5
    assert int(meta["resourceVersion"]) > 0
    assert meta["namespace"] == "default"
    assert "generation" not in meta  # ConfigMaps have no generation in Kubernetes


def test_create_does_not_change_the_callers_object(registry: StoreRegistry, scheme: Scheme) -> None:
    obj = hub(scheme, config_map("untouched"))
    before = repr(obj)
    registry.store("", "configmaps").create(ctx(), obj, CreateOptions())
    assert repr(obj) == before


def test_generate_name_appends_five_random_characters(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    obj = config_map("")
    obj["metadata"] = {"generateName": "web-"}
    name = _create(registry, scheme, "", "configmaps", obj).object["metadata"]["name"]
    assert name.startswith("web-") and _SUFFIX.fullmatch(name[4:])


def test_generate_name_cuts_a_long_prefix_to_58_characters() -> None:
    name = names.generate_name("x" * 80)
    assert len(name) == 63 and name.startswith("x" * 58)


def test_generate_name_retries_a_collision(
    registry: StoreRegistry, scheme: Scheme, monkeypatch: pytest.MonkeyPatch
) -> None:
    _create(registry, scheme, "", "configmaps", config_map("dup-aaaaa"))
    generated = iter(["dup-aaaaa", "dup-aaaaa", "dup-bbbbb"])
    monkeypatch.setattr("kstore.registry.store.generate_name", lambda base: next(generated))
    obj = config_map("")
    obj["metadata"] = {"generateName": "dup-"}
    assert _create(registry, scheme, "", "configmaps", obj).object["metadata"]["name"] == (
        "dup-bbbbb"
    )


def test_generate_name_gives_up_after_eight_collisions(
    registry: StoreRegistry, scheme: Scheme, monkeypatch: pytest.MonkeyPatch
) -> None:
    _create(registry, scheme, "", "configmaps", config_map("dup-aaaaa"))
    calls: list[str] = []

    def same(base: str) -> str:
        calls.append(base)
        return "dup-aaaaa"

    monkeypatch.setattr("kstore.registry.store.generate_name", same)
    obj = config_map("")
    obj["metadata"] = {"generateName": "dup-"}
    with pytest.raises(AlreadyExists) as caught:
        _create(registry, scheme, "", "configmaps", obj)
    assert len(calls) == 8
    assert caught.value.message == (
        'configmaps "dup-aaaaa" already exists, the server was not able to generate a unique '
        "name for the object"
    )
    assert caught.value.retry_after_seconds == 1


def test_create_of_an_existing_name_is_already_exists(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    _create(registry, scheme, "apps", "deployments", deployment(), api_version="apps/v1")
    with pytest.raises(AlreadyExists) as caught:
        _create(registry, scheme, "apps", "deployments", deployment(), api_version="apps/v1")
    assert caught.value.message == 'deployments.apps "web" already exists'
    assert (caught.value.kind, caught.value.group, caught.value.name) == (
        "deployments",
        "apps",
        "web",
    )


def test_create_over_an_object_being_deleted_says_so(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    obj = config_map("held")
    obj["metadata"]["finalizers"] = ["example.com/hold"]
    _create(registry, scheme, "", "configmaps", obj)
    registry.store("", "configmaps").delete(ctx(), "held", DeleteOptions())
    with pytest.raises(AlreadyExists) as caught:
        _create(registry, scheme, "", "configmaps", config_map("held"))
    assert caught.value.message == 'object is being deleted: configmaps "held" already exists'


def test_namespace_of_the_object_must_match_the_request(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    obj = config_map("x")
    obj["metadata"]["namespace"] = "kube-system"
    with pytest.raises(BadRequest) as caught:
        _create(registry, scheme, "", "configmaps", obj)
    assert caught.value.message == (
        "the namespace of the provided object does not match the namespace sent on the request"
    )


def test_cluster_scoped_objects_lose_a_namespace(registry: StoreRegistry, scheme: Scheme) -> None:
    obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team", "namespace": "x"}}
    stored = _create(registry, scheme, "", "namespaces", obj, namespace="").object
    assert "namespace" not in stored["metadata"]


def test_namespace_is_created_active_with_the_kubernetes_finalizer(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    obj = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "team"},
        "spec": {"finalizers": ["example.com/cleanup"]},
        "status": {"phase": "Terminating"},
    }
    stored = _create(registry, scheme, "", "namespaces", obj, namespace="").object
    assert stored["status"] == {"phase": "Active"}
    assert stored["spec"]["finalizers"] == ["example.com/cleanup", "kubernetes"]
    assert stored["metadata"]["labels"] == {"kubernetes.io/metadata.name": "team"}


def test_namespaced_create_needs_an_existing_namespace(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    with pytest.raises(NotFound) as caught:
        _create(registry, scheme, "", "configmaps", config_map("x"), namespace="nowhere")
    assert caught.value.message == 'namespaces "nowhere" not found'


def test_create_in_a_terminating_namespace_is_forbidden(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "doomed"}}
    _create(registry, scheme, "", "namespaces", ns, namespace="")
    # A finalizer of its own keeps the namespace Terminating for the whole test.
    held = config_map("held")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    _create(registry, scheme, "", "configmaps", held, namespace="doomed")
    registry.store("", "namespaces").delete(ctx(""), "doomed", DeleteOptions())
    with pytest.raises(Forbidden) as caught:
        _create(registry, scheme, "", "configmaps", config_map("late"), namespace="doomed")
    assert caught.value.message == (
        'configmaps "late" is forbidden: unable to create new content in namespace doomed '
        "because it is being terminated"
    )
    assert [c.to_dict() for c in caught.value.causes] == [
        {
            "reason": "NamespaceTerminating",
            "message": "namespace doomed is being terminated",
            "field": "metadata.namespace",
        }
    ]
    store = registry.store("", "configmaps")
    store.update(ctx("doomed"), "held", _drop_finalizers, UpdateOptions())


def _drop_finalizers(current: dict[str, Any]) -> dict[str, Any]:
    out = dict(current)
    out["metadata"] = {k: v for k, v in current["metadata"].items() if k != "finalizers"}
    return out


def test_kinds_with_a_status_subresource_start_with_an_empty_status_and_generation_one(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    obj = deployment()
    obj["status"] = {"replicas": 7}
    obj["metadata"]["generation"] = 9
    stored = _create(registry, scheme, "apps", "deployments", obj, api_version="apps/v1").object
    assert stored["status"] == {}
    assert stored["metadata"]["generation"] == 1


def test_custom_kind_drops_status_on_create(registry: StoreRegistry, scheme: Scheme) -> None:
    obj = widget(size=3)
    obj["status"] = {"ready": True}
    stored = _create(
        registry, scheme, "example.com", "widgets", obj, api_version="example.com/v1"
    ).object
    assert "status" not in stored
    assert stored["metadata"]["generation"] == 1


def test_secret_string_data_is_merged_into_data(registry: StoreRegistry, scheme: Scheme) -> None:
    obj = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s"},
        "data": {"a": "YQ==", "b": "Yg=="},
        "stringData": {"b": "bee", "c": "sea"},
    }
    stored = _create(registry, scheme, "", "secrets", obj).object
    assert "stringData" not in stored
    assert stored["data"] == {"a": "YQ==", "b": "YmVl", "c": "c2Vh"}
    assert stored["type"] == "Opaque"


def test_service_cluster_ip_fills_cluster_ips(registry: StoreRegistry, scheme: Scheme) -> None:
    obj = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "svc"},
        "spec": {"clusterIP": "10.0.0.10", "ports": [{"port": 80}], "selector": {"a": "b"}},
        "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}},
    }
    stored = _create(registry, scheme, "", "services", obj).object
    assert stored["spec"]["clusterIPs"] == ["10.0.0.10"]
    assert stored["status"] == {"loadBalancer": {}}


@pytest.mark.parametrize(
    ("resources", "qos"),
    [
        ({}, "BestEffort"),
        ({"requests": {"cpu": "100m"}}, "Burstable"),
        ({"limits": {"cpu": "1", "memory": "1Gi"}}, "Guaranteed"),
        ({"requests": {"cpu": "500m"}, "limits": {"cpu": "1", "memory": "1Gi"}}, "Burstable"),
        (
            {
                "requests": {"cpu": "1000m", "memory": "1024Mi"},
                "limits": {"cpu": "1", "memory": "1Gi"},
            },
            "Guaranteed",
        ),
    ],
)
def test_pod_starts_pending_with_its_qos_class(
    registry: StoreRegistry, scheme: Scheme, resources: dict[str, Any], qos: str
) -> None:
    obj = pod("p")
    obj["spec"]["containers"][0]["resources"] = resources
    obj["status"] = {"phase": "Running", "podIP": "10.1.1.1"}
    stored = _create(registry, scheme, "", "pods", obj).object
    assert stored["status"] == {"phase": "Pending", "qosClass": qos}
    assert stored["metadata"]["generation"] == 1


def test_pod_with_scheduling_gates_is_marked_gated(registry: StoreRegistry, scheme: Scheme) -> None:
    stored = _create(
        registry, scheme, "", "pods", pod("g", schedulingGates=[{"name": "example.com/wait"}])
    ).object
    (condition,) = stored["status"]["conditions"]
    assert condition["type"] == "PodScheduled" and condition["status"] == "False"
    assert condition["reason"] == "SchedulingGated"
    assert condition["message"] == "Scheduling is blocked due to non-empty scheduling gates"


def test_pod_name_that_is_not_a_dns_label_gets_a_warning(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    result = _create(registry, scheme, "", "pods", pod("web.v1"))
    assert len(result.warnings) == 1
    assert result.warnings[0].startswith(
        "metadata.name: this is used in the Pod's hostname, which can result in surprising "
        "behavior; a DNS label is recommended: [must not contain dots]"
    )


def test_kind_validation_failure_is_invalid_with_kubernetes_wording(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    obj = config_map("Bad_Name")
    with pytest.raises(Invalid) as caught:
        _create(registry, scheme, "", "configmaps", obj)
    assert caught.value.code == 422
    assert caught.value.message.startswith('ConfigMap "Bad_Name" is invalid: metadata.name: ')


def test_generic_object_meta_rules_apply_to_custom_kinds(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    obj = widget("w")
    obj["metadata"]["labels"] = {"bad key!": "x"}
    with pytest.raises(Invalid) as caught:
        _create(registry, scheme, "example.com", "widgets", obj, api_version="example.com/v1")
    assert caught.value.message.startswith('Widget.example.com "w" is invalid: metadata.labels')


def test_defaults_are_applied_before_validation(registry: StoreRegistry, scheme: Scheme) -> None:
    # A v1 Deployment without a strategy is valid only once defaulted (RollingUpdate, 25%).
    stored = _create(
        registry, scheme, "apps", "deployments", deployment(), api_version="apps/v1"
    ).object
    assert stored["spec"]["strategy"]["type"] == "RollingUpdate"


def test_duplicate_owner_references_are_dropped_with_a_warning(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    owner = {"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "u-1"}
    obj = config_map("owned")
    obj["metadata"]["ownerReferences"] = [owner, dict(owner), {**owner, "name": "other"}]
    result = _create(registry, scheme, "", "configmaps", obj)
    assert result.object["metadata"]["ownerReferences"] == [owner, {**owner, "name": "other"}]
    assert result.warnings == (
        ".metadata.ownerReferences contains duplicate entries; API server dedups owner "
        "references in 1.20+, and may reject such requests as early as 1.24; please fix your "
        "requests; duplicate UID(s) observed: u-1",
    )


def test_dry_run_create_validates_and_stores_nothing(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    store = registry.store("", "configmaps")
    result = store.create(ctx(), hub(scheme, config_map("dry")), CreateOptions(dry_run=True))
    assert "resourceVersion" not in result.object["metadata"]
    assert result.object["metadata"]["uid"]
    with pytest.raises(NotFound):
        store.get(ctx(), "dry")
    with pytest.raises(Invalid):
        store.create(ctx(), hub(scheme, config_map("Dry!")), CreateOptions(dry_run=True))


def test_dry_run_create_of_an_existing_name_is_already_exists(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    _create(registry, scheme, "", "configmaps", config_map("there"))
    with pytest.raises(AlreadyExists):
        registry.store("", "configmaps").create(
            ctx(), hub(scheme, config_map("there")), CreateOptions(dry_run=True)
        )


def test_create_records_an_update_managed_fields_entry(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    obj = config_map("mf", k="v")
    obj["metadata"]["labels"] = {"app": "x"}
    stored = (
        registry.store("", "configmaps")
        .create(ctx(), hub(scheme, obj), CreateOptions(field_manager="kubectl-create"))
        .object
    )
    (entry,) = stored["metadata"]["managedFields"]
    assert entry["manager"] == "kubectl-create"
    assert entry["operation"] == "Update"
    assert entry["apiVersion"] == "v1"
    assert entry["fieldsType"] == "FieldsV1"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", entry["time"])
    assert entry["fieldsV1"] == {
        "f:data": {".": {}, "f:k": {}},
        "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
    }


def test_namespaced_create_without_a_namespace_is_a_bad_request(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    with pytest.raises(BadRequest) as caught:
        _create(registry, scheme, "", "configmaps", config_map("x"), namespace="")
    assert caught.value.message == "Namespace parameter required."
