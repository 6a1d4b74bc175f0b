"""storage.k8s.io/v1 StorageClass, CSIDriver and CSINode: defaults and validation as
Kubernetes' storage API does them."""

from __future__ import annotations

from typing import Any

import pytest

from kstore.api.kinds import builtin_scheme
from kstore.api.kinds.storage import (
    validate_csi_driver,
    validate_csi_driver_update,
    validate_csi_node,
    validate_csi_node_update,
    validate_storage_class,
    validate_storage_class_update,
)
from kstore.errors import Cause

SCHEME = builtin_scheme()


def _rendered(causes: list[Cause]) -> list[str]:
    return [f"{c.field}: {c.message}" for c in causes]


def _defaulted(obj: dict[str, Any]) -> dict[str, Any]:
    SCHEME.default(obj)
    return obj


def _class(**fields: Any) -> dict[str, Any]:
    return _defaulted(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "fast", "resourceVersion": "1"},
            "provisioner": "ebs.csi.aws.com",
            **fields,
        }
    )


def _driver(**spec: Any) -> dict[str, Any]:
    return _defaulted(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSIDriver",
            "metadata": {"name": "ebs.csi.aws.com", "resourceVersion": "1"},
            "spec": spec,
        }
    )


def _node(*drivers: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": {"name": "node-1", "resourceVersion": "1"},
        "spec": {"drivers": list(drivers)},
    }


def test_storage_class_defaults() -> None:
    sc = _class()
    assert (sc["reclaimPolicy"], sc["volumeBindingMode"]) == ("Delete", "Immediate")
    kept = _class(reclaimPolicy="Retain", volumeBindingMode="WaitForFirstConsumer")
    assert (kept["reclaimPolicy"], kept["volumeBindingMode"]) == ("Retain", "WaitForFirstConsumer")
    assert validate_storage_class(sc) == []


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"provisioner": ""}, ["provisioner: Required value"]),
        (
            {"provisioner": "Bad_Name!"},
            [
                'provisioner: Invalid value: "bad_name!": name part must consist of alphanumeric '
                "characters, '-', '_' or '.', and must start and end with an alphanumeric "
                "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
            ],
        ),
        (
            {"reclaimPolicy": "Recycle"},
            ['reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"'],
        ),
        (
            {"volumeBindingMode": "Later"},
            [
                'volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", '
                '"WaitForFirstConsumer"'
            ],
        ),
        ({"parameters": {"": "x"}}, ['parameters: Invalid value: "": field can not be empty.']),
        (
            {"parameters": {f"k{i}": "v" for i in range(513)}},
            ["parameters: Too long: may not be more than 512 bytes"],
        ),
        (
            {
                "allowedTopologies": [
                    {"matchLabelExpressions": [{"key": "zone", "values": ["a", "a"]}]},
                    {"matchLabelExpressions": [{"key": "zone", "values": ["a"]}]},
                    {"matchLabelExpressions": [{"key": "rack", "values": []}]},
                ]
            },
            [
                'allowedTopologies[0].matchLabelExpressions[0].values[1]: Duplicate value: "a"',
                'allowedTopologies[1].matchLabelExpressions: Duplicate value: ""',
                "allowedTopologies[2].matchLabelExpressions[0].values: Required value",
            ],
        ),
    ],
)
def test_invalid_storage_classes(fields: dict[str, Any], expected: list[str]) -> None:
    assert _rendered(validate_storage_class(_class(**fields))) == expected


def test_a_storage_class_keeps_its_provisioner_parameters_and_policies() -> None:
    old = _class(parameters={"type": "gp3"})
    new = _class(
        provisioner="other.csi.io",
        parameters={"type": "io2"},
        reclaimPolicy="Retain",
        volumeBindingMode="WaitForFirstConsumer",
        allowVolumeExpansion=True,
    )
    assert _rendered(validate_storage_class_update(new, old)) == [
        "parameters: Forbidden: updates to parameters are forbidden.",
        "provisioner: Forbidden: updates to provisioner are forbidden.",
        "reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.",
        'volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable',
    ]
    expandable = _class(parameters={"type": "gp3"}, allowVolumeExpansion=True)
    assert validate_storage_class_update(expandable, old) == []


