"""Field paths, cause constructors and value rendering match Kubernetes' ``field`` package."""

from __future__ import annotations

from typing import Any

import pytest

from kstore.api.validation import (
    GoStruct,
    JSONValue,
    Path,
    duplicate,
    forbidden,
    internal_error,
    invalid,
    not_found,
    not_supported,
    required,
    too_long,
    too_many,
    type_invalid,
)
from kstore.errors import Cause, Invalid, to_status


@pytest.mark.parametrize(
    ("path", "text"),
    [
        (Path("metadata", "name"), "metadata.name"),
        (Path("spec").child("containers").index(0).child("image"), "spec.containers[0].image"),
        (Path("data").key("my-key"), "data[my-key]"),
        (Path("metadata", "annotations").key("a.io/b"), "metadata.annotations[a.io/b]"),
        (Path("spec").child("ports", "name"), "spec.ports.name"),
        # field.NewPath("") prints an empty subscript: Kubernetes' ConfigMap size error path.
        (Path(""), "[]"),
        (Path("").child("x"), "[].x"),
        (Path("a").child(""), "a[]"),
    ],
)
def test_path_renders_like_kubernetes_field_path(path: Path, text: str) -> None:
    assert str(path) == text


def test_paths_are_values() -> None:
    assert Path("a", "b") == Path("a").child("b")
    assert hash(Path("a", "b")) == hash(Path("a").child("b"))
    assert Path("a") != Path("b")


# Expectations from Kubernetes' field.Error.ErrorBody / Error() behaviour.
@pytest.mark.parametrize(
    ("cause", "kind", "rendered"),
    [
        (required(Path("f")), "FieldValueRequired", "f: Required value"),
        (
            required(Path("path.to.field"), "the details"),
            "FieldValueRequired",
            "path.to.field: Required value: the details",
        ),
        (
            invalid(Path("path.to.field"), "the value", "the details"),
            "FieldValueInvalid",
            'path.to.field: Invalid value: "the value": the details',
        ),
        (
            invalid(Path("path.to.field"), -42, "the details"),
            "FieldValueInvalid",
            "path.to.field: Invalid value: -42: the details",
        ),
        (
            invalid(Path("path.to.field"), True, "the details"),
            "FieldValueInvalid",
            "path.to.field: Invalid value: true: the details",
        ),
        (
            invalid(Path("path.to.field"), ["one", "two", "three"], "the details"),
            "FieldValueInvalid",
            'path.to.field: Invalid value: ["one","two","three"]: the details',
        ),
        (
            invalid(Path("path.to.field"), {"two": 2, "one": 1, "three": 3}, "the details"),
            "FieldValueInvalid",
            'path.to.field: Invalid value: {"one":1,"three":3,"two":2}: the details',
        ),
        (
            invalid(Path("f"), None, "the details"),
            "FieldValueInvalid",
            "f: Invalid value: null: the details",
        ),
        (
            type_invalid(Path("f"), "x", "must be a number"),
            "FieldValueTypeInvalid",
            'f: Invalid value: "x": must be a number',
        ),
        (
            not_supported(Path("path.to.field"), "the value", ["val1", "val2"]),
            "FieldValueNotSupported",
            'path.to.field: Unsupported value: "the value": supported values: "val1", "val2"',
        ),
        (
            not_supported(Path("f"), "x", []),
            "FieldValueNotSupported",
            'f: Unsupported value: "x"',
        ),
        (
            duplicate(Path("path.to.field"), "the value"),
            "FieldValueDuplicate",
            'path.to.field: Duplicate value: "the value"',
        ),
        (not_found(Path("f"), "v"), "FieldValueNotFound", 'f: Not found: "v"'),
        (
            forbidden(Path("f"), "not allowed on this type"),
            "FieldValueForbidden",
            "f: Forbidden: not allowed on this type",
        ),
        (
            too_long(Path("path.to.field"), 1),
            "FieldValueTooLong",
            "path.to.field: Too long: may not be more than 1 byte",
        ),
        (
            too_long(Path("path.to.field"), 2),
            "FieldValueTooLong",
            "path.to.field: Too long: may not be more than 2 bytes",
        ),
        (
            too_long(Path("path.to.field"), -1),
            "FieldValueTooLong",
            "path.to.field: Too long: value is too long",
        ),
        (
            too_many(Path("path.to.field"), 2, 1),
            "FieldValueTooMany",
            "path.to.field: Too many: 2: must have at most 1 item",
        ),
        (
            too_many(Path("path.to.field"), 3, 2),
            "FieldValueTooMany",
            "path.to.field: Too many: 3: must have at most 2 items",
        ),
        (
            too_many(Path("path.to.field"), 2, -1),
            "FieldValueTooMany",
            "path.to.field: Too many: 2: has too many items",
        ),
        (
            too_many(Path("path.to.field"), -1, 1),
            "FieldValueTooMany",
            "path.to.field: Too many: must have at most 1 item",
        ),
        (
            internal_error(Path("f"), "boom"),
            "InternalError",
            "f: Internal error: boom",
        ),
    ],
)
def test_cause_constructors_word_errors_like_kubernetes(
    cause: Cause, kind: str, rendered: str
) -> None:
    assert cause.type == kind
    assert cause.render() == rendered
    assert cause.field == rendered.split(": ", 1)[0]
    assert cause.message == rendered.split(": ", 1)[1]


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        # %q: Go's strconv.Quote.
        ('a"b\\c', '"a\\"b\\\\c"'),
        ("tab\there\nnl", '"tab\\there\\nnl"'),
        ("\x01\x7f", '"\\x01\\x7f"'),
        ("héllo 😀", '"héllo 😀"'),
        ("zero\u200bwidth", '"zero\\u200bwidth"'),
        ("<&>", '"<&>"'),
        # %v of numbers.
        (7, "7"),
        (1.5, "1.5"),
        (1e6, "1e+06"),
        (123456.0, "123456"),
        (0.0001, "0.0001"),
        (1e-05, "1e-05"),
        (False, "false"),
        # json.Marshal: HTML-escaped, maps sorted, structs in field order.
        (JSONValue("<&>"), '"\\u003c\\u0026\\u003e"'),
        (JSONValue("line\u2028sep"), '"line\\u2028sep"'),
        (JSONValue("a\x01b\fc"), '"a\\u0001b\\fc"'),
        (JSONValue(None), "null"),
        (JSONValue(3.0), "3"),
        (JSONValue(1e21), "1e+21"),
        (JSONValue(1e-7), "1e-7"),
        ({"b": [1, None], "a": {"d": True, "c": "x"}}, '{"a":{"c":"x","d":true},"b":[1,null]}'),
        (GoStruct(stringField="stringval", intField=9376, boolField=True),
         '{"stringField":"stringval","intField":9376,"boolField":true}'),
    ],
)  # fmt: skip
def test_bad_values_render_as_go_prints_them(value: Any, shown: str) -> None:
    assert invalid(Path("f"), value, "d").message == f"Invalid value: {shown}: d"


