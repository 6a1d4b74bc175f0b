"""The checks on a CRD's defaults, against Kubernetes v1.36's apiextensions validation tests.

Cases and expected (type, path) pairs come from pkg/apis/apiextensions/validation/
validation_test.go ("v1.15 era tests for metadata defaults", the defaults-in-metadata and
"defaults with enum/embedded" cases); messages are those of defaulting/validation.go,
objectmeta/validation.go and the CRD validation's per-node walk.
"""

from __future__ import annotations

from typing import Any

from kstore.api.structural import (
    Structural,
    build_structural,
    validate_crd_schema,
    validate_defaults,
    validate_schema_rules,
)
from kstore.api.validation.field import Path, not_supported
from kstore.errors import Cause

ROOT = Path("spec", "validation", "openAPIV3Schema")
P = str(ROOT)
DNS1035 = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


def obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


def embedded(**props: Any) -> dict[str, Any]:
    return {**obj(**props), "x-kubernetes-embedded-resource": True}


STR = {"type": "string"}


def check(schema: dict[str, Any], **kw: Any) -> list[tuple[str, str, str]]:
    causes = validate_defaults(build_structural(schema), ROOT, **kw)
    return [(c.type, c.field, c.message) for c in causes]


# ---------------------------------------------------------------------------- placement


def test_no_default_in_top_level_metadata() -> None:
    schema = obj(metadata={"type": "object", "default": {"name": "foo"}, "properties": {
        "name": {"type": "string", "default": "foo"}}})  # fmt: skip
    causes = validate_schema_rules(schema, ROOT)
    assert [(c.type, c.field, c.message) for c in causes] == [
        (
            "FieldValueForbidden",
            f"{P}.properties[metadata].default",
            "Forbidden: must not be set in top-level metadata",
        ),
        (
            "FieldValueForbidden",
            f"{P}.properties[metadata].properties[name].default",
            "Forbidden: must not be set in top-level metadata",
        ),
    ]


def test_no_default_inside_additional_properties_of_embedded_metadata() -> None:
    annotations = {"type": "object", "additionalProperties": {"type": "string", "default": "abc"}}
    schema = obj(embedded=embedded(metadata=obj(annotations=annotations)))
    causes = validate_schema_rules(schema, ROOT)
    assert [(c.field, c.message) for c in causes] == [
        (
            f"{P}.properties[embedded].properties[metadata].properties[annotations]"
            ".additionalProperties.default",
            "Forbidden: must not be set inside additionalProperties applying to object metadata",
        )
    ]


def test_a_null_default_is_no_default_even_where_defaults_are_forbidden() -> None:
    # JSON null decodes into a nil *JSON in Kubernetes' types, like an absent default.
    assert validate_schema_rules(obj(kind={"type": "string", "default": None}), ROOT) == []
    causes = validate_schema_rules(obj(kind={"type": "string", "default": ""}), ROOT)
    assert [c.message for c in causes] == ["Forbidden: must not be set in top-level kind"]


def test_no_embedded_resource_inside_resource_meta() -> None:
    schema = obj(metadata=obj(x={**embedded(a=STR)}))
    causes = validate_schema_rules(schema, ROOT)
    assert [(c.field, c.message) for c in causes] == [
        (
            f"{P}.properties[metadata].properties[x].x-kubernetes-embedded-resource",
            "Forbidden: must not be used inside of resource meta",
        )
    ]


# ---------------------------------------------------------------------------- validation


def test_defaults_must_be_pruned() -> None:
    meta = {"name": "foo", "unknown": 42}
    schema = obj(
        **{
            "unknown-field-object-defaults": {
                **embedded(something=STR),
                "default": {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "unknown": 42},
            },
            "x-preserve-unknown-fields-unknown-field-object-defaults": {
                "type": "object",
                "x-kubernetes-embedded-resource": True,
                "x-kubernetes-preserve-unknown-fields": True,
                "default": {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "unknown": 42},
            },
            "x-preserve-unknown-fields-unknown-field-outside": {
                **obj(
                    embedded={
                        "type": "object",
                        "x-kubernetes-embedded-resource": True,
                        "x-kubernetes-preserve-unknown-fields": True,
                    }
                ),
                "default": {
                    "embedded": {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "x": 1},
                    "unknown": 42,
                },
            },
        }
    )
    got = check(schema)
    assert [(t, f) for t, f, _ in got] == [
        ("FieldValueInvalid", f"{P}.properties[unknown-field-object-defaults].default"),
        (
            "FieldValueInvalid",
            f"{P}.properties[x-preserve-unknown-fields-unknown-field-outside].default",
        ),
    ]
    assert got[0][2] == (
        'Invalid value: {"apiVersion":"v1","kind":"Pod","metadata":{"name":"foo","unknown":42},'
        '"unknown":42}: must not have unknown fields'
    )


