"""The shortcuts that make managedFields cheap record exactly what the general algorithm does.

- A create nobody else owns fields of is recorded by one walk that writes FieldsV1 directly
  (``created_fields_v1``) instead of ``compare``, ``update_managed`` and a trie encoding: for
  any object of a built-in kind (well-formed or not: wrong types, nulls, empty containers,
  repeated or missing list keys) both write the same FieldsV1 in the same order, or both raise
  the same error; reset fields and server-owned fields are taken out the same way.
- Zero values hold only objects and nulls (what the walk relies on to skip removals).
- Interned and hash-cached path elements behave as values (equal, hashed and ordered by
  kind and sort, whatever the spelling), so tries built either way compare equal.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kstore.api.gvk import GroupVersionKind
from kstore.api.patch_meta import DEDUCED, ListType, NodeKind, TypeNode, type_for_gvk, zero_object
from kstore.benchmarks.storage import sample_pod
from kstore.registry.patch.fieldsets import FieldSet, PathElement
from kstore.registry.patch.managed import (
    Managed,
    ManagerKey,
    created_fields_v1,
    encode_managed_fields,
    reset_field_set,
    track_update,
    update_managed,
)
from kstore.registry.patch.typed import SchemaError, compare

KINDS = [
    GroupVersionKind("", "v1", "ConfigMap"),
    GroupVersionKind("", "v1", "Pod"),
    GroupVersionKind("", "v1", "Service"),
    GroupVersionKind("apps", "v1", "Deployment"),
    GroupVersionKind("", "v1", "Namespace"),
]
NOW = datetime(2026, 12, 2, 12, 0, 0, tzinfo=UTC)

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from(["", "a", "b", "80", "TCP"]),
)


def _values(node: TypeNode, depth: int) -> st.SearchStrategy[Any]:
    """Values shaped by ``node`` most of the time, anything else sometimes."""
    if depth <= 0:
        return _scalars
    if node.kind is NodeKind.STRUCT and node.fields:
        names = sorted(node.fields)
        shaped = st.dictionaries(
            st.sampled_from([*names, "undeclared"]),
            st.deferred(lambda: _field_value(node, depth)),
            max_size=4,
        )
    elif node.kind is NodeKind.MAP and node.item is not None:
        shaped = st.dictionaries(
            st.sampled_from(["k1", "k2", "k3"]), _values(node.item, depth - 1), max_size=3
        )
    elif node.kind is NodeKind.LIST and node.item is not None:
        shaped = st.lists(_elements(node, depth), max_size=3)
    elif node.kind is NodeKind.DEDUCED:
        shaped = st.recursive(
            _scalars,
            lambda inner: (
                st.dictionaries(st.sampled_from(["x", "y"]), inner, max_size=2)
                | st.lists(inner, max_size=2)
            ),
            max_leaves=4,
        )
    else:
        return _scalars
    return st.one_of(shaped, shaped, shaped, _scalars, st.just({}), st.just([]))


def _field_value(node: TypeNode, depth: int) -> st.SearchStrategy[Any]:
    return st.sampled_from(sorted(node.fields)).flatmap(
        lambda name: _values(node.fields[name].type, depth - 1)
    )


def _elements(node: TypeNode, depth: int) -> st.SearchStrategy[Any]:
    assert node.item is not None
    if node.list_type is ListType.MAP:
        keys = st.fixed_dictionaries(
            {}, optional={k: st.sampled_from(["a", "b", 80]) for k in node.list_keys}
        )
        rest = _values(node.item, depth - 1)
        return st.tuples(keys, rest).map(
            lambda pair: {**pair[1], **pair[0]} if isinstance(pair[1], dict) else pair[0]
        )
    if node.list_type is ListType.SET:
        return st.one_of(_scalars, st.just({"a": 1}))
    return _values(node.item, depth - 1)


def _objects(gvk: GroupVersionKind) -> st.SearchStrategy[dict[str, Any]]:
    node = type_for_gvk(gvk)
    assert node is not None
    body = _values(node, 5).filter(lambda v: isinstance(v, dict))
    return body.map(lambda b: {**b, "apiVersion": gvk.group_version.api_version, "kind": gvk.kind})


_SERVICE = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
    "spec": {
        "selector": {"app": "web"},
        "ports": [
            {"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080},
            {"name": "dns", "port": 53, "protocol": "UDP"},
        ],
        "ipFamilies": ["IPv4"],
    },
}
_DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {
                "containers": [
                    {
                        "name": "nginx",
                        "image": "nginx",
                        "ports": [{"containerPort": 80}],
                        "env": [{"name": "A", "value": "1"}, {"name": "B"}],
                    }
                ]
            },
        },
    },
}
_SEEDS = {
    "Pod": sample_pod("default", "web"),
    "Service": _SERVICE,
    "Deployment": _DEPLOYMENT,
}
_REPLACEMENTS = [None, {}, [], "", 0, True, {"name": "a"}, ["a", "a"], {"unknown": 1}]


def _containers(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The paths of every object and list inside ``value``."""
    found: list[tuple[Any, ...]] = []
    items: Any = value.items() if isinstance(value, dict) else enumerate(value)
    for key, child in items:
        if isinstance(child, dict | list):
            found.append((*path, key))
            found.extend(_containers(child, (*path, key)))
    return found


