"""Review bodies on the protobuf wire read into their JSON shape (kstore.server._review_wire).

The bytes are built here field by field with the numbers of k8s.io/api's authorization/v1 and
authentication/v1 messages, the way Go writes them (every string, empty ones included); the
first case is byte for byte what kubectl 1.37 sent for ``auth can-i update configmaps/cm1
-n team-a --subresource status``.
"""

from __future__ import annotations

import pytest

from kstore.errors import BadRequest
from kstore.server._review_wire import decode_review_protobuf


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _bytes(number: int, value: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(value)) + value


def _str(number: int, value: str) -> bytes:
    return _bytes(number, value.encode())


def _envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    type_meta = _str(1, api_version) + _str(2, kind)
    return b"k8s\x00" + _bytes(1, type_meta) + _bytes(2, raw) + _str(3, "") + _str(4, "")


# ObjectMeta as Go writes an empty one: strings 1-6, generation 7, creationTimestamp 8.
_EMPTY_META = (
    b"".join(_str(n, "") for n in range(1, 7)) + _varint(7 << 3) + b"\x00" + _bytes(8, b"")
)


def test_kubectl_self_subject_access_review_is_read() -> None:
    attributes = (
        _str(1, "team-a")
        + _str(2, "update")
        + _str(3, "")
        + _str(4, "")
        + _str(5, "configmaps")
        + _str(6, "status")
        + _str(7, "cm1")
    )
    status = _varint(1 << 3) + b"\x00" + _str(2, "") + _str(3, "") + _varint(4 << 3) + b"\x00"
    raw = _bytes(1, _EMPTY_META) + _bytes(2, _bytes(1, attributes)) + _bytes(3, status)
    body = decode_review_protobuf(
        _envelope("authorization.k8s.io/v1", "SelfSubjectAccessReview", raw),
        "SelfSubjectAccessReview",
    )
    assert body == {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "metadata": {},
        "spec": {
            "resourceAttributes": {
                "namespace": "team-a",
                "verb": "update",
                "resource": "configmaps",
                "subresource": "status",
                "name": "cm1",
            }
        },
    }


def test_subject_access_review_spec_keeps_the_subject() -> None:
    extra = _str(1, "scopes") + _bytes(2, _str(1, "a") + _str(1, "b"))
    spec = (
        _bytes(2, _str(1, "/metrics") + _str(2, "get"))
        + _str(3, "alice")
        + _str(4, "dev")
        + _str(4, "qa")
        + _bytes(5, extra)
        + _str(6, "uid-1")
    )
    raw = _bytes(1, _EMPTY_META) + _bytes(2, spec)
    body = decode_review_protobuf(
        _envelope("authorization.k8s.io/v1", "SubjectAccessReview", raw), "SubjectAccessReview"
    )
    assert body["spec"] == {
        "nonResourceAttributes": {"path": "/metrics", "verb": "get"},
        "user": "alice",
        "groups": ["dev", "qa"],
        "extra": {"scopes": ["a", "b"]},
        "uid": "uid-1",
    }


def test_metadata_fields_that_make_a_review_invalid_are_kept() -> None:
    meta = _str(1, "mine") + _str(3, "team-a") + _bytes(11, _str(1, "k") + _str(2, "v"))
    raw = _bytes(1, meta) + _bytes(2, _bytes(1, b""))
    body = decode_review_protobuf(
        _envelope("authorization.k8s.io/v1", "LocalSubjectAccessReview", raw),
        "LocalSubjectAccessReview",
    )
    assert body["metadata"] == {"name": "mine", "namespace": "team-a", "labels": {"k": "v"}}
    assert body["spec"] == {"resourceAttributes": {}}


def test_rules_review_namespace_is_read() -> None:
    raw = _bytes(1, _EMPTY_META) + _bytes(2, _str(1, "team-a"))
    body = decode_review_protobuf(
        _envelope("authorization.k8s.io/v1", "SelfSubjectRulesReview", raw),
        "SelfSubjectRulesReview",
    )
    assert body["spec"] == {"namespace": "team-a"}


@pytest.mark.parametrize(
    "data",
    [
        b'{"kind": "SelfSubjectReview"}',
        b"k8s\x00" + _varint(2 << 3 | 2) + _varint(50) + b"short",
        b"k8s\x00" + _varint(1 << 3 | 3),
        b"k8s\x00" + b"\xff" * 11,
    ],
)
def test_malformed_bytes_are_a_bad_request(data: bytes) -> None:
    with pytest.raises(BadRequest):
        decode_review_protobuf(data, "SelfSubjectReview")


def test_a_string_that_is_not_utf8_is_a_bad_request() -> None:
    raw = _bytes(2, _bytes(1, _bytes(1, b"\xff\xfe")))
    with pytest.raises(BadRequest, match="UTF-8"):
        decode_review_protobuf(
            _envelope("authorization.k8s.io/v1", "SelfSubjectAccessReview", raw),
            "SelfSubjectAccessReview",
        )
