"""ObjectMeta validation on create and update reports what Kubernetes reports, where it does."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kstore.api.validation import (
    name_is_dns_label,
    name_is_dns_subdomain,
    validate_object_meta,
    validate_object_meta_update,
    validate_path_segment_name,
)
from kstore.errors import Cause
from tests.api.test_validation_names import DNS_LABEL, DNS_SUBDOMAIN, LABEL_VALUE, NAME_PART


def _rendered(causes: list[Cause]) -> list[str]:
    return [c.render() for c in causes]


def _obj(**meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Thing", "metadata": meta}


def _create(namespaced: bool = True, **meta: Any) -> list[str]:
    return _rendered(validate_object_meta(_obj(**meta), namespaced, name_is_dns_subdomain))


def test_valid_metadata_has_no_causes() -> None:
    assert (
        _create(
            name="web-1",
            namespace="default",
            labels={"app": "web", "example.com/tier": ""},
            annotations={"Example.com/Owner": "me"},
            finalizers=["kubernetes", "example.com/cleanup"],
            ownerReferences=[
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u1"}
            ],
            managedFields=[{"manager": "kubectl", "operation": "Apply", "fieldsType": "FieldsV1"}],
        )
        == []
    )


@pytest.mark.parametrize(
    ("meta", "expected"),
    [
        ({"namespace": "ns"}, ["metadata.name: Required value: name or generateName is required"]),
        (
            {"name": "Foo", "namespace": "ns"},
            [f'metadata.name: Invalid value: "Foo": {DNS_SUBDOMAIN}'],
        ),
        # generateName is checked as a prefix: its trailing dash is allowed.
        ({"generateName": "web-", "name": "web-x7k2p", "namespace": "ns"}, []),
        (
            {"generateName": "Web-", "name": "web-x7k2p", "namespace": "ns"},
            [f'metadata.generateName: Invalid value: "Web-": {DNS_SUBDOMAIN}'],
        ),
        (
            {"generateName": "Web-", "namespace": "ns"},
            [
                f'metadata.generateName: Invalid value: "Web-": {DNS_SUBDOMAIN}',
                "metadata.name: Required value: name or generateName is required",
            ],
        ),
        ({"name": "a"}, ["metadata.namespace: Required value"]),
        (
            {"name": "a", "namespace": "Bad_NS"},
            [f'metadata.namespace: Invalid value: "Bad_NS": {DNS_LABEL}'],
        ),
        (
            {"name": "a", "namespace": "ns", "generation": -1},
            ["metadata.generation: Invalid value: -1: must be greater than or equal to 0"],
        ),
        (
            {"name": "a", "namespace": "ns", "labels": {"-bad": "-bad"}},
            [
                f'metadata.labels: Invalid value: "-bad": {NAME_PART}',
                f'metadata.labels: Invalid value: "-bad": {LABEL_VALUE}',
            ],
        ),
        (
            # Annotation keys are case-insensitive but otherwise qualified names.
            {"name": "a", "namespace": "ns", "annotations": {"UPPER": "", "a b": ""}},
            [f'metadata.annotations: Invalid value: "a b": {NAME_PART}'],
        ),
    ],
)
def test_create_rules(meta: dict[str, Any], expected: list[str]) -> None:
    assert _create(**meta) == expected


def test_namespace_is_forbidden_on_cluster_scoped_kinds() -> None:
    causes = validate_object_meta(_obj(name="a", namespace="ns"), False, name_is_dns_label)
    assert _rendered(causes) == ["metadata.namespace: Forbidden: not allowed on this type"]
    assert causes[0].type == "FieldValueForbidden"


def test_annotations_may_total_256_kib_and_no_more() -> None:
    at_limit = {"k": "v" * (256 * 1024 - 1)}
    assert _create(name="a", namespace="ns", annotations=at_limit) == []
    over = {"k": "v" * (256 * 1024)}
    causes = validate_object_meta(
        _obj(name="a", namespace="ns", annotations=over), True, name_is_dns_subdomain
    )
    assert _rendered(causes) == [
        "metadata.annotations: Too long: may not be more than 262144 bytes"
    ]
    assert causes[0].type == "FieldValueTooLong"


def test_annotation_size_counts_utf8_bytes() -> None:
    # 131072 two-byte characters are 262144 bytes; with the one-byte key that is one too many.
    assert _create(name="a", namespace="ns", annotations={"k": "é" * 131072}) == [
        "metadata.annotations: Too long: may not be more than 262144 bytes"
    ]


def test_owner_references() -> None:
    refs = [
        {"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "u", "controller": True},
        {"apiVersion": "apps/", "kind": "", "name": "", "uid": "", "controller": True},
    ]
    assert _create(name="a", namespace="ns", ownerReferences=refs) == [
        'metadata.ownerReferences: Invalid value: {"apiVersion":"v1","kind":"Event","name":"e",'
        '"uid":"u","controller":true}: /v1, Kind=Event is disallowed from being an owner',
        'metadata.ownerReferences.apiVersion: Invalid value: "apps/": version must not be empty',
        'metadata.ownerReferences.kind: Invalid value: "": must not be empty',
        'metadata.ownerReferences.name: Invalid value: "": must not be empty',
        'metadata.ownerReferences.uid: Invalid value: "": must not be empty',
        'metadata.ownerReferences: Invalid value: [{"apiVersion":"v1","kind":"Event","name":"e",'
        '"uid":"u","controller":true},{"apiVersion":"apps/","kind":"","name":"","uid":"",'
        '"controller":true}]: Only one reference can have Controller set to true. Found "true" '
        "in references for Event/e and /",
    ]


def test_finalizers() -> None:
    assert _create(name="a", namespace="ns", finalizers=["orphan", "foregroundDeletion"]) == [
        'metadata.finalizers: Invalid value: ["orphan","foregroundDeletion"]: finalizer orphan '
        "and foregroundDeletion cannot be both set"
    ]
    assert _create(name="a", namespace="ns", finalizers=["custom", "x/-"]) == [
        f'metadata.finalizers: Invalid value: "x/-": {NAME_PART}',
        'metadata.finalizers[0]: Invalid value: "custom": name is neither a standard finalizer '
        "name nor is it fully qualified",
    ]


def test_custom_resources_skip_the_standard_finalizer_rule() -> None:
    obj = _obj(name="a", namespace="ns", finalizers=["custom"])
    assert validate_object_meta(obj, True, name_is_dns_subdomain, kube_finalizers=False) == []


def test_managed_fields() -> None:
    entries = [
        {"manager": "m" * 129, "operation": "Patch", "fieldsType": "FieldsV2"},
        {"manager": "a\tb", "operation": "Update", "subresource": "s" * 257},
    ]
    assert _create(name="a", namespace="ns", managedFields=entries) == [
        'metadata.managedFields[0].operation: Invalid value: "Patch": must be `Apply` or `Update`',
        'metadata.managedFields[0].fieldsType: Invalid value: "FieldsV2": must be `FieldsV1`',
        "metadata.managedFields[0].manager: Too long: may not be more than 128 bytes",
        'metadata.managedFields[1].manager: Invalid value: "a\\tb": invalid character U+0009 '
        "(at position 1)",
        "metadata.managedFields[1].subresource: Too long: may not be more than 256 bytes",
    ]


def test_event_names_use_the_path_segment_rule() -> None:
    obj = _obj(name="a/b", namespace="ns")
    assert _rendered(validate_object_meta(obj, True, validate_path_segment_name)) == [
        "metadata.name: Invalid value: \"a/b\": may not contain '/'"
    ]


# ---------------------------------------------------------------------------- update

IMMUTABLE = "field is immutable"
OLD: dict[str, Any] = _obj(
    name="a",
    namespace="ns",
    uid="7b3f",
    resourceVersion="10",
    generation=2,
    creationTimestamp="2024-05-01T10:00:00Z",
    labels={"app": "a"},
)


def _update(**changes: Any) -> list[str]:
    new = copy.deepcopy(OLD)
    for key, value in changes.items():
        if value is None:
            new["metadata"].pop(key, None)
        else:
            new["metadata"][key] = value
    return _rendered(validate_object_meta_update(new, OLD))


def test_an_unchanged_update_is_valid() -> None:
    assert _update() == []
    # The same instant written with another offset is the same time.
    assert _update(creationTimestamp="2024-05-01T12:00:00+02:00") == []


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (
            {"resourceVersion": None},
            ['metadata.resourceVersion: Invalid value: "": must be specified for an update'],
        ),
        ({"generation": 1}, ["metadata.generation: Invalid value: 1: must not be decremented"]),
        ({"name": "b"}, ['metadata.name: Invalid value: "b": field is immutable']),
        (
            {"namespace": "other"},
            ['metadata.namespace: Invalid value: "other": field is immutable'],
        ),
        ({"uid": "x"}, ['metadata.uid: Invalid value: "x": field is immutable']),
        (
            {"creationTimestamp": "2024-05-02T10:00:00Z"},
            [f'metadata.creationTimestamp: Invalid value: "2024-05-02T10:00:00Z": {IMMUTABLE}'],
        ),
        (
            {"creationTimestamp": None},
            ["metadata.creationTimestamp: Invalid value: null: field is immutable"],
        ),
        (
            {"deletionTimestamp": "2024-05-03T10:00:00Z"},
            [f'metadata.deletionTimestamp: Invalid value: "2024-05-03T10:00:00Z": {IMMUTABLE}'],
        ),
        (
            {"deletionGracePeriodSeconds": 30},
            ["metadata.deletionGracePeriodSeconds: Invalid value: 30: field is immutable"],
        ),
        (
            {"labels": {"app": "-"}},
            [f'metadata.labels: Invalid value: "-": {LABEL_VALUE}'],
        ),
        (
            {"finalizers": ["custom"]},
            [
                'metadata.finalizers[0]: Invalid value: "custom": name is neither a standard '
                "finalizer name nor is it fully qualified"
            ],
        ),
    ],
)  # fmt: skip
def test_update_rules(changes: dict[str, Any], expected: list[str]) -> None:
    assert _update(**changes) == expected


def test_no_new_finalizers_while_deleting() -> None:
    old = copy.deepcopy(OLD)
    old["metadata"]["deletionTimestamp"] = "2024-06-01T00:00:00Z"
    old["metadata"]["finalizers"] = ["example.com/a"]
    new = copy.deepcopy(old)
    new["metadata"]["finalizers"] = ["example.com/c", "example.com/a", "example.com/b"]
    assert _rendered(validate_object_meta_update(new, old)) == [
        "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being "
        'deleted, found new finalizers []string{"example.com/b", "example.com/c"}'
    ]
    new["metadata"]["finalizers"] = []
    assert validate_object_meta_update(new, old) == []


def test_every_metadata_field_wrong_gives_its_causes_in_field_order() -> None:
    causes = _create(
        name="a",
        namespace="ns",
        generation=-1,
        labels={"-bad": "ok"},
        annotations={"-bad": "v"},
        ownerReferences=[{"apiVersion": "v1", "kind": "", "name": "o", "uid": "1"}],
        finalizers=["custom"],
        managedFields=[{"manager": "m", "operation": "Patch"}],
    )
    fields = [c.split(":", 1)[0] for c in causes]
    assert fields == [
        "metadata.generation",
        "metadata.labels",
        "metadata.annotations",
        "metadata.ownerReferences.kind",
        "metadata.managedFields[0].operation",
        "metadata.finalizers[0]",
    ]
