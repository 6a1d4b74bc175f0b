"""``--max-requests-inflight`` and ``--max-mutating-requests-inflight``: shed load, never queue.

Two independent counts, as kube-apiserver's ``WithMaxInFlightLimit``: mutating requests
(POST, PUT, PATCH, DELETE) against the mutating limit, every other request against the
read-only one. A request over its limit is answered at once with 429 and ``Retry-After: 1``,
in the plain text of Go's ``http.Error`` (``Too many requests, please try again later.`` and a
newline), not a ``Status``, as kube-apiserver's filter (and its priority-and-fairness one)
write it. Long-running requests (watches) are not counted; a limit of 0 turns that count off.
The counts live on the event loop's thread only (ASGI calls run there), so plain integers need
no lock.
"""

from __future__ import annotations

from kstore.server.filters._asgi import ASGIApp, Receive, Scope, Send, send_plain_error
from kstore.server.filters.request_class import is_long_running, is_mutating

__all__ = ["TOO_MANY_REQUESTS_MESSAGE", "MaxInFlight"]

TOO_MANY_REQUESTS_MESSAGE = "Too many requests, please try again later."


class MaxInFlight:
    def __init__(self, app: ASGIApp, *, read_only_limit: int, mutating_limit: int) -> None:
        if read_only_limit < 0 or mutating_limit < 0:
            raise ValueError("in-flight limits must not be negative")
        self.app = app
        self._limits = (read_only_limit, mutating_limit)
        self._in_flight = [0, 0]

    def in_flight(self, *, mutating: bool) -> int:
        """Requests of a class being served now (for tests and metrics)."""
        return self._in_flight[int(mutating)]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or is_long_running(scope):
            await self.app(scope, receive, send)
            return
        index = int(is_mutating(scope))
        limit = self._limits[index]
        if limit == 0:
            await self.app(scope, receive, send)
            return
        if self._in_flight[index] >= limit:
            await send_plain_error(send, 429, TOO_MANY_REQUESTS_MESSAGE, ((b"retry-after", b"1"),))
            return
        self._in_flight[index] += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self._in_flight[index] -= 1
