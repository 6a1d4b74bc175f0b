"""OpenAPI v3 validation of custom objects, checked against kube-apiserver v1.36's own words.

Expected messages come from apiextensions-apiserver's ``pkg/apiserver/validation/
validation_test.go`` (``TestValidateCustomResource``) and ``test/integration/
validation_test.go``/``subresources_test.go`` where a case exists there; the others are built
from kube-openapi's message templates (``pkg/validation/errors/schema.go``,
``validate/schema_messages.go``) and apiextensions' error conversion (``validation.go``,
``kubeOpenAPIResultToFieldErrors``), quoted beside each case.
"""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from kstore.api.openapi_validation import compile_validator
from kstore.api.validation.field import Path


def errors_of(schema: dict[str, Any], obj: Any, path: Path | None = None) -> list[str]:
    """The causes as Kubernetes' ``field.Error.Error()`` prints them."""
    return [f"{c.field}: {c.message}" for c in compile_validator(schema).validate(obj, path)]


def field_schema(**field: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"field": field}}


# --- types and nullable (TestValidateCustomResource "!nullable", "nullable") -----------------

TYPE_CASES = [
    ("foo", "string"),
    (42, "integer"),
    (True, "boolean"),
    (1.2, "number"),
    ([], "array"),
]


@pytest.mark.parametrize(("value", "json_type"), TYPE_CASES)
def test_type_mismatch_is_invalid_with_the_json_type_as_value(value: Any, json_type: str) -> None:
    expected = (
        f'field: Invalid value: "{json_type}": field in body must be of type object: "{json_type}"'
    )
    assert errors_of(field_schema(type="object"), {"field": value}) == [expected]
    assert errors_of(field_schema(type="object", nullable=True), {"field": value}) == [expected]


def test_type_mismatch_cause_type_is_field_value_type_invalid() -> None:
    (cause,) = compile_validator(field_schema(type="integer")).validate({"field": "x"})
    assert cause.type == "FieldValueTypeInvalid"
    assert cause.field == "field"


def test_null_without_nullable_is_a_type_error() -> None:
    assert errors_of(field_schema(type="object"), {"field": None}) == [
        'field: Invalid value: "null": field in body must be of type object: "null"'
    ]


def test_null_with_nullable_is_valid() -> None:
    assert errors_of(field_schema(type="object", nullable=True), {"field": None}) == []
    assert errors_of(field_schema(type="object", nullable=True), {"field": {}}) == []


@pytest.mark.parametrize("value", [{}, None, "foo", 42, True, 1.2, []])
def test_untyped_nullable_field_accepts_anything(value: Any) -> None:
    assert errors_of(field_schema(nullable=True), {"field": value}) == []


def test_absent_field_is_not_checked() -> None:
    assert errors_of(field_schema(type="object"), {}) == []


# --- x-kubernetes-int-or-string --------------------------------------------------------------


@pytest.mark.parametrize("value", [42, "foo"])
def test_int_or_string_accepts_integers_and_strings(value: Any) -> None:
    assert errors_of(field_schema(**{"x-kubernetes-int-or-string": True}), {"field": value}) == []


@pytest.mark.parametrize(
    ("value", "json_type"),
    [(None, "null"), (True, "boolean"), (1.2, "number"), ({}, "object"), ([], "array")],
)
def test_int_or_string_rejects_other_types(value: Any, json_type: str) -> None:
    assert errors_of(field_schema(**{"x-kubernetes-int-or-string": True}), {"field": value}) == [
        f'field: Invalid value: "{json_type}": field in body must be of type integer,string: '
        f'"{json_type}"'
    ]


def test_nullable_int_or_string_accepts_null() -> None:
    schema = field_schema(nullable=True, **{"x-kubernetes-int-or-string": True})
    assert errors_of(schema, {"field": None}) == []
    assert errors_of(schema, {"field": True}) == [
        'field: Invalid value: "boolean": field in body must be of type integer,string: "boolean"'
    ]


INT_OR_STRING_ANY_OF = field_schema(
    nullable=True,
    anyOf=[{"type": "integer"}, {"type": "string"}],
    **{"x-kubernetes-int-or-string": True},
)


