"""Unknown-field detection walks only the fields that lead somewhere, with per-schema plans:
it must report the same paths, in the same order, and prune the same fields as a plain walk
over every field, for well-formed and ill-formed objects alike; a plan made before a
recursive schema's fields were filled in is not reused."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kstore.api.gvk import GroupVersionKind
from kstore.api.kinds import builtin_scheme
from kstore.api.schema import ANY, SCALAR, FieldSchema, SchemaType
from kstore.benchmarks.storage import sample_pod
from kstore.codec.strict import unknown_fields


def _plain_walk(obj: dict[str, Any], schema: FieldSchema, prune: bool) -> list[str]:
    """The reference: every field visited, every path built."""
    found: list[str] = []
    stack: list[tuple[Any, FieldSchema, str]] = [(obj, schema, "")]
    while stack:
        node, node_schema, path = stack.pop()
        if node_schema.type is SchemaType.OBJECT and isinstance(node, dict):
            unknown: list[str] = []
            children: list[tuple[Any, FieldSchema, str]] = []
            for key, value in node.items():
                child = node_schema.fields.get(key)
                child_path = f"{path}.{key}" if path else key
                if child is None:
                    unknown.append(key)
                    found.append(child_path)
                elif child.type not in (SchemaType.SCALAR, SchemaType.ANY):
                    children.append((value, child, child_path))
            if prune:
                for key in unknown:
                    del node[key]
            stack.extend(reversed(children))
        elif node_schema.items is not None and node_schema.items.type not in (
            SchemaType.SCALAR,
            SchemaType.ANY,
        ):
            if node_schema.type is SchemaType.LIST and isinstance(node, list):
                items = list(enumerate(node))
            elif node_schema.type is SchemaType.MAP and isinstance(node, dict):
                items = list(node.items())
            else:
                continue
            stack.extend((v, node_schema.items, f"{path}[{k}]") for k, v in reversed(items))
    return found


_SCHEME = builtin_scheme()
_SEEDS = {
    "Pod": sample_pod("default", "web"),
    "ConfigMap": {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "a", "labels": {"run": "x"}},
        "data": {"key": "value"},
    },
}
_JUNK = [None, 1, "x", [], {}, {"surprise": 1}, [{"surprise": 2}], {"name": "n"}]


def _containers(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found: list[tuple[Any, ...]] = []
    items: Any = value.items() if isinstance(value, dict) else enumerate(value)
    for key, child in items:
        if isinstance(child, dict | list):
            found.append((*path, key))
            found.extend(_containers(child, (*path, key)))
    return found


@st.composite
def _objects(draw: st.DrawFn, kind: str) -> dict[str, Any]:
    obj: dict[str, Any] = json.loads(json.dumps(_SEEDS[kind]))
    for _ in range(draw(st.integers(0, 5))):
        paths = _containers(obj)
        target_path = draw(st.sampled_from(paths)) if paths else ()
        target: Any = obj
        for key in target_path:
            target = target[key]
        junk = copy.deepcopy(draw(st.sampled_from(_JUNK)))
        if isinstance(target, dict):
            target[draw(st.sampled_from(["surprise", "name", "spec", "x"]))] = junk
        else:
            target.append(junk)
    return obj


@pytest.mark.parametrize("kind", sorted(_SEEDS))
@pytest.mark.parametrize("prune", [False, True])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_unknown_fields_match_a_walk_over_every_field(
    kind: str, prune: bool, data: st.DataObject
) -> None:
    schema = _SCHEME.kind_version(GroupVersionKind("", "v1", kind)).schema
    assert schema is not None
    obj = data.draw(_objects(kind))
    expected_obj = copy.deepcopy(obj)
    expected = _plain_walk(expected_obj, schema, prune)
    assert unknown_fields(obj, schema, prune=prune) == expected
    assert obj == expected_obj


def test_a_plan_made_before_a_schema_was_filled_in_is_not_reused() -> None:
    fields: dict[str, FieldSchema] = {}
    node = FieldSchema.object(fields)
    assert unknown_fields({"a": 1}, node, prune=False) == ["a"]
    fields["a"] = SCALAR
    fields["self"] = node  # recursive, as Kubernetes' JSONSchemaProps is
    fields["any"] = ANY
    obj = {"a": 1, "any": {"x": 1}, "self": {"a": 2, "b": 3}}
    assert unknown_fields(obj, node, prune=True) == ["self.b"]
    assert obj == {"a": 1, "any": {"x": 1}, "self": {"a": 2}}
