"""Invalid UTF-8 and lone surrogates in a JSON body decode as Go's decoder decodes them.

Kubernetes' JSON decoder never refuses a body for its encoding: each byte of an invalid UTF-8
sequence and each lone surrogate escape becomes U+FFFD, and validation then judges the name or
key that holds it (422), so the same must hold for kstore's decoder, in strict mode too.
"""

from __future__ import annotations

import pytest

from kstore.codec.json import JsonSerializer
from kstore.errors import BadRequest

JSON = JsonSerializer()


@pytest.mark.parametrize(
    ("body", "name"),
    [
        (b'{"metadata":{"name":"a\xff\xfeb"}}', "a\ufffd\ufffdb"),
        (b'{"metadata":{"name":"a\xc0\xafb"}}', "a\ufffd\ufffdb"),
        (b'{"metadata":{"name":"a\xe2\x82b"}}', "a\ufffd\ufffdb"),
        (b'{"metadata":{"name":"a\\ud800b"}}', "a\ufffdb"),
        (b'{"metadata":{"name":"\\udfff\xff"}}', "\ufffd\ufffd"),
        (b'{"metadata":{"name":"\\ud83d\\ude00\xff"}}', "\U0001f600\ufffd"),
    ],
)
def test_invalid_text_becomes_replacement_characters(body: bytes, name: str) -> None:
    assert JSON.decode(body)["metadata"]["name"] == name
    result = JSON.decode_strict(body)
    assert result.obj["metadata"]["name"] == name
    assert result.problems == []


def test_keys_are_replaced_and_repeats_still_reported() -> None:
    result = JSON.decode_strict(b'{"data":{"\xff":"1","\xff":"2","\\udfff":"3"}}')
    assert result.obj == {"data": {"\ufffd": "3"}}
    assert result.problems == ['duplicate field "data.\ufffd"']


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (b'{"a":"\xff", "b": NaN}', "NaN"),
        (b'{"a":"\xff", "b": 9223372036854775808}', "int64"),
        (b'{"a":"\xff"', "invalid JSON"),
        (b'["\xff"]', "must be a JSON object"),
        (b'{"a":"\xff","b":' + b"[" * 10_000 + b"]" * 10_000 + b"}", "nested deeper"),
        # Far past the limit: refused before the stdlib parser's C recursion could overflow.
        (b'{"a":"\xff","b":' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested deeper"),
    ],
)
def test_replaced_text_keeps_every_other_limit(body: bytes, fragment: str) -> None:
    with pytest.raises(BadRequest) as info:
        JSON.decode(body)
    assert fragment in info.value.message
