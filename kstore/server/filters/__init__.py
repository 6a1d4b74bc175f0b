"""The API server's filter chain: what every request passes before a handler sees it.

Each filter is a plain ASGI middleware in its own module; :func:`filter_middleware` lists them
in kube-apiserver's order (outermost first): panic recovery, audit, the timeout for
non-long-running requests, CORS, authentication, the in-flight limits, authorization, then the
request body limit. They are installed inside Starlette's own error middleware, so an
exception a handler lets escape reaches :mod:`.recovery` first.

Authentication (:mod:`.authentication`: static token file, anonymous) and authorization
(:mod:`.authorization`: AlwaysAllow, AlwaysDeny, RBAC over :mod:`.rbac` with the watch-fed
:mod:`.policy_cache` and the :mod:`.bootstrap_policy`) are built by :mod:`kstore.server.app`,
which owns the registry they read.
"""

from __future__ import annotations

from kstore.server.filters.audit import AuditLog
from kstore.server.filters.chain import FilterConfig, filter_middleware

__all__ = ["AuditLog", "FilterConfig", "filter_middleware"]
