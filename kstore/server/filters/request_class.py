"""Which requests the limits apply to: long-running ones and mutating ones.

As kube-apiserver's ``BasicLongRunningRequestCheck``: a watch (the ``watch`` verb, from
``?watch=`` or the ``/watch/`` path prefix) and the streaming subresources (``proxy``,
``attach``, ``exec``, ``log``, ``portforward``) are long-running, so neither the in-flight
limits nor the request timeout apply to them. Mutating means the HTTP methods that write.
"""

from __future__ import annotations

from urllib.parse import parse_qsl

from kstore.errors import KStoreError
from kstore.server.filters._asgi import Scope
from kstore.server.request_info import parse_scope_path, query_bool, verb_for

__all__ = ["is_long_running", "is_mutating"]

_LONG_RUNNING_SUBRESOURCES = frozenset({"proxy", "attach", "exec", "log", "portforward"})
_MUTATING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# Where the answer is kept in the request's scope: several filters ask for every request.
_LONG_RUNNING_KEY = "kstore.long_running"


def is_mutating(scope: Scope) -> bool:
    return str(scope.get("method", "GET")) in _MUTATING


def is_long_running(scope: Scope) -> bool:
    """True for watches and streaming subresources; False for every other request (a path
    that does not parse is not long-running: its handler answers it with an error quickly)."""
    known: bool | None = scope.get(_LONG_RUNNING_KEY)
    if known is None:
        known = scope[_LONG_RUNNING_KEY] = _long_running(scope)
    return known


def _long_running(scope: Scope) -> bool:
    try:
        info = parse_scope_path(scope, str(scope.get("path", "")))
    except KStoreError:
        return False
    if info is None:
        return False
    if info.subresource in _LONG_RUNNING_SUBRESOURCES:
        return True
    watch = False
    for key, value in parse_qsl(scope.get("query_string", b"").decode("latin-1"), True):
        if key == "watch":
            watch = query_bool(value)
    return verb_for(str(scope.get("method", "GET")), info, watch) == "watch"
