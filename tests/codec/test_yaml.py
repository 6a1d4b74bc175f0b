"""The YAML serializer: JSON-shaped results, duplicates, and hostile documents."""

from __future__ import annotations

import pytest

from kstore.codec.yaml import YamlSerializer, load_yaml
from kstore.errors import BadRequest

YAML = YamlSerializer()


def test_timestamps_stay_strings_and_keys_become_strings() -> None:
    obj = YAML.decode(b"a: 2008-01-01T01:01:01Z\n1: x\ntrue: y\nb: [1, 1.5, null, yes, '2']\n")
    assert obj == {
        "a": "2008-01-01T01:01:01Z",
        "1": "x",
        "true": "y",
        "b": [1, 1.5, None, True, "2"],
    }


def test_duplicates_are_reported_with_their_path() -> None:
    result = load_yaml(b"a: 1\nm:\n  b: 1\n  b: 2\nl:\n- c: 1\n  c: 2\na: 2\n")
    assert result.problems == [
        'duplicate field "m.b"',
        'duplicate field "l[0].c"',
        'duplicate field "a"',
    ]
    assert result.obj["a"] == 2


def test_aliases_are_copies() -> None:
    obj = YAML.decode(b"a: &x {b: [1]}\nc: *x\n")
    assert obj["a"] == obj["c"]
    assert obj["a"] is not obj["c"]


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (b"a: .nan", "not a valid JSON number"),
        (b"a: .inf", "not a valid JSON number"),
        (b"a: 99999999999999999999", "int64"),
        (b"a: !!binary aGk=", "no JSON equivalent"),
        (b"a: !!set {x}", "no JSON equivalent"),
        (b"- 1\n- 2\n", "must be a YAML mapping"),
        (b"a: 1\n---\nb: 2\n", "single document"),
        (b"a: [", "invalid YAML"),
        (b"a: *nope", "invalid YAML"),
        (b"\xff\xfe\x00", "invalid YAML"),
        (b"[" * 5000 + b"]" * 5000, "nested deeper"),
        (b"{? [a]: 1}", "invalid YAML"),
    ],
)
def test_bad_input_is_a_bad_request(body: bytes, fragment: str) -> None:
    with pytest.raises(BadRequest) as info:
        YAML.decode(body)
    assert fragment in info.value.message


def test_billion_laughs_is_refused() -> None:
    lines = [b"a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        refs = b", ".join([b"*a%d" % (i - 1)] * 10)
        lines.append(b"a%d: &a%d [%s]" % (i, i, refs))
    with pytest.raises(BadRequest, match="expands to more than"):
        YAML.decode(b"\n".join(lines))


def test_encode_round_trips() -> None:
    obj = {"kind": "ConfigMap", "apiVersion": "v1", "data": {"k": "2008-01-01", "n": "1"}}
    assert YAML.decode(YAML.encode(obj)) == obj
