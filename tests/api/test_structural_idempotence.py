"""Property: pruning and defaulting settle in one pass.

Kubernetes prunes and defaults an object every time it is decoded from a request and every
time it is read from storage, so one pass must leave nothing for the next pass to change:
``p(p(x)) == p(x)`` for ``p = prune -> drop_nulls -> default -> prune``. Schemas are drawn at
random (structural ones, with pruned defaults, nullable fields, maps, lists, preserved and
embedded objects), objects are drawn as values of the schema with unknown fields and nulls
mixed in.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kstore.api.structural import build_structural, default, drop_nulls, prune
from kstore.api.structural.model import Structural

NAMES = st.sampled_from(["a", "b", "c", "spec", "items", "x"])
SCALARS = {
    "string": st.text(max_size=3),
    "integer": st.integers(-5, 5),
    "number": st.floats(allow_nan=False, allow_infinity=False, width=32),
    "boolean": st.booleans(),
}
JUNK = st.recursive(
    st.none() | st.integers(0, 3) | st.text(max_size=2),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(NAMES, inner, max_size=2),
    max_leaves=4,
)


def value_of(schema: dict[str, Any], valid: bool = False) -> st.SearchStrategy[Any]:
    """Values of ``schema``; unless ``valid``, with unknown fields and nulls anywhere."""
    t = schema.get("type")
    if t in SCALARS:
        base = SCALARS[t]
    elif t == "array":
        base = st.lists(value_of(schema["items"], valid), max_size=3)
    elif t == "object" or schema.get("x-kubernetes-preserve-unknown-fields"):
        props = schema.get("properties", {})
        fixed = st.fixed_dictionaries(
            {}, optional={k: value_of(v, valid) for k, v in props.items()}
        )
        extra: st.SearchStrategy[dict[str, Any]] = st.dictionaries(
            st.sampled_from(["zz", "unknown"]), JUNK, max_size=0 if valid else 1
        )
        ap = schema.get("additionalProperties")
        if isinstance(ap, dict):
            extra = st.dictionaries(st.sampled_from(["k1", "k2"]), value_of(ap, valid), max_size=2)
        base = st.builds(lambda f, e: {**e, **f}, fixed, extra)
        if schema.get("x-kubernetes-embedded-resource"):
            meta = {"name": "e"} if valid else {"name": "e", "junk": 1}
            base = base.map(lambda v: {**v, "apiVersion": "v1", "kind": "K", "metadata": meta})
    else:
        base = JUNK
    if valid and not schema.get("nullable"):
        return base
    return base | st.none()


@st.composite
def schemas(draw: st.DrawFn, depth: int = 0) -> dict[str, Any]:
    kinds = ["string", "integer", "number", "boolean"]
    if depth < 3:
        kinds += ["object", "object", "array", "map", "preserve", "embedded"]
    kind = draw(st.sampled_from(kinds))
    schema: dict[str, Any]
    if kind in SCALARS:
        schema = {"type": kind}
    elif kind == "array":
        schema = {"type": "array", "items": draw(schemas(depth + 1))}
    elif kind == "map":
        schema = {"type": "object", "additionalProperties": draw(schemas(depth + 1))}
    else:
        props = draw(st.dictionaries(NAMES, schemas(depth + 1), max_size=3))
        schema = {"type": "object", "properties": props}
        if kind == "preserve":
            schema["x-kubernetes-preserve-unknown-fields"] = True
        if kind == "embedded":
            props.setdefault("spec", {"type": "object"})
            schema["x-kubernetes-embedded-resource"] = True
    if draw(st.booleans()):
        schema["nullable"] = True
    if depth > 0 and draw(st.integers(0, 2)) == 0:
        # A default is a valid value of the schema (CRD validation rejects others), pruned.
        value = draw(value_of(schema, valid=True))
        if value is not None:
            tree = build_structural(schema)
            prune(value, tree, tree.embedded_resource, object_meta=False)
            schema["default"] = value
    return schema


def settle(obj: Any, tree: Structural) -> Any:
    prune(obj, tree)
    drop_nulls(obj, tree)
    default(obj, tree)
    prune(obj, tree)
    return obj


@st.composite
def cases(draw: st.DrawFn) -> tuple[Structural, Any]:
    props = draw(st.dictionaries(NAMES, schemas(1), max_size=3))
    root = {"type": "object", "properties": props}
    body = draw(value_of(root))
    obj = {"apiVersion": "e.com/v1", "kind": "E", "metadata": {"name": "n", "junk": 1}}
    if isinstance(body, dict):
        obj.update(body)
    return build_structural(root), obj


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_prune_then_default_is_idempotent(case: tuple[Structural, Any]) -> None:
    tree, obj = case
    once = settle(copy.deepcopy(obj), tree)
    twice = settle(copy.deepcopy(once), tree)
    assert twice == once


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_second_prune_finds_nothing_to_report(case: tuple[Structural, Any]) -> None:
    tree, obj = case
    once = settle(copy.deepcopy(obj), tree)
    assert prune(once, tree) == []