def _mutate(obj: dict[str, Any], path: tuple[Any, ...], op: int, replacement: Any) -> None:
    """Change the container at ``path``: repeat its first element or entry, drop its first
    key, or replace it."""
    parent: Any = obj
    for key in path[:-1]:
        parent = parent[key]
    target = parent[path[-1]]
    if op == 0 and isinstance(target, list) and target:
        target.append(json.loads(json.dumps(target[0])))
    elif op == 1 and isinstance(target, dict) and target:
        del target[next(iter(target))]
    elif op == 2 and isinstance(target, list) and target and isinstance(target[0], dict):
        target[0] = {k: v for k, v in target[0].items() if k != "name"}
    else:
        parent[path[-1]] = json.loads(json.dumps(replacement))


@st.composite
def _mutated(draw: st.DrawFn, kind: str) -> dict[str, Any]:
    obj: dict[str, Any] = json.loads(json.dumps(_SEEDS[kind]))
    for _ in range(draw(st.integers(0, 4))):
        paths = _containers(obj)
        if not paths:
            break
        _mutate(
            obj,
            draw(st.sampled_from(paths)),
            draw(st.integers(0, 3)),
            draw(st.sampled_from(_REPLACEMENTS)),
        )
    return obj


def _general(zero: dict[str, Any], new: dict[str, Any], node: TypeNode) -> dict[str, Any]:
    """What compare then the trie encoding write (insertion order included)."""
    cmp = compare(zero, new, node)
    return _ordered(cmp.modified.union(cmp.added).to_fields_v1())


def _ordered(v1: dict[str, Any]) -> Any:
    """FieldsV1 with its key order made visible to ``==``."""
    return [(k, _ordered(v)) for k, v in v1.items()]


@pytest.mark.parametrize("gvk", KINDS, ids=lambda g: g.kind)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_create_walk_finds_what_compare_finds(gvk: GroupVersionKind, data: st.DataObject) -> None:
    node = type_for_gvk(gvk)
    assert node is not None
    obj = data.draw(_objects(gvk))
    zero = zero_object(gvk)
    try:
        expected: Any = _general(zero, obj, node)
    except SchemaError as exc:
        expected = f"SchemaError: {exc}"
    try:
        found: Any = _ordered(created_fields_v1(zero, obj, node))
    except SchemaError as exc:
        found = f"SchemaError: {exc}"
    assert found == expected


