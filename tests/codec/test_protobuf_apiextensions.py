"""apiextensions.k8s.io/v1 CustomResourceDefinition on Kubernetes' protobuf wire: the generic
converters for the CRD's own messages, kstore.codec._pb_json_schema for its JSONSchemaProps.

The wire facts are those of apiextensions-apiserver's generated.pb.go (gogo): non-pointer
strings and booleans always written, pointers only when set, fields in number order, map
entries by sorted key; and its marshal.go for the JSON forms of JSON, JSONSchemaPropsOrBool,
-OrArray and -OrStringArray."""

from __future__ import annotations

import struct
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from kstore.codec._pb_json_schema import dec_json_schema_props, enc_json_schema_props
from kstore.codec.protobuf import ProtobufSerializer
from kstore.errors import BadRequest
from tests.strategies import object_of

PB = ProtobufSerializer()

#: JSONSchemaProps{Type: "object"} as gogo writes it: every non-pointer string and bool.
_OBJECT_BODY = (
    b"\x0a\x00"  # 1 id
    b"\x12\x00"  # 2 $schema
    b"\x22\x00"  # 4 description
    b"\x2a\x06object"  # 5 type
    b"\x32\x00"  # 6 format
    b"\x3a\x00"  # 7 title
    b"\x50\x00"  # 10 exclusiveMaximum
    b"\x60\x00"  # 12 exclusiveMinimum
    b"\x7a\x00"  # 15 pattern
    b"\x90\x01\x00"  # 18 uniqueItems
    b"\xa8\x02\x00"  # 37 nullable
    b"\xb8\x02\x00"  # 39 x-kubernetes-embedded-resource
    b"\xc0\x02\x00"  # 40 x-kubernetes-int-or-string
)


def _crd(schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.org"},
        "spec": {
            "group": "example.org",
            "names": {"plural": "widgets", "kind": "Widget"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                }
            ],
        },
    }


def _schema_back(schema: dict[str, Any]) -> Any:
    back = PB.decode(PB.encode(_crd(schema)))
    return back["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def test_a_minimal_schema_writes_every_non_pointer_field() -> None:
    assert enc_json_schema_props({"type": "object"}) == bytes([len(_OBJECT_BODY)]) + _OBJECT_BODY
    assert dec_json_schema_props(_OBJECT_BODY, 0, len(_OBJECT_BODY)) == {"type": "object"}


def test_json_names_raw_json_and_pointers_round_trip() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "$ref": "#/definitions/x",
        "description": "a widget",
        "type": "object",
        "default": {"size": 3, "tags": ["a"]},
        "example": "text",
        "maxProperties": 4,
        "minProperties": 0,
        "required": ["spec"],
        "x-kubernetes-preserve-unknown-fields": False,
        "x-kubernetes-embedded-resource": True,
        "x-kubernetes-map-type": "atomic",
        "x-kubernetes-validations": [
            {"rule": "self.size > 0", "reason": "FieldValueInvalid"},
            {"rule": "", "message": "m", "optionalOldSelf": True},
        ],
        "externalDocs": {"url": "https://example.org/docs"},
    }
    assert _schema_back(schema) == schema


def test_doubles_print_as_go_prints_them() -> None:
    body = enc_json_schema_props({"type": "number", "maximum": 3, "minimum": -1.5})
    assert b"\x49" + struct.pack("<d", 3.0) in body
    back = _schema_back({"type": "number", "maximum": 3, "minimum": -1.5, "multipleOf": 0.25})
    assert back == {"type": "number", "maximum": 3, "minimum": -1.5, "multipleOf": 0.25}
    assert isinstance(back["maximum"], int)


def test_schema_or_bool_array_and_string_array_keep_their_json_form() -> None:
    schema = {
        "type": "object",
        "properties": {
            "closed": {"type": "object", "additionalProperties": False},
            "open": {"type": "object", "additionalProperties": True},
            "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
            "tuple": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]},
            "list": {"type": "array", "items": {"type": "string"}, "additionalItems": False},
        },
        "dependencies": {"a": ["b", "c"], "d": {"required": ["e"]}},
        "anyOf": [{"required": ["a"]}, {"not": {"required": ["b"]}}],
    }
    assert _schema_back(schema) == schema


def test_enum_keeps_nulls_and_any_json_value() -> None:
    schema = {"enum": ["a", 1, None, {"k": [True]}]}
    assert _schema_back(schema) == schema


def test_zero_values_are_left_out_as_omitempty_does() -> None:
    schema = {"type": "string", "description": "", "nullable": False, "required": []}
    assert _schema_back(schema) == {"type": "string"}


def test_map_entries_are_written_by_sorted_key() -> None:
    first = enc_json_schema_props({"properties": {"b": {}, "a": {}}})
    second = enc_json_schema_props({"properties": {"a": {}, "b": {}}})
    assert first == second
    assert first.index(b"\x0a\x01a") < first.index(b"\x0a\x01b")


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"type": 1}, 'field "type": expected a string, got int'),
        ({"maximum": "1"}, 'field "maximum": expected a number, got str'),
        ({"properties": []}, 'field "properties": expected an object, got list'),
    ],
)
def test_values_of_the_wrong_type_are_bad_requests(schema: dict[str, Any], message: str) -> None:
    with pytest.raises(BadRequest) as caught:
        PB.encode(_crd(schema))
    assert message in str(caught.value)


def test_the_crd_messages_follow_go() -> None:
    crd = _crd({"type": "object"})
    crd["spec"]["conversion"] = {
        "strategy": "Webhook",
        "webhook": {
            "conversionReviewVersions": ["v1"],
            "clientConfig": {
                "service": {"namespace": "system", "name": "conv", "port": 443},
                "caBundle": "Y2E=",
            },
        },
    }
    crd["status"] = {"acceptedNames": {"plural": "", "kind": ""}, "storedVersions": ["v1"]}
    back = PB.decode(PB.encode(crd))
    assert back["spec"]["conversion"] == crd["spec"]["conversion"]
    # CustomResourceDefinitionStatus: conditions and storedVersions have no omitempty.
    assert back["status"] == {
        "conditions": None,
        "acceptedNames": {"plural": "", "kind": ""},
        "storedVersions": ["v1"],
    }
    assert PB.encode(back) == PB.encode(crd)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(obj=object_of("apiextensions.k8s.io", "CustomResourceDefinition", "v1"))
def test_generated_crds_encode_stably(obj: dict[str, Any]) -> None:
    obj = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", **obj}
    data = PB.encode(obj)
    back = PB.decode(data)
    assert PB.encode(back) == data
    assert PB.decode(PB.encode(back)) == back
