"""List continue tokens in Kubernetes' format, so tokens travel between kstore and kube tools.

A token is ``base64.RawURLEncoding`` of the JSON ``{"v":"meta.k8s.io/v1","rv":N,"start":S}``:

- ``rv`` is the revision every page of the list is read at; ``-1`` means "the latest revision"
  (the token the 410 of an expired continue hands back); ``0`` is never valid;
- ``start`` is the key to resume from, relative to the list's key prefix; a trailing ``\\x00``
  means "strictly after this key". Decoding path-cleans it, so a token can never range outside
  the prefix it is used with.

Messages are Kubernetes' (``continue key is not valid: ...``); callers wrap them as BadRequest.
"""

from __future__ import annotations

import base64
import binascii
import posixpath
from dataclasses import dataclass

import orjson

__all__ = ["ContinueToken", "InvalidContinueToken", "decode_continue", "encode_continue"]

_API_VERSION = "meta.k8s.io/v1"


class InvalidContinueToken(ValueError):
    """The token cannot be used; its text is Kubernetes' ``continue key is not valid: ...``."""


@dataclass(frozen=True, slots=True)
class ContinueToken:
    """A decoded token: the full key to resume from and the revision to read at (-1: latest)."""

    start_key: str
    resource_version: int


def _go_json(obj: dict[str, object]) -> bytes:
    # Go's encoding/json escapes <, >, & and the JS line separators; mirror it so tokens are
    # byte-identical to the API server's.
    data = orjson.dumps(obj)
    return (
        data.replace(b"<", b"\\u003c")
        .replace(b">", b"\\u003e")
        .replace(b"&", b"\\u0026")
        .replace("\u2028".encode(), b"\\u2028")
        .replace("\u2029".encode(), b"\\u2029")
    )


def encode_continue(key: str, key_prefix: str, resource_version: int) -> str:
    """The token that resumes a list of ``key_prefix`` at ``key`` (a full key, usually the last
    returned key + ``"\\x00"``), read at ``resource_version``.

    Raises ValueError when ``key`` is not under ``key_prefix``.
    """
    if not key_prefix or not key.startswith(key_prefix):
        raise ValueError("unable to encode next field: the key and key prefix do not match")
    start = key[len(key_prefix) :]
    payload = {"v": _API_VERSION, "rv": resource_version, "start": start}
    return base64.urlsafe_b64encode(_go_json(payload)).rstrip(b"=").decode("ascii")


def decode_continue(token: str, key_prefix: str) -> ContinueToken:
    """Decode ``token`` for a list of ``key_prefix``; InvalidContinueToken when unusable."""
    try:
        raw = token.encode("ascii")
        if b"=" in raw or b"+" in raw or b"/" in raw:
            raise ValueError("illegal base64 data")
        data = base64.urlsafe_b64decode(raw + b"=" * (-len(raw) % 4))
    except (ValueError, binascii.Error, UnicodeEncodeError) as exc:
        raise InvalidContinueToken(f"continue key is not valid: {exc}") from None
    try:
        parsed = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise InvalidContinueToken(f"continue key is not valid: {exc}") from None
    if not isinstance(parsed, dict):
        raise InvalidContinueToken("continue key is not valid: not a JSON object")
    version = parsed.get("v", "")
    if version != _API_VERSION:
        raise InvalidContinueToken(
            f"continue key is not valid: server does not recognize this encoded version {version}"
        )
    rv = parsed.get("rv", 0)
    start = parsed.get("start", "")
    if not isinstance(rv, int) or isinstance(rv, bool) or not isinstance(start, str):
        raise InvalidContinueToken("continue key is not valid: malformed fields")
    if rv == 0:
        raise InvalidContinueToken(
            "continue key is not valid: incorrect encoded start resourceVersion "
            "(version meta.k8s.io/v1)"
        )
    if not start:
        raise InvalidContinueToken(
            "continue key is not valid: encoded start key empty (version meta.k8s.io/v1)"
        )
    key = start if start.startswith("/") else "/" + start
    if posixpath.normpath(key) != key or key.startswith("//"):
        # path.Clean in Go also turns a lone "//" into "/"; normpath keeps a leading "//".
        raise InvalidContinueToken(f"continue key is not valid: {start}")
    return ContinueToken(start_key=key_prefix + key[1:], resource_version=rv)