def test_any_of_failure_reports_summary_and_best_branch() -> None:
    # TestValidateCustomResource "nullable, x-kubernetes-int-or-string and user-provided anyOf".
    assert errors_of(INT_OR_STRING_ANY_OF, {"field": True}) == [
        'field: Invalid value: "boolean": field in body must be of type integer,string: "boolean"',
        '<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)',
        'field: Invalid value: "boolean": field in body must be of type integer: "boolean"',
    ]
    assert sorted(errors_of(INT_OR_STRING_ANY_OF, {"field": 1.2})) == sorted(
        [
            '<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)',
            'field: Invalid value: "number": field in body must be of type integer,string: '
            '"number"',
            'field: Invalid value: "number": field in body must be of type integer: "number"',
            '<nil>: Invalid value: "": Checked value must be of type integer (default format) '
            "in field",
        ]
    )


def test_any_of_is_not_evaluated_on_null() -> None:
    assert errors_of(INT_OR_STRING_ANY_OF, {"field": None}) == []
    assert errors_of(INT_OR_STRING_ANY_OF, {"field": 42}) == []


def test_all_of_failure_reports_none_validated() -> None:
    # TestValidateCustomResource "nullable, x-kubernetes-int-or-string and user-provider allOf".
    schema = field_schema(
        nullable=True,
        allOf=[{"anyOf": [{"type": "integer"}, {"type": "string"}]}],
        **{"x-kubernetes-int-or-string": True},
    )
    assert sorted(errors_of(schema, {"field": {}})) == sorted(
        [
            '<nil>: Invalid value: "": "field" must validate all the schemas (allOf). '
            "None validated",
            '<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)',
            'field: Invalid value: "object": field in body must be of type integer,string: '
            '"object"',
            'field: Invalid value: "object": field in body must be of type integer: "object"',
        ]
    )
    assert errors_of(schema, {"field": "foo"}) == []


def test_all_of_with_some_branches_valid_has_no_suffix() -> None:
    # MustValidateAllSchemasError = "%q must validate all the schemas (allOf)%s"
    schema = field_schema(allOf=[{"type": "string"}, {"maxLength": 1}])
    assert errors_of(schema, {"field": "ab"}) == [
        "field: Too long: may not be more than 1 byte",
        '<nil>: Invalid value: "": "field" must validate all the schemas (allOf)',
    ]


def test_one_of_with_no_valid_branch() -> None:
    # MustValidateOnlyOneSchemaError = "%q must validate one and only one schema (oneOf). %s"
    schema = field_schema(oneOf=[{"type": "integer"}, {"type": "boolean"}])
    assert errors_of(schema, {"field": "x"}) == [
        '<nil>: Invalid value: "": "field" must validate one and only one schema (oneOf). '
        "Found none valid",
        'field: Invalid value: "string": field in body must be of type integer: "string"',
    ]


def test_one_of_with_two_valid_branches() -> None:
    schema = field_schema(oneOf=[{"type": "integer"}, {"minimum": 0}])
    assert errors_of(schema, {"field": 3}) == [
        '<nil>: Invalid value: "": "field" must validate one and only one schema (oneOf). '
        "Found 2 valid alternatives"
    ]
    assert errors_of(schema, {"field": -3}) == []


def test_not_failure() -> None:
    # MustNotValidateSchemaError = "%q must not validate the schema (not)"
    schema = field_schema(**{"not": {"type": "string"}})
    assert errors_of(schema, {"field": "x"}) == [
        '<nil>: Invalid value: "": "field" must not validate the schema (not)'
    ]
    assert errors_of(schema, {"field": 1}) == []


def test_combinator_paths_use_the_given_path() -> None:
    schema = field_schema(**{"not": {"type": "string"}})
    assert errors_of(schema, {"field": "x"}, Path("status")) == [
        'status: Invalid value: "": "field" must not validate the schema (not)'
    ]


def test_any_of_prefers_the_branch_with_most_checks_passed() -> None:
    # Branch 2 passes its type check (one more match), so its errors are the ones reported.
    schema = field_schema(anyOf=[{"type": "integer"}, {"type": "string", "maxLength": 1}])
    assert errors_of(schema, {"field": "abc"}) == [
        '<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)',
        "field: Too long: may not be more than 1 byte",
    ]


# --- required, enum, lengths and counts --------------------------------------------------------


