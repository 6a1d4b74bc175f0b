"""managedFields for creates, updates and non-apply patches (Kubernetes' Update operation):
who comes to own what, what is never owned, the cap on Update entries, and the rules for a
request's own managedFields."""

from __future__ import annotations

import copy
from datetime import timedelta
from typing import Any

from kstore.registry.patch import (
    MAX_UPDATE_MANAGERS,
    PatchType,
    apply_patch,
    manager_from_user_agent,
    record_update,
)
from tests.patch.objects import (
    CONFIG_MAP,
    DEPLOYMENT,
    T0,
    T1,
    body,
    deployment_manifest,
    options,
)


def _config_map(**data: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm", "namespace": "default"},
        "data": dict(data),
    }


def _created(obj: dict[str, Any], manager: str = "kubectl-create") -> dict[str, Any]:
    out = record_update({}, obj, gvk=CONFIG_MAP, field_manager=manager, now=T0)
    out["metadata"]["uid"] = "uid-cm"
    out["metadata"]["resourceVersion"] = "5"
    return out


def _entries(obj: dict[str, Any]) -> dict[str, Any]:
    return {e["manager"]: e["fieldsV1"] for e in obj["metadata"].get("managedFields", [])}


def test_a_create_records_its_manager_without_identity_fields() -> None:
    out = _created(_config_map(a="1"))
    (entry,) = out["metadata"]["managedFields"]
    assert entry == {
        "manager": "kubectl-create",
        "operation": "Update",
        "apiVersion": "v1",
        "time": "2026-12-02T12:00:00Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:data": {".": {}, "f:a": {}}},
    }


def test_a_create_is_compared_with_the_zero_object() -> None:
    # Non-pointer structs exist in Go's zero value, so they get no "." of their own; maps,
    # pointers and lists that did not exist do.
    out = record_update({}, deployment_manifest(), gvk=DEPLOYMENT, field_manager="kubectl-create")
    fields = out["metadata"]["managedFields"][0]["fieldsV1"]
    assert "." not in fields["f:spec"]
    assert "." not in fields["f:spec"]["f:template"]["f:metadata"]
    assert "." in fields["f:spec"]["f:template"]["f:metadata"]["f:labels"]
    assert "." not in fields["f:spec"]["f:template"]["f:spec"]["f:containers"]


def test_an_update_moves_changed_fields_to_the_updater() -> None:
    live = _created(_config_map(a="1", b="2"))
    new = copy.deepcopy(live)
    new["data"]["a"] = "changed"
    del new["data"]["b"]
    out = record_update(live, new, gvk=CONFIG_MAP, field_manager="kubectl-edit", now=T1)
    assert _entries(out) == {
        "kubectl-create": {"f:data": {}},  # still owns the map itself
        "kubectl-edit": {"f:data": {"f:a": {}}},
    }
    times = {e["manager"]: e["time"] for e in out["metadata"]["managedFields"]}
    assert times == {
        "kubectl-create": "2026-12-02T12:00:00Z",
        "kubectl-edit": "2026-12-02T12:05:00Z",
    }


def test_a_noop_update_keeps_every_timestamp() -> None:
    live = _created(_config_map(a="1"))
    out = record_update(live, copy.deepcopy(live), gvk=CONFIG_MAP, field_manager="x", now=T1)
    assert out["metadata"]["managedFields"] == live["metadata"]["managedFields"]


def test_an_update_that_rewrites_only_timestamps_keeps_the_old_ones() -> None:
    live = _created(_config_map(a="1"))
    new = copy.deepcopy(live)
    new["data"]["a"] = "1"
    out = record_update(live, new, gvk=CONFIG_MAP, field_manager="kubectl-create", now=T1)
    assert out == live


def test_an_object_nobody_tracks_stays_untracked_on_update() -> None:
    live = _config_map(a="1")
    live["metadata"]["uid"] = "uid"
    new = copy.deepcopy(live)
    new["data"]["a"] = "2"
    assert (
        "managedFields"
        not in record_update(live, new, gvk=CONFIG_MAP, field_manager="x")["metadata"]
    )


def test_a_request_may_reset_or_replace_managed_fields() -> None:
    live = _created(_config_map(a="1"))
    cleared = copy.deepcopy(live)
    cleared["metadata"]["managedFields"] = []
    assert (
        "managedFields"
        not in record_update(live, cleared, gvk=CONFIG_MAP, field_manager="x")["metadata"]
    )
    rewritten = copy.deepcopy(live)
    rewritten["metadata"]["managedFields"][0]["manager"] = "someone-else"
    out = record_update(live, rewritten, gvk=CONFIG_MAP, field_manager="x")
    assert list(_entries(out)) == ["someone-else"]
    # A subresource write never takes the request's managedFields.
    out = record_update(live, rewritten, gvk=CONFIG_MAP, field_manager="x", subresource="status")
    assert list(_entries(out)) == ["kubectl-create"]


def test_update_entries_are_capped_into_ancient_changes() -> None:
    obj = _created(_config_map(k0="0"), "m0")
    for i in range(1, MAX_UPDATE_MANAGERS + 2):  # twelve managers in all
        new = copy.deepcopy(obj)
        new["data"][f"k{i}"] = str(i)
        at = T0 + timedelta(seconds=i)
        obj = record_update(obj, new, gvk=CONFIG_MAP, field_manager=f"m{i}", now=at)
    managers = [e["manager"] for e in obj["metadata"]["managedFields"]]
    assert len(managers) == MAX_UPDATE_MANAGERS
    # The three oldest are merged; the bucket takes the time of the last one merged.
    assert managers[0] == "ancient-changes"
    assert _entries(obj)["ancient-changes"] == {
        "f:data": {".": {}, "f:k0": {}, "f:k1": {}, "f:k2": {}}
    }
    assert obj["metadata"]["managedFields"][0]["time"] == "2026-12-02T12:00:02Z"
    assert managers[1:] == [f"m{i}" for i in range(3, 12)]


def test_non_apply_patches_record_the_user_agent_without_a_field_manager() -> None:
    live = _created(_config_map(a="1"))
    out = apply_patch(
        live,
        body({"data": {"b": "2"}}),
        PatchType.MERGE,
        options(CONFIG_MAP, "cm", user_agent="kubectl/v1.37.1 (linux/amd64) kubernetes/abc"),
    ).object
    assert "kubectl" in _entries(out)
    assert manager_from_user_agent("OpenAPI-Generator/37.0.2/python") == "OpenAPI-Generator"


def test_status_writes_record_the_subresource() -> None:
    live = _created(_config_map(a="1"))
    new = copy.deepcopy(live)
    new["data"]["a"] = "2"
    out = record_update(live, new, gvk=CONFIG_MAP, field_manager="ctl", subresource="status")
    entry = next(e for e in out["metadata"]["managedFields"] if e["manager"] == "ctl")
    assert entry["subresource"] == "status"
    assert list(entry) == [
        "manager",
        "operation",
        "apiVersion",
        "time",
        "fieldsType",
        "fieldsV1",
        "subresource",
    ]
