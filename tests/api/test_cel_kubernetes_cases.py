"""Cases ported from Kubernetes' own CEL validation tests.

apiextensions-apiserver v0.36 pkg/apiserver/schema/cel/validation_test.go,
TestValidationExpressions: for each case the object and schema are the same as there, every
``valid`` rule must pass and every ``errors`` rule must fail with a message containing the
quoted text.
"""

from __future__ import annotations

from typing import Any

import pytest

from kstore.api.cel import compile_schema_rules

INTEGER = {"type": "integer"}
STRING = {"type": "string"}


def list_of(
    items: dict[str, Any], list_type: str = "atomic", keys: list[str] | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "array", "items": items, "x-kubernetes-list-type": list_type}
    if keys:
        out["x-kubernetes-list-map-keys"] = keys
    return out


def obj(**props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": props}


def map_of(values: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": values}


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {**schema, "nullable": True}


def vals(*values: Any) -> dict[str, Any]:
    return {f"val{i + 1}": v for i, v in enumerate(values)}


def val_schemas(*schemas: dict[str, Any]) -> dict[str, Any]:
    return obj(**{f"val{i + 1}": s for i, s in enumerate(schemas)})


def run(schema: dict[str, Any], value: Any, rule: str) -> list[str]:
    rules = compile_schema_rules({**schema, "x-kubernetes-validations": [{"rule": rule}]})
    compile_errors = [c.message for c in rules.errors if "estimated rule cost" not in c.message]
    if compile_errors:
        return compile_errors
    return [c.message for c in rules.validate(value)]


CASES: list[tuple[str, dict[str, Any], Any, list[str], dict[str, str]]] = [
    (
        "lists",
        val_schemas(list_of(INTEGER), list_of(INTEGER)),
        vals([1, 2, 3], [1, 2, 3]),
        [
            "self.val1 == [1, 2, 3] && [1, 2, 3] == self.val1 && self.val1 == self.val2",
            "1 in self.val1",
            "self.val2[0] in self.val1",
            "!(0 in self.val1)",
            "self.val1 + self.val2 == [1, 2, 3, 1, 2, 3]",
            "self.val1 + [4, 5] == [1, 2, 3, 4, 5]",
        ],
        {
            "[1, 'a', false].filter(x, string(x) == 'a')": (
                "compilation failed: ERROR: <input>:1:5: expected type 'int' but found 'string'"
            )
        },
    ),
    (
        "listSets",
        val_schemas(list_of(STRING, "set"), list_of(STRING, "set")),
        vals(["a", "b", "c"], ["a", "c", "b"]),
        [
            "self.val1 == ['c', 'b', 'a']",
            "self.val1 == self.val2",
            "'a' in self.val1",
            "self.val2[0] in self.val1",
            "!('x' in self.val1)",
            "self.val1 + self.val2 == ['a', 'b', 'c']",
            "self.val1 + ['c', 'd'] == ['a', 'b', 'c', 'd']",
            "self.val1.join('-') == 'a-b-c'",
            "sets.contains(['a', 'b'], ['b'])",
            "sets.equivalent(['c', 'b', 'a'], ['b', 'c', 'a'])",
            "!sets.intersects(['a', 'b'], ['c', 'd'])",
        ],
        {},
    ),
    (
        "listMaps",
        obj(objs=list_of(list_of(obj(k=STRING, v=STRING), "map", ["k"]))),
        {
            "objs": [
                [{"k": "a", "v": "1"}, {"k": "b", "v": "2"}],
                [{"k": "b", "v": "2"}, {"k": "a", "v": "1"}],
                [{"k": "b", "v": "3"}, {"k": "a", "v": "1"}],
                [{"k": "c", "v": "4"}],
            ]
        },
        [
            "self.objs[0] == self.objs[1]",
            "self.objs[0] + self.objs[2] == self.objs[2]",
            "self.objs[2] + self.objs[0] == self.objs[0]",
            "self.objs[0] == [self.objs[0][0], self.objs[0][1]]",
            "self.objs[0] == [self.objs[0][1], self.objs[0][0]]",
            "self.objs[2] + [self.objs[0][0], self.objs[0][1]] == self.objs[0]",
            "size(self.objs[0] + [self.objs[3][0]]) == 3",
        ],
        {},
    ),
    (
        "object access",
        obj(
            a=obj(b=INTEGER, c=INTEGER, d=nullable(INTEGER)),
            a1=obj(b1=obj(c1=INTEGER), d2=obj(e2=INTEGER)),
        ),
        {"a": {"b": 1, "d": None}, "a1": {"b1": {"c1": 4}}, "a3": {}},
        [
            "has(self.a.b)",
            "!has(self.a.c)",
            "!has(self.a.d)",
            "has(self.a1.b1.c1)",
            "!(has(self.a1.d2) && has(self.a1.d2.e2))",
            "!has(self.a1.d2)",
        ],
        {"has(self.a.z)": "undefined field 'z'", "has(self.a1.d2.e2)": "no such key: d2"},
    ),
    (
        "map access",
        obj(val=map_of(INTEGER)),
        {"val": {"b": 1, "d": 2}},
        [
            "!('a' in self.val)",
            "'b' in self.val",
            "!has(self.val.a)",
            "has(self.val.b)",
            "self.val.all(k, self.val[k] > 0)",
            "self.val.exists_one(k, self.val[k] == 2)",
            "self.val.map(k, self.val[k]).exists(v, v == 1)",
            "size(self.val.filter(k, self.val[k] > 1)) == 1",
            "self.val.all(k, v, v > 0)",
            "self.val.exists(k, v, v == 2)",
            "self.val.existsOne(k, v, v == 2)",
            "self.val.transformMap(k, v, v > 1, v + 1).size() == 1",
            "self.val.transformMap(k, v, v + 1).size() == 2",
            "self.val.transformMapEntry(k, v, v > 1, {k + '2': v + 1}).size() == 1",
            "self.val.transformMapEntry(k, v, {k + '2': v + 1}).size() == 2",
        ],
        {"self.val['c'] == 1": "no such key: c"},
    ),
    (
        "list access",
        obj(array=list_of(INTEGER)),
        {"array": [1, 1, 2, 2, 3, 3, 4, 5]},
        [
            "2 in self.array",
            "self.array.exists_one(e, e > 4)",
            "!self.array.exists_one(e, e == 2)",
            "size(self.array.filter(e, e%2 == 0)) == 3",
            "self.array.map(e, e * 20).filter(e, e > 50).exists(e, e == 60)",
            "self.array.all(i, e, e > 0)",
            "self.array.exists(i, e, e > 2)",
            "self.array.existsOne(i, e, e > 4)",
            "self.array.transformList(i, e, e > 2, e * 2).size() > 0",
            "self.array.transformList(i, e, e * 2).size() > 0",
        ],
        {"self.array[100] == 0": "index out of bounds: 100"},
    ),
    (
        "listMap access",
        obj(listMap=list_of(obj(k=STRING, v=STRING, v2=STRING), "map", ["k"])),
        {
            "listMap": [
                {"k": "a1", "v": "b1"},
                {"k": "a2", "v": "b2"},
                {"k": "a3", "v": "b3", "v2": "z"},
            ]
        },
        [
            "self.listMap.exists(m, m.v2 == 'z')",
            "!self.listMap.all(m, m.v2 != 'z')",
            "self.listMap.map(m, has(m.v2) && m.v2 == 'z', m.v2).size() == 1",
            "self.listMap.transformList(i, m, m.v).size() == 3",
        ],
        {
            "self.listMap.all(m, m.v2 == 'z')": "no such key: v2",
            "self.listMap.exists_one(m, m.v2 == 'z')": "no such key: v2",
            "self.listMap.map(m, m.v2).size() == 1": "no such key: v2",
        },
    ),
    (
        "escaping",
        obj(
            **{
                "true": INTEGER,
                "namespace": INTEGER,
                "int": INTEGER,
                "self": INTEGER,
                "size": STRING,
                "_true": INTEGER,
                "dot.dot": INTEGER,
                "dash-dash": INTEGER,
                "slash/slash": INTEGER,
                "doubleunderscore__doubleunderscore": INTEGER,
            }
        ),
        {
            "true": 1,
            "namespace": 17,
            "int": 101,
            "self": 201,
            "size": "204",
            "_true": 301,
            "dot.dot": 401,
            "dash-dash": 402,
            "slash/slash": 403,
            "doubleunderscore__doubleunderscore": 405,
        },
        [
            "self.__true__ == 1",
            "self.__namespace__ == 17",
            "self.int == 101",
            "self.self == 201",
            "self.size == '204'",
            "self._true == 301",
            "self.__true__ != 301",
            "self.dot__dot__dot == 401",
            "self.dash__dash__dash == 402",
            "self.slash__slash__slash == 403",
            "self.doubleunderscore__underscores__doubleunderscore == 405",
        ],
        {
            # cel-go words this syntax error "mismatched input 'true' expecting IDENTIFIER";
            # cel-cpp's parser reports the same place with ANTLR's other wording.
            "self.true == 1": "compilation failed: ERROR: <input>:1:6: Syntax error:",
            "self.__illegal__ == 301": "undefined field '__illegal__'",
        },
    ),
    (
        "null values in container types",
        obj(
            m=map_of(nullable(STRING)),
            l=list_of(nullable(STRING)),
            s=list_of(nullable(STRING), "set"),
        ),
        {"m": {"a": None, "b": "not-nil"}, "l": [None, "not-nil"], "s": [None, "not-nil"]},
        [
            "self.m.size() == 2",
            "'a' in self.m",
            "type(self.m['a']) == null_type",
            "type(self.l[0]) == null_type",
            "type(self.s[0]) == null_type",
        ],
        {},
    ),
    (
        "preserve unknown fields",
        obj(
            withUnknown={"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            withUnknownList=list_of(
                {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
            ),
            anyvalField1={"x-kubernetes-preserve-unknown-fields": True},
        ),
        {
            "withUnknown": {"field1": "a", "field2": "b"},
            "withUnknownList": [
                {"field1": "a", "field2": "b"},
                {"field1": "x", "field2": "y"},
                {"field1": "x", "field2": "y"},
                {},
                {},
            ],
            "anyvalField1": 1,
        },
        [
            "has(self.withUnknown)",
            "self.withUnknownList.size() == 5",
            "self.withUnknownList[0] != self.withUnknownList[1]",
            "self.withUnknownList[1] == self.withUnknownList[2]",
            "self.withUnknownList[3] == self.withUnknownList[4]",
        ],
        {
            "has(self.withUnknown.field1)": "undefined field 'field1'",
            "has(self.anyvalField1)": "undefined field 'anyvalField1'",
        },
    ),
    (
        "ext lists version 3",
        val_schemas(list_of(INTEGER)),
        vals([1, 2, 3]),
        [
            "lists.range(4) == [0,1,2,3]",
            "[5,1,2,3].reverse() == [3,2,1,5]",
            "[1,2,3,4].slice(1, 3) == [2, 3]",
            "dyn([1,2,3,4]).flatten() == [1,2,3,4]",
            "[4, 3, 2, 1].sort() == [1, 2, 3, 4]",
            "[-3, 1, -5, -2, 4].sortBy(e, -(e * e)) == [-5, 4, -3, -2, 1]",
            "lists.range(3).sortBy(e, -e) == [2, 1, 0]",
            "[-2, 5, -2, 1, 1, 5, -2, 1].distinct() == [-2, 5, 1]",
            "[[1],[2],[3,4]].flatten() == [1,2,3,4]",
        ],
        {
            "[1,2,3,4].slice(3, 0) != [1,2]": (
                "cannot slice(3, 0), start index must be less than or equal to end index"
            ),
            "[1,2,3,4].slice(0, 10) != [1,2]": "cannot slice(0, 10), list is length 4",
            "[1,2,3,4].slice(-5, 10) != [1,2]": (
                "cannot slice(-5, 10), negative indexes not supported"
            ),
        },
    ),
]


@pytest.mark.parametrize(
    ("name", "schema", "value", "valid", "errors"), CASES, ids=[c[0] for c in CASES]
)
def test_kubernetes_validation_expressions(
    name: str, schema: dict[str, Any], value: Any, valid: list[str], errors: dict[str, str]
) -> None:
    for rule in valid:
        assert run(schema, value, rule) == [], rule
    for rule, expected in errors.items():
        messages = run(schema, value, rule)
        assert any(expected in m for m in messages), (rule, messages)