REQUIRED_SCHEMA = {
    "type": "object",
    "required": ["field"],
    "properties": {
        "field": {"type": "object", "required": ["nested"], "properties": {"nested": {}}}
    },
}


def test_missing_required_field_is_required_value() -> None:
    assert errors_of(REQUIRED_SCHEMA, {"test": "a"}) == ["field: Required value"]
    assert errors_of(REQUIRED_SCHEMA, {"field": {}}) == ["field.nested: Required value"]


def test_required_field_present_as_null_is_not_missing() -> None:
    assert errors_of(REQUIRED_SCHEMA, {"field": {"nested": None}}) == []


def test_required_under_status_path() -> None:
    assert errors_of(REQUIRED_SCHEMA, {}, Path("status")) == ["status.field: Required value"]


ENUM_SCHEMA = field_schema(
    type="object",
    required=["nestedint", "nestedstring"],
    properties={
        "nestedint": {"type": "integer", "enum": [1, 2]},
        "nestedstring": {"type": "string", "enum": ["a", "b"]},
    },
)


def test_enum_violation_is_unsupported_value_after_the_type_error() -> None:
    # TestValidateCustomResource "enum".
    assert errors_of(ENUM_SCHEMA, {"field": {"nestedint": "x", "nestedstring": True}}) == [
        'field.nestedint: Invalid value: "string": field.nestedint in body must be of type '
        'integer: "string"',
        'field.nestedint: Unsupported value: "x": supported values: "1", "2"',
        'field.nestedstring: Invalid value: "boolean": field.nestedstring in body must be of '
        'type string: "boolean"',
        'field.nestedstring: Unsupported value: true: supported values: "a", "b"',
    ]
    assert errors_of(ENUM_SCHEMA, {"field": {}}) == [
        "field.nestedint: Required value",
        "field.nestedstring: Required value",
    ]


def test_enum_cause_type_is_not_supported() -> None:
    (cause,) = compile_validator(field_schema(enum=["a"])).validate({"field": "b"})
    assert cause.type == "FieldValueNotSupported"


def test_enum_lists_non_strings_as_json() -> None:
    schema = field_schema(enum=[1, 2.5, True, None, {"b": 1, "a": [2]}, "s"])
    assert errors_of(schema, {"field": "x"}) == [
        'field: Unsupported value: "x": supported values: "1", "2.5", "true", "null", '
        '"{\\"a\\":[2],\\"b\\":1}", "s"'
    ]


def test_enum_never_accepts_null() -> None:
    schema = field_schema(nullable=True, enum=["a", None])
    assert errors_of(schema, {"field": None}) == [
        'field: Unsupported value: null: supported values: "a", "null"'
    ]


def test_enum_compares_after_go_conversion_to_the_enum_type() -> None:
    # kube-openapi converts the value to the enum value's Go type before reflect.DeepEqual:
    # float64 1.0 and even 1.9 convert to int64 1; int64 1 converts to float64 1.0.
    assert errors_of(field_schema(enum=[1]), {"field": 1.0}) == []
    assert errors_of(field_schema(enum=[1]), {"field": 1.9}) == []
    assert errors_of(field_schema(enum=[1.0]), {"field": 1}) == []
    assert errors_of(field_schema(enum=[1]), {"field": True}) == [
        'field: Unsupported value: true: supported values: "1"'
    ]
    assert errors_of(field_schema(enum=[{"a": 1}]), {"field": {"a": 1.0}}) == [
        'field: Unsupported value: {"a":1}: supported values: "{\\"a\\":1}"'
    ]


def test_max_length_is_too_long_in_bytes_wording() -> None:
    # TestValidateCustomResource "maxLength".
    schema = {"type": "object", "properties": {"fieldX": {"type": "string", "maxLength": 2}}}
    assert errors_of(schema, {"fieldX": "abc"}) == [
        "fieldX: Too long: may not be more than 2 bytes"
    ]


def test_max_length_counts_characters_not_bytes() -> None:
    schema = field_schema(type="string", maxLength=3)
    assert errors_of(schema, {"field": "ééé"}) == []
    (cause,) = compile_validator(schema).validate({"field": "éééé"})
    assert cause.type == "FieldValueTooLong"


