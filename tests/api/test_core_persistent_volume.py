"""core/v1 PersistentVolume: defaults and validation as Kubernetes' core API does them."""

from __future__ import annotations

from typing import Any

import pytest

from kstore.api.kinds import builtin_scheme
from kstore.api.kinds.persistentvolume import (
    validate_persistent_volume,
    validate_persistent_volume_status_update,
    validate_persistent_volume_update,
)
from kstore.errors import Cause

SCHEME = builtin_scheme()


def _rendered(causes: list[Cause]) -> list[str]:
    return [f"{c.field}: {c.message}" for c in causes]


def _pv(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "pv-1", "resourceVersion": "1"},
        "spec": {
            "capacity": {"storage": "10Gi"},
            "accessModes": ["ReadWriteOnce"],
            "nfs": {"server": "nfs.example.com", "path": "/exports"},
            **spec,
        },
    }
    SCHEME.default(body)
    return body


def _without(key: str, **spec: Any) -> dict[str, Any]:
    pv = _pv(**spec)
    del pv["spec"][key]
    return pv


_AFFINITY = {
    "required": {
        "nodeSelectorTerms": [
            {
                "matchExpressions": [
                    {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-1"]}
                ]
            }
        ]
    }
}


def test_defaults() -> None:
    pv = _pv(hostPath={"path": "/srv"}, rbd={"monitors": ["m"], "image": "i"})
    assert pv["status"] == {"phase": "Pending"}
    assert pv["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert pv["spec"]["volumeMode"] == "Filesystem"
    assert pv["spec"]["hostPath"] == {"path": "/srv", "type": ""}
    assert pv["spec"]["rbd"] == {
        "monitors": ["m"],
        "image": "i",
        "pool": "rbd",
        "user": "admin",
        "keyring": "/etc/ceph/keyring",
    }
    kept = _pv(persistentVolumeReclaimPolicy="Delete", volumeMode="Block")
    assert (kept["spec"]["persistentVolumeReclaimPolicy"], kept["spec"]["volumeMode"]) == (
        "Delete",
        "Block",
    )


@pytest.mark.parametrize(
    "spec",
    [
        {},
        {"accessModes": ["ReadWriteOncePod"], "storageClassName": "fast"},
        {"nfs": None, "local": {"path": "/mnt/disks/ssd1"}, "nodeAffinity": _AFFINITY},
        {
            "nfs": None,
            "csi": {
                "driver": "ebs.csi.aws.com",
                "volumeHandle": "vol-1",
                "nodeStageSecretRef": {"name": "s", "namespace": "kube-system"},
            },
            "volumeAttributesClassName": "gold",
        },
    ],
)
def test_valid_volumes(spec: dict[str, Any]) -> None:
    assert validate_persistent_volume(_pv(**spec)) == []


@pytest.mark.parametrize(
    ("pv", "expected"),
    [
        (_without("accessModes"), ["spec.accessModes: Required value"]),
        (
            _pv(accessModes=["ReadWriteOncePod", "ReadWriteOnce"]),
            ["spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes"],
        ),
        (
            _without("capacity"),
            [
                "spec.capacity: Required value",
                'spec.capacity: Unsupported value: {}: supported values: "storage"',
            ],
        ),
        (
            _pv(capacity={"storage": "0"}),
            ['spec.capacity[storage]: Invalid value: "0": must be greater than zero'],
        ),
        (
            _pv(persistentVolumeReclaimPolicy="Keep"),
            [
                'spec.persistentVolumeReclaimPolicy: Unsupported value: "Keep": supported '
                'values: "Delete", "Recycle", "Retain"'
            ],
        ),
        (_without("nfs"), ["spec: Required value: must specify a volume type"]),
        (
            _pv(hostPath={"path": "/srv"}),
            ["spec.nfs: Forbidden: may not specify more than 1 volume type"],
        ),
        (
            _pv(nfs={"server": "", "path": "exports"}),
            [
                "spec.nfs.server: Required value",
                'spec.nfs.path: Invalid value: "exports": must be an absolute path',
            ],
        ),
        (
            _pv(nfs=None, local={"path": "/mnt/../etc"}),
            [
                "spec.local.path: Invalid value: \"/mnt/../etc\": must not contain '..'",
                "spec.nodeAffinity: Required value: Local volume requires node affinity",
            ],
        ),
        (
            _pv(nfs=None, csi={"driver": "", "volumeHandle": ""}),
            [
                "spec.csi.driver: Required value",
                'spec.csi.driver: Invalid value: "": a lowercase RFC 1123 subdomain must '
                "consist of lower case alphanumeric characters, '-' or '.', and must start and "
                "end with an alphanumeric character (e.g. 'example.com', regex used for "
                "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
                "[a-z0-9])?)*')",
                "spec.csi.volumeHandle: Required value",
            ],
        ),
        (
            _pv(
                nodeAffinity={
                    "required": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "zone", "operator": "In"}]},
                            {"matchFields": [{"key": "spec.nodeName", "operator": "Exists"}]},
                        ]
                    }
                }
            ),
            [
                "spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values: "
                "Required value: must be specified when `operator` is 'In' or 'NotIn'",
                "spec.nodeAffinity.required.nodeSelectorTerms[1].matchFields[0].operator: "
                'Invalid value: "Exists": not a valid selector operator',
                "spec.nodeAffinity.required.nodeSelectorTerms[1].matchFields[0].key: "
                'Unsupported value: "spec.nodeName": supported values: "metadata.name"',
            ],
        ),
        (
            _pv(volumeAttributesClassName="gold"),
            ["spec.csi: Required value: has to be specified when using volumeAttributesClassName"],
        ),
    ],
)
def test_invalid_volumes(pv: dict[str, Any], expected: list[str]) -> None:
    assert _rendered(validate_persistent_volume(pv)) == expected


