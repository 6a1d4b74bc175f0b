"""The "must be structural" rules, against the violations Kubernetes reports.

Expected lists are quoted from Kubernetes v1.36's
test/integration/validation_test.go (TestNonStructuralSchemaCondition...), whose schemas are
reproduced here as YAML, and from pkg/apiserver/schema/validation_test.go.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from kstore.api.structural import validate_structural
from kstore.api.validation.field import Path

ROOT = Path("spec", "versions").index(0).child("schema", "openAPIV3Schema")
P = "spec.versions[0].schema.openAPIV3Schema"


def violations(schema_yaml: str) -> list[str]:
    schema: Any = yaml.safe_load(schema_yaml)
    return [f"{c.field}: {c.message}" for c in validate_structural(schema, ROOT)]


def test_forbidden_in_nested_value_validation_lists_every_generic_field() -> None:
    got = violations(
        """
type: object
properties:
 foo:
   type: string
not:
 type: string
 additionalProperties: true
 title: hello
 description: world
 nullable: true
allOf:
- properties:
   foo:
     type: string
     additionalProperties: true
     title: hello
     description: world
     nullable: true
anyOf:
- items:
   type: string
   additionalProperties: true
   title: hello
   description: world
   nullable: true
oneOf:
- properties:
   foo:
     type: string
     additionalProperties: true
     title: hello
     description: world
     nullable: true
"""
    )
    expected = []
    for where in ("anyOf[0].items", "allOf[0].properties[foo]", "oneOf[0].properties[foo]", "not"):
        expected += [
            f"{P}.{where}.type: Forbidden: must be empty to be structural",
            f"{P}.{where}.additionalProperties: Forbidden: must be undefined to be structural",
            f"{P}.{where}.title: Forbidden: must be empty to be structural",
            f"{P}.{where}.description: Forbidden: must be empty to be structural",
            f"{P}.{where}.nullable: Forbidden: must be false to be structural",
        ]
    expected.append(f"{P}.items: Required value: because it is defined in {P}.anyOf[0].items")
    assert sorted(got) == sorted(expected)
    # Kubernetes sorts the list by the rendered error.
    assert got == sorted(got)


def test_invalid_pattern_is_reported_in_go_regexp_words() -> None:
    got = violations(
        """
type: object
properties:
 foo:
   type: string
   pattern: "+"
"""
    )
    assert got == [
        f'{P}.properties[foo].pattern: Invalid value: "+": must be a valid regular expression, '
        "but isn't: error parsing regexp: missing argument to repetition operator: `+`"
    ]


def test_python_only_regexp_syntax_is_not_a_valid_pattern() -> None:
    got = violations("type: object\nproperties:\n a:\n  type: string\n  pattern: '(?=x)'\n")
    assert got == [
        f'{P}.properties[a].pattern: Invalid value: "(?=x)": must be a valid regular '
        "expression, but isn't: error parsing regexp: invalid or unsupported Perl syntax: `(?=`"
    ]


def test_missing_types_are_required_with_the_level_in_the_words() -> None:
    got = violations(
        """
properties:
 foo:
   properties:
     a: {}
 bar:
   items:
     additionalProperties:
       properties:
         a: {}
       items: {}
 abc:
   additionalProperties:
     properties:
       a:
         items:
           additionalProperties:
             items:
"""
    )
    field = "Required value: must not be empty for specified object fields"
    item = "Required value: must not be empty for specified array items"
    assert sorted(got) == sorted(
        [
            f"{P}.properties[foo].properties[a].type: {field}",
            f"{P}.properties[foo].type: {field}",
            f"{P}.properties[abc].additionalProperties.properties[a].items.additionalProperties"
            f".type: {field}",
            f"{P}.properties[abc].additionalProperties.properties[a].items.type: {item}",
            f"{P}.properties[abc].additionalProperties.properties[a].type: {field}",
            f"{P}.properties[abc].additionalProperties.type: {field}",
            f"{P}.properties[abc].type: {field}",
            f"{P}.properties[bar].items.additionalProperties.items.type: {item}",
            f"{P}.properties[bar].items.additionalProperties.properties[a].type: {field}",
            f"{P}.properties[bar].items.additionalProperties.type: {field}",
            f"{P}.properties[bar].items.type: {item}",
            f"{P}.properties[bar].type: {field}",
            f"{P}.type: Required value: must not be empty at the root",
        ]
    )


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ('type: ""', [f"{P}.type: Required value: must not be empty at the root"]),
        ("type: integer", [f'{P}.type: Invalid value: "integer": must be object at the root']),
        (
            "type: object\nadditionalProperties: false",
            [f"{P}.additionalProperties: Forbidden: must not be used at the root"],
        ),
        (
            "type: object\nproperties:\n slice:\n   type: array",
            [f"{P}.properties[slice].items: Required value: must be specified"],
        ),
    ],
)
def test_root_and_array_rules(schema: str, expected: list[str]) -> None:
    assert violations(schema) == expected


def test_value_validations_must_speak_of_declared_fields_only() -> None:
    got = violations(
        """
