"""The Starlette application of ``kstore serve``: routes, error pages and lifecycle hooks.

:func:`build_app` wires a :class:`~kstore.registry.interface.Registry` into an ASGI app. The
app holds no global state: everything lives in its :class:`~kstore.server.state.ServerState`
(``app.state.kstore``), so tests and embedders can run several apps in one process. Unknown
paths answer with a ``Status`` like every other error; every request passes the filter
chain of :mod:`kstore.server.filters` (panic recovery, in-flight limits, request timeout).
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response

from kstore.errors import NotFound
from kstore.registry.interface import Registry
from kstore.server.filters import AuditLog, FilterConfig, filter_middleware
from kstore.server.handlers.scope import error_reply
from kstore.server.metrics import FigureSource, Metrics
from kstore.server.routes import build_routes
from kstore.server.state import ServerState

__all__ = ["build_app", "server_state"]


def _status_response(error: Exception) -> Response:
    reply = error_reply(error)
    return Response(reply.body, status_code=reply.status, media_type=reply.content_type)


async def _not_found(request: Request, exc: Exception) -> Response:
    return _status_response(NotFound("the server could not find the requested resource"))


def build_app(
    registry: Registry,
    *,
    figure_sources: tuple[FigureSource, ...] = (),
    filters: FilterConfig | None = None,
    audit_log: AuditLog | None = None,
) -> Starlette:
    """An ASGI app serving ``registry``'s resources with Kubernetes' REST API, behind the
    filter chain ``filters`` configures (kube-apiserver's defaults when None), auditing every
    request to ``audit_log`` when one is given (the caller closes it)."""
    state = ServerState(registry=registry, metrics=Metrics(figure_sources))
    app = Starlette(
        routes=build_routes(state),
        middleware=filter_middleware(filters or FilterConfig(), audit_log),
        exception_handlers={404: _not_found, 405: _not_found},
    )
    app.state.kstore = state
    return app


def server_state(app: Starlette) -> ServerState:
    """The state of an app made by :func:`build_app`."""
    state = app.state.kstore
    assert isinstance(state, ServerState)
    return state
