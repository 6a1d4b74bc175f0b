"""Field sets, FieldsV1 and the Update entries of managedFields (structured-merge-diff's
rules as Kubernetes' field manager applies them)."""

from __future__ import annotations

from typing import Any

import pytest

from kstore.registry.fieldpath import (
    ITEM,
    FieldTypes,
    ListType,
    compare,
    from_fields_v1,
    recursive_difference,
    to_fields_v1,
)
from kstore.registry.managed_fields import ManagedFieldsRequest, update_managed_fields

TYPES = FieldTypes(
    lists={
        ("spec", "containers"): ListType(("name",)),
        ("spec", "containers", ITEM, "ports"): ListType(("containerPort", "protocol")),
        ("metadata", "finalizers"): ListType(),
    },
    atomic=frozenset({("spec", "selector")}),
)


def _request(**overrides: Any) -> ManagedFieldsRequest:
    settings: dict[str, Any] = {
        "manager": "me",
        "api_version": "v1",
        "types": TYPES,
        "now": "2026-01-01T00:00:00Z",
    }
    settings.update(overrides)
    return ManagedFieldsRequest(**settings)


def test_fields_v1_orders_dot_first_then_fields_keys_values_indexes() -> None:
    paths = {
        ("f:spec",),
        ("f:spec", "f:b"),
        ("f:spec", "f:a"),
        ("f:spec", 'k:{"name":"x"}'),
        ("f:spec", "i:10"),
        ("f:spec", "i:2"),
        ("f:spec", 'v:"s"'),
    }
    encoded = to_fields_v1(paths)
    assert list(encoded["f:spec"]) == [".", "f:a", "f:b", 'k:{"name":"x"}', 'v:"s"', "i:2", "i:10"]
    assert from_fields_v1(encoded) == paths


def test_from_fields_v1_rejects_unknown_path_elements() -> None:
    with pytest.raises(ValueError):
        from_fields_v1({"x:weird": {}})


def test_compare_marks_added_maps_and_keys_list_items() -> None:
    old = {"spec": {"containers": None}}
    new = {
        "metadata": {"labels": {"a": "b"}, "finalizers": ["f1"]},
        "spec": {
            "containers": [{"name": "c", "ports": [{"containerPort": 80, "protocol": "TCP"}]}],
            "selector": {"matchLabels": {"a": "b"}},
            "args": ["x"],
        },
    }
    change = compare(old, new, TYPES)
    container = ("f:spec", "f:containers", 'k:{"name":"c"}')
    port = (*container, "f:ports", 'k:{"containerPort":80,"protocol":"TCP"}')
    assert {
        ("f:metadata", "f:labels"),
        ("f:metadata", "f:labels", "f:a"),
        ("f:metadata", "f:finalizers", 'v:"f1"'),
        container,
        (*container, "f:name"),
        port,
        (*port, "f:containerPort"),
        ("f:spec", "f:selector"),
        ("f:spec", "f:args"),
    } <= change.added
    # Present in both (null in the zero object): not added itself.
    assert ("f:spec", "f:containers") not in change.added
    assert ("f:spec",) not in change.added
    # Atomic: one leaf, nothing below it.
    assert not any(p[:2] == ("f:spec", "f:selector") and len(p) > 2 for p in change.added)


def test_compare_reports_modified_and_removed_leaves() -> None:
    old = {"data": {"a": "1", "b": "2", "flag": 1}}
    new = {"data": {"a": "9", "c": "3", "flag": True}}
    change = compare(old, new, FieldTypes())
    assert change.modified == {("f:data", "f:a"), ("f:data", "f:flag")}
    assert change.added == {("f:data", "f:c")}
    assert change.removed == {("f:data", "f:b")}


def test_recursive_difference_drops_descendants() -> None:
    paths = {("f:status",), ("f:status", "f:phase"), ("f:spec", "f:x")}
    assert recursive_difference(paths, [("f:status",)]) == {("f:spec", "f:x")}


def test_update_entry_records_only_what_changed_and_strips_identity_fields() -> None:
    live = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}}
    new = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "resourceVersion": "5", "labels": {"x": "y"}},
        "data": {"a": "1", "b": "2"},
    }
    (entry,) = update_managed_fields(live, new, _request()) or []
    assert entry == {
        "manager": "me",
        "operation": "Update",
        "apiVersion": "v1",
        "time": "2026-01-01T00:00:00Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:data": {"f:b": {}}, "f:metadata": {"f:labels": {".": {}, "f:x": {}}}},
    }


def test_unchanged_object_keeps_its_entries_untouched() -> None:
    entries = [
        {
            "manager": "old",
            "operation": "Update",
            "apiVersion": "v1",
            "time": "2020-01-01T00:00:00Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {"f:a": {}}},
        }
    ]
    live = {"metadata": {"managedFields": entries}, "data": {"a": "1"}}
    assert update_managed_fields(live, {"metadata": {}, "data": {"a": "1"}}, _request()) == entries


def test_empty_managed_fields_in_the_request_reset_them() -> None:
    live = {
        "metadata": {
            "managedFields": [
                {
                    "manager": "old",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:data": {"f:a": {}}},
                }
            ]
        },
        "data": {"a": "1"},
    }
    assert (
        update_managed_fields(
            live, {"metadata": {"managedFields": []}, "data": {"a": "1"}}, _request()
        )
        is None
    )


def test_apply_entries_lose_fields_an_update_changes() -> None:
    live = {
        "metadata": {
            "managedFields": [
                {
                    "manager": "applier",
                    "operation": "Apply",
                    "apiVersion": "v1",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:data": {"f:a": {}, "f:b": {}}},
                }
            ]
        },
        "data": {"a": "1", "b": "1"},
    }
    result = (
        update_managed_fields(
            live, {"metadata": {}, "data": {"a": "2", "b": "1"}}, _request(subresource="status")
        )
        or []
    )
    by_manager = {e["manager"]: e for e in result}
    assert by_manager["applier"]["fieldsV1"] == {"f:data": {"f:b": {}}}
    assert by_manager["me"]["subresource"] == "status"
    # Apply entries sort before Update entries.
    assert [e["operation"] for e in result] == ["Apply", "Update"]


def test_ignored_fields_are_not_owned() -> None:
    live: dict[str, Any] = {"metadata": {}, "spec": {"x": 1}}
    new = {"metadata": {}, "spec": {"x": 1}, "status": {"phase": "Running"}}
    request = _request(ignored=frozenset({("f:status",)}))
    assert update_managed_fields(live, new, request) is None
