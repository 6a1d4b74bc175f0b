"""``--request-timeout``: a non-long-running request that takes longer is answered with 504.

As kube-apiserver's ``WithTimeoutForNonLongRunningRequests``: the handler runs on its own
task; if it has not finished when the time is up, the client gets a 504 ``Status`` ("Timeout:
request did not complete within the allotted timeout") at once, and whatever the handler
sends later is dropped. The handler is not interrupted: work it handed to a worker thread
cannot be stopped, so it runs to its end (a write may still commit, as in Kubernetes, where
the storage call carries on under its own 34 s cap); its outcome is only logged. If the
response had already started when the time ran out, it is cut off there and the connection
closed (the client sees a truncated response, never a second one). Watches and other
long-running requests have no timeout here. A timeout of 0 turns the filter off.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from kstore.errors import Timeout
from kstore.server.filters._asgi import ASGIApp, Message, Receive, Scope, Send, send_status
from kstore.server.filters.recovery import REQUEST_ID_KEY
from kstore.server.filters.request_class import is_long_running

__all__ = ["TIMEOUT_MESSAGE", "RequestTimeout"]

_log = logging.getLogger("kstore.server")

TIMEOUT_MESSAGE = "request did not complete within the allotted timeout"


class RequestTimeout:
    def __init__(self, app: ASGIApp, *, timeout_seconds: float) -> None:
        if timeout_seconds < 0:
            raise ValueError("the request timeout must not be negative")
        self.app = app
        self.timeout_seconds = timeout_seconds
        # Handlers still running after their request timed out: held so they are not
        # garbage-collected mid-flight, dropped when they end.
        self._abandoned: set[asyncio.Task[None]] = set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.timeout_seconds == 0 or is_long_running(scope):
            await self.app(scope, receive, send)
            return
        timed_out = False
        started = False

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if timed_out:
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        task = asyncio.ensure_future(self.app(scope, receive, guarded_send))
        try:
            done, _ = await asyncio.wait({task}, timeout=self.timeout_seconds)
        except asyncio.CancelledError:
            # The request itself is being cancelled (server shutdown): so is its handler.
            task.cancel()
            raise
        if done:
            await task
            return
        timed_out = True
        self._abandoned.add(task)
        task.add_done_callback(self._finished_late(scope))
        if not started:
            await send_status(send, Timeout(TIMEOUT_MESSAGE))
        # Otherwise the response is cut where it stands: returning without finishing it makes
        # the server close the connection, as the API server aborts such a handler.

    def _finished_late(self, scope: Scope) -> Callable[[asyncio.Task[None]], None]:
        def done(task: asyncio.Task[None]) -> None:
            self._abandoned.discard(task)
            error = None if task.cancelled() else task.exception()
            _log.warning(
                "request %s: %s %s finished after its timeout%s",
                scope.get(REQUEST_ID_KEY, "-"),
                scope.get("method"),
                scope.get("path"),
                f" with {error!r}" if error else "",
            )

        return done
