"""Embedded resources in objects: Kubernetes v1.36's objectmeta.Validate and Coerce.

Messages are objectmeta/validation.go's and apimachinery's ObjectMeta validation (quoted in
the tests); paths follow field.Path (a map key as ``[key]``).
"""

from __future__ import annotations

from typing import Any

from kstore.api.structural import (
    build_structural,
    coerce_embedded,
    prune,
    validate_embedded_object_meta,
)
from kstore.api.validation.field import Path

EMBEDDED = {
    "type": "object",
    "x-kubernetes-embedded-resource": True,
    "x-kubernetes-preserve-unknown-fields": True,
}
TREE = build_structural(
    {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "template": EMBEDDED,
                    "byName": {"type": "object", "additionalProperties": EMBEDDED},
                    "list": {"type": "array", "items": EMBEDDED},
                },
            }
        },
    }
)


def errors(obj: Any) -> list[str]:
    return [c.render() for c in validate_embedded_object_meta(obj, TREE, None, True)]


def resource(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "e.com/v1", "kind": "E", "metadata": {"name": "e"}, "spec": spec}


def test_valid_embedded_resources_pass() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "b"}}}
    assert errors(resource(template=pod, byName={"x": pod}, list=[pod])) == []


def test_type_meta_is_required_and_checked() -> None:
    got = errors(
        resource(
            template={"metadata": {}},
            byName={"k": {"apiVersion": "a/b/c", "kind": "my_Kind"}},
            list=[{"apiVersion": "", "kind": ""}, {"apiVersion": 1, "kind": True}],
        )
    )
    assert got == [
        "spec.template.apiVersion: Required value",
        "spec.template.kind: Required value",
        'spec.byName[k].apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
        'spec.byName[k].kind: Invalid value: "my_Kind": may have mixed case, but should otherwise '
        "match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
        "with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  "
        "or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
        'spec.list[0].apiVersion: Invalid value: "": must not be empty',
        'spec.list[0].kind: Invalid value: "": must not be empty',
        "spec.list[1].apiVersion: Invalid value: 1: must be a string",
        "spec.list[1].kind: Invalid value: true: must be a string",
    ]


def test_embedded_metadata_is_validated_like_object_meta() -> None:
    meta = {"name": "a/b", "namespace": "Bad_NS", "labels": {"k": "x y"}, "generation": -1}
    got = errors(resource(template={"apiVersion": "v1", "kind": "Pod", "metadata": meta}))
    assert got == [
        "spec.template.metadata.name: Invalid value: \"a/b\": may not contain '/'",
        'spec.template.metadata.namespace: Invalid value: "Bad_NS": a lowercase RFC 1123 label '
        "must consist of lower case alphanumeric characters or '-', and must start and end with "
        "an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        "spec.template.metadata.generation: Invalid value: -1: must be greater than or equal to 0",
        'spec.template.metadata.labels: Invalid value: "x y": a valid label must be an empty '
        "string or consist of alphanumeric characters, '-', '_' or '.', and must start and end "
        "with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
        "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    ]


def test_embedded_metadata_without_name_is_validated_with_a_stand_in() -> None:
    assert errors(resource(template={"apiVersion": "v1", "kind": "Pod", "metadata": {}})) == []


def test_coerce_reports_only_the_first_type_problem() -> None:
    obj = resource(template={"apiVersion": 1, "kind": 2, "metadata": "x"})
    cause = coerce_embedded(obj, TREE, None, True)
    assert cause is not None
    assert cause.render() == "spec.template.apiVersion: Invalid value: 1: must be a string"
    bad_meta = resource(list=[{"apiVersion": "v1", "kind": "Pod", "metadata": "x"}])
    cause = coerce_embedded(bad_meta, TREE, Path("body"), True)
    assert cause is not None
    assert cause.render() == (
        'body.spec.list[0].metadata: Invalid value: "x": json: cannot unmarshal string into Go '
        "value of type v1.ObjectMeta"
    )


def test_unknown_embedded_metadata_fields_are_pruned_with_field_path_keys() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "bogus": 1}, "x": 1}
    obj = resource(byName={"web": pod})
    assert prune(obj, TREE) == ["spec.byName[web].metadata.bogus"]
    assert obj["spec"]["byName"]["web"] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "x": 1,
    }
