"""The CEL of MutatingAdmissionPolicy mutations (:mod:`kstore.api.cel.mutation`): ``Object``
and ``JSONPatch`` literals checked and evaluated, errors worded (and pointed at) as cel-go
words them, type names checked against their field paths."""

from __future__ import annotations

from typing import Any

import pytest

from kstore.api.cel.admission import Activation
from kstore.api.cel.mutation import compile_mutation


def _evaluate(expression: str, patch_type: str, obj: dict[str, Any]) -> Any:
    compiled = compile_mutation(expression, patch_type, params=False).compiled
    assert compiled.error == "", compiled.error
    value, _ = Activation(object=obj, old_object=None, request={}).evaluate(compiled, 10**6)
    return value


def test_an_apply_configuration_builds_the_object() -> None:
    expression = (
        "Object{spec: Object.spec{replicas: object.spec.replicas + 1}, "
        "metadata: Object.metadata{labels: {'a': 'Object{b: 1}'}}}"
    )
    assert _evaluate(expression, "ApplyConfiguration", {"spec": {"replicas": 2}}) == {
        "spec": {"replicas": 3},
        "metadata": {"labels": {"a": "Object{b: 1}"}},
    }


def test_a_json_patch_builds_its_operations_with_escaped_keys() -> None:
    expression = (
        '[JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("a/b~c"), '
        'value: "x"}]'
    )
    assert _evaluate(expression, "JSONPatch", {}) == [
        {"op": "add", "path": "/metadata/labels/a~1b~0c", "value": "x"}
    ]


@pytest.mark.parametrize(
    ("expression", "patch_type", "error"),
    [
        (
            "Object{spec: Object.spec{replicas: 'a' + 1}}",
            "ApplyConfiguration",
            "compilation failed: ERROR: <input>:1:40: found no matching overload for '_+_' "
            "applied to '(string, int)'\n"
            " | Object{spec: Object.spec{replicas: 'a' + 1}}\n"
            " | .......................................^",
        ),
        (
            '[JSONPatch{op: 1, path: "/x"}]',
            "JSONPatch",
            "compilation failed: ERROR: <input>:1:14: expected type of field 'op' is 'string' "
            "but provided type is 'int'\n"
            ' | [JSONPatch{op: 1, path: "/x"}]\n'
            " | .............^",
        ),
        ("Object.spec{a: 1}", "ApplyConfiguration", "must evaluate to Object but got Object.spec"),
        ("[]", "JSONPatch", "must evaluate to list(JSONPatch) but got list(dyn)"),
        ("Object{}", "JSONPatch", "must evaluate to list(JSONPatch) but got Object"),
    ],
)
def test_errors_are_worded_as_kubernetes_words_them(
    expression: str, patch_type: str, error: str
) -> None:
    assert compile_mutation(expression, patch_type, params=False).compiled.error == error


def test_literal_type_names_must_follow_their_field_path() -> None:
    good = compile_mutation(
        "Object{spec: Object.spec{containers: [Object.spec.containers{name: 'a'}]}}",
        "ApplyConfiguration",
        params=False,
    )
    assert good.compiled.error == "" and good.mismatch == ""
    bad = compile_mutation(
        "Object{spec: Object.spec{template: Object.spec.other{}}}",
        "ApplyConfiguration",
        params=False,
    )
    assert bad.mismatch == (
        'unexpected type name "Object.spec.other", expected "Object.spec.template", which '
        "matches field name path from root Object type"
    )
