"""Static cost estimates, checked against Kubernetes' own expectations.

Every case is a row of TestCostEstimation in apiextensions-apiserver v0.36
(pkg/apiserver/schema/cel/compilation_test.go): the same schema shapes, rules and expected
``MaxCost``, first with no size limits ("calc") and then with ``maxItems`` / ``maxProperties`` /
``maxLength`` set ("set"). A ``*_exceeds`` value means the estimate must be at least that.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from kstore.api.cel._environment import compile_expression
from kstore.api.cel._estimate import estimate_cost

Schema = dict[str, Any]


def _item(kind: str) -> Schema:
    if kind in ("duration", "date", "date-time"):
        return {"type": "string", "format": kind}
    if kind == "int-or-string":
        return {"x-kubernetes-int-or-string": True}
    return {"type": kind}


def _rule(schema: Schema, rule: str) -> Schema:
    return {**schema, "x-kubernetes-validations": [{"rule": rule}]}


def _bound(schema: Schema, key: str, m: int | None) -> Schema:
    return schema if m is None else {**schema, key: m}


def array_with_rule(kind: str, rule: str, m: int | None) -> Schema:
    return _rule(_bound({"type": "array", "items": _item(kind)}, "maxItems", m), rule)


def array_of_arrays_with_rule(kind: str, rule: str, m: int | None) -> Schema:
    inner = {"type": "array", "items": {"type": kind}}
    return _rule(_bound({"type": "array", "items": inner}, "maxItems", m), rule)


def object_for_map() -> Schema:
    return {
        "type": "object",
        "properties": {"required": {"type": "string"}, "optional": {"type": "string"}},
        "required": ["required"],
    }


def array_for_map() -> Schema:
    return {"type": "array", "items": {"type": "number"}}


def map_for_map() -> Schema:
    return {"type": "object", "additionalProperties": {"type": "number"}}


def object_array_with_rule(rule: str, m: int | None) -> Schema:
    return _rule(_bound({"type": "array", "items": object_for_map()}, "maxItems", m), rule)


def map_array_with_rule(kind: str, rule: str, m: int | None) -> Schema:
    item = {"type": "object", "additionalProperties": {"type": kind}}
    return _rule(_bound({"type": "array", "items": item}, "maxItems", m), rule)


def map_with_rule(kind: str, rule: str, m: int | None) -> Schema:
    schema = {"type": "object", "additionalProperties": _item(kind)}
    return _rule(_bound(schema, "maxProperties", m), rule)


def map_with_item_rule(item: Schema, rule: str, m: int | None) -> Schema:
    schema = {"type": "object", "additionalProperties": item}
    return _rule(_bound(schema, "maxProperties", m), rule)


def string_with_rule(rule: str, m: int | None) -> Schema:
    return _rule(_bound({"type": "string"}, "maxLength", m), rule)


def enum_with_rule(rule: str, values: list[str], m: int | None) -> Schema:
    return _rule(_bound({"type": "string", "enum": values}, "maxLength", m), rule)


def bytes_with_rule(rule: str, m: int | None) -> Schema:
    return _rule(_bound({"type": "string", "format": "byte"}, "maxLength", m), rule)


def nested_spec_with_rule(rule: str, m: int | None) -> Schema:
    schema = {"type": "object", "additionalProperties": _bound({"type": "string"}, "maxLength", m)}
    return _rule(_bound(schema, "maxProperties", m), rule)


def all_max_nested_with_root_rule(rule: str, m: int | None) -> Schema:
    inner = _bound(object_for_map(), "maxProperties", m)
    item = _bound({"type": "object", "additionalProperties": inner}, "maxProperties", m)
    return _rule(_bound({"type": "array", "items": item}, "maxItems", m), rule)


def one_max_nested_with_root_rule(rule: str, m: int | None) -> Schema:
    item = _bound({"type": "object", "additionalProperties": object_for_map()}, "maxProperties", m)
    return _rule({"type": "array", "items": item}, rule)


def _strings(m: int | None) -> Schema:
    return _bound({"type": "string"}, "maxLength", m)


def join_rule(m: int | None) -> Schema:
    array = _bound({"type": "array", "items": _strings(m)}, "maxItems", m)
    return _rule(array, "self.join(' ') == 'aa bb'")


def is_sorted_rule(m: int | None) -> Schema:
    array = _bound({"type": "array", "items": _strings(m)}, "maxItems", m)
    return _rule(array, "self.isSorted() == true")


def replace_rule(m: int | None) -> Schema:
    props = {"str": _strings(m), "before": _strings(2), "after": _strings(4)}
    return _rule(
        {"type": "object", "properties": props},
        "self.str.replace(self.before, self.after) == 'does not matter'",
    )


def split_rule(m: int | None) -> Schema:
    props = {"str": _strings(m), "separator": _strings(m)}
    return _rule({"type": "object", "properties": props}, "self.str.split(self.separator) == []")


def lower_ascii_rule(m: int | None) -> Schema:
    return _rule(_strings(m), "self.lowerAscii() == 'lower!'")


@dataclass(frozen=True)
class Case:
    name: str
    schema: Callable[[int | None], Schema]
    calc: int | None
    calc_exceeds: int | None
    set_max: int | None
    set_cost: int | None
    set_exceeds: int | None


CASES = [
    Case(
        "number array with all",
        lambda m: array_with_rule("number", "self.all(x, true)", m),
        4718591,
        None,
        10,
        32,
        None,
    ),
    Case(
        "string array with all",
        lambda m: array_with_rule("string", "self.all(x, true)", m),
        3145727,
        None,
        20,
        62,
        None,
    ),
    Case(
        "boolean array with all",
        lambda m: array_with_rule("boolean", "self.all(x, true)", m),
        1887437,
        None,
        5,
        17,
        None,
    ),
    Case(
        "array of number arrays with all",
        lambda m: array_of_arrays_with_rule("number", "self.all(x, true)", m),
        3145727,
        None,
        100,
        302,
        None,
    ),
    Case(
        "array of objects with all",
        lambda m: object_array_with_rule("self.all(x, true)", m),
        555128,
        None,
        50,
        152,
        None,
    ),
    Case(
        "map of numbers with all",
        lambda m: map_with_rule("number", "self.all(x, true)", m),
        1348169,
        None,
        10,
        32,
        None,
    ),
    Case(
        "map of numbers with has",
        lambda m: map_with_rule("number", "has(self.x)", m),
        0,
        None,
        100,
        0,
        None,
    ),
    Case(
        "map of strings with all",
        lambda m: map_with_rule("string", "self.all(x, true)", m),
        1179647,
        None,
        3,
        11,
        None,
    ),
    Case(
        "map of strings with has",
        lambda m: map_with_rule("string", "has(self.x)", m),
        0,
        None,
        550,
        0,
        None,
    ),
    Case(
        "map of booleans with all",
        lambda m: map_with_rule("boolean", "self.all(x, true)", m),
        943718,
        None,
        100,
        302,
        None,
    ),
    Case(
        "map of booleans with has",
        lambda m: map_with_rule("boolean", "has(self.x)", m),
        0,
        None,
        1024,
        0,
        None,
    ),
    Case(
        "string with contains",
        lambda m: string_with_rule("self.contains('test')", m),
        314574,
        None,
        10,
        5,
        None,
    ),
    Case(
        "string with startsWith",
        lambda m: string_with_rule("self.startsWith('test')", m),
        2,
        None,
        15,
        2,
        None,
    ),
    Case(
        "string with endsWith",
        lambda m: string_with_rule("self.endsWith('test')", m),
        2,
        None,
        30,
        2,
        None,
    ),
    Case(
        "concat string",
        lambda m: string_with_rule('size(self + "hello") > size("hello")', m),
        314578,
        None,
        4,
        7,
        None,
    ),
    Case(
        "index of array with numbers",
        lambda m: array_with_rule("number", "self[1] == 0.0", m),
        2,
        None,
        5000,
        2,
        None,
    ),
    Case(
        "index of array with strings",
        lambda m: array_with_rule("string", "self[1] == self[1]", m),
        314577,
        None,
        8,
        314577,
        None,
    ),
    Case(
        "O(n^2) loop with numbers",
        lambda m: array_with_rule("number", "self.all(x, self.all(y, true))", m),
        None,
        None,
        10,
        352,
        None,
    ),
    Case(
        "O(n^3) loop with numbers",
        lambda m: array_with_rule("number", "self.all(x, self.all(y, self.all(z, true)))", m),
        None,
        None,
        10,
        3552,
        None,
    ),
    Case(
        "regex matches simple",
        lambda m: string_with_rule('self.matches("x")', m),
        314574,
        None,
        50,
        22,
        None,
    ),
    Case(
        "regex matches empty string",
        lambda m: string_with_rule('"".matches("(((((((((())))))))))[0-9]")', m),
        7,
        None,
        10,
        7,
        None,
    ),
    Case(
        "regex matches empty regex",
        lambda m: string_with_rule('self.matches("")', m),
        1,
        None,
        100,
        1,
        None,
    ),
    Case(
        "map of strings with value length",
        lambda m: nested_spec_with_rule("self.all(x, x.contains(self[x]))", m),
        2752507,
        None,
        10,
        72,
        None,
    ),
    Case(
        "set array maxLength to zero",
        lambda m: array_with_rule("number", "self[3] == 0.0", m),
        2,
        None,
        0,
        2,
        None,
    ),
    Case(
        "set map maxLength to zero",
        lambda m: map_with_rule("number", 'self["x"] == 0.0', m),
        2,
        None,
        0,
        2,
        None,
    ),
    Case(
        "set string maxLength to zero",
        lambda m: string_with_rule('self == "x"', m),
        2,
        None,
        0,
        1,
        None,
    ),
    Case(
        "set bytes maxLength to zero",
        lambda m: bytes_with_rule('self == b"x"', m),
        2,
        None,
        0,
        1,
        None,
    ),
    Case(
        "set maxLength greater than estimated maxLength",
        lambda m: array_with_rule("number", "self.all(x, x == 0.0)", m),
        6291454,
        None,
        3 * 1024 * 2048,
        25165826,
        None,
    ),
    Case(
        "nested types with root rule with all supporting maxLength",
        lambda m: all_max_nested_with_root_rule('self.all(x, x["y"].required == "z")', m),
        7340027,
        None,
        10,
        72,
        None,
    ),
    Case(
        "nested types with root rule with one supporting maxLength",
        lambda m: one_max_nested_with_root_rule('self.all(x, x["y"].required == "z")', m),
        7340027,
        None,
        10,
        7340027,
        None,
    ),
    Case(
        "int-or-string array with all",
        lambda m: array_with_rule("int-or-string", "self.all(x, true)", m),
        4718591,
        None,
        10,
        32,
        None,
    ),
    Case(
        "index of array with int-or-strings",
        lambda m: array_with_rule("int-or-string", "self[0] == 5", m),
        3,
        None,
        10,
        3,
        None,
    ),
    Case(
        "index of array with booleans",
        lambda m: array_with_rule("boolean", "self[0] == false", m),
        2,
        None,
        25,
        2,
        None,
    ),
    Case(
        "index of array of objects",
        lambda m: object_array_with_rule("self[0] == null", m),
        2,
        None,
        422,
        2,
        None,
    ),
    Case(
        "index of array of array of numnbers",
        lambda m: array_of_arrays_with_rule("number", "self[0][0] == -1.0", m),
        3,
        None,
        51,
        3,
        None,
    ),
    Case(
        "array of number maps with all",
        lambda m: map_array_with_rule("number", "self.all(x, x.y == 25.2)", m),
        6291452,
        None,
        12,
        74,
        None,
    ),
    Case(
        "index of array of number maps",
        lambda m: map_array_with_rule("number", "self[0].x > 2.0", m),
        4,
        None,
        3000,
        4,
        None,
    ),
    Case(
        "duration array with all",
        lambda m: array_with_rule("duration", "self.all(x, true)", m),
        2359295,
        None,
        5,
        17,
        None,
    ),
    Case(
        "index of duration array",
        lambda m: array_with_rule("duration", "self[0].getHours() == 2", m),
        4,
        None,
        525,
        4,
        None,
    ),
    Case(
        "date array with all",
        lambda m: array_with_rule("date", "self.all(x, true)", m),
        725936,
        None,
        15,
        47,
        None,
    ),
    Case(
        "index of date array",
        lambda m: array_with_rule("date", "self[2].getDayOfMonth() == 13", m),
        4,
        None,
        42,
        4,
        None,
    ),
    Case(
        "date-time array with all",
        lambda m: array_with_rule("date-time", "self.all(x, true)", m),
        428963,
        None,
        25,
        77,
        None,
    ),
    Case(
        "index of date-time array",
        lambda m: array_with_rule("date-time", "self[2].getMinutes() == 45", m),
        4,
        None,
        99,
        4,
        None,
    ),
    Case(
        "map of int-or-strings with all",
        lambda m: map_with_rule("int-or-string", "self.all(x, true)", m),
        1348169,
        None,
        15,
        47,
        None,
    ),
    Case(
        "map of int-or-strings with has",
        lambda m: map_with_rule("int-or-string", "has(self.x)", m),
        0,
        None,
        5000,
        0,
        None,
    ),
    Case(
        "map of objects with all",
        lambda m: map_with_item_rule(object_for_map(), "self.all(x, true)", m),
        428963,
        None,
        20,
        62,
        None,
    ),
    Case(
        "map of objects with has",
        lambda m: map_with_item_rule(object_for_map(), "has(self.x)", m),
        0,
        None,
        9001,
        0,
        None,
    ),
    Case(
        "map of number maps with all",
        lambda m: map_with_item_rule(map_for_map(), "self.all(x, true)", m),
        1179647,
        None,
        10,
        32,
        None,
    ),
    Case(
        "map of number maps with has",
        lambda m: map_with_item_rule(map_for_map(), "has(self.x)", m),
        0,
        None,
        101,
        0,
        None,
    ),
    Case(
        "map of number arrays with all",
        lambda m: map_with_item_rule(array_for_map(), "self.all(x, true)", m),
        1179647,
        None,
        25,
        77,
        None,
    ),
    Case(
        "map of number arrays with has",
        lambda m: map_with_item_rule(array_for_map(), "has(self.x)", m),
        0,
        None,
        40000,
        0,
        None,
    ),
    Case(
        "map of durations with all",
        lambda m: map_with_rule("duration", "self.all(x, true)", m),
        1048577,
        None,
        5,
        17,
        None,
    ),
    Case(
        "map of durations with has",
        lambda m: map_with_rule("duration", "has(self.x)", m),
        0,
        None,
        256,
        0,
        None,
    ),
    Case(
        "map of dates with all",
        lambda m: map_with_rule("date", "self.all(x, true)", m),
        524288,
        None,
        10,
        32,
        None,
    ),
    Case(
        "map of dates with has",
        lambda m: map_with_rule("date", "has(self.x)", m),
        0,
        None,
        65536,
        0,
        None,
    ),
    Case(
        "map of date-times with all",
        lambda m: map_with_rule("date-time", "self.all(x, true)", m),
        349526,
        None,
        25,
        77,
        None,
    ),
    Case(
        "map of date-times with has",
        lambda m: map_with_rule("date-time", "has(self.x)", m),
        0,
        None,
        490,
        0,
        None,
    ),
    Case(
        "extended library regex find",
        lambda m: string_with_rule("self.find('[0-9]+') == ''", m),
        629147,
        None,
        10,
        11,
        None,
    ),
    Case(
        "check cost of size call",
        lambda m: map_with_rule("integer", "oldSelf.size() == self.size()", m),
        5,
        None,
        10,
        5,
        None,
    ),
    Case(
        "check cost of timestamp comparison",
        lambda m: map_with_rule("date-time", 'self["a"] == self["b"]', m),
        8,
        None,
        7,
        8,
        None,
    ),
    Case(
        "check cost of duration comparison",
        lambda m: map_with_rule("duration", 'self["c"] == self["d"]', m),
        8,
        None,
        42,
        8,
        None,
    ),
    Case(
        "enums with maxLength equals to the longest possible value",
        lambda m: enum_with_rule("self.contains('A')", ["A", "B", "C", "LongValue"], m),
        2,
        None,
        1000,
        401,
        None,
    ),
    Case("extended library join", join_rule, 329853068905, None, 10, 43, None),
    Case("extended library isSorted", is_sorted_rule, 329854432052, None, 10, 52, None),
    Case("extended library replace", replace_rule, 629154, None, 4, 12, None),
    Case("extended library split", split_rule, 629160, None, 10, 22, None),
    Case("extended library lowerAscii", lower_ascii_rule, 314575, None, 10, 6, None),
]


def _cost(schema: Schema) -> int:
    rule = schema["x-kubernetes-validations"][0]["rule"]
    ast, _ = compile_expression(rule)
    return estimate_cost(ast, schema)


def _check(schema: Schema, expected: int | None, at_least: int | None) -> None:
    cost = _cost(schema)
    if expected:
        assert cost == expected
    if at_least:
        assert cost >= at_least


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_estimated_cost_without_limits(case: Case) -> None:
    _check(case.schema(None), case.calc, case.calc_exceeds)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_estimated_cost_with_limits(case: Case) -> None:
    _check(case.schema(case.set_max), case.set_cost, case.set_exceeds)
