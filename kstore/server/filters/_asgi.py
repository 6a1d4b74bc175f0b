"""ASGI types and the one helper every filter shares: answering with a ``Status``.

A filter that refuses a request answers it itself with a Kubernetes ``Status`` (JSON), the
body :func:`kstore.errors.to_status` gives, and the HTTP code of the error.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import orjson

from kstore.errors import to_status

__all__ = ["ASGIApp", "Message", "Receive", "Scope", "Send", "send_status"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


async def send_status(
    send: Send, error: BaseException, headers: tuple[tuple[bytes, bytes], ...] = ()
) -> None:
    """Answer with ``error`` as a ``Status`` (its code; ``Retry-After`` when it carries one)."""
    status = to_status(error)
    body = orjson.dumps(status)
    out = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *headers,
    ]
    retry_after = status.get("details", {}).get("retryAfterSeconds")
    if retry_after:
        out.append((b"retry-after", str(retry_after).encode()))
    await send({"type": "http.response.start", "status": status["code"], "headers": out})
    await send({"type": "http.response.body", "body": body})
