"""Field sets and their FieldsV1 encoding: Kubernetes' element order, ``.`` markers, the set
algebra apply relies on, and paths printed as conflict messages print them."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kstore.errors import BadRequest
from kstore.registry.patch.fieldsets import FieldSet, PathElement, path_string

F = PathElement.of_field


def K(**fields: Any) -> PathElement:
    return PathElement.of_key(fields)


V = PathElement.of_value
I = PathElement.of_index  # noqa: E741

# A Deployment's ownership as Kubernetes records it after kubectl apply --server-side.
DEPLOYMENT_FIELDS_V1 = {
    "f:spec": {
        "f:replicas": {},
        "f:selector": {},
        "f:template": {
            "f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {
                "f:containers": {
                    'k:{"name":"nginx"}': {
                        ".": {},
                        "f:image": {},
                        "f:name": {},
                        "f:ports": {
                            'k:{"containerPort":80,"protocol":"TCP"}': {
                                ".": {},
                                "f:containerPort": {},
                            }
                        },
                    }
                }
            },
        },
    }
}


def test_fields_v1_round_trips_byte_for_byte_in_kubernetes_order() -> None:
    fields = FieldSet.from_fields_v1(DEPLOYMENT_FIELDS_V1)
    encoded = fields.to_fields_v1()
    assert encoded == DEPLOYMENT_FIELDS_V1
    assert list(encoded["f:spec"]) == ["f:replicas", "f:selector", "f:template"]


def test_decoded_paths() -> None:
    fields = FieldSet.from_fields_v1(DEPLOYMENT_FIELDS_V1)
    container = (F("spec"), F("template"), F("spec"), F("containers"), K(name="nginx"))
    assert fields.has((F("spec"), F("replicas")))
    assert fields.has(container)
    assert fields.has((*container, F("image")))
    assert not fields.has((F("spec"),))  # a parent without "." is not a member
    port = K(containerPort=80, protocol="TCP")
    assert fields.has((*container, F("ports"), port))


def test_element_order_is_fields_keys_values_indexes() -> None:
    fields = FieldSet.of((I(0),), (V("b"),), (V(1),), (K(name="a"),), (F("z"),), (F("a"),))
    assert list(fields.to_fields_v1()) == ["f:a", "f:z", 'k:{"name":"a"}', "v:1", 'v:"b"', "i:0"]


def test_keys_serialise_with_sorted_field_names_and_go_json() -> None:
    pe = PathElement.of_key({"protocol": "TCP", "containerPort": 80})
    assert pe.serialize() == 'k:{"containerPort":80,"protocol":"TCP"}'
    assert PathElement.of_value("<a&b>").serialize() == 'v:"\\u003ca\\u0026b\\u003e"'


def test_paths_print_as_kubernetes_prints_them() -> None:
    path = (F("spec"), F("containers"), K(name="nginx"), F("ports"), K(containerPort=80))
    assert path_string(path) == '.spec.containers[name="nginx"].ports[containerPort=80]'
    assert path_string((F("metadata"), F("finalizers"), V("a"))) == '.metadata.finalizers[="a"]'
    assert path_string((F("args"), I(2))) == ".args[2]"


def test_numbers_in_keys_compare_by_value() -> None:
    assert PathElement.of_key({"port": 80}) == PathElement.of_key({"port": 80.0})
    assert PathElement.of_value(True) != PathElement.of_value(1)


def test_algebra() -> None:
    a = FieldSet.of((F("a"), F("x")), (F("a"), F("y")), (F("b"),))
    b = FieldSet.of((F("a"), F("y")), (F("c"),))
    assert a.union(b) == FieldSet.of((F("a"), F("x")), (F("a"), F("y")), (F("b"),), (F("c"),))
    assert a.intersection(b) == FieldSet.of((F("a"), F("y")))
    assert a.difference(b) == FieldSet.of((F("a"), F("x")), (F("b"),))
    # A parent removes its children only in a recursive difference.
    parent = FieldSet.of((F("a"),))
    assert a.difference(parent) == a
    assert a.recursive_difference(parent) == FieldSet.of((F("b"),))
    assert a.difference(a).empty()


def test_iteration_lists_members_before_children() -> None:
    fields = FieldSet.of((F("b"),), (F("a"), F("x")), (F("a"),))
    assert [path_string(p) for p in fields.paths()] == [".a", ".b", ".a.x"]


def test_unknown_element_types_are_skipped_and_malformed_ones_refused() -> None:
    assert FieldSet.from_fields_v1({"x:what": {}, "f:a": {}}) == FieldSet.of((F("a"),))
    with pytest.raises(BadRequest):
        FieldSet.from_fields_v1({'k:{"name":': {}})
    with pytest.raises(BadRequest):
        FieldSet.from_fields_v1({"f:a": []})


_names = st.text(alphabet="abcxyz.-/~", min_size=1, max_size=6)
_scalars = st.one_of(st.integers(-5, 5), _names, st.booleans())
_elements = st.one_of(
    _names.map(PathElement.of_field),
    st.dictionaries(_names, _scalars, min_size=1, max_size=2).map(PathElement.of_key),
    _scalars.map(PathElement.of_value),
    st.integers(0, 3).map(PathElement.of_index),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(_elements, min_size=1, max_size=4).map(tuple), max_size=8))
def test_fields_v1_round_trips_any_set(paths: list[tuple[PathElement, ...]]) -> None:
    fields = FieldSet.of(*paths)
    encoded = fields.to_fields_v1()
    decoded = FieldSet.from_fields_v1(encoded)
    assert decoded == fields
    assert decoded.to_fields_v1() == encoded
    assert sorted(path_string(p) for p in decoded.paths()) == sorted(
        {path_string(p) for p in paths}
    )
