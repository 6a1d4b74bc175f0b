"""``normalize`` (one walk for pruning and null-dropping, defaulting only where defaults are)
leaves an object exactly as ``prune``, ``drop_nulls`` and ``default`` one after the other do,
on random structural schemas and values with unknown fields and nulls mixed in."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings

from kstore.api.structural import build_structural, default, drop_nulls, prune
from kstore.api.structural.decoding import normalize
from kstore.api.structural.model import Structural
from tests.api.test_structural_idempotence import cases


def in_three_steps(obj: Any, tree: Structural) -> Any:
    prune(obj, tree)
    drop_nulls(obj, tree)
    default(obj, tree)
    return obj


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_normalize_equals_prune_drop_nulls_default(case: tuple[Structural, Any]) -> None:
    tree, obj = case
    expected = in_three_steps(copy.deepcopy(obj), tree)
    got = copy.deepcopy(obj)
    normalize(got, tree)
    assert got == expected


def test_a_default_below_an_undefaulted_object_is_applied() -> None:
    tree = build_structural(
        {
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "properties": {
                        "plain": {"type": "string"},
                        "ports": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {"protocol": {"type": "string", "default": "TCP"}},
                            },
                        },
                    },
                }
            },
        }
    )
    assert tree.has_defaults
    assert not tree.properties["spec"].properties["plain"].has_defaults
    obj: dict[str, Any] = {
        "apiVersion": "e.com/v1",
        "kind": "E",
        "metadata": {"name": "n", "junk": 1},
        "spec": {"plain": None, "ports": [{}, {"protocol": "UDP", "x": 1}], "y": 2},
    }
    normalize(obj, tree)
    assert obj == {
        "apiVersion": "e.com/v1",
        "kind": "E",
        "metadata": {"name": "n"},
        "spec": {"ports": [{"protocol": "TCP"}, {"protocol": "UDP"}]},
    }
