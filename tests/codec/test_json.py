"""The JSON serializer: round trips and the input limits."""

from __future__ import annotations

import pytest

from kstore.codec.json import MAX_DEPTH, JsonSerializer
from kstore.errors import BadRequest

JSON = JsonSerializer()


def test_decode_then_encode_reproduces_the_document() -> None:
    data = b'{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","labels":{"z":"1","a":"2"}}}'
    assert JSON.encode(JSON.decode(data)) == data


def test_encode_is_deterministic_and_does_not_mutate() -> None:
    obj = {"kind": "ConfigMap", "apiVersion": "v1", "data": {"b": "1", "a": "2"}}
    before = repr(obj)
    assert JSON.encode(obj) == JSON.encode(obj)
    assert repr(obj) == before


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (b'{"a": NaN}', "NaN"),
        (b'{"a": Infinity}', "invalid JSON"),
        (b'{"a": 1e400}', "Infinity"),
        # Invalid UTF-8 inside a string becomes U+FFFD (as in Go); outside one it is no JSON.
        (b'{"a": 1}\xff', "invalid JSON"),
        (b'{"a": 9223372036854775808}', "int64"),
        (b'{"a": -9223372036854775809}', "int64"),
        (b'{"a": 123456789012345678901234567890}', "int64"),
        (b"[]", "must be a JSON object"),
        (b'"text"', "must be a JSON object"),
        (b"null", "must be a JSON object"),
        (b"", "invalid JSON"),
        (b'{"a": 1', "invalid JSON"),
        (b"[" * 1100 + b"]" * 1100, "must be a JSON object"),
        (b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1), "nested deeper"),
        (b'{"a":' * (MAX_DEPTH + 1) + b"1" + b"}" * (MAX_DEPTH + 1), "nested deeper"),
    ],
)
def test_bad_input_is_a_bad_request(body: bytes, fragment: str) -> None:
    with pytest.raises(BadRequest) as info:
        JSON.decode(body)
    assert fragment in info.value.message


def test_int64_bounds_are_accepted() -> None:
    obj = JSON.decode(b'{"a": 9223372036854775807, "b": -9223372036854775808}')
    assert obj == {"a": 2**63 - 1, "b": -(2**63)}


def test_nesting_at_the_limit_is_accepted() -> None:
    body = b'{"a":' * (MAX_DEPTH - 1) + b"{}" + b"}" * (MAX_DEPTH - 1)
    JSON.decode(body)


def test_strict_decode_reports_duplicate_fields_by_path() -> None:
    body = (
        b'{"kind":"Pod","metadata":{"name":"a","name":"b"},'
        b'"spec":{"c":[{"x":1,"x":2}]},"kind":"Pod"}'
    )
    result = JSON.decode_strict(body)
    assert result.problems == [
        'duplicate field "kind"',
        'duplicate field "metadata.name"',
        'duplicate field "spec.c[0].x"',
    ]
    assert result.obj["metadata"]["name"] == "b"


def test_strict_decode_without_duplicates_reports_nothing() -> None:
    assert JSON.decode_strict(b'{"a": {"b": [1, {"c": 2}]}}').problems == []