def test_min_length_is_invalid_with_the_value() -> None:
    # tooShortMessage = "%s in %s should be at least %d chars long"
    assert errors_of(field_schema(type="string", minLength=3), {"field": "ab"}) == [
        'field: Invalid value: "ab": field in body should be at least 3 chars long'
    ]


def test_only_the_first_string_failure_is_reported() -> None:
    schema = field_schema(type="string", maxLength=1, pattern="^[0-9]+$")
    assert errors_of(schema, {"field": "abc"}) == ["field: Too long: may not be more than 1 byte"]


def test_max_properties_is_too_many() -> None:
    # TestValidateCustomResource "maxProperties".
    schema = {"type": "object", "properties": {"fieldX": {"type": "object", "maxProperties": 2}}}
    assert errors_of(schema, {"fieldX": {"a": True, "b": True, "c": True}}) == [
        "fieldX: Too many: 3: must have at most 2 items"
    ]


def test_min_properties_is_invalid_with_the_count() -> None:
    # tooFewProperties = "%s in %s should have at least %d properties"
    assert errors_of(field_schema(type="object", minProperties=2), {"field": {"a": 1}}) == [
        "field: Invalid value: 1: field in body should have at least 2 properties"
    ]


def test_max_items_is_too_many() -> None:
    # TestValidateCustomResource "maxItems".
    schema = {"type": "object", "properties": {"fieldX": {"type": "array", "maxItems": 2}}}
    assert errors_of(schema, {"fieldX": ["a", "b", "c"]}) == [
        "fieldX: Too many: 3: must have at most 2 items"
    ]


def test_max_items_of_one_says_item() -> None:
    assert errors_of(field_schema(type="array", maxItems=1), {"field": [1, 2]}) == [
        "field: Too many: 2: must have at most 1 item"
    ]


def test_min_items_is_invalid_with_the_count() -> None:
    # minItemsFail = "%s in %s should have at least %d items"
    assert errors_of(field_schema(type="array", minItems=2), {"field": [1]}) == [
        "field: Invalid value: 1: field in body should have at least 2 items"
    ]


def test_unique_items_reports_duplicates_without_a_value() -> None:
    # uniqueFail = "%s in %s shouldn't contain duplicates"
    schema = field_schema(type="array", uniqueItems=True)
    assert errors_of(schema, {"field": [{"a": 1}, {"a": 1}]}) == [
        'field: Invalid value: "": field in body shouldn\'t contain duplicates'
    ]
    # reflect.DeepEqual: int64 1 and float64 1.0 (and bool true) are different values.
    assert errors_of(schema, {"field": [1, 1.0, True]}) == []


# --- numbers --------------------------------------------------------------------------------


def test_minimum_violation() -> None:
    # test/integration TestCustomResourceValidationErrors "bad beta".
    schema = {"type": "object", "properties": {"beta": {"type": "number", "minimum": 10}}}
    assert errors_of(schema, {"beta": 5}) == [
        "beta: Invalid value: 5: beta in body should be greater than or equal to 10"
    ]


def test_maximum_violation_under_status() -> None:
    # test/integration subresources_test.go: the status schema validated with path "status".
    schema = {"type": "object", "properties": {"num": {"type": "integer", "maximum": 10}}}
    assert errors_of(schema, {"num": 15}, Path("status")) == [
        "status.num: Invalid value: 15: num in body should be less than or equal to 10"
    ]


def test_exclusive_bounds() -> None:
    # maxExcFail "%s in %s should be less than %v"; minExcFail "... should be greater than %v"
    schema = field_schema(
        type="number", minimum=0, exclusiveMinimum=True, maximum=1.5, exclusiveMaximum=True
    )
    assert errors_of(schema, {"field": 0}) == [
        "field: Invalid value: 0: field in body should be greater than 0"
    ]
    assert errors_of(schema, {"field": 1.5}) == [
        "field: Invalid value: 1.5: field in body should be less than 1.5"
    ]
    assert errors_of(schema, {"field": 1.25}) == []


def test_integer_value_is_compared_with_the_bound_truncated_to_int64() -> None:
    # MaximumNativeType: int64 data against int64(max); 1 < int64(1.5) is false, so exclusive
    # maximum 1.5 rejects 1.
    schema = field_schema(type="number", maximum=1.5, exclusiveMaximum=True)
    assert errors_of(schema, {"field": 1}) == [
        "field: Invalid value: 1: field in body should be less than 1"
    ]


