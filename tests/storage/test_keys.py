"""Key validation as Kubernetes' PrepareKey (RunTestKeySchema) and names derived from keys."""

from __future__ import annotations

import pytest

from kstore.errors import BadRequest
from kstore.storage.keys import (
    name_of_key,
    prepare_key,
    qualified_resource,
    resource_prefix_with_slash,
)

PREFIX = "/pods/"


@pytest.mark.parametrize("key", ["/pods/", "/pods/name", "/pods/namespace", "/pods/namespace/name"])
def test_keys_under_the_prefix_are_valid(key: str) -> None:
    assert prepare_key(key, PREFIX, recursive=False) == key


def test_recursive_keys_get_a_trailing_slash() -> None:
    assert prepare_key("/pods", PREFIX, recursive=True) == "/pods/"
    assert prepare_key("/pods/ns", PREFIX, recursive=True) == "/pods/ns/"
    assert prepare_key("/pods/ns/", PREFIX, recursive=True) == "/pods/ns/"


@pytest.mark.parametrize("key", ["/pods", "/pods.apps", "/foo/", "/podsx/a"])
def test_keys_outside_the_prefix_are_rejected(key: str) -> None:
    with pytest.raises(BadRequest, match="lacks resource prefix"):
        prepare_key(key, PREFIX, recursive=False)


def test_lacking_prefix_message_is_kubernetes_wording() -> None:
    with pytest.raises(BadRequest) as caught:
        prepare_key("/foo/", PREFIX, recursive=False)
    assert caught.value.message == 'invalid key: "/foo/" lacks resource prefix: "/pods/"'


@pytest.mark.parametrize("key", ["", "/"])
def test_empty_keys_are_rejected(key: str) -> None:
    with pytest.raises(BadRequest) as caught:
        prepare_key(key, PREFIX, recursive=True)
    assert caught.value.message == f'empty key: "{key}"'


@pytest.mark.parametrize(
    "key",
    [".", "..", "./pods", "../pods", "/pods/.", "/pods/..", "/pods/./a", "/pods/../a"],
)
def test_traversal_segments_are_rejected(key: str) -> None:
    with pytest.raises(BadRequest) as caught:
        prepare_key(key, PREFIX, recursive=False)
    assert caught.value.message == f'invalid key: "{key}"'


def test_resource_prefix_rules() -> None:
    assert resource_prefix_with_slash("/pods") == "/pods/"
    assert resource_prefix_with_slash("/pods/") == "/pods/"
    for bad in ("", "/", "pods"):
        with pytest.raises(BadRequest):
            resource_prefix_with_slash(bad)


def test_qualified_resource_and_names() -> None:
    assert qualified_resource("/pods") == "pods"
    assert qualified_resource("/example.com/widgets") == "widgets.example.com"
    assert name_of_key("/pods/ns/name") == "name"
    assert name_of_key("/pods/name") == "name"
