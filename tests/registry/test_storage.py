"""storage.k8s.io StorageClass, CSIDriver and CSINode through the generic store: cluster scope,
generation and the update rules of Kubernetes' strategies."""

from __future__ import annotations

from typing import Any

import pytest

from kstore.api.gvk import GroupVersionKind
from kstore.api.patch_meta import type_for_gvk
from kstore.api.scheme import Scheme
from kstore.errors import Invalid
from kstore.registry.interface import CreateOptions, UpdateOptions
from kstore.registry.patch.strategic import strategic_merge
from kstore.registry.registry import StoreRegistry
from tests.registry.objects import changed, ctx, hub

STORAGE = "storage.k8s.io/v1"


def _create(registry: StoreRegistry, scheme: Scheme, obj: dict[str, Any]) -> dict[str, Any]:
    plural = {"StorageClass": "storageclasses", "CSIDriver": "csidrivers", "CSINode": "csinodes"}
    store = registry.store("storage.k8s.io", plural[obj["kind"]])
    return store.create(ctx("", STORAGE), hub(scheme, obj), CreateOptions()).object


def _storage_class(**fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": STORAGE,
        "kind": "StorageClass",
        "metadata": {"name": "fast"},
        "provisioner": "ebs.csi.aws.com",
        **fields,
    }