def test_multiple_of() -> None:
    # multipleOfFail = "%s in %s should be a multiple of %v"
    assert errors_of(field_schema(type="integer", multipleOf=3), {"field": 7}) == [
        "field: Invalid value: 7: field in body should be a multiple of 3"
    ]
    assert errors_of(field_schema(type="integer", multipleOf=3), {"field": 9}) == []
    assert errors_of(field_schema(type="number", multipleOf=0.5), {"field": 1.25}) == [
        "field: Invalid value: 1.25: field in body should be a multiple of 0.5"
    ]
    assert errors_of(field_schema(type="number", multipleOf=0.5), {"field": 1.5}) == []


def test_integer_multiple_of_uses_the_factor_truncated_to_int64() -> None:
    # kube-apiserver decodes 35 as int64, and MultipleOfNativeType checks it against
    # int64(1.5) == 1 when the schema's type does not rule the factor out: 35 passes. The
    # float64 35.0 is checked as a float and fails (the JSON-Schema suite's expectation).
    schema = field_schema(multipleOf=1.5)
    assert errors_of(schema, {"field": 35}) == []
    assert errors_of(schema, {"field": 35.0}) == [
        "field: Invalid value: 35: field in body should be a multiple of 1.5"
    ]


def test_non_positive_multiple_of_is_reported() -> None:
    # multipleOfMustBePositive = "factor MultipleOf declared for %s must be positive: %v"
    assert errors_of(field_schema(type="integer", multipleOf=-2), {"field": 4}) == [
        "field: Invalid value: -2: factor MultipleOf declared for field must be positive: -2"
    ]


def test_integral_float_is_an_integer() -> None:
    assert errors_of(field_schema(type="integer"), {"field": 1.0}) == []
    assert errors_of(field_schema(type="integer", format="int32"), {"field": 5.0}) == []


def test_fractional_float_fails_integer_twice() -> None:
    assert errors_of(field_schema(type="integer"), {"field": 1.5}) == [
        'field: Invalid value: "number": field in body must be of type integer: "number"',
        '<nil>: Invalid value: "": Checked value must be of type integer (default format) in field',
    ]


def test_integer_is_a_number() -> None:
    assert errors_of(field_schema(type="number"), {"field": 3}) == []


NUMERIC_FORMATS = {
    "type": "object",
    "properties": {
        "intThirtyTwo": {"type": "integer", "format": "int32"},
        "intSixtyFour": {"type": "integer", "format": "int64"},
        "floatThreeTwo": {"type": "number", "format": "float"},
        "floatSixFour": {"type": "number", "format": "double"},
    },
}


@pytest.mark.parametrize(
    "obj",
    [
        {
            "intThirtyTwo": -(2**31),
            "intSixtyFour": -(2**63),
            "floatThreeTwo": -3.4028234663852886e38,
            "floatSixFour": -1.7976931348623157e308,
        },
        {"intThirtyTwo": 0, "intSixtyFour": 0, "floatThreeTwo": 0.0, "floatSixFour": 0.0},
        {
            "intThirtyTwo": 2**31 - 1,
            "intSixtyFour": 2**63 - 1,
            "floatThreeTwo": 3.4028234663852886e38,
            "floatSixFour": 1.7976931348623157e308,
        },
    ],
)
def test_numeric_formats_accept_their_ranges(obj: dict[str, Any]) -> None:
    assert errors_of(NUMERIC_FORMATS, obj) == []


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (
            {"intThirtyTwo": 2**31},
            [
                '<nil>: Invalid value: "": Checked value must be of type integer with format '
                "int32 in intThirtyTwo"
            ],
        ),
        (
            {"intThirtyTwo": -(2**31) - 1},
            [
                '<nil>: Invalid value: "": Checked value must be of type integer with format '
                "int32 in intThirtyTwo"
            ],
        ),
        (
            {"intSixtyFour": float(2**63 - 1) * 1.1},
            [
                'intSixtyFour: Invalid value: "float64": intSixtyFour in body must be of type '
                'int64: "float64"',
                '<nil>: Invalid value: "": Checked value must be of type integer with format '
                "int64 in intSixtyFour",
            ],
        ),
        (
            {"floatThreeTwo": 3.4028234663852886e38 * 1.1},
            [
                '<nil>: Invalid value: "": Checked value must be of type number with format '
                "float in floatThreeTwo"
            ],
        ),
    ],
)
def test_numeric_formats_reject_out_of_range(obj: dict[str, Any], expected: list[str]) -> None:
    # TestValidateCustomResource "numeric formats invalid".
    assert errors_of(NUMERIC_FORMATS, obj) == expected