type: object
properties:
 b:
   type: object
   properties:
     b:
       type: array
 c:
   type: array
   items:
     type: object
 d:
   type: array
not:
 properties:
   a: {}
   b:
     not:
       properties:
         a: {}
         b:
           items: {}
   c:
     items:
       not:
         items:
           properties:
             a: {}
   d:
     items: {}
allOf:
- properties:
   e: {}
anyOf:
- properties:
   f: {}
oneOf:
- properties:
   g: {}
"""
    )
    because = "Required value: because it is defined in"
    expected = [
        f"{P}.properties[d].items: {because} {P}.not.properties[d].items",
        f"{P}.properties[a]: {because} {P}.not.properties[a]",
        f"{P}.properties[b].properties[a]: {because} {P}.not.properties[b].not.properties[a]",
        f"{P}.properties[b].properties[b].items: {because} "
        f"{P}.not.properties[b].not.properties[b].items",
        f"{P}.properties[c].items.items: {because} {P}.not.properties[c].items.not.items",
        f"{P}.properties[e]: {because} {P}.allOf[0].properties[e]",
        f"{P}.properties[f]: {because} {P}.anyOf[0].properties[f]",
        f"{P}.properties[g]: {because} {P}.oneOf[0].properties[g]",
    ]
    # Kubernetes' test also has the missing items of the array d (no "items" declared).
    expected.append(f"{P}.properties[d].items: Required value: must be specified")
    expected.append(f"{P}.properties[b].properties[b].items: Required value: must be specified")
    assert sorted(got) == sorted(expected)


def test_complete_structural_schema_has_no_violations() -> None:
    assert (
        violations(
            """
type: object
properties:
 a: {type: string}
 b:
   type: object
   properties:
     a: {type: string}
     b: {type: array, items: {type: string}}
 c:
   type: array
   items: {type: array, items: {type: object, properties: {a: {type: string}}}}
 d: {type: array, items: {type: string}}
 e: {type: string}
 f: {type: string}
 g: {type: string}
not:
 properties:
   a: {}
   b: {not: {properties: {a: {}, b: {items: {}}}}}
   c: {items: {not: {items: {properties: {a: {}}}}}}
   d: {items: {}}
allOf: [{properties: {e: {}}}]
anyOf: [{properties: {f: {}}}]
oneOf: [{properties: {g: {}}}]
"""
        )
        == []
    )


# Kubernetes' integration test checks that these are contained in the condition; the source
# (validateStructuralMetadataInvariants) also reports the empty type of root metadata as
# ``Invalid value: "": must be object``.
METADATA_NOT_OBJECT = f'{P}.properties[metadata].type: Invalid value: "": must be object'
METADATA_FORBIDDEN = (
    f"{P}.properties[metadata]: Forbidden: must not specify anything other than name and "
    "generateName, but metadata is implicitly specified"
)


def test_root_metadata_with_a_value_validation_is_forbidden() -> None:
    got = violations("type: object\nproperties:\n metadata:\n   minimum: 42.0\n")
    assert got == [
        METADATA_NOT_OBJECT,
        f"{P}.properties[metadata].type: Required value: must not be empty for specified object "
        "fields",
        METADATA_FORBIDDEN,
    ]


def test_root_metadata_with_other_properties_is_forbidden() -> None:
    got = violations(
        """
type: object
properties:
 metadata:
   properties:
     name:
       pattern: "^[a-z]+$"
     labels:
       type: object
       maxLength: 4
"""
    )
    assert sorted(got) == sorted(
        [
            METADATA_NOT_OBJECT,
            METADATA_FORBIDDEN,
            f"{P}.properties[metadata].type: Required value: must not be empty for specified "
            "object fields",
            f"{P}.properties[metadata].properties[name].type: Required value: must not be empty "
            "for specified object fields",
        ]
    )


@pytest.mark.parametrize("names", [["name"], ["generateName"], ["name", "generateName"]])
def test_root_metadata_may_constrain_name_and_generate_name(names: list[str]) -> None:
    props = {n: {"type": "string", "pattern": "^[a-z]+$"} for n in names}
    schema = {"type": "object", "properties": {"metadata": {"type": "object", "properties": props}}}
    assert validate_structural(schema, ROOT) == []


def test_metadata_under_junctors_is_forbidden_in_a_nested_context() -> None:
    got = violations(
        """
type: object
properties:
 metadata:
   type: object
   properties:
     name:
       type: string
       pattern: "^[a-z]+$"
allOf:
- properties:
   metadata: {}
anyOf:
- properties:
   metadata: {}
oneOf:
- properties:
   metadata: {}
not:
 properties:
   metadata: {}
