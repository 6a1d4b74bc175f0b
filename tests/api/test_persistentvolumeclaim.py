"""core/v1 PersistentVolumeClaim: defaulting, validation on create, update and status writes,
with Kubernetes' paths and messages."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kstore.api.kinds import builtin_scheme
from kstore.api.kinds._persistentvolumeclaim_validation import (
    fractional_storage_warnings,
    normalize_data_sources,
    validate_persistent_volume_claim,
    validate_persistent_volume_claim_status_update,
    validate_persistent_volume_claim_update,
)
from kstore.api.validation.field import Path
from kstore.errors import Cause

SCHEME = builtin_scheme()
BETA_CLASS = "volume.beta.kubernetes.io/storage-class"
IMMUTABLE = (
    "spec: Forbidden: spec is immutable after creation except resources.requests and "
    "volumeAttributesClassName for bound claims"
)


def _pvc(storage: Any = "1Gi", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": storage}},
    }
    body.update(spec)
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data", "namespace": "default", "resourceVersion": "5"},
        "spec": body,
    }


def _hub(obj: dict[str, Any]) -> dict[str, Any]:
    external = copy.deepcopy(obj)
    SCHEME.default(external)
    return SCHEME.to_hub(external)


def _rendered(causes: list[Cause]) -> list[str]:
    return [c.render() for c in causes]


def _errors(storage: Any = "1Gi", **spec: Any) -> list[str]:
    return _rendered(validate_persistent_volume_claim(_hub(_pvc(storage, **spec))))


def _update(change: Any, old: dict[str, Any] | None = None) -> list[str]:
    old = old if old is not None else _hub(_pvc())
    new = copy.deepcopy(old)
    change(new)
    return _rendered(validate_persistent_volume_claim_update(new, old))


# ---------------------------------------------------------------------------- defaults


def test_defaults_are_the_pending_phase_and_filesystem_mode() -> None:
    obj = _pvc()
    SCHEME.default(obj)
    assert obj["status"] == {"phase": "Pending"}
    assert obj["spec"]["volumeMode"] == "Filesystem"
    bound = _pvc(volumeMode="Block")
    bound["status"] = {"phase": "Bound"}
    SCHEME.default(bound)
    assert (bound["status"]["phase"], bound["spec"]["volumeMode"]) == ("Bound", "Block")


def test_claim_is_a_namespaced_resource_with_a_short_name_and_status() -> None:
    info = SCHEME.definition("", "PersistentVolumeClaim").resource
    assert info is not None
    assert (info.plural, info.namespaced, info.short_names) == (
        "persistentvolumeclaims",
        True,
        ("pvc",),
    )
    assert info.subresources == ("status",)
    assert info.categories == ()


# ---------------------------------------------------------------------------- create


def test_a_defaulted_claim_is_valid() -> None:
    assert _errors() == []
    assert _errors(storageClassName="", volumeAttributesClassName="gold") == []


@pytest.mark.parametrize(
    ("storage", "spec", "expected"),
    [
        (
            "1Gi",
            {"accessModes": []},
            ["spec.accessModes: Required value: at least 1 access mode is required"],
        ),
        (
            "1Gi",
            {"accessModes": ["ReadWriteOncePod", "ReadWriteOnce"]},
            ["spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes"],
        ),
        ("-1Gi", {}, ['spec.resources[storage]: Invalid value: "-1Gi": must be greater than zero']),
        ("0Mi", {}, ['spec.resources[storage]: Invalid value: "0": must be greater than zero']),
        (
            "lots",
            {},
            [
                'spec.resources[storage]: Invalid value: "lots": quantities must match the '
                "regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
            ],
        ),
        (
            "1Gi",
            {"storageClassName": "Fast_SSD"},
            [
                'spec.storageClassName: Invalid value: "Fast_SSD": a lowercase RFC 1123 '
                "subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
                "must start and end with an alphanumeric character (e.g. 'example.com', regex "
                "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
                "[a-z0-9])?)*')"
            ],
        ),
        (
            "1Gi",
            {"dataSource": {"kind": "Secret", "name": "s"}},
            [
                "spec.dataSource: Invalid value: \"Secret\": must be 'PersistentVolumeClaim' "
                "when referencing the default apiGroup"
            ],
        ),
        (
            "1Gi",
            {"dataSourceRef": {"kind": "Populator", "apiGroup": "Example_Com"}},
            [
                "spec.dataSourceRef.name: Required value",
                'spec.dataSourceRef.apiGroup: Invalid value: "Example_Com": a lowercase RFC '
                "1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                "and must start and end with an alphanumeric character (e.g. 'example.com', "
                "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]"
                "([-a-z0-9]*[a-z0-9])?)*')",
            ],
        ),
        (
            "1Gi",
            {
                "dataSource": {"kind": "PersistentVolumeClaim", "name": "a"},
                "dataSourceRef": {"kind": "PersistentVolumeClaim", "name": "b"},
            },
            ["spec: Invalid value: {}: must match dataSourceRef"],
        ),
        (
            "1Gi",
            {
                "dataSource": {"kind": "PersistentVolumeClaim", "name": "a"},
                "dataSourceRef": {"kind": "PersistentVolumeClaim", "name": "a", "namespace": "x"},
            },
            [
                "spec: Invalid value: {}: may not be specified when dataSourceRef.namespace is "
                "specified"
            ],
        ),
    ],
)
def test_spec_rules_with_kubernetes_messages(
    storage: Any, spec: dict[str, Any], expected: list[str]
) -> None:
    assert _errors(storage, **spec) == expected


def test_missing_storage_request_is_required() -> None:
    assert _errors(resources={"limits": {"storage": "1Gi"}}) == [
        "spec.resources[storage]: Required value"
    ]


def test_fractional_byte_warnings() -> None:
    spec = {"resources": {"requests": {"storage": "1.5"}, "limits": {"storage": "10Gi"}}}
    assert fractional_storage_warnings(spec, Path("spec")) == [
        'spec.resources.requests[storage]: fractional byte value "1.5" is invalid, must be an '
        "integer"
    ]
    assert (
        fractional_storage_warnings({"resources": {"requests": {"storage": "2k"}}}, Path("s")) == []
    )


def test_data_sources_are_normalized_both_ways() -> None:
    spec: dict[str, Any] = {"dataSource": {"apiGroup": "g", "kind": "K", "name": "n"}}
    normalize_data_sources(spec)
    assert spec["dataSourceRef"] == {"apiGroup": "g", "kind": "K", "name": "n"}
    spec = {"dataSourceRef": {"kind": "K", "name": "n"}}
    normalize_data_sources(spec)
    assert spec["dataSource"] == {"kind": "K", "name": "n"}
    spec = {"dataSourceRef": {"kind": "K", "name": "n", "namespace": "other"}}
    normalize_data_sources(spec)
    assert "dataSource" not in spec


# ---------------------------------------------------------------------------- update


def test_spec_is_immutable_and_the_message_names_the_change() -> None:
    errors = _update(lambda p: p["spec"].update(storageClassName="fast"))
    assert errors == []  # a claim without a class may get one
    old = _hub(_pvc(storageClassName="slow"))
    errors = _update(lambda p: p["spec"].update(storageClassName="fast"), old)
    assert len(errors) == 1
    assert errors[0].startswith(IMMUTABLE + "\n")
    assert '- \tStorageClassName: "slow",' in errors[0]
    assert '+ \tStorageClassName: "fast",' in errors[0]


def test_volume_name_may_be_set_once() -> None:
    assert _update(lambda p: p["spec"].update(volumeName="pv-1")) == []
    bound = _hub(_pvc(volumeName="pv-1"))
    assert _update(lambda p: p["spec"].update(volumeName="pv-2"), bound)[0].startswith(IMMUTABLE)


def test_bound_claims_may_grow_but_not_shrink_to_their_capacity() -> None:
    old = _hub(_pvc(volumeName="pv-1"))
    assert _update(lambda p: p["spec"]["resources"]["requests"].update(storage="2Gi"), old)[
        0
    ].startswith(IMMUTABLE)
    old["status"] = {"phase": "Bound", "capacity": {"storage": "1Gi"}}
    assert _update(lambda p: p["spec"]["resources"]["requests"].update(storage="2Gi"), old) == []
    # The same size written differently is no change at all.
    assert _update(lambda p: p["spec"]["resources"]["requests"].update(storage="1024Mi"), old) == []
    grown = copy.deepcopy(old)
    grown["spec"]["resources"]["requests"]["storage"] = "4Gi"
    assert (
        _update(lambda p: p["spec"]["resources"]["requests"].update(storage="2Gi"), grown) == []
    )  # recovering from a failed expansion, above status.capacity
    assert _update(lambda p: p["spec"]["resources"]["requests"].update(storage="1Gi"), grown) == [
        "spec.resources.requests.storage: Forbidden: field can not be less than status.capacity"
    ]


def test_volume_mode_is_immutable_with_kubernetes_path() -> None:
    errors = _update(lambda p: p["spec"].update(volumeMode="Block"))
    assert errors[-1] == 'volumeMode: Invalid value: "Block": field is immutable'


def test_storage_class_may_move_from_the_beta_annotation_to_the_field() -> None:
    old = _hub(_pvc())
    old["metadata"]["annotations"] = {BETA_CLASS: "gold"}
    assert _update(lambda p: p["spec"].update(storageClassName="gold"), old) == []
    errors = _update(lambda p: p["metadata"]["annotations"].update({BETA_CLASS: "silver"}), old)
    assert errors == [
        'metadata.annotations.volume.beta.kubernetes.io/storage-class: Invalid value: "silver": '
        "field is immutable"
    ]


def test_volume_attributes_class_cannot_be_removed_once_applied() -> None:
    old = _hub(_pvc(volumeAttributesClassName="gold"))
    old["status"] = {"phase": "Bound", "currentVolumeAttributesClassName": "gold"}
    assert _update(lambda p: p["spec"].update(volumeAttributesClassName="silver"), old) == []
    assert _update(lambda p: p["spec"].pop("volumeAttributesClassName"), old) == [
        "spec.volumeAttributesClassName: Forbidden: update to nil is forbidden when "
        "status.currentVolumeAttributesClassName is not nil"
    ]


def test_an_invalid_selector_value_stored_before_stays_acceptable() -> None:
    bad = {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["not valid!"]}]}
    assert _errors(selector=bad) == [
        'spec.selector.matchExpressions[0].values[0]: Invalid value: "not valid!": a valid '
        "label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
        "and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
        "'my_value',  or '12345', regex used for validation is "
        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
    ]
    old = _hub(_pvc(selector=bad))
    assert _update(lambda p: p["metadata"].update(labels={"a": "b"}), old) == []


# ---------------------------------------------------------------------------- status


def test_status_update_rules() -> None:
    old = _hub(_pvc())
    new = copy.deepcopy(old)
    new["metadata"].pop("resourceVersion")
    new["spec"]["accessModes"] = []
    new["status"] = {
        "capacity": {"storage": "-1"},
        "allocatedResourceStatuses": {"storage": "Resizing", "cpu": "NodeResizePending"},
        "allocatedResources": {"example.com/gpu": "1", "storage": "-0.5"},
    }
    assert _rendered(validate_persistent_volume_claim_status_update(new, old)) == [
        'metadata.resourceVersion: Invalid value: "": must be specified for an update',
        "resourceVersion: Required value",
        "Spec.accessModes: Required value",
        "status.capacity[storage]: Invalid value: -1: must be a valid resource quantity",
        'status.allocatedResourceStatuses: Unsupported value: "storage": supported values: '
        '"ControllerResizeInProgress", "ControllerResizeInfeasible", "NodeResizeInProgress", '
        '"NodeResizeInfeasible", "NodeResizePending"',
        'status.allocatedResourceStatuses: Unsupported value: "cpu": supported values: "storage"',
        "status.allocatedResources[storage]: Invalid value: -1: must be a valid resource quantity",
    ]
    ok = copy.deepcopy(old)
    ok["status"] = {
        "phase": "Bound",
        "capacity": {"storage": "1Gi"},
        "allocatedResources": {"storage": "1Gi"},
        "allocatedResourceStatuses": {"storage": "NodeResizePending"},
    }
    assert validate_persistent_volume_claim_status_update(ok, old) == []