def test_unpruned_defaults_are_accepted_when_not_required() -> None:
    schema = obj(a={**obj(b=STR), "default": {"b": "x", "c": "y"}})
    assert check(schema, require_pruned=False) == []
    assert [f for _, f, _ in check(schema)] == [f"{P}.properties[a].default"]


def test_embedded_default_needs_type_meta() -> None:
    schema = obj(
        **{
            "object-defaults-with-missing-typemeta": {
                **embedded(apiVersion=STR, kind=STR),
                "default": {"metadata": {"name": "bar"}},
            }
        }
    )
    w = f"{P}.properties[object-defaults-with-missing-typemeta].default"
    assert check(schema) == [
        ("FieldValueRequired", f"{w}.apiVersion", "Required value"),
        ("FieldValueRequired", f"{w}.kind", "Required value"),
    ]


def test_wrongly_typed_embedded_defaults_stop_at_the_first_problem() -> None:
    schema = obj(
        **{
            "wrongly-typed-object-defaults-apiVersion": {
                **embedded(something=STR),
                "default": {"apiVersion": 42},
            },
            "wrongly-typed-object-defaults-name": {
                **embedded(something=STR),
                "default": {"metadata": {"name": 42}},
            },
            "wrongly-typed-spanning-object-defaults-labels": {
                **obj(embedded=embedded(something=STR)),
                "default": {"embedded": {"metadata": {"labels": {"a": 1}}}},
            },
        }
    )
    got = check(schema)
    assert got == [
        (
            "FieldValueInvalid",
            f"{P}.properties[wrongly-typed-object-defaults-apiVersion].default.apiVersion",
            "Invalid value: 42: must be a string",
        ),
        (
            "FieldValueInvalid",
            f"{P}.properties[wrongly-typed-object-defaults-name].default.metadata",
            'Invalid value: {"name":42}: json: cannot unmarshal number into Go struct field '
            "ObjectMeta.name of type string",
        ),
        (
            "FieldValueInvalid",
            f"{P}.properties[wrongly-typed-spanning-object-defaults-labels].default.embedded"
            ".metadata",
            'Invalid value: {"labels":{"a":1}}: json: cannot unmarshal number into Go struct '
            "field ObjectMeta.labels of type string",
        ),
    ]


def test_invalid_embedded_defaults_are_validated_as_objects() -> None:
    schema = obj(
        **{
            "invalid-object-defaults-kind": {
                **embedded(something=STR),
                "default": {"apiVersion": "foo/v1", "kind": "%"},
            },
            "invalid-object-defaults-name": {
                **embedded(something=STR),
                "default": {"apiVersion": "foo/v1", "kind": "Foo", "metadata": {"name": "%"}},
            },
            "invalid-spanning-object-defaults-labels": {
                **obj(embedded=embedded(something=STR)),
                "default": {
                    "embedded": {
                        "apiVersion": "foo/v1",
                        "kind": "Foo",
                        "metadata": {"labels": {"foo": "x y"}},
                    }
                },
            },
        }
    )
    assert check(schema) == [
        (
            "FieldValueInvalid",
            f"{P}.properties[invalid-object-defaults-kind].default.kind",
            f'Invalid value: "%": may have mixed case, but should otherwise match: {DNS1035}',
        ),
        (
            "FieldValueInvalid",
            f"{P}.properties[invalid-object-defaults-name].default.metadata.name",
            "Invalid value: \"%\": may not contain '%'",
        ),
        (
            "FieldValueInvalid",
            f"{P}.properties[invalid-spanning-object-defaults-labels].default.embedded.metadata"
            ".labels",
            f'Invalid value: "x y": {LABEL_VALUE}',
        ),
    ]


