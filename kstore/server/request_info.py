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
returns ``None`` for them and the discovery routes answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from kstore.errors import BadRequest

__all__ = ["RequestInfo", "parse_path", "query_bool", "verb_for"]

_NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})


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

    Raises BadRequest for empty segments inside a resource path (``//``) and for more
    segments than a resource path can have.
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
    if len(rest) > 3 or any(not p for p in rest):
        raise BadRequest(f"the server could not parse the request path {path}")
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    return RequestInfo(group, version, namespace, resource, name, subresource, watch_prefix)


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
