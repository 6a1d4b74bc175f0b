"""ASGI types and the one helper every filter shares: answering with a ``Status``.

A filter that refuses a request answers it itself with a Kubernetes ``Status`` (JSON), the
body :func:`kstore.errors.to_status` gives as :func:`~kstore.server.json_body.status_json`
writes it, and the HTTP code of the error.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from kstore.errors import to_status
from kstore.server.json_body import status_json

__all__ = ["ASGIApp", "Message", "Receive", "Scope", "Send", "send_plain_error", "send_status"]

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
    body = status_json(status)
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


async def send_plain_error(
    send: Send, code: int, text: str, headers: tuple[tuple[bytes, bytes], ...] = ()
) -> None:
    """Answer as Go's ``http.Error`` does: the text and a newline, as plain text, not sniffed.

    kube-apiserver answers so where its filters do not build a ``Status`` (the in-flight
    limit's 429)."""
    body = text.encode() + b"\n"
    out = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"x-content-type-options", b"nosniff"),
        (b"content-length", str(len(body)).encode()),
        *headers,
    ]
    await send({"type": "http.response.start", "status": code, "headers": out})
    await send({"type": "http.response.body", "body": body})
