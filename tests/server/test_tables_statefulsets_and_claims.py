"""Table columns and cells of StatefulSets and PersistentVolumeClaims, as Kubernetes'
``printStatefulSet`` and ``printPersistentVolumeClaim`` print them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from kstore.server.table import build_table


def _created(seconds: int = 30) -> str:
    return (datetime.now(UTC) - timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _columns(table: dict[str, Any]) -> list[tuple[str, int]]:
    return [(c["name"], c["priority"]) for c in table["columnDefinitions"]]


def test_statefulset_columns_and_cells() -> None:
    sts = {
        "metadata": {"name": "web", "creationTimestamp": _created()},
        "spec": {
            "replicas": 3,
            "template": {
                "spec": {
                    "containers": [
                        {"name": "nginx", "image": "nginx:1.27"},
                        {"name": "log", "image": "busybox"},
                    ]
                }
            },
        },
        "status": {"replicas": 3, "readyReplicas": 2},
    }
    table = build_table([sts], kind="StatefulSet", group="apps", meta_version="v1")
    assert _columns(table) == [
        ("Name", 0),
        ("Ready", 0),
        ("Age", 0),
        ("Containers", 1),
        ("Images", 1),
    ]
    cells = table["rows"][0]["cells"]
    assert cells[:2] == ["web", "2/3"]
    assert cells[2].endswith("s")
    assert cells[3:] == ["nginx,log", "nginx:1.27,busybox"]
    scaled_to_zero = {"metadata": {"name": "db"}, "spec": {"replicas": 0}}
    cells = build_table([scaled_to_zero], kind="StatefulSet", group="apps", meta_version="v1")[
        "rows"
    ][0]["cells"]
    assert cells[:2] == ["db", "0/0"] and cells[3:] == ["", ""]


def test_claim_columns_and_cells_of_a_pending_claim() -> None:
    pvc = {
        "metadata": {"name": "data", "creationTimestamp": _created()},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
            "storageClassName": "standard",
            "volumeMode": "Filesystem",
        },
        "status": {"phase": "Pending"},
    }
    table = build_table([pvc], kind="PersistentVolumeClaim", group="", meta_version="v1")
    assert _columns(table) == [
        ("Name", 0),
        ("Status", 0),
        ("Volume", 0),
        ("Capacity", 0),
        ("Access Modes", 0),
        ("StorageClass", 0),
        ("VolumeAttributesClass", 0),
        ("Age", 0),
        ("VolumeMode", 1),
    ]
    cells = table["rows"][0]["cells"]
    # Capacity and access modes are the bound volume's: empty until the claim is bound.
    assert cells[:7] == ["data", "Pending", "", "", "", "standard", "<unset>"]
    assert cells[8] == "Filesystem"


def test_claim_cells_of_a_bound_claim_being_deleted() -> None:
    pvc = {
        "metadata": {
            "name": "data",
            "deletionTimestamp": _created(1),
            "annotations": {"volume.beta.kubernetes.io/storage-class": "beta-class"},
        },
        "spec": {
            "volumeName": "pv-1",
            "storageClassName": "ignored-for-the-annotation",
            "volumeAttributesClassName": "gold",
        },
        "status": {
            "phase": "Bound",
            "accessModes": ["ReadWriteMany", "ReadWriteOnce", "ReadWriteOnce", "ReadOnlyMany"],
            "capacity": {"storage": "10Gi"},
        },
    }
    cells = build_table([pvc], kind="PersistentVolumeClaim", group="", meta_version="v1")["rows"][
        0
    ]["cells"]
    assert cells[:7] == ["data", "Terminating", "pv-1", "10Gi", "RWO,ROX,RWX", "beta-class", "gold"]
    assert cells[8] == "<unset>"