@pytest.mark.parametrize("kind", sorted(_SEEDS))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_create_walk_finds_what_compare_finds_in_real_shapes(
    kind: str, data: st.DataObject
) -> None:
    obj = data.draw(_mutated(kind))
    gvk = GroupVersionKind(
        *{"Pod": ("", "v1"), "Service": ("", "v1")}.get(kind, ("apps", "v1")), kind
    )
    node = type_for_gvk(gvk)
    assert node is not None
    zero = zero_object(gvk)
    try:
        expected: Any = _general(zero, obj, node)
    except SchemaError as exc:
        expected = f"SchemaError: {exc}"
    try:
        found: Any = _ordered(created_fields_v1(zero, obj, node))
    except SchemaError as exc:
        found = f"SchemaError: {exc}"
    assert found == expected


@settings(max_examples=100, deadline=None)
@given(
    obj=st.recursive(
        _scalars,
        lambda inner: (
            st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3)
            | st.lists(inner, max_size=3)
        ),
        max_leaves=10,
    ).filter(lambda v: isinstance(v, dict))
)
def test_a_create_of_a_kind_without_schema_walks_like_compare(obj: dict[str, Any]) -> None:
    assert _ordered(created_fields_v1({}, obj, DEDUCED)) == _general({}, obj, DEDUCED)


_RESETS = [
    FieldSet(),
    reset_field_set([("status",)]),
    reset_field_set(
        [("spec",), ("metadata", "deletionTimestamp"), ("metadata", "ownerReferences")]
    ),
    reset_field_set([("metadata",)]),
]
_METADATA = st.fixed_dictionaries(
    {"name": st.just("x")},
    optional={
        "namespace": st.just("default"),
        "labels": st.dictionaries(st.sampled_from(["a", "b"]), st.just("v"), max_size=2),
        "ownerReferences": st.just([{"uid": "u", "name": "o", "kind": "K", "apiVersion": "v1"}]),
        "generation": st.just(3),
        "finalizers": st.just(["example.com/f"]),
        "generateName": st.just("x-"),
    },
)


@pytest.mark.parametrize("reset", _RESETS, ids=["none", "status", "spec-and-meta", "metadata"])
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_tracked_create_writes_the_entry_the_general_bookkeeping_writes(
    reset: FieldSet, data: st.DataObject
) -> None:
    kind = data.draw(st.sampled_from([*sorted(_SEEDS), "ConfigMap"]))
    gvk = GroupVersionKind(*{"Deployment": ("apps", "v1")}.get(kind, ("", "v1")), kind)
    node = type_for_gvk(gvk)
    assert node is not None
    if kind in _SEEDS:
        obj = data.draw(_mutated(kind))
    else:
        obj = data.draw(_objects(gvk))
    obj["metadata"] = data.draw(_METADATA)
    api_version = gvk.group_version.api_version
    subresource = data.draw(st.sampled_from(["", "status"]))
    try:
        fast = track_update(
            {},
            obj,
            node,
            api_version=api_version,
            manager="m",
            subresource=subresource,
            reset_fields=reset,
            zero=zero_object(gvk),
            now=NOW,
        )
    except SchemaError:
        with pytest.raises(SchemaError):
            compare(zero_object(gvk), obj, node)
        return
    managed = Managed()
    update_managed(
        managed,
        zero_object(gvk),
        obj,
        node,
        ManagerKey.for_update("m", api_version, subresource),
        reset_fields=reset,
        now="2026-12-02T12:00:00Z",
    )
    expected = encode_managed_fields(managed)
    got = fast["metadata"].get("managedFields", [])
    assert got == expected
    assert [_ordered(e["fieldsV1"]) for e in got] == [_ordered(e["fieldsV1"]) for e in expected]
    assert [list(e) for e in got] == [list(e) for e in expected]


@pytest.mark.parametrize("gvk", KINDS, ids=lambda g: g.kind)
def test_zero_values_hold_only_objects_and_nulls(gvk: GroupVersionKind) -> None:
    def containers_only(value: Any) -> bool:
        return isinstance(value, dict) and all(
            v is None or containers_only(v) for v in value.values()
        )

    assert containers_only(zero_object(gvk))