def test_one_cause_renders_without_brackets() -> None:
    err = Invalid.for_object("Pod", "x", [required(Path("spec", "containers"))])
    assert err.message == 'Pod "x" is invalid: spec.containers: Required value'
    assert err.code == 422


def test_several_causes_render_in_one_bracketed_list_and_as_status_causes() -> None:
    causes = [
        required(Path("spec").child("containers").index(0).child("image")),
        duplicate(Path("spec").child("containers").index(1).child("name"), "a"),
    ]
    err = Invalid.for_object("Pod", "x", causes)
    assert err.message == (
        'Pod "x" is invalid: [spec.containers[0].image: Required value, '
        'spec.containers[1].name: Duplicate value: "a"]'
    )
    status = to_status(err)
    assert status["reason"] == "Invalid"
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueRequired",
            "message": "Required value",
            "field": "spec.containers[0].image",
        },
        {
            "reason": "FieldValueDuplicate",
            "message": 'Duplicate value: "a"',
            "field": "spec.containers[1].name",
        },
    ]


def test_invalid_message_dedupes_repeats_and_names_the_group_kind() -> None:
    cause = required(Path("spec", "selector"))
    err = Invalid.for_object("Deployment", "x", [cause, cause], group="apps")
    # errors.NewInvalid: causes keep every entry, the message aggregate drops repeats.
    assert len(err.causes) == 2
    assert err.message == 'Deployment.apps "x" is invalid: spec.selector: Required value'
