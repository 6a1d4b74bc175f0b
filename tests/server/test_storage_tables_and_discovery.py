"""The storage.k8s.io group and core PersistentVolumes at the REST edge: discovery entries, the
tables kubectl prints, the OpenAPI document."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from kstore.api.kinds import builtin_scheme
from kstore.server.discovery import Discovery
from kstore.server.openapi import OpenAPIV3
from kstore.server.table import build_table


def _ago(seconds: int) -> str:
    return (datetime.now(UTC) - timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _resources() -> dict[str, Any]:
    groups = orjson.loads(Discovery(builtin_scheme()).aggregated_groups.body)
    group = next(g for g in groups["items"] if g["metadata"]["name"] == "storage.k8s.io")
    assert [v["version"] for v in group["versions"]] == ["v1"]
    return {r["resource"]: r for r in group["versions"][0]["resources"]}


def test_discovery_lists_the_storage_kinds_as_cluster_scoped() -> None:
    resources = _resources()
    assert {"storageclasses", "csidrivers", "csinodes"} <= set(resources)
    for name in ("storageclasses", "csidrivers", "csinodes", "volumeattachments"):
        assert resources[name]["scope"] == "Cluster"
        assert "categories" not in resources[name]
    for name in ("storageclasses", "csidrivers", "csinodes"):
        assert not resources[name].get("subresources")
    attachments = resources["volumeattachments"]
    assert [s["subresource"] for s in attachments["subresources"]] == ["status"]
    assert resources["storageclasses"]["shortNames"] == ["sc"]
    assert "shortNames" not in resources["csidrivers"]


def _table(kind: str, *objs: dict[str, Any]) -> dict[str, Any]:
    return build_table(list(objs), kind=kind, group="storage.k8s.io", meta_version="v1")


def test_storage_class_table_marks_the_default_class() -> None:
    default = {
        "metadata": {
            "name": "standard",
            "creationTimestamp": _ago(120),
            "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
        },
        "provisioner": "rancher.io/local-path",
        "reclaimPolicy": "Delete",
        "volumeBindingMode": "WaitForFirstConsumer",
    }
    beta = {
        "metadata": {
            "name": "old",
            "annotations": {"storageclass.beta.kubernetes.io/is-default-class": "true"},
        },
        "provisioner": "p.io",
        "allowVolumeExpansion": True,
    }
    plain = {
        "metadata": {
            "name": "fast",
            "annotations": {"storageclass.kubernetes.io/is-default-class": "false"},
        },
        "provisioner": "ebs.csi.aws.com",
        "reclaimPolicy": "Retain",
    }
    table = _table("StorageClass", default, beta, plain)
    assert [(c["name"], c["type"]) for c in table["columnDefinitions"]] == [
        ("Name", "string"),
        ("Provisioner", "string"),
        ("ReclaimPolicy", "string"),
        ("VolumeBindingMode", "string"),
        ("AllowVolumeExpansion", "string"),
        ("Age", "string"),
    ]
    assert [row["cells"][:5] for row in table["rows"]] == [
        ["standard (default)", "rancher.io/local-path", "Delete", "WaitForFirstConsumer", False],
        ["old (default)", "p.io", "Delete", "Immediate", True],
        ["fast", "ebs.csi.aws.com", "Retain", "Immediate", False],
    ]
    assert table["rows"][0]["cells"][5] == "2m"


def test_csi_driver_and_csi_node_tables() -> None:
    driver = {
        "metadata": {"name": "ebs.csi.aws.com"},
        "spec": {
            "attachRequired": True,
            "podInfoOnMount": False,
            "storageCapacity": True,
            "tokenRequests": [{"audience": "sts"}, {"audience": "vault"}],
            "requiresRepublish": False,
            "volumeLifecycleModes": ["Persistent", "Ephemeral"],
        },
    }
    table = _table("CSIDriver", driver, {"metadata": {"name": "bare.csi.io"}, "spec": {}})
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name",
        "AttachRequired",
        "PodInfoOnMount",
        "StorageCapacity",
        "TokenRequests",
        "RequiresRepublish",
        "Modes",
        "Age",
    ]
    assert [row["cells"][:7] for row in table["rows"]] == [
        ["ebs.csi.aws.com", True, False, True, "sts,vault", False, "Persistent,Ephemeral"],
        ["bare.csi.io", True, True, False, "<unset>", False, "<none>"],
    ]
    node = {"metadata": {"name": "node-1"}, "spec": {"drivers": [{"name": "a"}, {"name": "b"}]}}
    nodes = _table("CSINode", node)
    assert [(c["name"], c["type"]) for c in nodes["columnDefinitions"]] == [
        ("Name", "string"),
        ("Drivers", "integer"),
        ("Age", "string"),
    ]
    assert nodes["rows"][0]["cells"][:2] == ["node-1", 2]


def test_openapi_document_of_storage_v1() -> None:
    doc = OpenAPIV3(builtin_scheme(), "v1.36.0").document("apis/storage.k8s.io/v1")
    assert doc is not None
    body = orjson.loads(doc.body)
    assert "/apis/storage.k8s.io/v1/storageclasses/{name}" in body["paths"]
    assert "/apis/storage.k8s.io/v1/csinodes" in body["paths"]
    schemas = body["components"]["schemas"]
    assert schemas["io.k8s.api.storage.v1.StorageClass"]["required"] == ["provisioner"]
    assert schemas["io.k8s.api.storage.v1.CSIDriver"]["required"] == ["spec"]
    drivers = schemas["io.k8s.api.storage.v1.CSINodeSpec"]["properties"]["drivers"]
    assert drivers["x-kubernetes-patch-merge-key"] == "name"
    assert drivers["x-kubernetes-list-type"] == "map"


def test_discovery_lists_persistent_volumes_in_the_core_group() -> None:
    body = orjson.loads(Discovery(builtin_scheme()).aggregated_core.body)
    resources = {r["resource"]: r for r in body["items"][0]["versions"][0]["resources"]}
    pvs = resources["persistentvolumes"]
    assert (pvs["scope"], pvs["shortNames"]) == ("Cluster", ["pv"])
    assert [s["subresource"] for s in pvs["subresources"]] == ["status"]
    assert "categories" not in pvs


def test_persistent_volume_table() -> None:
    pv = {
        "metadata": {
            "name": "pv-1",
            "creationTimestamp": _ago(180),
            "annotations": {"volume.beta.kubernetes.io/storage-class": "legacy"},
        },
        "spec": {
            "capacity": {"storage": "10Gi"},
            "accessModes": ["ReadWriteMany", "ReadWriteOnce"],
            "persistentVolumeReclaimPolicy": "Retain",
            "claimRef": {"namespace": "default", "name": "data"},
            "storageClassName": "nfs",
            "volumeMode": "Filesystem",
        },
        "status": {"phase": "Bound"},
    }
    released = {
        "metadata": {"name": "pv-2", "deletionTimestamp": _ago(1)},
        "spec": {"capacity": {"storage": "1Gi"}, "volumeAttributesClassName": "gold"},
        "status": {"phase": "Released", "reason": "Recycled"},
    }
    table = build_table([pv, released], kind="PersistentVolume", group="", meta_version="v1")
    assert [(c["name"], c["priority"]) for c in table["columnDefinitions"]] == [
        ("Name", 0),
        ("Capacity", 0),
        ("Access Modes", 0),
        ("Reclaim Policy", 0),
        ("Status", 0),
        ("Claim", 0),
        ("StorageClass", 0),
        ("VolumeAttributesClass", 0),
        ("Reason", 0),
        ("Age", 0),
        ("VolumeMode", 1),
    ]
    first, second = (row["cells"] for row in table["rows"])
    assert first[:9] == [
        "pv-1",
        "10Gi",
        "RWO,RWX",
        "Retain",
        "Bound",
        "default/data",
        "legacy",
        "<unset>",
        "",
    ]
    assert (first[9], first[10]) == ("3m", "Filesystem")
    assert second[:9] == ["pv-2", "1Gi", "", "", "Terminating", "", "", "gold", "Recycled"]
    assert second[10] == "<unset>"


def test_volume_attachment_table() -> None:
    attachment = {
        "metadata": {"name": "csi-0123"},
        "spec": {
            "attacher": "ebs.csi.aws.com",
            "nodeName": "node-1",
            "source": {"persistentVolumeName": "pv-1"},
        },
        "status": {"attached": True},
    }
    inline = {"metadata": {"name": "csi-4567"}, "spec": {"source": {"inlineVolumeSpec": {}}}}
    table = _table("VolumeAttachment", attachment, inline)
    assert [(c["name"], c["type"]) for c in table["columnDefinitions"]] == [
        ("Name", "string"),
        ("Attacher", "string"),
        ("PV", "string"),
        ("Node", "string"),
        ("Attached", "boolean"),
        ("Age", "string"),
    ]
    assert [row["cells"][:5] for row in table["rows"]] == [
        ["csi-0123", "ebs.csi.aws.com", "pv-1", "node-1", True],
        ["csi-4567", "", "", "", False],
    ]