def test_path_elements_are_values_however_they_were_made() -> None:
    assert PathElement.of_field("spec") is PathElement.of_field("spec")
    assert PathElement.of_field("spec") == PathElement(0, "spec", "spec")
    assert hash(PathElement.of_field("spec")) == hash(PathElement(0, "spec", "spec"))
    assert PathElement.of_value(80) == PathElement.of_value(80.0)
    assert hash(PathElement.of_value(80)) == hash(PathElement.of_value(80.0))
    assert PathElement.of_key({"port": 80, "protocol": "TCP"}) == PathElement.of_key(
        {"protocol": "TCP", "port": 80.0}
    )
    assert PathElement.of_field("a") != PathElement.of_value("a")
    ordered = sorted(
        [
            PathElement.of_index(1),
            PathElement.of_value("a"),
            PathElement.of_key({"name": "x"}),
            PathElement.of_field("b"),
            PathElement.of_field("a"),
        ]
    )
    assert [str(pe) for pe in ordered] == [".a", ".b", '[name="x"]', '[="a"]', "[1]"]


def test_field_sets_emit_fields_v1_in_kubernetes_order() -> None:
    fields = FieldSet.of(
        (PathElement.of_field("spec"), PathElement.of_field("b")),
        (PathElement.of_field("spec"),),
        (PathElement.of_field("spec"), PathElement.of_field("a")),
        (PathElement.of_field("data"),),
        (
            PathElement.of_field("spec"),
            PathElement.of_field("ports"),
            PathElement.of_key({"port": 80, "protocol": "TCP"}),
        ),
    )
    emitted = fields.to_fields_v1()
    assert list(emitted) == ["f:data", "f:spec"]
    assert list(emitted["f:spec"]) == [".", "f:a", "f:b", "f:ports"]
    assert FieldSet.from_fields_v1(emitted) == fields


def test_a_create_walk_raises_the_first_error_compare_raises() -> None:
    gvk = GroupVersionKind("", "v1", "Pod")
    node = type_for_gvk(gvk)
    assert node is not None
    # The second container has no name (found while grouping the list); the first has a
    # malformed env list (found only when descending into it): grouping comes first.
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "a", "env": ["x"]}, {"image": "b"}]},
    }
    with pytest.raises(SchemaError) as general:
        compare(zero_object(gvk), pod, node)
    with pytest.raises(SchemaError) as walked:
        created_fields_v1(zero_object(gvk), pod, node)
    assert str(walked.value) == str(general.value)
    assert "omits all key fields" in str(walked.value)


def test_a_create_walk_raises_the_error_of_the_field_met_first_in_the_object() -> None:
    gvk = GroupVersionKind("", "v1", "Pod")
    node = type_for_gvk(gvk)
    assert node is not None
    # Two malformed lists: volumes come first in the object, initContainers first by name
    # (the order FieldsV1 is written in, which the fast walk follows); compare meets the
    # volumes first, and so must the walk.
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"volumes": ["x"], "initContainers": [{"image": "b"}]},
    }
    with pytest.raises(SchemaError) as general:
        compare(zero_object(gvk), pod, node)
    with pytest.raises(SchemaError) as walked:
        created_fields_v1(zero_object(gvk), pod, node)
    assert str(walked.value) == str(general.value)
    assert "non-map elements" in str(walked.value)


def test_decoded_field_sets_are_shared_and_their_encodings_are_fresh_copies() -> None:
    v1 = {"f:data": {".": {}, "f:a": {}}, "f:metadata": {"f:labels": {"f:app": {}}}}
    first = FieldSet.from_fields_v1(json.loads(json.dumps(v1)))
    second = FieldSet.from_fields_v1(json.loads(json.dumps(v1)))
    assert first == second
    emitted = first.to_fields_v1()
    assert emitted == v1
    emitted["f:data"]["f:b"] = {}  # the caller owns what it got
    assert first.to_fields_v1() == v1
    assert second.to_fields_v1() is not second.to_fields_v1()


