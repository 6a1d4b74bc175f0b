"""StatefulSet and PersistentVolumeClaim through the generic store: what their strategies do on
create, update, status and scale writes (on a real LMDB store)."""

from __future__ import annotations

from typing import Any

import pytest

from kstore.api.scheme import Scheme
from kstore.errors import Invalid
from kstore.registry.interface import CreateOptions, UpdateOptions
from kstore.registry.registry import StoreRegistry
from tests.registry.objects import changed, ctx, hub

APPS = "apps/v1"
STATUS = UpdateOptions(subresource="status")
SCALE = UpdateOptions(subresource="scale")


def _sts(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "serviceName": "web",
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
        },
        "volumeClaimTemplates": [
            {
                "metadata": {"name": "data"},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "1Gi"}},
                },
            }
        ],
    }
    body.update(spec)
    return {"apiVersion": APPS, "kind": "StatefulSet", "metadata": {"name": "web"}, "spec": body}


def _pvc(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "1Gi"}},
    }
    body.update(spec)
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data"},
        "spec": body,
    }


def _create_sts(registry: StoreRegistry, scheme: Scheme, **spec: Any) -> Any:
    store = registry.store("apps", "statefulsets")
    return store.create(ctx("default", APPS), hub(scheme, _sts(**spec)), CreateOptions())


def _create_pvc(registry: StoreRegistry, scheme: Scheme, obj: dict[str, Any]) -> Any:
    store = registry.store("", "persistentvolumeclaims")
    return store.create(ctx(), hub(scheme, obj), CreateOptions())


# ---------------------------------------------------------------------------- StatefulSet


