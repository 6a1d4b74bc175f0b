"""CRD validation rules (``kstore.api.cel``): evaluation and compilation.

Run: ``pytest bench/bench_cel.py --benchmark-only``. Rows:

- ``simple rule``: one ``self.minReplicas <= self.maxReplicas`` evaluation (the closure tree,
  no schema walk) - the per-rule cost that the 50 us target is about;
- ``string rule``: ``self.name.startsWith('a')``, a library call with a traversal cost;
- ``comprehension``: ``self.tags.all(t, size(t) < 64)`` over 10 tags;
- ``validate object``: ``CompiledRules.validate`` on an object with 3 node rules and a rule
  per list item (5 items), the schema walk included;
- ``compile rule``: parse + check with cel-cpp, decode, field and literal checks, static cost
  estimate and closure build, for one rule.
"""

from __future__ import annotations

from typing import Any

import pytest

from kstore.api.cel import compile_schema_rules
from kstore.api.cel._environment import compile_expression
from kstore.api.cel._interpreter import State, build
from kstore.api.cel._k8s_library import FUNCTIONS

pytestmark = pytest.mark.benchmark(group="cel")

SPEC = {
    "minReplicas": 1,
    "maxReplicas": 3,
    "name": "abc",
    "tags": ["a", "bb", "ccc", "dddd", "eeeee", "f", "g", "h", "i", "j"],
}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "x-kubernetes-validations": [
                {"rule": "self.minReplicas <= self.maxReplicas"},
                {"rule": "self.name.startsWith('a')"},
                {"rule": "self.tags.all(t, size(t) < 64)"},
            ],
            "properties": {
                "minReplicas": {"type": "integer"},
                "maxReplicas": {"type": "integer"},
                "name": {"type": "string", "maxLength": 64},
                "tags": {
                    "type": "array",
                    "maxItems": 16,
                    "items": {
                        "type": "string",
                        "maxLength": 64,
                        "x-kubernetes-validations": [{"rule": "self != ''"}],
                    },
                },
            },
        }
    },
}


def _program(source: str) -> Any:
    ast, _ = compile_expression(source)
    return build(ast.expr, FUNCTIONS)


@pytest.mark.parametrize(
    ("name", "source"),
    [
        ("simple rule", "self.minReplicas <= self.maxReplicas"),
        ("string rule", "self.name.startsWith('a')"),
        ("comprehension", "self.tags.all(t, size(t) < 64)"),
    ],
)
def test_evaluate(benchmark: Any, name: str, source: str) -> None:
    program = _program(source)
    act = {"self": SPEC}
    assert program(act, State(1_000_000)) is True
    benchmark(lambda: program(act, State(1_000_000)))


def test_validate_object(benchmark: Any) -> None:
    rules = compile_schema_rules(SCHEMA)
    obj = {"spec": {**SPEC, "tags": SPEC["tags"][:5]}}
    assert rules.validate(obj) == []
    benchmark(rules.validate, obj)


def test_compile_rule(benchmark: Any) -> None:
    node = {
        **SCHEMA["properties"]["spec"],
        "x-kubernetes-validations": [{"rule": "self.minReplicas <= self.maxReplicas"}],
    }
    benchmark(compile_schema_rules, {"type": "object", "properties": {"spec": node}})
