"""Building the structural tree, and the build errors Kubernetes' NewStructural reports.

The messages are convert.go's; the CRD validation reports them on the openAPIV3Schema path as
``Invalid value: "": <message>``.
"""

from __future__ import annotations

from typing import Any

import pytest

from kstore.api.structural import Structural, new_structural
from kstore.api.validation.field import Path

ROOT = Path("spec", "versions").index(0).child("schema", "openAPIV3Schema")


def test_tree_holds_structure_extensions_and_raw_validations() -> None:
    tree, causes = new_structural(
        {
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "x-kubernetes-validations": [{"rule": "self.a > 0"}],
                    "properties": {
                        "ports": {
                            "type": "array",
                            "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["name"],
                            "items": {"type": "object", "properties": {"name": {"type": "string"}}},
                        },
                        "size": {
                            "x-kubernetes-int-or-string": True,
                            "anyOf": [{"type": "integer"}, {"type": "string"}],
                            "pattern": "^[0-9]+$",
                            "default": 3,
                        },
                        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                    },
                }
            },
        },
        ROOT,
    )
    assert causes == []
    assert isinstance(tree, Structural)
    spec = tree.properties["spec"]
    assert spec.x_validations == ({"rule": "self.a > 0"},)
    ports = spec.properties["ports"]
    assert (ports.list_type, ports.list_map_keys) == ("map", ("name",))
    assert ports.items is not None and ports.items.properties["name"].type == "string"
    size = spec.properties["size"]
    assert size.int_or_string and size.default == 3 and size.has_default
    assert size.validations["pattern"] == "^[0-9]+$"
    assert size.validations["anyOf"] == [{"type": "integer"}, {"type": "string"}]
    labels = spec.properties["labels"]
    assert labels.additional_properties_schema is not None
    assert labels.additional_properties_schema.type == "string"
    assert spec.properties["free"].preserve_unknown_fields


def test_no_schema_builds_nothing() -> None:
    assert new_structural(None, ROOT) == (None, [])


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"id": "x"}, "OpenAPIV3Schema 'id' is not supported"),
        ({"$schema": "x"}, "OpenAPIV3Schema 'schema' is not supported"),
        ({"$ref": "#/x"}, "OpenAPIV3Schema '$ref' is not supported"),
        ({"patternProperties": {"a": {}}}, "OpenAPIV3Schema 'patternProperties' is not supported"),
        ({"dependencies": {"a": ["b"]}}, "OpenAPIV3Schema 'dependencies' is not supported"),
        ({"additionalItems": False}, "OpenAPIV3Schema 'additionalItems' is not supported"),
        ({"definitions": {"a": {}}}, "OpenAPIV3Schema 'definitions' is not supported"),
        (
            {"type": "array", "items": [{"type": "string"}]},
            "OpenAPIV3Schema 'items' must be a schema, but is an array",
        ),
        (
            {"properties": {"a": {"x-kubernetes-preserve-unknown-fields": False}}},
            "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined",
        ),
        (
            {"allOf": [{"properties": {"a": {"$ref": "#/x"}}}]},
            "OpenAPIV3Schema '$ref' is not supported",
        ),
    ],
)
def test_unsupported_schema_features_stop_the_build(schema: dict[str, Any], message: str) -> None:
    tree, causes = new_structural({"type": "object", **schema}, ROOT)
    assert tree is None
    assert [(c.type, c.field, c.message) for c in causes] == [
        ("FieldValueInvalid", str(ROOT), f'Invalid value: "": {message}')
    ]


def test_unsupported_fields_are_checked_before_value_validations() -> None:
    # NewStructural checks a node's own fields first, then its not/allOf/anyOf/oneOf clauses.
    _, causes = new_structural({"id": "x", "not": {"$ref": "#/x"}}, ROOT)
    assert causes[0].message == "Invalid value: \"\": OpenAPIV3Schema 'id' is not supported"