def test_integer_beyond_int64_is_a_float() -> None:
    # Go decodes 2**64 as float64 (it is no int64), which then fails the int64 range check.
    assert errors_of(field_schema(type="integer"), {"field": 2**64}) == [
        'field: Invalid value: "number": field in body must be of type integer: "number"',
        '<nil>: Invalid value: "": Checked value must be of type integer (default format) in field',
    ]


def test_bound_outside_the_type_is_reported_and_compared_as_float64() -> None:
    # IsValueValidAgainstRange on the constraint: "Maximum boundary value must be of type ...",
    # then Maximum() on float64 values, so the value prints as Go's %v of a float64.
    assert errors_of(field_schema(type="integer", maximum=5.5), {"field": 10_000_000}) == [
        '<nil>: Invalid value: "": Maximum boundary value must be of type integer (default '
        "format) in field",
        "field: Invalid value: 1e+07: field in body should be less than or equal to 5.5",
    ]


def test_non_numeric_value_with_numeric_format_names_the_format() -> None:
    # typeValidator: a non-string, non-array value whose kind does not fit the format.
    assert errors_of(field_schema(type="integer", format="int32"), {"field": True}) == [
        'field: Invalid value: "": field in body must be of type int32: ""'
    ]


# --- formats --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "good", "bad"),
    [
        ("k8s-short-name", "a-b", "a-"),
        ("k8s-long-name", "a.b-c", "a.-"),
        ("date", "2024-02-29", "2023-02-29"),
        ("date-time", "2024-01-02T15:04:05Z", "2024-01-02 15:04:05"),
        ("date-time", "2024-01-02t15:04:05.123+01:00", "2024-01-02T24:00:00Z"),
        ("duration", "1h30m", "thirty"),
        ("duration", "5 minutes", "5"),
        ("uuid", "123E4567-E89B-12D3-A456-426614174000", "123e4567-e89b-12d3-a456"),
        ("uuid4", "123e4567-e89b-42d3-a456-426614174000", "123e4567-e89b-12d3-a456-426614174000"),
        ("ipv4", "010.1.2.3", "1.2.3"),
        ("ipv6", "2001:db8::1", "1.2.3.4"),
        ("cidr", "10.0.0.0/8", "10.0.0.0/33"),
        ("mac", "01:23:45:67:89:ab", "01:23:45:67:89"),
        ("email", "Jane Doe <jane@example.com>", "jane.example.com"),
        ("uri", "https://example.com/a?b=c", "example.com/a"),
        ("hostname", "my-host.example.com", "-bad-.com"),
        ("byte", "aGVsbG8=", "aGVsbG8"),
        ("bsonobjectid", "507f1f77bcf86cd799439011", "507f1f77bcf86cd79943901"),
        ("hexcolor", "#FFF", "#FFFF"),
        ("ssn", "123-45-6789", "123456789"),
        ("creditcard", "4111 1111 1111 1111", "4111 1111 1111 1112"),
        ("isbn10", "0-306-40615-2", "0-306-40615-3"),
    ],
)
def test_string_format_violation_is_type_invalid(fmt: str, good: str, bad: str) -> None:
    # TestValidateCustomResource "k8sLongName":
    # fieldX: Invalid value: "a.-": fieldX in body must be of type k8s-long-name: "a.-"
    schema = {"type": "object", "properties": {"fieldX": {"type": "string", "format": fmt}}}
    assert errors_of(schema, {"fieldX": good}) == []
    assert errors_of(schema, {"fieldX": bad}) == [
        f'fieldX: Invalid value: "{bad}": fieldX in body must be of type {fmt}: "{bad}"'
    ]


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        ("2562047h47m16.854775807s", True),  # the largest time.Duration
        ("3000000h", True),  # too long for ParseDuration, taken by the lenient fallback
        ("1h-2m", True),  # likewise: the fallback finds "1h"
        ("9999999999999999999h", False),  # neither: the number overflows strconv.Atoi
        ("0", True),
        ("5", False),
    ],
)
def test_duration_format_is_go_parse_duration_or_the_lenient_fallback(
    value: str, valid: bool
) -> None:
    schema = field_schema(type="string", format="duration")
    assert (errors_of(schema, {"field": value}) == []) is valid


