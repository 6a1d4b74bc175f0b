"""Duplicate keys: the cheap pre-check never hides one the full parse finds.

Strict JSON decoding decides from a count whether any object repeats a key and parses the
document again only when it may (:mod:`kstore.codec.json`). The property here: for JSON texts
written every way JSON allows (whitespace anywhere, characters as escapes or literally,
strings starting with colons, escaped quotes and backslashes, repeated keys at any depth),
``decode_strict`` reports exactly what the full pair-by-pair parse reports.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.objects import realistic_pod
from kstore.codec.json import JsonSerializer, _duplicate_fields, _may_repeat_keys

JSON = JsonSerializer()

_WHITESPACE = st.sampled_from(["", "", "", " ", "\n", "\t", "\r\n  ", "  "])
_CHARS = st.sampled_from(["a", "b", " ", ":", '"', "\\", "/", "é", "\n", "{", ",", "\u2028"])
_SHORT = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\n": "\\n"}


@st.composite
def _string(draw: st.DrawFn) -> str:
    """A JSON string literal, each character written literally or as an escape."""
    chars = draw(st.lists(_CHARS, max_size=5))
    out = []
    for ch in chars:
        style = draw(st.integers(0, 2))
        if ch in ('"', "\\", "\n") and style == 0:
            style = 1  # these must be escaped
        if style == 0:
            out.append(ch)
        elif style == 1 and ch in _SHORT:
            out.append(_SHORT[ch])
        else:
            out.append(f"\\u{ord(ch):04{draw(st.sampled_from(['x', 'X']))}}")
    return '"' + "".join(out) + '"'


_KEYS = st.one_of(st.sampled_from(['"a"', '"b"', '"\\u0061"', '":"', '" :"']), _string())


def _json(max_leaves: int) -> st.SearchStrategy[str]:
    scalar = st.one_of(st.sampled_from(["1", "-2.5", "true", "null", '"x"']), _string())

    def containers(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        pair = st.tuples(_WHITESPACE, _KEYS, _WHITESPACE, _WHITESPACE, children)
        objects = st.lists(pair, max_size=4).map(
            lambda pairs: "{" + ",".join(f"{w1}{k}{w2}:{w3}{v}" for w1, k, w2, w3, v in pairs) + "}"
        )
        arrays = st.lists(children, max_size=3).map(lambda items: "[" + ",".join(items) + "]")
        return st.one_of(objects, arrays)

    inner = st.recursive(scalar, containers, max_leaves=max_leaves)
    pairs = st.lists(st.tuples(_KEYS, _WHITESPACE, inner), max_size=5)
    return pairs.map(lambda ps: "{" + ",".join(f"{k}{w}:{w}{v}" for k, w, v in ps) + "}")


@settings(max_examples=200, deadline=None)
@given(_json(12))
def test_strict_decode_reports_every_duplicate_the_full_parse_finds(text: str) -> None:
    data = text.encode()
    assert JSON.decode_strict(data).problems == _duplicate_fields(data)


@settings(max_examples=100, deadline=None)
@given(_json(12))
def test_pre_check_passes_a_document_only_without_repeats(text: str) -> None:
    data = text.encode()
    if not _may_repeat_keys(data, orjson.loads(data)):
        assert _duplicate_fields(data) == []


def test_a_pod_without_repeats_takes_the_fast_path() -> None:
    for data in (orjson.dumps(realistic_pod()), json.dumps(realistic_pod(), indent=2).encode()):
        assert not _may_repeat_keys(data, orjson.loads(data))
        assert JSON.decode_strict(data).problems == []


def test_a_repeat_deep_in_a_pod_is_found() -> None:
    pod: dict[str, Any] = realistic_pod()
    data = orjson.dumps(pod).replace(b'"image":', b'"image":"x","image":', 1)
    assert _may_repeat_keys(data, orjson.loads(data))
    problems = JSON.decode_strict(data).problems
    assert len(problems) == 1
    assert problems[0].startswith('duplicate field "spec.')
    assert problems[0].endswith('.image"')


def test_a_repeat_hidden_by_an_escaped_colon_is_still_found() -> None:
    # The repeated key's value is dropped; a kept string starting with an escaped colon would
    # balance the count if escapes were not sent to the full parse.
    data = b'{"a":1,"a":2,"b":"\\u003ax"}'
    assert JSON.decode_strict(data).problems == ['duplicate field "a"']