"""
    )
    nested = "Forbidden: must not be specified in a nested context"
    assert got == [
        f"{P}.allOf[0].properties[metadata]: {nested}",
        f"{P}.anyOf[0].properties[metadata]: {nested}",
        f"{P}.not.properties[metadata]: {nested}",
        f"{P}.oneOf[0].properties[metadata]: {nested}",
    ]


@pytest.mark.parametrize(
    "schema",
    [
        "type: object",
        "type: object\nx-kubernetes-embedded-resource: true\n"
        "properties: {apiVersion: {type: string}, kind: {type: string}, metadata: {type: object}}",
        "type: object\nx-kubernetes-embedded-resource: true\n"
        "x-kubernetes-preserve-unknown-fields: true",
    ],
)
def test_schemas_kubernetes_accepts_as_structural(schema: str) -> None:
    assert violations(schema) == []


def test_embedded_resource_rules() -> None:
    got = violations(
        """
type: object
properties:
 a:
   x-kubernetes-embedded-resource: true
 b:
   type: string
   x-kubernetes-embedded-resource: true
   x-kubernetes-preserve-unknown-fields: true
 c:
   type: object
   x-kubernetes-embedded-resource: true
   additionalProperties: {type: string}
   properties:
     kind: {type: integer}
     metadata: {type: string}
"""
    )
    assert got == [
        f"{P}.properties[a].properties: Required value: must not be empty if "
        "x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        f"{P}.properties[a].type: Required value: must be object if "
        "x-kubernetes-embedded-resource is true",
        f'{P}.properties[b].type: Invalid value: "string": must be object if '
        "x-kubernetes-embedded-resource is true",
        f"{P}.properties[c].additionalProperties: Forbidden: must not be used if "
        "x-kubernetes-embedded-resource is set",
        f'{P}.properties[c].properties[kind].type: Invalid value: "integer": must be string',
        f'{P}.properties[c].properties[metadata].type: Invalid value: "string": must be object',
    ]


def test_int_or_string_excludes_preserve_and_embedded() -> None:
    got = violations(
        """
type: object
properties:
 a:
   x-kubernetes-int-or-string: true
   x-kubernetes-preserve-unknown-fields: true
   x-kubernetes-embedded-resource: true
   type: object
   properties: {x: {type: string}}
"""
    )
    assert got == [
        f"{P}.properties[a].x-kubernetes-embedded-resource: Invalid value: true: must be false "
        "if x-kubernetes-int-or-string is true",
        f"{P}.properties[a].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be "
        "false if x-kubernetes-int-or-string is true",
    ]


def test_int_or_string_any_of_pattern_may_carry_types() -> None:
    schema = """
type: object
properties:
 a:
   x-kubernetes-int-or-string: true
   anyOf: [{type: integer}, {type: string}]
 b:
   x-kubernetes-int-or-string: true
   allOf:
   - anyOf: [{type: integer}, {type: string}]
   - anyOf: [{type: integer}, {type: string}]
"""
    assert violations(schema) == [
        f"{P}.properties[b].allOf[1].anyOf[0].type: Forbidden: must be empty to be structural",
        f"{P}.properties[b].allOf[1].anyOf[1].type: Forbidden: must be empty to be structural",
    ]


def test_extensions_in_value_validations_are_forbidden() -> None:
    got = violations(
        """
type: object
properties:
 a: {type: string}
allOf:
- properties:
    a:
      default: x
      x-kubernetes-preserve-unknown-fields: true
      x-kubernetes-embedded-resource: true
      x-kubernetes-int-or-string: true
      x-kubernetes-list-map-keys: [k]
      x-kubernetes-list-type: map
      x-kubernetes-map-type: atomic
      x-kubernetes-validations: [{rule: "true"}]
"""
    )
    w = f"{P}.allOf[0].properties[a]"
    assert got == [
        f"{w}.default: Forbidden: must be undefined to be structural",
        f"{w}.x-kubernetes-embedded-resource: Forbidden: must be false to be structural",
        f"{w}.x-kubernetes-int-or-string: Forbidden: must be false to be structural",
        f"{w}.x-kubernetes-list-map-keys: Forbidden: must be empty to be structural",
        f"{w}.x-kubernetes-list-type: Forbidden: must be undefined to be structural",
        f"{w}.x-kubernetes-map-type: Forbidden: must be undefined to be structural",
        f"{w}.x-kubernetes-preserve-unknown-fields: Forbidden: must be false to be structural",
        f"{w}.x-kubernetes-validations: Forbidden: must be empty to be structural",
    ]


def test_unbuildable_schema_reports_the_build_error() -> None:
    causes = validate_structural({"type": "object", "$ref": "#/definitions/x"}, ROOT)
    assert [(c.field, c.message) for c in causes] == [
        (P, "Invalid value: \"\": OpenAPIV3Schema '$ref' is not supported")
    ]