def test_the_source_and_mode_are_immutable_but_a_claim_may_bind() -> None:
    old = _pv()
    bound = _pv(claimRef={"namespace": "default", "name": "data"}, storageClassName="nfs")
    assert validate_persistent_volume_update(bound, old) == []
    moved = _pv(nfs={"server": "other.example.com", "path": "/exports"}, volumeMode="Block")
    causes = _rendered(validate_persistent_volume_update(moved, old))
    assert causes[0].startswith(
        "spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable "
        "after creation\n  core.PersistentVolumeSource{\n- \tnfs: "
    )
    assert causes[1:] == ['volumeMode: Invalid value: "Block": field is immutable']


def test_a_csi_volume_may_gain_its_expansion_secret() -> None:
    csi = {"driver": "d.csi.io", "volumeHandle": "h"}
    old = _pv(nfs=None, csi=csi)
    secret = {"name": "s", "namespace": "ns"}
    assert (
        validate_persistent_volume_update(
            _pv(nfs=None, csi={**csi, "controllerExpandSecretRef": secret}), old
        )
        == []
    )


def test_status_writes_need_a_resource_version() -> None:
    old = _pv()
    new = _pv()
    del new["metadata"]["resourceVersion"]
    assert "resourceVersion: Required value" in _rendered(
        validate_persistent_volume_status_update(new, old)
    )


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            {"gcePersistentDisk": {"pdName": "", "partition": 300}},
            [
                "spec.persistentDisk.pdName: Required value",
                "spec.persistentDisk.partition: Invalid value: 300: must be between 1 and 255, "
                "inclusive",
            ],
        ),
        (
            {"iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.bad", "lun": 0}},
            ['spec.iscsi.iqn: Invalid value: "iqn.bad": must be valid format'],
        ),
        (
            {
                "iscsi": {
                    "targetPortal": "10.0.0.1:3260",
                    "iqn": "iqn.2001-04.com.example:storage",
                    "lun": 256,
                    "chapAuthSession": True,
                }
            },
            [
                "spec.iscsi.lun: Invalid value: 256: must be between 0 and 255, inclusive",
                "spec.iscsi.secretRef: Required value",
            ],
        ),
        (
            {"fc": {"targetWWNs": ["500a0982991b8dc5"]}},
            ["spec.fc.lun: Required value: lun is required if targetWWNs is specified"],
        ),
        (
            {"flexVolume": {"driver": "d", "options": {"a.k8s.io/x": "y"}}},
            [
                'spec.flexVolume.options[a.k8s.io/x]: Invalid value: "a.k8s.io/x": kubernetes.io '
                "and k8s.io namespaces are reserved"
            ],
        ),
        (
            {"azureDisk": {"diskName": "d", "diskURI": "http://x", "kind": "Managed"}},
            [
                'spec.azureDisk.diskURI: Unsupported value: "http://x": supported values: '
                '"/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/'
                'microsoft.compute/disks/{disk-id}"'
            ],
        ),
        (
            {"rbd": {"monitors": [], "image": ""}},
            ["spec.rbd.monitors: Required value", "spec.rbd.image: Required value"],
        ),
    ],
)
def test_volume_sources_are_checked(source: dict[str, Any], expected: list[str]) -> None:
    assert _rendered(validate_persistent_volume(_pv(nfs=None, **source))) == expected