def test_a_set_changed_after_decoding_encodes_what_it_holds_now() -> None:
    # Shared decoded sets must not change (this one is private to the test); if a set is
    # still being built after it was decoded, its kept encoding is dropped.
    fields = FieldSet.from_fields_v1({"f:only-in-this-test": {}})
    assert fields.to_fields_v1() == {"f:only-in-this-test": {}}
    fields.insert((PathElement.of_field("b"),))
    assert fields.to_fields_v1() == {"f:b": {}, "f:only-in-this-test": {}}


def test_the_decode_memo_is_bounded_and_never_keeps_errors() -> None:
    from kstore.errors import BadRequest
    from kstore.registry.patch import fieldsets

    for i in range(fieldsets._PARSED_SIZE + 50):
        decoded = FieldSet.from_fields_v1({f"f:field{i}": {}})
        assert decoded.to_fields_v1() == {f"f:field{i}": {}}
    assert len(fieldsets._PARSED) <= fieldsets._PARSED_SIZE
    for _ in range(2):
        with pytest.raises(BadRequest):
            FieldSet.from_fields_v1({"f:a": "not an object"})


def test_shared_key_and_value_elements_keep_their_spelling() -> None:
    # Equal in Python, spelled apart in FieldsV1 and ordered apart by structured-merge-diff.
    cases: list[tuple[Callable[[], PathElement], str]] = [
        (lambda: PathElement.of_key({"port": 1}), 'k:{"port":1}'),
        (lambda: PathElement.of_key({"port": True}), 'k:{"port":true}'),
        (lambda: PathElement.of_key({"port": 1.5}), 'k:{"port":1.5}'),
        (lambda: PathElement.of_value(1), "v:1"),
        (lambda: PathElement.of_value(True), "v:true"),
        (lambda: PathElement.of_value("1"), 'v:"1"'),
    ]
    for _ in range(2):  # built, then memoised
        for make, text in cases:
            assert make().serialize() == text
    assert PathElement.of_key({"port": 1}) != PathElement.of_key({"port": True})
    assert PathElement.of_value(1) != PathElement.of_value(True)
    assert PathElement.of_key({"a": "x", "b": 2}) is PathElement.of_key({"b": 2, "a": "x"})


_DEDUCED_RESETS = [
    FieldSet(),
    reset_field_set([("status",)]),
    reset_field_set([("spec", "x")]),
    reset_field_set([("metadata", "labels"), ("spec", "y", "z")]),
]
_SCHEMALESS = st.recursive(
    _scalars,
    lambda inner: (
        st.dictionaries(st.sampled_from(["x", "y", "z"]), inner, max_size=3)
        | st.lists(inner, max_size=2)
    ),
    max_leaves=8,
)


@pytest.mark.parametrize("reset", _DEDUCED_RESETS, ids=["none", "status", "spec.x", "nested"])
@settings(max_examples=100, deadline=None)
@given(
    metadata=_METADATA,
    spec=_SCHEMALESS,
    status=_SCHEMALESS,
    has_status=st.booleans(),
)
def test_a_tracked_create_of_a_kind_without_schema_writes_the_general_entry(
    reset: FieldSet, metadata: dict[str, Any], spec: Any, status: Any, has_status: bool
) -> None:
    # Without a zero value, metadata itself is new: its membership and its server-owned
    # fields are taken out of an entry that has them.
    obj: dict[str, Any] = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": metadata,
        "spec": spec,
    }
    if has_status:
        obj["status"] = status
    fast = track_update(
        {}, obj, DEDUCED, api_version="example.com/v1", manager="m", reset_fields=reset, now=NOW
    )
    managed = Managed()
    update_managed(
        managed,
        {},
        obj,
        DEDUCED,
        ManagerKey.for_update("m", "example.com/v1"),
        reset_fields=reset,
        now="2026-12-02T12:00:00Z",
    )
    expected = encode_managed_fields(managed)
    got = fast["metadata"].get("managedFields", [])
    assert got == expected
    assert [_ordered(e["fieldsV1"]) for e in got] == [_ordered(e["fieldsV1"]) for e in expected]
