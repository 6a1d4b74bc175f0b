"""Values of the wrong JSON type fail the decode with Go's message, in the unknown-field walk.

Kubernetes decodes a body into typed structs, so ``"replicas": "3"`` or a Secret value that is
not base64 is a 400 before validation, whatever ``fieldValidation`` says, with the message of
Go's ``encoding/json`` (struct name, the field path of names only, the Go type).
"""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from bench.objects import realistic_pod
from kstore.api.gvk import GroupVersionKind
from kstore.api.kinds import builtin_scheme
from kstore.api.proto_schema import message_for_gvk, schema_for_gvk
from kstore.codec.json import JsonSerializer
from kstore.codec.strict import FieldValidation, check_fields, unknown_fields
from kstore.errors import BadRequest
from kstore.server.decoding import decode_body

POD = GroupVersionKind("", "v1", "Pod")
DEPLOYMENT = GroupVersionKind("apps", "v1", "Deployment")
CONFIGMAP = GroupVersionKind("", "v1", "ConfigMap")
SECRET = GroupVersionKind("", "v1", "Secret")


def _check(gvk: GroupVersionKind, obj: dict[str, Any]) -> str | None:
    schema = schema_for_gvk(gvk)
    assert schema is not None
    return check_fields(obj, schema, prune=True, message=message_for_gvk(gvk)).type_error


def _deployment(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "d"}, "spec": {"selector": {}, **spec}}


@pytest.mark.parametrize(
    ("gvk", "obj", "message"),
    [
        (
            DEPLOYMENT,
            _deployment(replicas=1.5),
            "json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas"
            " of type int32",
        ),
        (
            DEPLOYMENT,
            _deployment(replicas="3"),
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas"
            " of type int32",
        ),
        (
            DEPLOYMENT,
            _deployment(replicas=True),
            "json: cannot unmarshal bool into Go struct field DeploymentSpec.spec.replicas"
            " of type int32",
        ),
        (
            DEPLOYMENT,
            _deployment(replicas=2**31),
            "json: cannot unmarshal number 2147483648 into Go struct field"
            " DeploymentSpec.spec.replicas of type int32",
        ),
        (
            DEPLOYMENT,
            _deployment(paused="yes"),
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.paused"
            " of type bool",
        ),
        (
            CONFIGMAP,
            {"metadata": {"name": 5}},
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name"
            " of type string",
        ),
        (
            CONFIGMAP,
            {"metadata": []},
            "json: cannot unmarshal array into Go struct field ConfigMap.metadata"
            " of type v1.ObjectMeta",
        ),
        (
            CONFIGMAP,
            {"metadata": {"labels": ["a"]}},
            "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels"
            " of type map[string]string",
        ),
        (
            CONFIGMAP,
            {"data": {"k": {}}},
            "json: cannot unmarshal object into Go struct field ConfigMap.data of type string",
        ),
        (
            CONFIGMAP,
            {"metadata": {"finalizers": ["a", 1]}},
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.finalizers"
            " of type string",
        ),
        (CONFIGMAP, {"binaryData": {"k": "!!!"}}, "illegal base64 data at input byte 0"),
        (SECRET, {"data": {"k": "YWJj%"}}, "illegal base64 data at input byte 4"),
        (
            POD,
            {"spec": {"containers": [{"name": "c"}, "x"]}},
            "json: cannot unmarshal string into Go struct field PodSpec.spec.containers"
            " of type v1.Container",
        ),
        (
            POD,
            {"spec": {"containers": [{"name": "c", "ports": [{"containerPort": "80"}]}]}},
            "json: cannot unmarshal string into Go struct field"
            " ContainerPort.spec.containers.ports.containerPort of type int32",
        ),
    ],
)
def test_a_value_of_the_wrong_type_gets_gos_message(
    gvk: GroupVersionKind, obj: dict[str, Any], message: str
) -> None:
    assert _check(gvk, obj) == message


@pytest.mark.parametrize(
    ("gvk", "obj"),
    [
        (DEPLOYMENT, _deployment(replicas=None, paused=None)),
        (DEPLOYMENT, _deployment(replicas=-(2**31))),
        (CONFIGMAP, {"data": {"k": None}, "metadata": {"labels": None}}),
        (SECRET, {"data": {"k": "YWJj", "l": "YW\nJj", "m": ""}}),
        # IntOrString, Quantity and Time are not judged by their JSON type.
        (POD, {"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": 1}}}]}}),
        (POD, {"metadata": {"creationTimestamp": None}}),
    ],
)
def test_values_go_accepts_pass(gvk: GroupVersionKind, obj: dict[str, Any]) -> None:
    assert _check(gvk, obj) is None


def test_a_realistic_pod_passes_and_its_unknown_fields_are_still_found() -> None:
    pod = realistic_pod()
    assert _check(POD, copy.deepcopy(pod)) is None
    pod["spec"]["containers"][0]["bogus"] = 1
    pod["metadata"]["other"] = {"x": 1}
    schema = schema_for_gvk(POD)
    assert schema is not None
    expected = unknown_fields(copy.deepcopy(pod), schema, prune=False)
    checked = check_fields(pod, schema, prune=True, message=message_for_gvk(POD))
    assert checked.unknown == expected == ["metadata.other", "spec.containers[0].bogus"]
    assert checked.type_error is None
    assert "bogus" not in pod["spec"]["containers"][0]


def test_unknown_fields_alone_does_not_judge_types() -> None:
    schema = schema_for_gvk(DEPLOYMENT)
    assert schema is not None
    message_for_gvk(DEPLOYMENT)
    assert unknown_fields(_deployment(replicas="3"), schema, prune=False) == []


@pytest.mark.parametrize("validation", list(FieldValidation))
def test_the_request_decode_answers_400_whatever_field_validation_says(
    validation: FieldValidation,
) -> None:
    body = orjson.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": 5}})
    with pytest.raises(BadRequest) as info:
        decode_body(builtin_scheme(), body, JsonSerializer(), CONFIGMAP, validation)
    assert info.value.message == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal '
        "number into Go struct field ObjectMeta.metadata.name of type string"
    )


def test_a_type_error_wins_over_strict_errors() -> None:
    body = b'{"kind":"ConfigMap","metadata":{"name":"a","name":"b"},"data":[],"x":1}'
    with pytest.raises(BadRequest) as info:
        decode_body(builtin_scheme(), body, JsonSerializer(), CONFIGMAP, FieldValidation.STRICT)
    assert "strict decoding error" not in info.value.message
    assert "cannot unmarshal array into Go struct field ConfigMap.data" in info.value.message
