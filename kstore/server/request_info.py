"""What a request path names: Kubernetes' ``RequestInfo`` for ``/api`` and ``/apis`` paths.

A resource path is ``/api/<version>/...`` (the core group) or ``/apis/<group>/<version>/...``,
then optionally ``watch/`` (the deprecated watch prefix), ``namespaces/<ns>/``, the resource,
a name and a subresource. The verb comes from the HTTP method, whether a name is present and the
``watch`` query parameter, as in k8s.io/apiserver's ``RequestInfoFactory``:

- ``GET`` with a name is ``get``; without, ``list`` (``watch`` when ``?watch=`` is true or the
  path has the ``watch/`` prefix); ``POST`` is ``create``; ``PUT`` ``update``; ``PATCH``
  ``patch``; ``DELETE`` with a name ``delete``, without ``deletecollection``.
- ``/api/v1/namespaces/<ns>`` is the namespace ``<ns>`` itself; its ``status`` and ``finalize``
  are subresources of it, every other word after the namespace name starts a resource path.

Paths that are shorter (``/api``, ``/apis/apps``...) are discovery paths: :func:`parse_path`
returns ``None`` for them and the discovery routes answer. Paths no route of the API server
matches (more segments than resource/name/subresource, ``namespaces`` inside a namespace) are
404 NotFound, as go-restful answers them.

:func:`path_segment_problems` is apimachinery's ``IsValidPathSegmentName``: what the store's key
function refuses in a name (``Name parameter invalid: "a%b": may not contain '%'``).
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any

from kstore.errors import BadRequest, NotFound

__all__ = [
    "RequestInfo",
    "parse_path",
    "parse_scope_path",
    "path_segment_problems",
    "query_bool",
    "url_path",
    "verb_for",
]

_NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})
_NOT_FOUND = "the server could not find the requested resource"
_NAME_MAY_NOT_BE = (".", "..")
_NAME_MAY_NOT_CONTAIN = ("/", "%")


@dataclass(frozen=True, slots=True)
class RequestInfo:
    """A parsed resource path. ``namespace`` is "" for cluster-wide paths; ``watch_prefix`` is
    True for the deprecated ``/watch/`` form."""

    group: str
    version: str
    namespace: str
    resource: str
    name: str
    subresource: str
    watch_prefix: bool


def query_bool(value: str) -> bool:
    """A boolean query parameter as the API server converts it
    (``Convert_Slice_string_To_bool``): only ``false`` and ``0`` (any case) are false; any
    other value, the empty one included, is true. So ``watch=True`` (the Python client 31.x)
    and ``watch=1`` are watches."""
    return value.lower() not in ("false", "0")


def parse_path(path: str) -> RequestInfo | None:
    """The resource a path names, or None for a discovery path (no resource part).

    Raises BadRequest for empty segments inside a resource path (``//``), NotFound for more
    segments than a resource path can have and for ``namespaces`` below a namespace of the core
    group (no route serves either).
    """
    parts = path.strip("/").split("/")
    if parts[0] == "api":
        if len(parts) < 3:
            return None
        group, version, rest = "", parts[1], parts[2:]
    elif parts[0] == "apis":
        if len(parts) < 4:
            return None
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    watch_prefix = False
    if rest[0] == "watch":
        watch_prefix = True
        rest = rest[1:]
        if not rest:
            return None
    namespace = ""
    if rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
            if not group and rest[0] == "namespaces":
                # Namespaces are cluster-scoped: /namespaces/<ns>/namespaces has no route.
                raise NotFound(_NOT_FOUND)
    if any(not p for p in rest):
        raise BadRequest(f"the server could not parse the request path {path}")
    if len(rest) > 3:
        raise NotFound(_NOT_FOUND)
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    return RequestInfo(group, version, namespace, resource, name, subresource, watch_prefix)


#: Where :func:`parse_scope_path` keeps its last answer in a request's ASGI scope: the filters
#: and the resource endpoint each ask for every request.
_PARSED_KEY = "kstore.parsed_path"
#: What Starlette's URL escapes in a path it rebuilds, and what ``urlsplit`` then removes.
_URL_ESCAPES = (("?", "%3F"), ("#", "%23"), ("\\", "%5C"))
_URL_REMOVED = ("\t", "\r", "\n")


def parse_scope_path(scope: MutableMapping[str, Any], path: str) -> RequestInfo | None:
    """:func:`parse_path` of ``path``, remembered in the request's scope for the next caller
    that parses the same path (errors are raised again by parsing again)."""
    cached = scope.get(_PARSED_KEY)
    if cached is not None and cached[0] == path:
        info: RequestInfo | None = cached[1]
        return info
    info = parse_path(path)
    scope[_PARSED_KEY] = (path, info)
    return info


def url_path(scope: MutableMapping[str, Any]) -> str:
    """The path as Starlette's ``request.url.path`` gives it (``?``, ``#`` and ``\\`` escaped,
    tabs and line breaks removed, as ``urlsplit`` does), without building the whole URL."""
    path = str(scope["path"])
    for char, escaped in _URL_ESCAPES:
        if char in path:
            path = path.replace(char, escaped)
    for char in _URL_REMOVED:
        if char in path:
            path = path.replace(char, "")
    return path


def path_segment_problems(name: str) -> list[str]:
    """Why ``name`` cannot be one segment of a storage key (apimachinery's
    ``IsValidPathSegmentName``); empty when it can. NUL and other bytes are allowed."""
    if name in _NAME_MAY_NOT_BE:
        return [f"may not be '{name}'"]
    return [f"may not contain '{c}'" for c in _NAME_MAY_NOT_CONTAIN if c in name]


def verb_for(method: str, info: RequestInfo, watch_param: bool) -> str:
    """The Kubernetes verb of a request on a resource path."""
    if method in ("GET", "HEAD"):
        if info.watch_prefix:
            return "watch"
        if info.name:
            return "get"
        return "watch" if watch_param else "list"
    if method == "POST":
        return "create"
    if method == "PUT":
        return "update"
    if method == "PATCH":
        return "patch"
    if method == "DELETE":
        return "delete" if info.name else "deletecollection"
    return method.lower()
