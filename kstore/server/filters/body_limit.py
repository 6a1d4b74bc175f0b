"""Request bodies of at most 3 MiB (kube-apiserver's ``MaxRequestBodyBytes``): 413 beyond.

A declared ``Content-Length`` over the limit is refused before a byte of the body is read. A
body without one (chunked) is counted as it arrives: the read that crosses the limit raises
:class:`~kstore.errors.RequestEntityTooLarge`, which the handler reading the body answers as a
413 ``Status`` (or panic recovery does, if the handler lets it escape). Either way the server
never holds more than the limit of one body.
"""

from __future__ import annotations

from kstore.errors import RequestEntityTooLarge
from kstore.server.filters._asgi import ASGIApp, Message, Receive, Scope, Send, send_status

__all__ = ["DEFAULT_MAX_REQUEST_BODY_BYTES", "BodyLimit"]

#: Twice etcd's 1.5 MiB request limit, as the API server chooses it.
DEFAULT_MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024


def _declared_length(scope: Scope) -> int | None:
    for key, value in scope.get("headers", ()):
        if key == b"content-length":
            text = bytes(value).decode("latin-1").strip()
            return int(text) if text.isdigit() else None
    return None


class BodyLimit:
    def __init__(self, app: ASGIApp, *, max_bytes: int) -> None:
        if max_bytes <= 0:
            raise ValueError("the request body limit must be positive")
        self.app = app
        self.max_bytes = max_bytes

    def _too_large(self) -> RequestEntityTooLarge:
        return RequestEntityTooLarge(f"Request entity too large: limit is {self.max_bytes}")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _declared_length(scope)
        if declared is not None and declared > self.max_bytes:
            await send_status(send, self._too_large())
            return
        seen = 0

        async def counting_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise self._too_large()
            return message

        await self.app(scope, counting_receive, send)
