"""The versioning codec and request decoding with fieldValidation."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from kstore.api.kinds import builtin_scheme_builder
from kstore.api.schema import ANY, SCALAR, FieldSchema
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo
from kstore.codec.json import JsonSerializer
from kstore.codec.strict import FieldValidation, unknown_fields
from kstore.codec.versioning import VersioningCodec, decode_request
from kstore.codec.yaml import YamlSerializer
from kstore.errors import BadRequest

META = FieldSchema.object(
    {"name": SCALAR, "namespace": SCALAR, "labels": FieldSchema.map_of(SCALAR)}
)
GADGET_SCHEMA = FieldSchema.object(
    {
        "apiVersion": SCALAR,
        "kind": SCALAR,
        "metadata": META,
        "spec": FieldSchema.object(
            {
                "count": SCALAR,
                "parts": FieldSchema.list_of(FieldSchema.object({"name": SCALAR})),
                "byName": FieldSchema.map_of(FieldSchema.object({"size": SCALAR})),
                "raw": ANY,
            }
        ),
    }
)


def _default(obj: dict[str, Any]) -> None:
    obj.setdefault("spec", {}).setdefault("count", 1)


def _v1_to_hub(obj: dict[str, Any]) -> dict[str, Any]:
    spec = dict(obj.get("spec", {}))
    spec["count"] = spec.pop("number", 0)
    return {**obj, "spec": spec}


def _hub_to_v1(obj: dict[str, Any]) -> dict[str, Any]:
    spec = dict(obj.get("spec", {}))
    spec["number"] = spec.pop("count", 0)
    return {**obj, "spec": spec}


GADGET = KindDefinition(
    group="example.com",
    kind="Gadget",
    versions=(
        KindVersion(version="v2", default=_default, schema=GADGET_SCHEMA),
        KindVersion(version="v1", to_hub=_v1_to_hub, from_hub=_hub_to_v1),
    ),
    storage_version="v2",
    resource=ResourceInfo(plural="gadgets", singular="gadget", namespaced=True),
)
SCHEME = builtin_scheme_builder().add(GADGET).build()


def _gadget(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v2",
        "kind": "Gadget",
        "metadata": {"name": "g"},
        "spec": spec,
    }


def test_storage_codec_writes_the_storage_version_and_reads_any() -> None:
    codec = VersioningCodec(SCHEME, JsonSerializer())
    hub = SCHEME.to_hub({**_gadget(), "apiVersion": "example.com/v1", "spec": {"number": 4}})
    stored = orjson.loads(codec.encode(hub))
    assert stored["apiVersion"] == "example.com/v2"
    assert stored["spec"] == {"count": 4}
    assert codec.decode(codec.encode(hub)) == hub
    yaml_bytes = YamlSerializer().encode({**_gadget(), "apiVersion": "example.com/v1"})
    assert codec.decode(yaml_bytes)["spec"] == {"count": 0}


def test_decode_applies_defaults_only_when_asked() -> None:
    data = orjson.dumps(_gadget())
    assert VersioningCodec(SCHEME, JsonSerializer()).decode(data)["spec"] == {"count": 1}
    plain = VersioningCodec(SCHEME, JsonSerializer(), default=False).decode(data)
    assert plain["spec"] == {}


def test_unknown_fields_are_found_by_path_and_pruned() -> None:
    obj = _gadget(count=1, extra=1, parts=[{"name": "a", "bad": 1}], byName={"k": {"x": 1}})
    obj["metadata"]["oops"] = True
    obj["raw"] = 1
    found = unknown_fields(obj, GADGET_SCHEMA, prune=True)
    assert sorted(found) == sorted(
        ["raw", "metadata.oops", "spec.extra", "spec.parts[0].bad", "spec.byName[k].x"]
    )
    assert "raw" not in obj
    assert obj["spec"] == {"count": 1, "parts": [{"name": "a"}], "byName": {"k": {}}}


def test_any_fields_keep_whatever_they_hold() -> None:
    obj = _gadget(raw={"anything": [1, {"goes": True}]})
    assert unknown_fields(obj, GADGET_SCHEMA, prune=True) == []


BODY = (
    b'{"apiVersion":"example.com/v2","kind":"Gadget","metadata":{"name":"g","name":"h"},'
    b'"spec":{"count":2,"bogus":1}}'
)


def test_strict_field_validation_fails_with_every_problem() -> None:
    with pytest.raises(BadRequest) as info:
        decode_request(SCHEME, BODY, JsonSerializer(), field_validation=FieldValidation.STRICT)
    assert info.value.message == (
        'Gadget in version "v2" cannot be handled as a Gadget: strict decoding error: '
        'duplicate field "metadata.name", unknown field "spec.bogus"'
    )


def test_warn_field_validation_returns_warnings_and_drops_unknown_fields() -> None:
    result = decode_request(SCHEME, BODY, JsonSerializer(), field_validation=FieldValidation.WARN)
    assert result.warnings == ['duplicate field "metadata.name"', 'unknown field "spec.bogus"']
    assert result.hub["spec"] == {"count": 2}
    assert result.hub["metadata"]["name"] == "h"
    assert result.hub["apiVersion"] == "example.com/__internal"


def test_ignore_field_validation_drops_silently() -> None:
    result = decode_request(SCHEME, BODY, JsonSerializer(), field_validation=FieldValidation.IGNORE)
    assert result.warnings == []
    assert result.hub["spec"] == {"count": 2}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", FieldValidation.WARN),
        ("Strict", FieldValidation.STRICT),
        ("Ignore", FieldValidation.IGNORE),
    ],
)
def test_field_validation_parses_like_the_api_server(value: str, expected: FieldValidation) -> None:
    assert FieldValidation.parse(value) is expected


def test_field_validation_rejects_unknown_values() -> None:
    with pytest.raises(BadRequest):
        FieldValidation.parse("strict")


def test_builtin_kinds_report_unknown_fields_from_their_protobuf_schema() -> None:
    from kstore.api.kinds import builtin_scheme

    body = (
        b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","bogus":1},'
        b'"spec":{"containers":[{"name":"c","image":"i","invalidPart":1}],'
        b'"nodeSelector":{"any-key":"kept"}}}'
    )
    with pytest.raises(BadRequest) as info:
        decode_request(
            builtin_scheme(), body, JsonSerializer(), field_validation=FieldValidation.STRICT
        )
    assert info.value.message == (
        'Pod in version "v1" cannot be handled as a Pod: strict decoding error: '
        'unknown field "metadata.bogus", unknown field "spec.containers[0].invalidPart"'
    )
    result = decode_request(builtin_scheme(), body, JsonSerializer())
    assert result.hub["spec"]["nodeSelector"] == {"any-key": "kept"}
    assert "invalidPart" not in result.hub["spec"]["containers"][0]


def test_storage_codec_gives_equal_bytes_for_equal_objects_in_any_key_order() -> None:
    from kstore.api.kinds import builtin_scheme
    from kstore.codec.versioning import storage_codec

    codec = storage_codec(builtin_scheme())
    one = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "n"}}
    one["data"] = {"x": "1", "y": "2"}
    two = {"data": {"y": "2", "x": "1"}, "metadata": {"namespace": "n", "name": "a"}}
    two.update(kind="ConfigMap", apiVersion="v1")
    assert one == two
    assert codec.encode(one) == codec.encode(two)


@pytest.mark.parametrize("validation", list(FieldValidation))
def test_a_value_of_the_wrong_type_fails_whatever_the_validation(
    validation: FieldValidation,
) -> None:
    body = orjson.dumps(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "d"},
            "spec": {"replicas": "3"},
        }
    )
    with pytest.raises(BadRequest) as raised:
        decode_request(SCHEME, body, JsonSerializer(), field_validation=validation)
    assert raised.value.message == (
        'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal '
        "string into Go struct field DeploymentSpec.spec.replicas of type int32"
    )
