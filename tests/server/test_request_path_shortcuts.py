"""The resource endpoint's path and parse, taken without Starlette's URL and parsed once
per request, answer exactly as the full forms do."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.requests import Request

from kstore.errors import BadRequest, NotFound
from kstore.server.request_info import parse_path, parse_scope_path, url_path

_PATHS = [
    "/api/v1/namespaces/default/configmaps",
    "/api/v1/namespaces/default/configmaps/a",
    "/api/v1/namespaces/default/configmaps/a?b",
    "/api/v1/namespaces/default/configmaps/a#b",
    "/api/v1/namespaces/default/configmaps/a\\b",
    "/api/v1/namespaces/default/configmaps/a\tb",
    "/api/v1/namespaces/default/configmaps/a\r\nb",
    "/api/v1/namespaces/default/configmaps/a%b",
    "/api/v1/namespaces/default/configmaps/a\x00b",
    "/api/v1/namespaces/default/configmaps/\u00e9t\u00e9",
    "/api/v1/namespaces/default/configmaps/..",
    "/apis/apps/v1/namespaces/x/deployments/d/scale",
    "//api/v1/pods",
    "/api/v1/namespaces/default/configmaps/a?b#c\\d",
]


def _scope(path: str) -> dict[str, Any]:
    return {
        "type": "http",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode("utf-8", "surrogateescape"),
        "query_string": b"labelSelector=a%3Db",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1:8080")],
        "server": ("127.0.0.1", 8080),
    }


@pytest.mark.parametrize("path", _PATHS)
def test_url_path_is_starlettes_url_path(path: str) -> None:
    scope = _scope(path)
    assert url_path(scope) == Request(scope).url.path


@pytest.mark.parametrize("path", _PATHS)
def test_the_remembered_parse_is_the_parse(path: str) -> None:
    scope = _scope(path)
    try:
        want = parse_path(path)
    except (BadRequest, NotFound) as exc:
        for _ in range(2):
            with pytest.raises(type(exc)):
                parse_scope_path(scope, path)
        return
    assert parse_scope_path(scope, path) == want
    assert parse_scope_path(scope, path) == want


def test_another_path_in_the_same_scope_is_parsed_afresh() -> None:
    scope = _scope("/api/v1/namespaces/default/configmaps/a")
    first = parse_scope_path(scope, "/api/v1/namespaces/default/configmaps/a")
    second = parse_scope_path(scope, "/api/v1/namespaces/default/configmaps/a%3Fb")
    assert first is not None and first.name == "a"
    assert second is not None and second.name == "a%3Fb"
    assert parse_scope_path(scope, "/api") is None
