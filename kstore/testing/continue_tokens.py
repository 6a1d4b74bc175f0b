"""Kubernetes continue tokens, built independently of any backend so tests can state exact bytes.

A token is unpadded URL-safe base64 of the JSON ``{"v":"meta.k8s.io/v1","rv":<int>,"start":
"<key relative to the request prefix>"}`` in that key order with no spaces (Go's
``json.Marshal`` of apiserver's ``continueToken``). A ``start`` ending in ``"\\x00"`` means
"strictly after this key"; ``rv`` -1 means "continue at the latest revision".
"""

from __future__ import annotations

import base64
import json

__all__ = ["decode_continue", "encode_continue"]

_API_VERSION = "meta.k8s.io/v1"


def encode_continue(start: str, resource_version: int) -> str:
    """The token Kubernetes issues for ``start`` (relative to the list prefix) at a revision."""
    # ensure_ascii escapes "\x00" as "\u0000", exactly as Go does; the suite's keys are ASCII.
    body = json.dumps(
        {"v": _API_VERSION, "rv": resource_version, "start": start}, separators=(",", ":")
    )
    return base64.urlsafe_b64encode(body.encode()).rstrip(b"=").decode()


def decode_continue(token: str) -> tuple[str, int]:
    """``(start, rv)`` of a token, for readable assertion messages and token checks."""
    padded = token + "=" * (-len(token) % 4)
    body = json.loads(base64.urlsafe_b64decode(padded))
    assert body.get("v") == _API_VERSION, f"continue token of unknown version: {body!r}"
    return str(body["start"]), int(body["rv"])