def test_csi_driver_defaults() -> None:
    assert _driver()["spec"] == {
        "attachRequired": True,
        "podInfoOnMount": False,
        "storageCapacity": False,
        "fsGroupPolicy": "ReadWriteOnceWithFSType",
        "volumeLifecycleModes": ["Persistent"],
        "requiresRepublish": False,
        "seLinuxMount": False,
    }
    kept = _driver(attachRequired=False, volumeLifecycleModes=["Ephemeral"], fsGroupPolicy="File")
    assert kept["spec"]["attachRequired"] is False
    assert kept["spec"]["volumeLifecycleModes"] == ["Ephemeral"]
    assert validate_csi_driver(kept) == []


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            {"fsGroupPolicy": "Always"},
            [
                'spec.fsGroupPolicy: Unsupported value: "Always": supported values: "File", '
                '"None", "ReadWriteOnceWithFSType"'
            ],
        ),
        (
            {"volumeLifecycleModes": ["Persistent", "Inline"]},
            [
                'spec.volumeLifecycleModes: Unsupported value: "Inline": supported values: '
                '"Persistent", "Ephemeral"'
            ],
        ),
        (
            {
                "tokenRequests": [
                    {"audience": "a", "expirationSeconds": 60},
                    {"audience": "b", "expirationSeconds": 2**33},
                    {"audience": "a"},
                ]
            },
            [
                "spec.tokenRequests[0].expirationSeconds: Invalid value: 60: may not specify a "
                "duration less than 10 minutes",
                "spec.tokenRequests[1].expirationSeconds: Invalid value: 8589934592: may not "
                "specify a duration larger than 2^32 seconds",
                'spec.tokenRequests[2].audience: Duplicate value: "a"',
            ],
        ),
        (
            {"nodeAllocatableUpdatePeriodSeconds": 5},
            [
                "spec.nodeAllocatableUpdatePeriodSeconds: Invalid value: 5: must be greater "
                "than or equal to 10 seconds"
            ],
        ),
        (
            {"serviceAccountTokenInSecrets": True},
            [
                "spec.serviceAccountTokenInSecrets: Invalid value: true: "
                "serviceAccountTokenInSecrets is set but no tokenRequests are specified"
            ],
        ),
    ],
)
def test_invalid_csi_drivers(spec: dict[str, Any], expected: list[str]) -> None:
    assert _rendered(validate_csi_driver(_driver(**spec))) == expected


def test_a_csi_driver_keeps_attach_required_and_its_lifecycle_modes() -> None:
    old = _driver()
    new = _driver(attachRequired=False, volumeLifecycleModes=["Ephemeral"], podInfoOnMount=True)
    assert _rendered(validate_csi_driver_update(new, old)) == [
        "spec.attachedRequired: Invalid value: false: field is immutable",
        'spec.volumeLifecycleModes: Invalid value: ["Ephemeral"]: field is immutable',
    ]
    assert validate_csi_driver_update(_driver(podInfoOnMount=True, storageCapacity=True), old) == []


def _csi_node_driver(name: str = "ebs.csi.aws.com", **fields: Any) -> dict[str, Any]:
    return {"name": name, "nodeID": "i-0123", "topologyKeys": None, **fields}


def test_valid_csi_node() -> None:
    node = _node(
        _csi_node_driver(topologyKeys=["topology.ebs.csi.aws.com/zone"], allocatable={"count": 25}),
        _csi_node_driver("hostpath.csi.k8s.io", nodeID="n" * 256),
    )
    assert validate_csi_node(node) == []


def test_invalid_csi_node() -> None:
    node = _node(
        _csi_node_driver(nodeID="", topologyKeys=["zone", "zone", ""]),
        _csi_node_driver(allocatable={"count": -1}),
        _csi_node_driver("x" * 64, nodeID="n" * 257),
    )
    assert _rendered(validate_csi_node(node)) == [
        "spec.drivers[0].nodeID: Required value",
        'spec.drivers[0]: Duplicate value: "zone"',
        "spec.drivers[0]: Required value",
        'spec.drivers[0]: Invalid value: "": name part must be non-empty',
        'spec.drivers[0]: Invalid value: "": name part must consist of alphanumeric characters, '
        "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  "
        "or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        "spec.drivers[1].allocatable.count: Invalid value: -1: must be greater than or equal to 0",
        'spec.drivers[1].name: Duplicate value: "ebs.csi.aws.com"',
        "spec.drivers[2].name: Too long: may not be more than 63 bytes",
        f'spec.drivers[2].nodeID: Invalid value: "{"n" * 257}": must be 256 characters or less',
    ]


def test_a_csi_node_driver_changes_only_its_allocatable_count() -> None:
    old = _node(_csi_node_driver(allocatable={"count": 10}))
    recounted = _node(_csi_node_driver(allocatable={"count": 20}), _csi_node_driver("new.csi.io"))
    assert validate_csi_node_update(recounted, old) == []
    moved = _node(_csi_node_driver(nodeID="i-0456"))
    causes = _rendered(validate_csi_node_update(moved, old))
    assert len(causes) == 1
    assert causes[0].startswith("spec.drivers: Invalid value: ")
    assert causes[0].endswith(": field is immutable")
