"""resourceVersion parsing, storage preparation and preconditions (Kubernetes' versioner)."""

from __future__ import annotations

import pytest

from kstore.errors import BadRequest, Conflict
from kstore.storage.interface import Preconditions
from kstore.storage.versioner import (
    MAX_REVISION,
    check_preconditions,
    object_resource_version,
    parse_list_resource_version,
    parse_resource_version,
    prepare_for_storage,
    with_resource_version,
)


@pytest.mark.parametrize(("text", "expected"), [("", 0), ("0", 0), ("1", 1), ("42", 42)])
def test_parse_accepts_empty_zero_and_unsigned_integers(text: str, expected: int) -> None:
    assert parse_resource_version(text) == expected


def test_parse_accepts_the_largest_uint64() -> None:
    assert parse_resource_version(str(MAX_REVISION)) == MAX_REVISION


@pytest.mark.parametrize("text", ["-1", "abc", "1.5", " 1", "0x10", "١٢"])
def test_parse_rejects_what_is_not_an_unsigned_integer_with_kubernetes_wording(text: str) -> None:
    with pytest.raises(BadRequest) as caught:
        parse_resource_version(text)
    assert caught.value.message.startswith("resourceVersion: Invalid value: ")
    assert "invalid syntax" in caught.value.message


def test_parse_rejects_overflow_as_out_of_range() -> None:
    with pytest.raises(BadRequest, match="value out of range"):
        parse_resource_version(str(MAX_REVISION + 1))


def test_list_parse_prefixes_the_error_as_get_and_list_report_it() -> None:
    with pytest.raises(BadRequest) as caught:
        parse_list_resource_version("abc")
    assert caught.value.message == (
        'invalid resource version: resourceVersion: Invalid value: "abc": '
        'strconv.ParseUint: parsing "abc": invalid syntax'
    )


def test_prepare_for_storage_drops_resource_version_and_self_link_without_mutating() -> None:
    obj = {"metadata": {"name": "a", "resourceVersion": "5", "selfLink": "/x"}, "spec": {}}
    prepared = prepare_for_storage(obj)
    assert prepared == {"metadata": {"name": "a"}, "spec": {}}
    assert obj["metadata"] == {"name": "a", "resourceVersion": "5", "selfLink": "/x"}
    assert prepared["spec"] is obj["spec"]


def test_prepare_for_storage_returns_the_object_itself_when_nothing_to_drop() -> None:
    obj = {"metadata": {"name": "a"}}
    assert prepare_for_storage(obj) is obj


def test_with_resource_version_sets_and_zero_clears() -> None:
    obj = with_resource_version({"metadata": {"name": "a"}}, 7)
    assert obj["metadata"]["resourceVersion"] == "7"
    assert "resourceVersion" not in with_resource_version(obj, 0)["metadata"]
    assert with_resource_version({}, 3) == {"metadata": {"resourceVersion": "3"}}


def test_object_resource_version_reads_metadata() -> None:
    assert object_resource_version({"metadata": {"resourceVersion": "12"}}) == 12
    assert object_resource_version({"metadata": {}}) == 0
    assert object_resource_version({}) == 0
    with pytest.raises(BadRequest):
        object_resource_version({"metadata": {"resourceVersion": "x"}})


def test_preconditions_pass_when_unset_or_equal() -> None:
    obj = {"metadata": {"uid": "A", "resourceVersion": "3"}}
    check_preconditions(None, obj, resource="pods", name="p")
    check_preconditions(Preconditions(), obj, resource="pods", name="p")
    check_preconditions(
        Preconditions(uid="A", resource_version="3"), obj, resource="pods", name="p"
    )


def test_uid_precondition_failure_is_a_conflict_with_kubernetes_message() -> None:
    obj = {"metadata": {"uid": "A"}}
    with pytest.raises(Conflict) as caught:
        check_preconditions(Preconditions(uid="B"), obj, resource="pods", name="p")
    assert caught.value.message == (
        'Operation cannot be fulfilled on pods "p": Precondition failed: '
        "UID in precondition: B, UID in object meta: A"
    )
    assert (caught.value.name, caught.value.kind, caught.value.group) == ("p", "pods", "")


def test_resource_version_precondition_failure_names_both_versions() -> None:
    obj = {"metadata": {"resourceVersion": "4"}}
    with pytest.raises(Conflict) as caught:
        check_preconditions(
            Preconditions(resource_version="3"), obj, resource="widgets.example.com", name="w"
        )
    assert caught.value.message.endswith(
        "ResourceVersion in precondition: 3, ResourceVersion in object meta: 4"
    )
    assert (caught.value.kind, caught.value.group) == ("widgets", "example.com")
