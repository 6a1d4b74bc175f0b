"""Pretty printing: JSON answers indented for ``?pretty=true``, curl, wget and browsers.

kube-apiserver picks its pretty JSON serializer (``json.MarshalIndent`` with two spaces, no
trailing newline) when the query says ``pretty`` is true, or, with no ``pretty`` value, when
the user agent starts with ``curl``, ``Wget`` or ``Mozilla/5.0`` (its ``isPrettyPrint``). It
does so for every answer its serializer writes: objects, lists, Tables, discovery, Status.
Not for watch streams (they use the stream serializer) nor for what others write (OpenAPI
documents, ``/version``, plain text).

This filter does the same after the fact: for a request that wants it, a complete JSON answer
(one with a ``Content-Length``, so never a watch stream) under any path but ``/openapi`` is
parsed and written again indented, HTML-escaped as Go escapes. Requests that do not want it
(every client library, kubectl) pass with a look at the query and one header.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

import orjson

from kstore.codec.json import loads as json_loads
from kstore.server.filters._asgi import ASGIApp, Message, Receive, Scope, Send
from kstore.server.json_body import go_json

__all__ = ["PrettyPrint", "wants_pretty"]

_PRETTY_AGENTS = (b"curl", b"Wget", b"Mozilla/5.0")
_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})


def wants_pretty(scope: Scope) -> bool:
    """Kubernetes' ``isPrettyPrint``: the ``pretty`` query value (Go's ``ParseBool``; an
    unparsable one is false) when there is one, else the user agent."""
    query: bytes = scope.get("query_string", b"")
    if b"pretty" in query:
        values = parse_qs(query.decode("latin-1"), keep_blank_values=True).get("pretty")
        if values and values[0]:
            return values[0] in _TRUE
    for key, value in scope.get("headers", ()):
        if key == b"user-agent":
            return bytes(value).startswith(_PRETTY_AGENTS)
    return False


def _indented(body: bytes) -> bytes:
    try:
        value: Any = json_loads(body, max_depth=None)
    except orjson.JSONDecodeError:
        return body
    return go_json(value, orjson.OPT_INDENT_2)


def _is_complete_json(message: Message) -> bool:
    content_type = b""
    has_length = False
    for key, value in message.get("headers", ()):
        name = bytes(key).lower()
        if name == b"content-type":
            content_type = bytes(value)
        elif name == b"content-length":
            has_length = True
    return has_length and content_type.startswith(b"application/json")


class PrettyPrint:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or str(scope.get("path", "")).startswith("/openapi")
            or not wants_pretty(scope)
        ):
            await self.app(scope, receive, send)
            return
        held: Message | None = None
        chunks: list[bytes] = []

        async def send_pretty(message: Message) -> None:
            nonlocal held
            if message["type"] == "http.response.start" and _is_complete_json(message):
                held = message
                return
            if held is None or message["type"] != "http.response.body":
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            body = _indented(b"".join(chunks))
            headers = [
                (k, v) for k, v in held.get("headers", ()) if bytes(k).lower() != b"content-length"
            ]
            headers.append((b"content-length", str(len(body)).encode()))
            await send({**held, "headers": headers})
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, receive, send_pretty)
