"""The Starlette application of ``kstore serve``: routes, error pages and lifecycle hooks.

:func:`build_app` wires a :class:`~kstore.registry.interface.Registry` into an ASGI app. The
app holds no global state: everything lives in its :class:`~kstore.server.state.ServerState`
(``app.state.kstore``), so tests and embedders can run several apps in one process. Unknown
paths, and errors escaping a route, answer with a ``Status`` like every other error.
"""

from __future__ import annotations

import logging

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response

from kstore.errors import InternalError, NotFound
from kstore.registry.interface import Registry
from kstore.server.handlers.scope import error_reply
from kstore.server.metrics import FigureSource, Metrics
from kstore.server.routes import build_routes
from kstore.server.state import ServerState

__all__ = ["build_app", "server_state"]

_log = logging.getLogger("kstore.server")


def _status_response(error: Exception) -> Response:
    reply = error_reply(error)
    return Response(reply.body, status_code=reply.status, media_type=reply.content_type)


async def _not_found(request: Request, exc: Exception) -> Response:
    return _status_response(NotFound("the server could not find the requested resource"))


async def _internal(request: Request, exc: Exception) -> Response:
    _log.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return _status_response(InternalError(f"Internal error occurred: {exc}"))


def build_app(
    registry: Registry,
    *,
    figure_sources: tuple[FigureSource, ...] = (),
) -> Starlette:
    """An ASGI app serving ``registry``'s resources with Kubernetes' REST API."""
    state = ServerState(registry=registry, metrics=Metrics(figure_sources))
    app = Starlette(
        routes=build_routes(state),
        exception_handlers={404: _not_found, 405: _not_found, Exception: _internal},
    )
    app.state.kstore = state
    return app


def server_state(app: Starlette) -> ServerState:
    """The state of an app made by :func:`build_app`."""
    state = app.state.kstore
    assert isinstance(state, ServerState)
    return state