def test_created_statefulset_has_generation_and_a_zero_status(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    created = _create_sts(registry, scheme).object
    assert created["metadata"]["generation"] == 1
    assert created["status"] == {"replicas": 0, "availableReplicas": 0}
    assert created["spec"]["volumeClaimTemplates"][0]["status"] == {"phase": "Pending"}


def test_create_warns_of_a_negative_history_and_fractional_claims(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    sts = _sts(revisionHistoryLimit=-1)
    sts["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"] = "1500m"
    result = registry.store("apps", "statefulsets").create(
        ctx("default", APPS), hub(scheme, sts), CreateOptions()
    )
    assert result.warnings == (
        "spec.volumeClaimTemplates[0].resources.requests[storage]: fractional byte value "
        '"1500m" is invalid, must be an integer',
        "spec.revisionHistoryLimit: a negative value retains all historical revisions; "
        "a value >= 0 is recommended",
    )


def test_generation_follows_the_spec_and_status_is_kept(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    _create_sts(registry, scheme)
    store = registry.store("apps", "statefulsets")
    apps = ctx("default", APPS)
    annotated = store.update(
        apps,
        "web",
        changed(lambda o: o["metadata"].update(annotations={"a": "b"})),
        UpdateOptions(),
    ).object
    assert annotated["metadata"]["generation"] == 1
    scaled = store.update(
        apps,
        "web",
        changed(lambda o: (o["spec"].update(replicas=3), o.update(status={"replicas": 9}))),
        UpdateOptions(),
    ).object
    assert scaled["metadata"]["generation"] == 2
    assert scaled["status"] == {"replicas": 0, "availableReplicas": 0}


def test_immutable_spec_fields_are_refused_on_update(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    _create_sts(registry, scheme)
    store = registry.store("apps", "statefulsets")
    with pytest.raises(Invalid) as caught:
        store.update(
            ctx("default", APPS),
            "web",
            changed(lambda o: o["spec"].update(serviceName="db")),
            UpdateOptions(),
        )
    assert caught.value.message == (
        'StatefulSet.apps "web" is invalid: spec: Forbidden: updates to statefulset spec for '
        "fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', "
        "'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' "
        "are forbidden"
    )


def test_status_writes_keep_the_spec_and_follow_the_status_rules(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    _create_sts(registry, scheme)
    store = registry.store("apps", "statefulsets")
    apps = ctx("default", APPS)

    def edit(o: dict[str, Any]) -> None:
        o["spec"]["replicas"] = 7
        o["metadata"]["labels"] = {"app": "changed"}
        o["status"] = {"replicas": 1, "readyReplicas": 1, "availableReplicas": 1}

    stored = store.update(apps, "web", changed(edit), STATUS).object
    assert stored["spec"]["replicas"] == 1
    assert stored["metadata"]["labels"] == {"app": "changed"}
    assert stored["status"] == {"replicas": 1, "readyReplicas": 1, "availableReplicas": 1}
    assert stored["metadata"]["generation"] == 1
    with pytest.raises(Invalid) as caught:
        store.update(
            apps,
            "web",
            changed(lambda o: o.update(status={"replicas": 1, "readyReplicas": 2})),
            STATUS,
        )
    assert "status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas" in (
        caught.value.message
    )


def test_scale_writes_change_replicas_only(registry: StoreRegistry, scheme: Scheme) -> None:
    _create_sts(registry, scheme)
    store = registry.store("apps", "statefulsets")

    def edit(o: dict[str, Any]) -> None:
        o["spec"]["replicas"] = 4
        o["spec"]["serviceName"] = "ignored"
        o["metadata"]["labels"] = {"ignored": "yes"}

    stored = store.update(ctx("default", APPS), "web", changed(edit), SCALE).object
    assert stored["spec"]["replicas"] == 4
    assert stored["spec"]["serviceName"] == "web"
    assert "labels" not in stored["metadata"]
    assert stored["metadata"]["generation"] == 2


# ---------------------------------------------------------------------------- claims


def test_created_claim_reads_pending_with_no_generation(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    claim = _pvc()
    claim["status"] = {"phase": "Bound"}
    created = _create_pvc(registry, scheme, claim).object
    assert created["status"] == {"phase": "Pending"}
    assert created["spec"]["volumeMode"] == "Filesystem"
    assert "generation" not in created["metadata"]
    stored = registry.store("", "persistentvolumeclaims").get(ctx(), "data")
    assert stored["status"] == {"phase": "Pending"}


def test_create_normalizes_data_sources_and_drops_legacy_ones(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    snapshot = {"apiGroup": "snapshot.storage.k8s.io", "kind": "VolumeSnapshot", "name": "s"}
    created = _create_pvc(registry, scheme, _pvc(dataSource=snapshot)).object
    assert created["spec"]["dataSourceRef"] == snapshot
    claim = _pvc(dataSource={"apiGroup": "example.com", "kind": "Thing", "name": "t"})
    claim["metadata"]["name"] = "legacy"
    created = _create_pvc(registry, scheme, claim).object
    assert "dataSource" not in created["spec"] and "dataSourceRef" not in created["spec"]


def test_create_warns_of_the_beta_storage_class_annotation(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    claim = _pvc()
    claim["metadata"]["annotations"] = {"volume.beta.kubernetes.io/storage-class": "gold"}
    assert _create_pvc(registry, scheme, claim).warnings == (
        "metadata.annotations[volume.beta.kubernetes.io/storage-class]: deprecated since v1.8; "
        'use "storageClassName" attribute instead',
    )


def test_claim_spec_is_immutable_but_status_writes_bind_it(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    _create_pvc(registry, scheme, _pvc())
    store = registry.store("", "persistentvolumeclaims")
    with pytest.raises(Invalid) as caught:
        store.update(
            ctx(),
            "data",
            changed(lambda o: o["spec"].update(accessModes=["ReadOnlyMany"])),
            UpdateOptions(),
        )
    assert caught.value.message.startswith(
        'PersistentVolumeClaim "data" is invalid: spec: Forbidden: spec is immutable after '
        "creation except resources.requests and volumeAttributesClassName for bound claims"
    )
    bound = store.update(
        ctx(), "data", changed(lambda o: o["spec"].update(volumeName="pv-1")), UpdateOptions()
    ).object
    assert bound["spec"]["volumeName"] == "pv-1"

    def bind(o: dict[str, Any]) -> None:
        o["status"] = {
            "phase": "Bound",
            "accessModes": ["ReadWriteOnce"],
            "capacity": {"storage": "1Gi"},
        }
        o["spec"]["volumeName"] = "ignored"

    stored = store.update(ctx(), "data", changed(bind), STATUS).object
    assert stored["status"]["phase"] == "Bound"
    assert stored["spec"]["volumeName"] == "pv-1"
    grown = store.update(
        ctx(),
        "data",
        changed(lambda o: o["spec"]["resources"]["requests"].update(storage="2Gi")),
        UpdateOptions(),
    ).object
    assert grown["spec"]["resources"]["requests"]["storage"] == "2Gi"
