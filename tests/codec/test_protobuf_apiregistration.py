"""APIService on the wire, as Go writes it: the nil ``spec.service`` of a local APIService
(absent in protobuf, ``null`` in JSON), the always-written bool and priorities, an empty
status; and the same bytes read back."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from kstore.api.pb import apiregistration_v1_pb2, runtime_pb2
from kstore.codec.json import JsonSerializer
from kstore.codec.protobuf import PROTOBUF_MAGIC, ProtobufSerializer
from tests.codec._pb_paths import converter_path

pytestmark = pytest.mark.usefixtures(converter_path.__name__)
PB = ProtobufSerializer()
JSON = JsonSerializer()


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _len_field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _int_field(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _local(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": "v1.example.com", "creationTimestamp": None},
        "spec": {
            "service": None,
            "group": "example.com",
            "version": "v1",
            "groupPriorityMinimum": 100,
            "versionPriority": 15,
            **spec,
        },
        "status": {},
    }


def _raw(data: bytes) -> bytes:
    return runtime_pb2.Unknown.FromString(data[len(PROTOBUF_MAGIC) :]).raw


def test_a_local_api_service_leaves_the_service_out_and_writes_the_zero_values() -> None:
    raw = _raw(PB.encode(_local()))
    spec = (
        _len_field(2, b"example.com")
        + _len_field(3, b"v1")
        + _int_field(4, 0)
        + _int_field(7, 100)
        + _int_field(8, 15)
    )
    assert _len_field(2, spec) + _len_field(3, b"") in raw
    assert raw.endswith(_len_field(3, b""))
    parsed = apiregistration_v1_pb2.APIService.FromString(raw)
    assert not parsed.spec.HasField("service")
    assert PB.decode(PB.encode(_local())) == _local()


def test_json_writes_a_nil_service_as_null_in_go_field_order() -> None:
    text = JSON.encode(PB.decode(PB.encode(_local())))
    body = orjson.loads(text)
    assert list(body["spec"]) == [
        "service",
        "group",
        "version",
        "groupPriorityMinimum",
        "versionPriority",
    ]
    assert body["spec"]["service"] is None
    assert body["status"] == {}


def test_a_service_reference_and_ca_bundle_round_trip() -> None:
    obj = _local(
        service={"namespace": "kube-system", "name": "metrics-server", "port": 443},
        caBundle="Y2E=",
    )
    raw = _raw(PB.encode(obj))
    reference = (
        _len_field(1, b"kube-system") + _len_field(2, b"metrics-server") + _int_field(3, 443)
    )
    assert _len_field(1, reference) in raw
    assert _len_field(5, b"ca") in raw
    assert PB.decode(PB.encode(obj)) == obj
