"""Panic recovery: an exception escaping a handler becomes a 500, never a crash.

Every request gets a request id, sent back in ``Audit-Id`` as the API server does (a client's
own ``Audit-Id`` header is kept, so a request can be followed through proxies); an exception
that escapes the filters and handlers below is logged with that id and answered as
kube-apiserver answers a panic, with ``http.Error``'s plain text (``This request caused
apiserver to panic. Look in the logs for details.``; the routes themselves answer an
unexpected error of theirs with a 500 ``Status``). A :class:`~kstore.errors.KStoreError`
that escapes is answered with its own ``Status`` and logged without a traceback. If the
response had already started, the exception is logged and the response is left to end where
it stopped: no second response is sent on the same request. The server keeps serving either
way.
"""

from __future__ import annotations

import logging
import uuid

from kstore.errors import KStoreError
from kstore.server.filters._asgi import (
    ASGIApp,
    Message,
    Receive,
    Scope,
    Send,
    send_plain_error,
    send_status,
)

__all__ = ["PANIC_MESSAGE", "REQUEST_ID_KEY", "PanicRecovery"]

#: What kube-apiserver's WithPanicRecovery answers a panic with.
PANIC_MESSAGE = "This request caused apiserver to panic. Look in the logs for details."

_log = logging.getLogger("kstore.server")

#: The key under which a request's id is kept in the ASGI scope, for the filters below.
REQUEST_ID_KEY = "kstore.request_id"


def _client_audit_id(scope: Scope) -> str:
    for key, value in scope.get("headers", ()):
        if key == b"audit-id":
            return bytes(value).decode("latin-1").strip()
    return ""


class PanicRecovery:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = _client_audit_id(scope) or str(uuid.uuid4())
        scope[REQUEST_ID_KEY] = request_id
        started = False

        async def send_with_id(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = list(message.get("headers", []))
                headers.append((b"audit-id", request_id.encode()))
                message["headers"] = headers
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except KStoreError as exc:
            # An error raised on purpose (a body over the limit read by a route that lets it
            # escape): answered with its own Status, no traceback needed.
            _log.info(
                "request %s: %s %s: %d %s",
                request_id,
                scope.get("method"),
                scope.get("path"),
                exc.code,
                exc.message,
            )
            if not started:
                await send_status(send_with_id, exc)
        except Exception as exc:
            _log.error(
                "request %s: %s %s failed",
                request_id,
                scope.get("method"),
                scope.get("path"),
                exc_info=exc,
            )
            if not started:
                await send_plain_error(send_with_id, 500, PANIC_MESSAGE)
