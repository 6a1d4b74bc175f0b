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
