"""JSON patch (RFC 6902): the RFC's own examples, the json-patch v4 behaviours Kubernetes keeps,
and Kubernetes' error mapping (422 with its generic message, 413 above 10000 operations)."""

from __future__ import annotations

from typing import Any

import pytest

from kstore.errors import BadRequest, Invalid, RequestEntityTooLarge
from kstore.registry.patch.json_patch import (
    GENERIC_INVALID,
    MAX_OPERATIONS,
    JsonPatchError,
    apply_json_patch,
    apply_operations,
)

# RFC 6902 Appendix A: (name, document, patch, expected result or None for an error).
RFC_EXAMPLES: list[tuple[str, Any, list[dict[str, Any]], Any]] = [
    (
        "A.1 adding an object member",
        {"foo": "bar"},
        [{"op": "add", "path": "/baz", "value": "qux"}],
        {"baz": "qux", "foo": "bar"},
    ),
    (
        "A.2 adding an array element",
        {"foo": ["bar", "baz"]},
        [{"op": "add", "path": "/foo/1", "value": "qux"}],
        {"foo": ["bar", "qux", "baz"]},
    ),
    (
        "A.3 removing an object member",
        {"baz": "qux", "foo": "bar"},
        [{"op": "remove", "path": "/baz"}],
        {"foo": "bar"},
    ),
    (
        "A.4 removing an array element",
        {"foo": ["bar", "qux", "baz"]},
        [{"op": "remove", "path": "/foo/1"}],
        {"foo": ["bar", "baz"]},
    ),
    (
        "A.5 replacing a value",
        {"baz": "qux", "foo": "bar"},
        [{"op": "replace", "path": "/baz", "value": "boo"}],
        {"baz": "boo", "foo": "bar"},
    ),
    (
        "A.6 moving a value",
        {"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}},
        [{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}],
        {"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}},
    ),
    (
        "A.7 moving an array element",
        {"foo": ["all", "grass", "cows", "eat"]},
        [{"op": "move", "from": "/foo/1", "path": "/foo/3"}],
        {"foo": ["all", "cows", "eat", "grass"]},
    ),
    (
        "A.8 testing a value: success",
        {"baz": "qux", "foo": ["a", 2, "c"]},
        [
            {"op": "test", "path": "/baz", "value": "qux"},
            {"op": "test", "path": "/foo/1", "value": 2},
        ],
        {"baz": "qux", "foo": ["a", 2, "c"]},
    ),
    (
        "A.9 testing a value: error",
        {"baz": "qux"},
        [{"op": "test", "path": "/baz", "value": "bar"}],
        None,
    ),
    (
        "A.10 adding a nested member object",
        {"foo": "bar"},
        [{"op": "add", "path": "/child", "value": {"grandchild": {}}}],
        {"foo": "bar", "child": {"grandchild": {}}},
    ),
    (
        "A.11 ignoring unrecognized elements",
        {"foo": "bar"},
        [{"op": "add", "path": "/baz", "value": "qux", "xyz": 123}],
        {"foo": "bar", "baz": "qux"},
    ),
    (
        "A.12 adding to a nonexistent target",
        {"foo": "bar"},
        [{"op": "add", "path": "/baz/bat", "value": "qux"}],
        None,
    ),
    (
        "A.14 ~ escape ordering",
        {"/": 9, "~1": 10},
        [{"op": "test", "path": "/~01", "value": 10}],
        {"/": 9, "~1": 10},
    ),
    (
        "A.15 comparing strings and numbers",
        {"/": 9, "~1": 10},
        [{"op": "test", "path": "/~01", "value": "10"}],
        None,
    ),
    (
        "A.16 adding an array value",
        {"foo": ["bar"]},
        [{"op": "add", "path": "/foo/-", "value": ["abc", "def"]}],
        {"foo": ["bar", ["abc", "def"]]},
    ),
]


@pytest.mark.parametrize(
    ("doc", "patch", "expected"),
    [case[1:] for case in RFC_EXAMPLES],
    ids=[case[0] for case in RFC_EXAMPLES],
)
def test_rfc6902_appendix_a(doc: Any, patch: list[dict[str, Any]], expected: Any) -> None:
    if expected is None:
        with pytest.raises(JsonPatchError):
            apply_operations(doc, patch)
    else:
        assert apply_operations(doc, patch) == expected


def test_the_document_is_never_modified() -> None:
    doc = {"a": {"b": [1, 2]}}
    apply_operations(doc, [{"op": "add", "path": "/a/b/0", "value": 0}])
    apply_operations(doc, [{"op": "remove", "path": "/a/b"}])
    assert doc == {"a": {"b": [1, 2]}}


@pytest.mark.parametrize(
    ("doc", "ops", "expected"),
    [
        # json-patch v4 (what Kubernetes uses) adds a missing member on replace.
        ({"a": 1}, [{"op": "replace", "path": "/b", "value": 2}], {"a": 1, "b": 2}),
        # Negative indexes count from the end.
        ({"l": [1, 2, 3]}, [{"op": "remove", "path": "/l/-1"}], {"l": [1, 2]}),
        # For add, -1 counts from the end of the grown array: the new last element.
        ({"l": [1, 2]}, [{"op": "add", "path": "/l/-1", "value": 9}], {"l": [1, 2, 9]}),
        # A null or absent member passes a test of null.
        ({"a": None}, [{"op": "test", "path": "/b", "value": None}], {"a": None}),
        ({"a": None}, [{"op": "test", "path": "/a"}], {"a": None}),
        # Copying an absent member copies null.
        ({"a": 1}, [{"op": "copy", "from": "/x", "path": "/y"}], {"a": 1, "y": None}),
        # Copies are independent of their source.
        (
            {"a": {"b": 1}},
            [
                {"op": "copy", "from": "/a", "path": "/c"},
                {"op": "replace", "path": "/c/b", "value": 2},
            ],
            {"a": {"b": 1}, "c": {"b": 2}},
        ),
        # "" replaces the whole document.
        ({"a": 1}, [{"op": "replace", "path": "", "value": {"b": 2}}], {"b": 2}),
    ],
)
def test_json_patch_v4_behaviours(doc: Any, ops: list[dict[str, Any]], expected: Any) -> None:
    assert apply_operations(doc, ops) == expected


@pytest.mark.parametrize(
    ("doc", "ops", "message"),
    [
        (
            {"a": 1},
            [{"op": "remove", "path": "/b"}],
            "error in remove for path: '/b': Unable to remove nonexistent key: b: missing value",
        ),
        (
            {"a": 1},
            [{"op": "add", "path": "/x/y", "value": 1}],
            'add operation does not apply: doc is missing path: "/x/y": missing value',
        ),
        (
            {"l": [1]},
            [{"op": "add", "path": "/l/5", "value": 1}],
            "error in add for path: '/l/5': Unable to access invalid index: 5: "
            "invalid index referenced",
        ),
        (
            {"l": [1]},
            [{"op": "replace", "path": "/l/3", "value": 1}],
            "replace operation does not apply: doc is missing key: /l/3: missing value",
        ),
        (
            {"a": 1},
            [{"op": "test", "path": "/a", "value": 1.0}],
            "testing value /a failed: test failed",
        ),
        ({"a": 1}, [{"op": "frob", "path": "/a"}], "Unexpected kind: frob"),
        ({"a": 1}, [{"path": "/a"}], "Unexpected kind: unknown"),
        (
            {"a": 1},
            [{"op": "move", "from": "/nope", "path": "/b"}],
            "error in move for path: 'nope': Unable to remove nonexistent key: nope: missing value",
        ),
    ],
)
def test_failures_carry_json_patch_messages(
    doc: Any, ops: list[dict[str, Any]], message: str
) -> None:
    with pytest.raises(JsonPatchError) as info:
        apply_operations(doc, ops)
    assert str(info.value) == message


def test_a_failed_operation_is_a_422_with_kubernetes_generic_message() -> None:
    with pytest.raises(Invalid) as info:
        apply_json_patch({"a": 1}, [{"op": "test", "path": "/a", "value": 2}])
    assert info.value.message == GENERIC_INVALID
    assert isinstance(info.value.__cause__, JsonPatchError)


def test_more_than_ten_thousand_operations_is_too_large() -> None:
    ops = [{"op": "test", "path": "/a", "value": 1}] * (MAX_OPERATIONS + 1)
    with pytest.raises(RequestEntityTooLarge) as info:
        apply_json_patch({"a": 1}, ops)
    assert info.value.message == (
        "Request entity too large: The allowed maximum operations in a JSON patch is 10000, "
        "got 10001"
    )
    assert apply_json_patch({"a": 1}, ops[:MAX_OPERATIONS]) == {"a": 1}


@pytest.mark.parametrize("patch", [{"op": "add"}, "x", [1]])
def test_a_patch_that_is_not_a_list_of_operations_is_a_bad_request(patch: Any) -> None:
    with pytest.raises(BadRequest):
        apply_json_patch({"a": 1}, patch)
