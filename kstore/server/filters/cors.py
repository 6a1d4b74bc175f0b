"""``--cors-allowed-origins``: CORS headers for browsers, as kube-apiserver's ``WithCORS``.

The flag is a list of regular expressions; an ``Origin`` header that any of them matches
(anywhere in the origin, as Go's ``MatchString``: anchor a pattern with ``^...$`` to match the
whole origin) gets ``Access-Control-Allow-Origin: <origin>`` with the fixed method, header,
exposed-header and credentials lists the API server sends, and a preflight ``OPTIONS`` is
answered 204 with them, before any other filter. A request without an ``Origin``, or from an
origin that no pattern matches, passes through untouched (the browser then refuses the
response). With no patterns the filter is not installed at all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from kstore.errors import BadRequest
from kstore.server.filters._asgi import ASGIApp, Message, Receive, Scope, Send

__all__ = ["Cors", "compile_origins"]

_ALLOW_METHODS = b"POST, GET, OPTIONS, PUT, DELETE, PATCH"
_ALLOW_HEADERS = (
    b"Content-Type, Content-Length, Accept-Encoding, X-CSRF-Token, Authorization, "
    b"X-Requested-With, If-Modified-Since"
)
_EXPOSE_HEADERS = b"Date"


def compile_origins(patterns: Iterable[str]) -> tuple[re.Pattern[str], ...]:
    """The patterns compiled; BadRequest names the flag and the pattern that does not
    compile (kube-apiserver refuses to start on one)."""
    out: list[re.Pattern[str]] = []
    for pattern in patterns:
        try:
            out.append(re.compile(pattern))
        except re.error as exc:
            raise BadRequest(
                f"Invalid CORS allowed origin, --cors-allowed-origins flag was set to "
                f"{pattern!r} - {exc}"
            ) from None
    return tuple(out)


def _origin(scope: Scope) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == b"origin":
            return bytes(value).decode("latin-1")
    return None


class Cors:
    def __init__(self, app: ASGIApp, *, allowed_origins: tuple[re.Pattern[str], ...]) -> None:
        self.app = app
        self.allowed_origins = allowed_origins

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        origin = _origin(scope) if scope["type"] == "http" else None
        if not origin or not any(p.search(origin) for p in self.allowed_origins):
            await self.app(scope, receive, send)
            return
        cors_headers = [
            (b"access-control-allow-origin", origin.encode("latin-1")),
            (b"access-control-allow-methods", _ALLOW_METHODS),
            (b"access-control-allow-headers", _ALLOW_HEADERS),
            (b"access-control-expose-headers", _EXPOSE_HEADERS),
            (b"access-control-allow-credentials", b"true"),
        ]
        if scope.get("method") == "OPTIONS":
            await send({"type": "http.response.start", "status": 204, "headers": cors_headers})
            await send({"type": "http.response.body", "body": b""})
            return

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {name for name, _ in cors_headers}
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
                message["headers"] = [*kept, *cors_headers]
            await send(message)

        await self.app(scope, receive, send_with_cors)
