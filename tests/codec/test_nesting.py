"""Deep JSON: Go's 10,000-level limit for bodies, any depth for what was stored, orjson's
format from the deep encoder, and no crash of the interpreter at those depths."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import Any

import orjson
import pytest

from kstore.codec.json import MAX_DEPTH, JsonSerializer, dumps, loads
from kstore.codec.nesting import dumps_deep, loads_deep, nesting_depth
from kstore.errors import BadRequest


def _deep(levels: int, leaf: Any = None) -> dict[str, Any]:
    """A dict ``levels`` deep (itself counted), each level also holding a shallow sibling."""
    value: dict[str, Any] = {} if leaf is None else {"leaf": leaf}
    for i in range(levels - 1):
        value = {"z": [i, {"k": "v"}], "a": value}
    return value


@pytest.mark.parametrize(
    ("data", "depth"),
    [
        (b"1", 0),
        (b"{}", 1),
        (b'{"a":[{"b":[]}]}', 4),
        (b'{"a":"{{[[","b":"\\"{"}', 1),
        (b"[" * 50 + b"]" * 50, 50),
    ],
)
def test_nesting_depth_counts_brackets_outside_strings(data: bytes, depth: int) -> None:
    assert nesting_depth(data) == depth


@pytest.mark.parametrize("indent", [False, True])
@pytest.mark.parametrize("sort_keys", [False, True])
def test_the_deep_encoder_writes_what_orjson_writes(indent: bool, sort_keys: bool) -> None:
    option = (orjson.OPT_INDENT_2 if indent else 0) | (orjson.OPT_SORT_KEYS if sort_keys else 0)
    for value in ({"b": [1, {"x": []}, {}], "a": {"c": {"d": 'q"}é'}}}, _deep(100, "x")):
        assert dumps_deep(value, indent=indent, sort_keys=sort_keys) == orjson.dumps(
            value, option=option
        )


@pytest.mark.parametrize("indent", [False, True])
def test_deeper_than_orjson_round_trips(indent: bool) -> None:
    value = _deep(2000, 1.5)
    option = orjson.OPT_INDENT_2 if indent else 0
    encoded = dumps(value, option)
    assert loads(encoded) == value
    assert loads_deep(encoded) == value
    assert nesting_depth(encoded) == 2001  # the last sibling's map, under its list


def test_the_deep_encoder_refuses_what_is_not_json() -> None:
    with pytest.raises(TypeError):
        dumps(_deep(300, float("nan")))
    with pytest.raises(TypeError):
        dumps(_deep(300, "\ud800"))


def test_a_body_at_go_s_limit_decodes_and_one_level_more_is_a_bad_request() -> None:
    body = b'{"a":' * (MAX_DEPTH - 1) + b"{}" + b"}" * (MAX_DEPTH - 1)
    obj = JsonSerializer().decode_strict(body).obj
    assert JsonSerializer().encode(obj) == body
    deeper = b'{"a":' * MAX_DEPTH + b"{}" + b"}" * MAX_DEPTH
    with pytest.raises(BadRequest, match="nested deeper than the limit of 10000 levels"):
        JsonSerializer().decode(deeper)
    # What the server stored itself is read at any depth.
    assert JsonSerializer(max_depth=None).decode(deeper)["a"]["a"] is not None


def test_deep_integers_keep_the_int64_check() -> None:
    body = b'{"a":' * 2000 + b"9223372036854775808" + b"}" * 2000
    with pytest.raises(BadRequest, match="int64"):
        JsonSerializer().decode(body)


def test_walking_a_10000_level_object_does_not_crash_the_interpreter() -> None:
    # The main thread (8 MiB stack) and a worker thread (started after the import raised the
    # stack size) each parse, compare, copy and encode the object.
    script = textwrap.dedent(
        """
        import copy, threading
        from kstore.codec.json import JsonSerializer, MAX_DEPTH

        body = b'{"a":' * (MAX_DEPTH - 1) + b'{}' + b'}' * (MAX_DEPTH - 1)

        def walk():
            codec = JsonSerializer(canonical=True)
            obj = codec.decode_strict(body).obj
            twin = copy.deepcopy(obj)
            assert twin == obj
            assert codec.encode(twin) == body

        walk()
        worker = threading.Thread(target=walk)
        worker.start()
        worker.join()
        print("ok")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"
