"""A handler's :class:`~kstore.server.handlers.scope.Call` for tests that run write handlers
directly, without a route: a POST of a ConfigMap in ``default``."""

from __future__ import annotations

from kstore.server.handlers.scope import Call
from kstore.server.request_info import RequestInfo

__all__ = ["post_call"]


def post_call(query: dict[str, str], name: str = "cm") -> Call:
    info = RequestInfo("", "v1", "default", "configmaps", name, "", False)
    return Call(
        method="POST",
        info=info,
        query=query,
        dry_run=[],
        accept=None,
        content_type=None,
        body=b"",
        user_agent="",
    )
