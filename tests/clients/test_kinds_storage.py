"""storage.k8s.io/v1 (StorageClass, CSIDriver, CSINode, VolumeAttachment) and core/v1
PersistentVolume with real kubectl and the Python client: discovery, apply (client- and
server-side), the columns ``kubectl get`` prints, status writes, the update rules, delete; on
LMDB and on etcd."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.clients.kubectl import Kubectl
from tests.clients.manifests import to_yaml


def _rows(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def storage(api_client: client.ApiClient) -> client.StorageV1Api:
    return client.StorageV1Api(api_client)


def _storage_class(name: str, **fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": "ebs.csi.aws.com",
        **fields,
    }


def test_discovery_names_the_storage_kinds(kubectl: Kubectl) -> None:
    rows = _rows(kubectl.ok("api-resources", "--api-group=storage.k8s.io"))
    assert ["storageclasses", "sc", "storage.k8s.io/v1", "false", "StorageClass"] in rows
    assert ["csidrivers", "storage.k8s.io/v1", "false", "CSIDriver"] in rows
    assert ["csinodes", "storage.k8s.io/v1", "false", "CSINode"] in rows
    assert ["volumeattachments", "storage.k8s.io/v1", "false", "VolumeAttachment"] in rows
    core = _rows(kubectl.ok("api-resources", "--api-group="))
    assert ["persistentvolumes", "pv", "v1", "false", "PersistentVolume"] in core


def test_storage_classes_with_kubectl(k: Kubectl) -> None:
    default = _storage_class(
        "standard",
        metadata={
            "name": "standard",
            "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
        },
        provisioner="rancher.io/local-path",
        volumeBindingMode="WaitForFirstConsumer",
    )
    k.write("standard.yaml", to_yaml(default))
    applied = k.ok("apply", "--server-side", "-f", "standard.yaml").strip()
    assert applied == "storageclass.storage.k8s.io/standard serverside-applied"
    k.write("fast.yaml", to_yaml(_storage_class("fast", allowVolumeExpansion=True)))
    assert k.ok("apply", "-f", "fast.yaml").strip() == "storageclass.storage.k8s.io/fast created"

    rows = _rows(k.ok("get", "sc", "-o", "wide"))
    assert rows[0] == [
        "NAME",
        "PROVISIONER",
        "RECLAIMPOLICY",
        "VOLUMEBINDINGMODE",
        "ALLOWVOLUMEEXPANSION",
        "AGE",
    ]
    assert rows[1][:5] == ["fast", "ebs.csi.aws.com", "Delete", "Immediate", "true"]
    assert rows[2][:6] == [
        "standard",
        "(default)",
        "rancher.io/local-path",
        "Delete",
        "WaitForFirstConsumer",
        "false",
    ]

    k.write("fast.yaml", to_yaml(_storage_class("fast", reclaimPolicy="Retain")))
    result = k.fails("apply", "-f", "fast.yaml")
    assert "reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden." in result.stderr
    assert k.ok("delete", "sc", "fast", "standard").split("\n")[0] == (
        'storageclass.storage.k8s.io "fast" deleted'
    )
    assert "No resources found" in k.run("get", "sc").stderr


def test_csi_drivers_and_nodes_with_kubectl(k: Kubectl) -> None:
    driver = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": {"name": "hostpath.csi.k8s.io"},
        "spec": {"podInfoOnMount": True, "volumeLifecycleModes": ["Persistent", "Ephemeral"]},
    }
    k.write("driver.yaml", to_yaml(driver))
    applied = k.ok("apply", "--server-side", "-f", "driver.yaml").strip()
    assert applied == "csidriver.storage.k8s.io/hostpath.csi.k8s.io serverside-applied"
    rows = _rows(k.ok("get", "csidrivers", "-o", "wide"))
    assert rows[0] == [
        "NAME",
        "ATTACHREQUIRED",
        "PODINFOONMOUNT",
        "STORAGECAPACITY",
        "TOKENREQUESTS",
        "REQUIRESREPUBLISH",
        "MODES",
        "AGE",
    ]
    assert rows[1][:7] == [
        "hostpath.csi.k8s.io",
        "true",
        "true",
        "false",
        "<unset>",
        "false",
        "Persistent,Ephemeral",
    ]
    stored = json.loads(k.ok("get", "csidriver", "hostpath.csi.k8s.io", "-o", "json"))
    assert stored["spec"]["fsGroupPolicy"] == "ReadWriteOnceWithFSType"
    assert stored["spec"]["seLinuxMount"] is False

    node = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": {"name": "node-1"},
        "spec": {
            "drivers": [{"name": "hostpath.csi.k8s.io", "nodeID": "node-1", "topologyKeys": None}]
        },
    }
    k.write("node.yaml", to_yaml(node))
    assert k.ok("create", "-f", "node.yaml").strip() == "csinode.storage.k8s.io/node-1 created"
    rows = _rows(k.ok("get", "csinodes"))
    assert rows[0] == ["NAME", "DRIVERS", "AGE"]
    assert rows[1][:2] == ["node-1", "1"]
    assert k.ok("delete", "csinode", "node-1").strip() == (
        'csinode.storage.k8s.io "node-1" deleted'
    )
    assert k.ok("delete", "csidriver", "hostpath.csi.k8s.io").strip() == (
        'csidriver.storage.k8s.io "hostpath.csi.k8s.io" deleted'
    )


def test_storage_class_and_csi_driver_crud_with_the_python_client(
    storage: client.StorageV1Api,
) -> None:
    body = client.V1StorageClass(
        metadata=client.V1ObjectMeta(name="gp3"),
        provisioner="ebs.csi.aws.com",
        parameters={"type": "gp3"},
    )
    created = storage.create_storage_class(body)
    assert isinstance(created, client.V1StorageClass)
    assert (created.reclaim_policy, created.volume_binding_mode) == ("Delete", "Immediate")
    patched = storage.patch_storage_class("gp3", {"allowVolumeExpansion": True})
    assert patched.allow_volume_expansion is True
    with pytest.raises(ApiException) as refused:
        storage.patch_storage_class("gp3", {"parameters": {"type": "io2"}})
    assert refused.value.status == 422
    assert "updates to parameters are forbidden." in json.loads(refused.value.body)["message"]
    assert [c.metadata.name for c in storage.list_storage_class().items] == ["gp3"]
    storage.delete_storage_class("gp3")

    driver = storage.create_csi_driver(
        client.V1CSIDriver(
            metadata=client.V1ObjectMeta(name="ebs.csi.aws.com"),
            spec=client.V1CSIDriverSpec(attach_required=True),
        )
    )
    assert driver.spec.volume_lifecycle_modes == ["Persistent"]
    assert driver.metadata.generation is None
    bumped = storage.patch_csi_driver("ebs.csi.aws.com", {"spec": {"storageCapacity": True}})
    assert (bumped.spec.storage_capacity, bumped.metadata.generation) == (True, 1)
    storage.delete_csi_driver("ebs.csi.aws.com")
    assert storage.list_csi_driver().items == []


def _pv(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {
            "capacity": {"storage": "5Gi"},
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "manual",
            "hostPath": {"path": f"/srv/{name}"},
            **spec,
        },
    }


def test_persistent_volumes_with_kubectl(k: Kubectl, api_client: client.ApiClient) -> None:
    k.write("pv.yaml", to_yaml(_pv("pv-a")))
    applied = k.ok("apply", "--server-side", "-f", "pv.yaml").strip()
    assert applied == "persistentvolume/pv-a serverside-applied"
    rows = _rows(k.ok("get", "pv", "-o", "wide"))
    assert rows[0] == [
        "NAME",
        "CAPACITY",
        "ACCESS",
        "MODES",
        "RECLAIM",
        "POLICY",
        "STATUS",
        "CLAIM",
        "STORAGECLASS",
        "VOLUMEATTRIBUTESCLASS",
        "REASON",
        "AGE",
        "VOLUMEMODE",
    ]
    # The empty CLAIM and REASON cells leave no word behind.
    assert rows[1][:6] == ["pv-a", "5Gi", "RWO", "Retain", "Pending", "manual"]
    assert rows[1][-1] == "Filesystem"

    # The volume controller's write: the status subresource moves the phase.
    core = client.CoreV1Api(api_client)
    core.patch_persistent_volume_status("pv-a", {"status": {"phase": "Available"}})
    assert k.ok("get", "pv", "pv-a", "-o", "jsonpath={.status.phase}") == "Available"

    k.write("pv.yaml", to_yaml(_pv("pv-a", hostPath={"path": "/srv/elsewhere"})))
    result = k.fails("apply", "--server-side", "-f", "pv.yaml")
    assert "spec.persistentvolumesource is immutable after creation" in result.stderr
    assert k.ok("delete", "pv", "pv-a").strip() == 'persistentvolume "pv-a" deleted'


def test_persistent_volume_crud_with_the_python_client(api_client: client.ApiClient) -> None:
    core = client.CoreV1Api(api_client)
    body = client.V1PersistentVolume(
        metadata=client.V1ObjectMeta(name="pv-nfs"),
        spec=client.V1PersistentVolumeSpec(
            capacity={"storage": "1Gi"},
            access_modes=["ReadWriteMany"],
            nfs=client.V1NFSVolumeSource(server="nfs.example.com", path="/exports"),
        ),
    )
    created = core.create_persistent_volume(body)
    assert isinstance(created, client.V1PersistentVolume)
    assert created.status.phase == "Pending"
    assert created.status.last_phase_transition_time is not None
    assert created.spec.persistent_volume_reclaim_policy == "Retain"
    assert created.spec.volume_mode == "Filesystem"
    bound = core.patch_persistent_volume(
        "pv-nfs", {"spec": {"claimRef": {"namespace": "default", "name": "data"}}}
    )
    assert bound.spec.claim_ref.name == "data"
    with pytest.raises(ApiException) as refused:
        core.create_persistent_volume(
            client.V1PersistentVolume(
                metadata=client.V1ObjectMeta(name="pv-none"),
                spec=client.V1PersistentVolumeSpec(
                    capacity={"storage": "1Gi"}, access_modes=["ReadWriteOnce"]
                ),
            )
        )
    assert refused.value.status == 422
    assert (
        "spec: Required value: must specify a volume type"
        in (json.loads(refused.value.body)["message"])
    )
    deleted = core.delete_persistent_volume("pv-nfs")
    assert deleted.metadata.name == "pv-nfs"
    # Not Bound, so the pv-protection controller takes its finalizer off and it goes.
    assert deleted.metadata.finalizers == ["kubernetes.io/pv-protection"]
    deadline = time.monotonic() + 15
    while core.list_persistent_volume().items:
        assert time.monotonic() < deadline, "the volume stayed"
        time.sleep(0.05)


def test_volume_attachments_with_the_python_client_and_kubectl(
    k: Kubectl, storage: client.StorageV1Api
) -> None:
    body = client.V1VolumeAttachment(
        metadata=client.V1ObjectMeta(name="csi-0123"),
        spec=client.V1VolumeAttachmentSpec(
            attacher="ebs.csi.aws.com",
            node_name="node-1",
            source=client.V1VolumeAttachmentSource(persistent_volume_name="pv-1"),
        ),
    )
    created = storage.create_volume_attachment(body)
    assert created.status.attached is False
    attached = storage.patch_volume_attachment_status(
        "csi-0123", {"status": {"attached": True, "attachmentMetadata": {"devicePath": "/dev/x"}}}
    )
    assert attached.status.attached is True
    rows = _rows(k.ok("get", "volumeattachments"))
    assert rows[0] == ["NAME", "ATTACHER", "PV", "NODE", "ATTACHED", "AGE"]
    assert rows[1][:5] == ["csi-0123", "ebs.csi.aws.com", "pv-1", "node-1", "true"]
    with pytest.raises(ApiException) as refused:
        storage.patch_volume_attachment("csi-0123", {"spec": {"nodeName": "node-2"}})
    assert refused.value.status == 422
    assert "field is immutable" in json.loads(refused.value.body)["message"]
    assert storage.delete_volume_attachment("csi-0123").metadata.name == "csi-0123"
    assert storage.list_volume_attachment().items == []


def test_a_claim_delete_answers_with_the_claim(
    api_client: client.ApiClient, namespace: str
) -> None:
    core = client.CoreV1Api(api_client)
    claim = client.V1PersistentVolumeClaim(
        metadata=client.V1ObjectMeta(name="data"),
        spec=client.V1PersistentVolumeClaimSpec(
            access_modes=["ReadWriteOnce"],
            resources=client.V1VolumeResourceRequirements(requests={"storage": "1Gi"}),
        ),
    )
    core.create_namespaced_persistent_volume_claim(namespace, claim)
    deleted = core.delete_namespaced_persistent_volume_claim("data", namespace)
    assert isinstance(deleted, client.V1PersistentVolumeClaim)
    assert deleted.metadata.name == "data"