def test_storage_classes_are_cluster_scoped_defaulted_and_keep_their_provisioner(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    sc = _create(registry, scheme, _storage_class(parameters={"type": "gp3"}))
    assert "namespace" not in sc["metadata"]
    assert "generation" not in sc["metadata"]
    assert (sc["reclaimPolicy"], sc["volumeBindingMode"]) == ("Delete", "Immediate")
    store = registry.store("storage.k8s.io", "storageclasses")
    request = ctx("", STORAGE)
    expanded = store.update(
        request, "fast", changed(lambda o: o.update(allowVolumeExpansion=True)), UpdateOptions()
    ).object
    assert expanded["allowVolumeExpansion"] is True
    assert "generation" not in expanded["metadata"]
    with pytest.raises(Invalid) as caught:
        store.update(
            request, "fast", changed(lambda o: o.update(provisioner="x.io")), UpdateOptions()
        )
    assert "provisioner: Forbidden: updates to provisioner are forbidden." in caught.value.message


def test_a_csi_driver_gets_a_generation_only_when_its_spec_changes(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    body = {
        "apiVersion": STORAGE,
        "kind": "CSIDriver",
        "metadata": {"name": "ebs.csi.aws.com"},
        "spec": {"attachRequired": True},
    }
    driver = _create(registry, scheme, body)
    assert "generation" not in driver["metadata"]
    assert driver["spec"]["volumeLifecycleModes"] == ["Persistent"]
    store = registry.store("storage.k8s.io", "csidrivers")
    request = ctx("", STORAGE)
    labelled = store.update(
        request,
        "ebs.csi.aws.com",
        changed(lambda o: o["metadata"].update(labels={"a": "b"})),
        UpdateOptions(),
    ).object
    assert "generation" not in labelled["metadata"]
    updated = store.update(
        request,
        "ebs.csi.aws.com",
        changed(lambda o: o["spec"].update(podInfoOnMount=True)),
        UpdateOptions(),
    ).object
    assert updated["metadata"]["generation"] == 1
    with pytest.raises(Invalid) as caught:
        store.update(
            request,
            "ebs.csi.aws.com",
            changed(lambda o: o["spec"].update(attachRequired=False)),
            UpdateOptions(),
        )
    assert "spec.attachedRequired: Invalid value: false: field is immutable" in (
        caught.value.message
    )


def test_csi_driver_updates_need_a_resource_version(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    body = {"apiVersion": STORAGE, "kind": "CSIDriver", "metadata": {"name": "d.csi.io"}}
    _create(registry, scheme, body)
    store = registry.store("storage.k8s.io", "csidrivers")
    unconditional = hub(scheme, {**body, "spec": {"podInfoOnMount": True}})
    with pytest.raises(Invalid) as caught:
        store.update(ctx("", STORAGE), "d.csi.io", lambda current: unconditional, UpdateOptions())
    assert "metadata.resourceVersion: Invalid value: 0: must be specified for an update" in (
        caught.value.message
    )


def test_a_csi_node_starts_with_an_empty_status(registry: StoreRegistry, scheme: Scheme) -> None:
    body = {
        "apiVersion": STORAGE,
        "kind": "CSINode",
        "metadata": {"name": "node-1"},
        "spec": {"drivers": [{"name": "d.csi.io", "nodeID": "n1", "topologyKeys": None}]},
    }
    node = _create(registry, scheme, body)
    assert node["status"] == {}
    assert "generation" not in node["metadata"]


def test_a_strategic_merge_patch_merges_csi_node_drivers_by_name() -> None:
    node = type_for_gvk(GroupVersionKind("storage.k8s.io", "v1", "CSINode"))
    assert node is not None
    original = {
        "spec": {
            "drivers": [
                {"name": "a.csi.io", "nodeID": "n1", "topologyKeys": None},
                {"name": "b.csi.io", "nodeID": "n1", "topologyKeys": None},
            ]
        }
    }
    patch = {"spec": {"drivers": [{"name": "b.csi.io", "allocatable": {"count": 4}}]}}
    patched = strategic_merge(original, patch, node)
    assert [d["name"] for d in patched["spec"]["drivers"]] == ["a.csi.io", "b.csi.io"]
    assert patched["spec"]["drivers"][1]["allocatable"] == {"count": 4}


STATUS = UpdateOptions(subresource="status")


def _pv() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "pv-1"},
        "spec": {
            "capacity": {"storage": "5Gi"},
            "accessModes": ["ReadWriteOnce"],
            "hostPath": {"path": "/srv/pv-1"},
        },
        "status": {"phase": "Bound"},
    }


def test_a_persistent_volume_starts_pending_and_status_writes_move_its_phase(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    store = registry.store("", "persistentvolumes")
    request = ctx("", "v1")
    pv = store.create(request, hub(scheme, _pv()), CreateOptions()).object
    assert pv["status"]["phase"] == "Pending"
    created_at = pv["status"]["lastPhaseTransitionTime"]
    assert created_at.endswith("Z")
    assert "generation" not in pv["metadata"]
    assert pv["spec"]["persistentVolumeReclaimPolicy"] == "Retain"

    def bind(o: dict[str, Any]) -> None:
        o["status"] = {"phase": "Bound"}
        o["spec"]["storageClassName"] = "ignored"  # a status write keeps the spec

    bound = store.update(request, "pv-1", changed(bind), STATUS).object
    assert bound["status"]["phase"] == "Bound"
    assert bound["status"]["lastPhaseTransitionTime"] >= created_at
    assert "storageClassName" not in bound["spec"]
    claimed = store.update(
        request,
        "pv-1",
        changed(lambda o: o["spec"].update(claimRef={"namespace": "ns", "name": "data"})),
        UpdateOptions(),
    ).object
    assert claimed["status"]["phase"] == "Bound"
    assert claimed["spec"]["claimRef"] == {"namespace": "ns", "name": "data"}
    with pytest.raises(Invalid) as caught:
        store.update(
            request,
            "pv-1",
            changed(lambda o: o["spec"].update(hostPath={"path": "/srv/other"})),
            UpdateOptions(),
        )
    assert "spec.persistentvolumesource is immutable after creation" in caught.value.message


def test_a_volume_attachment_starts_detached_and_only_status_writes_attach_it(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    body = {
        "apiVersion": STORAGE,
        "kind": "VolumeAttachment",
        "metadata": {"name": "csi-0123"},
        "spec": {
            "attacher": "ebs.csi.aws.com",
            "nodeName": "node-1",
            "source": {"persistentVolumeName": "pv-1"},
        },
        "status": {"attached": True},
    }
    store = registry.store("storage.k8s.io", "volumeattachments")
    request = ctx("", STORAGE)
    attachment = store.create(request, hub(scheme, body), CreateOptions()).object
    assert attachment["status"] == {"attached": False}
    assert "generation" not in attachment["metadata"]
    kept = store.update(
        request,
        "csi-0123",
        changed(lambda o: o.update(status={"attached": True})),
        UpdateOptions(),
    ).object
    assert kept["status"] == {"attached": False}
    attached = store.update(
        request,
        "csi-0123",
        changed(lambda o: o.update(status={"attached": True, "attachmentMetadata": {"a": "b"}})),
        STATUS,
    ).object
    assert attached["status"]["attached"] is True
    with pytest.raises(Invalid) as caught:
        store.update(
            request,
            "csi-0123",
            changed(lambda o: o["spec"].update(nodeName="node-2")),
            UpdateOptions(),
        )
    assert "spec: Invalid value: " in caught.value.message
    assert "field is immutable" in caught.value.message