def test_ipv4_format_takes_an_ipv4_mapped_ipv6_address() -> None:
    # isIPv4: ParseIPSloppy succeeds and the string contains a dot.
    schema = field_schema(type="string", format="ipv4")
    assert errors_of(schema, {"field": "::ffff:1.2.3.4"}) == []
    assert len(errors_of(schema, {"field": "::1"})) == 1


@pytest.mark.parametrize(
    ("fmt", "value"),
    [
        ("duration", "1" * 100_000),
        ("email", "a " * 50_000 + "<"),
        ("hostname", "a." * 100_000),
        ("ipv4", "1" * 100_000),
        ("cidr", "1.2.3.4/" + "0" * 10_000 + "1"),
        ("byte", "A" * 100_001),
    ],
)
def test_format_checks_stay_fast_on_hostile_values(fmt: str, value: str) -> None:
    schema = field_schema(type="string", format=fmt)
    started = time.perf_counter()
    errors_of(schema, {"field": value})
    assert time.perf_counter() - started < 2.0


def test_non_string_value_for_a_string_format_names_the_format() -> None:
    # typeValidator checks the format before the type for non-string values.
    assert errors_of(field_schema(type="string", format="date"), {"field": 5}) == [
        'field: Invalid value: "int64": field in body must be of type date: "int64"'
    ]


def test_password_format_accepts_anything() -> None:
    assert errors_of(field_schema(type="string", format="password"), {"field": ""}) == []


def test_unknown_format_is_ignored() -> None:
    assert errors_of(field_schema(type="string", format="no-such-format"), {"field": "x"}) == []


def test_string_format_on_an_integer_schema_is_ignored() -> None:
    assert errors_of(field_schema(type="integer", format="date"), {"field": 1}) == []


def test_string_format_on_an_array_skips_the_type_check() -> None:
    # typeValidator returns early for a string or array value when the schema has a format and
    # no numeric type, so a list passes "type: string, format: byte".
    assert errors_of(field_schema(type="string", format="byte"), {"field": [1]}) == []


# --- patterns: Go's RE2 -----------------------------------------------------------------------


def test_pattern_violation() -> None:
    # test/integration TestCustomResourceValidationErrors "bad alpha".
    alpha = {"type": "string", "pattern": "^[a-zA-Z0-9_]*$"}
    schema = {"type": "object", "properties": {"alpha": alpha}}
    assert errors_of(schema, {"alpha": "foo_123!"}) == [
        "alpha: Invalid value: \"foo_123!\": alpha in body should match '^[a-zA-Z0-9_]*$'"
    ]


def test_invalid_pattern_is_reported_with_gos_parse_error() -> None:
    # TestValidateCustomResource "invalid regex".
    assert errors_of(field_schema(type="string", pattern="+"), {"field": "foo"}) == [
        'field: Invalid value: "foo": field in body should match \'+, but pattern is invalid: '
        "error parsing regexp: missing argument to repetition operator: `+`'"
    ]


def test_pattern_dollar_does_not_match_before_a_final_newline() -> None:
    schema = field_schema(type="string", pattern="^a$")
    assert errors_of(schema, {"field": "a"}) == []
    assert len(errors_of(schema, {"field": "a\n"})) == 1


def test_pattern_shorthand_classes_are_ascii() -> None:
    assert len(errors_of(field_schema(type="string", pattern="^\\d+$"), {"field": "١٢"})) == 1
    assert len(errors_of(field_schema(type="string", pattern="^\\s$"), {"field": "\v"})) == 1
    assert errors_of(field_schema(type="string", pattern="^\\w+$"), {"field": "a_1"}) == []


def test_pattern_search_is_unanchored() -> None:
    assert errors_of(field_schema(type="string", pattern="b+"), {"field": "abba"}) == []


