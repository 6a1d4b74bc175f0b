"""The public entry point apply_patch: content types, PatchOptions validation, missing objects,
name and namespace checks, fieldValidation, defaulting, and ownership of the result."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kstore.api.gvk import GroupVersionKind
from kstore.api.proto_schema import schema_for_gvk
from kstore.codec.strict import FieldValidation
from kstore.errors import BadRequest, Invalid, NotFound, UnsupportedMediaType
from kstore.registry.patch import (
    PatchOptions,
    PatchType,
    apply_patch,
    parse_patch_type,
    record_update,
    supported_patch_types,
)
from tests.patch.objects import CONFIG_MAP, DEPLOYMENT, body, live_config_map, options

CM_SCHEMA = schema_for_gvk(CONFIG_MAP)


def _patch(live: dict[str, Any], patch: Any, patch_type: PatchType | str, **kw: Any) -> Any:
    return apply_patch(live, body(patch), patch_type, options(CONFIG_MAP, "cm3", **kw))


def test_supported_patch_types_follow_kubernetes_order() -> None:
    assert [t.value for t in supported_patch_types(DEPLOYMENT)] == [
        "application/json-patch+json",
        "application/merge-patch+json",
        "application/strategic-merge-patch+json",
        "application/apply-patch+yaml",
    ]


def test_parse_patch_type_reads_the_content_type() -> None:
    assert parse_patch_type("application/apply-patch+yaml; charset=utf-8", DEPLOYMENT) is (
        PatchType.APPLY
    )
    widget = GroupVersionKind("example.com", "v1", "Widget")
    with pytest.raises(UnsupportedMediaType):
        parse_patch_type("application/strategic-merge-patch+json", widget)


def test_content_type_parameters_are_ignored() -> None:
    out = _patch(
        live_config_map(a="1"), {"data": {"b": "2"}}, "application/merge-patch+json; charset=utf-8"
    )
    assert out.object["data"] == {"a": "1", "b": "2"}


def test_an_unknown_content_type_is_415_listing_the_accepted_ones() -> None:
    with pytest.raises(UnsupportedMediaType) as info:
        _patch(live_config_map(), {}, "application/json")
    assert info.value.message == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, "
        "application/strategic-merge-patch+json, application/apply-patch+yaml"
    )


def test_force_is_only_for_apply() -> None:
    with pytest.raises(Invalid) as info:
        _patch(live_config_map(), {}, PatchType.MERGE, force=False)
    assert info.value.message == (
        'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for '
        "non-apply patch"
    )


def test_a_field_manager_longer_than_128_is_invalid() -> None:
    with pytest.raises(Invalid, match="may not be more than 128 bytes"):
        _patch(live_config_map(), {}, PatchType.MERGE, field_manager="m" * 129)


def test_patching_a_missing_object_is_not_found() -> None:
    with pytest.raises(NotFound) as info:
        _patch({}, {"data": {}}, PatchType.MERGE)
    assert info.value.message == 'configmaps "cm3" not found'
    assert (info.value.kind, info.value.name) == ("configmaps", "cm3")


def test_a_patch_may_not_rename_or_move_the_object() -> None:
    ops = [{"op": "replace", "path": "/metadata/name", "value": "other"}]
    with pytest.raises(BadRequest, match=r"the name of the object \(other\) does not match"):
        _patch(live_config_map(), ops, PatchType.JSON)
    with pytest.raises(BadRequest, match="namespace of the provided object does not match"):
        _patch(live_config_map(), {"metadata": {"namespace": "x"}}, PatchType.MERGE)


def test_a_json_patch_that_fails_is_a_422() -> None:
    with pytest.raises(Invalid) as info:
        _patch(live_config_map(), [{"op": "remove", "path": "/data/nope"}], PatchType.JSON)
    assert info.value.message == "the server rejected our request due to an error in our request"


def test_invalid_json_is_a_bad_request() -> None:
    with pytest.raises(BadRequest, match=r"^invalid JSON patch$"):
        apply_patch(live_config_map(), b"{", PatchType.MERGE, options(CONFIG_MAP, "cm3"))


def test_a_merge_patch_that_makes_an_array_is_invalid() -> None:
    with pytest.raises(Invalid) as info:
        _patch(live_config_map(), ["x"], PatchType.MERGE)
    assert info.value.message.startswith(' "" is invalid: patch: Invalid value: "[\\"x\\"]": ')


@pytest.mark.parametrize("patch_type", [PatchType.MERGE, PatchType.STRATEGIC])
def test_unknown_fields_follow_field_validation(patch_type: PatchType) -> None:
    patch = {"data": {"b": "2"}, "datax": 1}
    ignored = _patch(
        live_config_map(),
        patch,
        patch_type,
        schema=CM_SCHEMA,
        field_validation=FieldValidation.IGNORE,
    )
    assert "datax" not in ignored.object and ignored.warnings == ()
    warned = _patch(live_config_map(), patch, patch_type, schema=CM_SCHEMA)
    assert "datax" not in warned.object
    assert warned.warnings == ('unknown field "datax"',)
    with pytest.raises(Invalid) as info:
        _patch(
            live_config_map(),
            patch,
            patch_type,
            schema=CM_SCHEMA,
            field_validation=FieldValidation.STRICT,
        )
    assert info.value.message.startswith(' "" is invalid: patch: Invalid value: ')
    assert info.value.message.endswith(': strict decoding error: unknown field "datax"')


def test_duplicate_fields_in_a_patch_are_strict_decoding_errors() -> None:
    raw = b'{"data": {"a": "1", "a": "2"}}'
    warned = apply_patch(live_config_map(), raw, PatchType.MERGE, options(CONFIG_MAP, "cm3"))
    assert warned.warnings == ('duplicate field "a"',)
    assert warned.object["data"]["a"] == "2"


def test_the_defaulter_runs_before_ownership_is_recorded() -> None:
    # As in Kubernetes, a field defaulted while decoding a patch result is owned by the patcher.
    def default(obj: dict[str, Any]) -> None:
        obj.setdefault("immutable", False)

    live = record_update({}, live_config_map(a="1"), gvk=CONFIG_MAP, field_manager="creator")
    out = _patch(
        live, {"data": {"b": "2"}}, PatchType.MERGE, field_manager="patcher", default=default
    ).object
    assert out["immutable"] is False
    owned = {e["manager"]: e["fieldsV1"] for e in out["metadata"]["managedFields"]}
    assert owned["patcher"] == {"f:data": {"f:b": {}}, "f:immutable": {}}


def test_the_result_shares_nothing_with_the_current_object() -> None:
    live = live_config_map(a="1")
    frozen = copy.deepcopy(live)
    for patch_type, patch in [
        (PatchType.MERGE, {"data": {"b": "2"}}),
        (PatchType.STRATEGIC, {"data": {"b": "2"}}),
        (PatchType.JSON, [{"op": "add", "path": "/data/b", "value": "2"}]),
    ]:
        out = _patch(live, patch, patch_type).object
        out["metadata"]["labels"]["mutated"] = "yes"
        out["data"]["a"] = "mutated"
    assert live == frozen


def test_an_apply_that_sets_only_identity_fields_records_no_owner() -> None:
    gvk = GroupVersionKind("example.com", "v1", "Widget")
    result = apply_patch(
        {},
        body({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}),
        PatchType.APPLY,
        PatchOptions(gvk=gvk, name="w", field_manager="me"),
    )
    assert result.created
    assert result.object == {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
    }