def test_defaults_inside_embedded_meta_must_make_valid_metadata() -> None:
    # The "v3" and "v4" versions of Kubernetes' metadata-defaults test.
    schema = obj(
        embedded=embedded(
            apiVersion={"type": "string", "default": "v1"},
            kind={"type": "string", "default": "%"},
            metadata={"type": "object", "default": {"labels": {"bar": "x y"}}},
        ),
        typed=embedded(
            metadata=obj(
                name={"type": "string", "default": 42},
                labels=obj(bar={"type": "string", "default": 42}),
            )
        ),
    )
    e = f"{P}.properties[embedded].properties"
    t = f"{P}.properties[typed].properties[metadata].properties"
    assert check(schema) == [
        (
            "FieldValueInvalid",
            f"{e}[kind].default",
            'Invalid value: "%": must result in valid metadata: kind: Invalid value: "%": '
            f"may have mixed case, but should otherwise match: {DNS1035}",
        ),
        (
            "FieldValueInvalid",
            f"{e}[metadata].default",
            'Invalid value: {"labels":{"bar":"x y"}}: must result in valid metadata: '
            f'metadata.labels: Invalid value: "x y": {LABEL_VALUE}',
        ),
        (
            "FieldValueInvalid",
            f"{t}[name].default",
            "Invalid value: 42: must result in valid metadata: metadata: Invalid value: "
            '{"name":42}: json: cannot unmarshal number into Go struct field ObjectMeta.name '
            "of type string",
        ),
        (
            "FieldValueInvalid",
            f"{t}[labels].properties[bar].default",
            "Invalid value: 42: must result in valid metadata: metadata: Invalid value: "
            '{"labels":{"bar":42}}: json: cannot unmarshal number into Go struct field '
            "ObjectMeta.labels of type string",
        ),
    ]


def test_value_validation_of_defaults_is_delegated() -> None:
    seen: list[tuple[str, Any]] = []

    def enum_only_foo(path: Path, value: Any, schema: Structural) -> list[Cause]:
        seen.append((str(path), value))
        return [] if value == "foo" else [not_supported(path, value, ["foo"])]

    schema = obj(a={"type": "string", "default": "bar"}, b={"type": "string", "default": "foo"})
    causes = validate_defaults(build_structural(schema), ROOT, validate_value=enum_only_foo)
    assert seen == [(f"{P}.properties[a].default", "bar"), (f"{P}.properties[b].default", "foo")]
    assert [c.render() for c in causes] == [
        f'{P}.properties[a].default: Unsupported value: "bar": supported values: "foo"'
    ]


# ---------------------------------------------------------------------------- the whole


def test_crd_schema_checks_defaults_only_once_structural() -> None:
    schema = obj(a={"default": {"x": 1}}, b={**obj(c=STR), "default": {"d": 1}})
    causes = validate_crd_schema(schema, ROOT)
    # properties[a] has no type: not structural, so the unpruned default of b is not reported.
    assert [c.render() for c in causes] == [
        f"{P}.properties[a].type: Required value: must not be empty for specified object fields"
    ]


def test_crd_schema_reports_unpruned_defaults_and_root_nullable() -> None:
    schema = {**obj(b={**obj(c=STR), "default": {"d": 1}}), "nullable": True}
    assert [c.render() for c in validate_crd_schema(schema, ROOT)] == [
        f"{P}.nullable: Forbidden: nullable cannot be true at the root",
        f'{P}.properties[b].default: Invalid value: {{"d":1}}: must not have unknown fields',
    ]


def test_crd_schema_build_error_shows_only_alone() -> None:
    # Only the build notices $schema; the per-node rules do not check it.
    only_build = validate_crd_schema({"type": "object", "$schema": "x"}, ROOT)
    assert [c.render() for c in only_build] == [
        f"{P}: Invalid value: \"\": OpenAPIV3Schema 'schema' is not supported"
    ]
    # $ref is reported by the per-node rules, which hide the overlapping build error.
    with_other = validate_crd_schema({"type": "object", "$ref": "#/x"}, ROOT)
    assert [c.render() for c in with_other] == [f"{P}.$ref: Forbidden: $ref is not supported"]
