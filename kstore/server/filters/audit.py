"""``--audit-log-path``: one ``audit.k8s.io/v1`` ``Event`` per request, at Metadata level.

Each request ends with one JSON line (stage ``ResponseComplete``): its audit id (the request
id of :mod:`.recovery`, also sent back as ``Audit-Id``), URI, verb (the Kubernetes verb for a
resource path, the lower-case HTTP method otherwise), user, source IPs, user agent, the object
it names (``objectRef``, resource paths only) and the response code, with the times the
request arrived and the event was written (microseconds, UTC, as ``MicroTime``), and the
annotations the handler left (:data:`AUDIT_ANNOTATIONS_KEY`). The user is
the one authentication found (username, uid when it has one, groups), read when the request
ends; a request authentication refused has an empty user, and without the authentication
filter every request is ``system:anonymous`` in ``system:unauthenticated``.

The filter sits just inside panic recovery, so 504s from the timeout and 429s from the
in-flight limits are audited too; a request whose handler raised is audited with code 500
before recovery answers it. A watch is audited when it ends. ``-`` writes to stdout. Lines
are written whole and flushed one by one from the event loop's thread, so they never
interleave.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import parse_qsl

from kstore.codec.json import dumps as json_dumps
from kstore.errors import KStoreError
from kstore.registry.interface import UserInfo
from kstore.server.filters._asgi import ASGIApp, Message, Receive, Scope, Send
from kstore.server.filters.authentication import (
    REQUESTER_KEY,
    USER_KEY,
    request_user,
    user_info_fields,
)
from kstore.server.filters.recovery import REQUEST_ID_KEY
from kstore.server.request_info import parse_scope_path, query_bool, verb_for

__all__ = ["AUDIT_ANNOTATIONS_KEY", "Audit", "AuditLog"]

#: Where a handler leaves the audit annotations of its request (a ``dict[str, str]``), such as
#: ``k8s.io/deprecated`` and ``k8s.io/removed-release`` on requests to deprecated versions.
AUDIT_ANNOTATIONS_KEY = "kstore.audit_annotations"

_ANONYMOUS = {"username": "system:anonymous", "groups": ["system:unauthenticated"]}


def _user(scope: Scope) -> dict[str, Any]:
    if USER_KEY not in scope:
        return _ANONYMOUS
    requester = scope.get(REQUESTER_KEY)
    user = requester if isinstance(requester, UserInfo) else request_user(scope)
    return {} if user is None else user_info_fields(user)


def _micro_time(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class AuditLog:
    """Where events go: an append-only file, or stdout for ``-``."""

    def __init__(self, path: str) -> None:
        self._owned = path != "-"
        if self._owned:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        # Held open for the server's life, closed by close(): not a with block.
        self._out: TextIO = open(path, "a", encoding="utf-8") if self._owned else sys.stdout  # noqa: SIM115

    def write(self, event: dict[str, Any]) -> None:
        self._out.write(json_dumps(event).decode() + "\n")
        self._out.flush()

    def close(self) -> None:
        if self._owned:
            self._out.close()


def _request_uri(scope: Scope) -> str:
    query = bytes(scope.get("query_string", b"")).decode("latin-1")
    path = str(scope.get("raw_path", b"").decode("latin-1") or scope.get("path", ""))
    return f"{path}?{query}" if query else path


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers", ()):
        if key == name:
            return bytes(value).decode("latin-1")
    return ""


def _verb_and_object(scope: Scope) -> tuple[str, dict[str, str] | None]:
    method = str(scope.get("method", "GET"))
    try:
        info = parse_scope_path(scope, str(scope.get("path", "")))
    except KStoreError:
        info = None
    if info is None:
        return method.lower(), None
    watch = any(
        k == "watch" and query_bool(v)
        for k, v in parse_qsl(bytes(scope.get("query_string", b"")).decode("latin-1"), True)
    )
    # As the API server's RequestInfo, /api/v1/namespaces/<ns> has both name and namespace.
    ref = {
        "resource": info.resource,
        "namespace": info.namespace,
        "name": info.name,
        "apiGroup": info.group,
        "apiVersion": info.version,
        "subresource": info.subresource,
    }
    return verb_for(method, info, watch), {k: v for k, v in ref.items() if v}


class Audit:
    def __init__(self, app: ASGIApp, *, log: AuditLog) -> None:
        self.app = app
        self.log = log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        received = datetime.now(UTC)
        code = 0

        async def send_recording(message: Message) -> None:
            nonlocal code
            if message["type"] == "http.response.start":
                code = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_recording)
        except Exception:
            code = code or 500
            raise
        finally:
            self._record(scope, received, code)

    def _record(self, scope: Scope, received: datetime, code: int) -> None:
        verb, object_ref = _verb_and_object(scope)
        client = scope.get("client")
        event: dict[str, Any] = {
            "kind": "Event",
            "apiVersion": "audit.k8s.io/v1",
            "level": "Metadata",
            "auditID": scope.get(REQUEST_ID_KEY, ""),
            "stage": "ResponseComplete",
            "requestURI": _request_uri(scope),
            "verb": verb,
            "user": _user(scope),
            "sourceIPs": [client[0]] if client else [],
            "userAgent": _header(scope, b"user-agent"),
        }
        if isinstance(scope.get(REQUESTER_KEY), UserInfo):
            acting = request_user(scope)
            if acting is not None:
                event["impersonatedUser"] = user_info_fields(acting)
        if object_ref is not None:
            event["objectRef"] = object_ref
        event["responseStatus"] = {"metadata": {}, "code": code}
        event["requestReceivedTimestamp"] = _micro_time(received)
        event["stageTimestamp"] = _micro_time(datetime.now(UTC))
        annotations = scope.get(AUDIT_ANNOTATIONS_KEY)
        if annotations:
            event["annotations"] = dict(annotations)
        self.log.write(event)