def test_pattern_flags_and_unicode_classes_run_on_re2() -> None:
    assert errors_of(field_schema(type="string", pattern="(?i)^abc$"), {"field": "ABC"}) == []
    assert errors_of(field_schema(type="string", pattern="^\\pL+$"), {"field": "été"}) == []
    assert errors_of(field_schema(type="string", pattern="^[[:digit:]]+$"), {"field": "42"}) == []
    assert errors_of(field_schema(type="string", pattern="^a{,2}$"), {"field": "a{,2}"}) == []


def test_pattern_matching_stays_linear_on_a_hostile_value() -> None:
    # Go's RE2 is linear; a backtracking engine needs seconds for "a+b" on 10**5 "a"s.
    schema = field_schema(type="string", pattern="a+b")
    value = "a" * 100_000
    started = time.perf_counter()
    assert len(errors_of(schema, {"field": value})) == 1
    assert time.perf_counter() - started < 2.0


# --- objects, arrays, paths ---------------------------------------------------------------------


def test_additional_properties_schema_validates_map_values() -> None:
    schema = field_schema(type="object", additionalProperties={"type": "string"})
    assert errors_of(schema, {"field": {"a": "x", "b": 1}}) == [
        'field.b: Invalid value: "integer": field.b in body must be of type string: "integer"'
    ]


def test_additional_properties_false_forbids_unknown_keys() -> None:
    # unallowedProperty = "%s.%s in %s is a forbidden property", reported on the object.
    schema = field_schema(type="object", additionalProperties=False)
    assert errors_of(schema, {"field": {"x": 1}}) == [
        'field: Invalid value: "x": field.x in body is a forbidden property'
    ]


def test_unknown_fields_pass_validation() -> None:
    # x-kubernetes-preserve-unknown-fields only matters to pruning.
    schema = field_schema(type="object", properties={"a": {"type": "string"}})
    assert errors_of(schema, {"field": {"a": "x", "b": 1}}) == []


def test_item_errors_carry_the_index() -> None:
    schema = field_schema(type="array", items={"type": "object", "required": ["name"]})
    assert errors_of(schema, {"field": [{"name": "a"}, {}]}) == ["field[1].name: Required value"]


def test_root_error_without_a_path_is_reported_on_nil() -> None:
    # ValidateCustomResource is called with a nil path; an error named "" keeps it: "<nil>".
    assert errors_of({"type": "object"}, "x") == [
        '<nil>: Invalid value: "string":  in body must be of type object: "string"'
    ]
    assert errors_of({"type": "object"}, "x", Path("status")) == [
        'status: Invalid value: "string":  in body must be of type object: "string"'
    ]


def test_nested_paths_through_objects_arrays_and_maps() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "replicas": {"type": "integer"},
                    "ports": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"labels": {"additionalProperties": {"type": "string"}}},
                        },
                    },
                },
            }
        },
    }
    obj = {"spec": {"replicas": "string", "ports": [{"labels": {"k": 1}}]}}
    assert errors_of(schema, obj) == [
        'spec.ports[0].labels.k: Invalid value: "integer": spec.ports[0].labels.k in body must '
        'be of type string: "integer"',
        'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: '
        '"string"',
    ]


def test_identical_messages_are_reported_once() -> None:
    schema = field_schema(allOf=[{"type": "integer"}, {"type": "integer"}])
    assert errors_of(schema, {"field": "x"}) == [
        'field: Invalid value: "string": field in body must be of type integer: "string"',
        '<nil>: Invalid value: "": "field" must validate all the schemas (allOf). None validated',
    ]


def test_valid_object_has_no_causes() -> None:
    obj = {"field": {"nestedint": 1, "nestedstring": "a"}}
    assert compile_validator(ENUM_SCHEMA).validate(obj) == []


@pytest.mark.parametrize(
    "keyword",
    ["patternProperties", "dependencies", "additionalItems", "$ref", "definitions"],
)
def test_keywords_a_crd_may_not_hold_are_rejected_at_compile_time(keyword: str) -> None:
    with pytest.raises(ValueError, match=re.escape(keyword)):
        compile_validator({"type": "object", keyword: {}})


def test_items_as_an_array_is_rejected_at_compile_time() -> None:
    with pytest.raises(ValueError, match="items must be a schema object"):
        compile_validator({"type": "array", "items": [{"type": "string"}]})
