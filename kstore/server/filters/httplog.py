"""The request log, as kube-apiserver's ``httplog`` at its ``-v`` verbosity.

One line per request when it ends, in kube-apiserver's words::

    "HTTP" verb="LIST" URI="/api/v1/pods?limit=500" latency="1.92ms"
    userAgent="kubectl/v1.37.1 (linux/amd64)" audit-ID="…" srcIP="127.0.0.1:50712" resp=200

``verb`` is the Kubernetes verb of a resource request (``GET``, ``LIST``, ``WATCH``,
``CREATE``, ``APPLY``…, as the route found it) and the HTTP method of any other path.
What is logged depends on ``--v``, so that the default stays quiet under load:

- below 2, writes and failed requests (a code of 400 and above) at INFO; successful reads at
  DEBUG (``--log-level debug`` shows them);
- 2 and above, every request at INFO, discovery, OpenAPI and health checks included.

A watch is logged when it ends, its latency being its whole life. The filter sits just inside
panic recovery, so the request id is set and a request whose handler raised is logged with
code 500 before recovery answers it.
"""

from __future__ import annotations

import logging
import time

from kstore.server.filters._asgi import ASGIApp, Message, Receive, Scope, Send
from kstore.server.filters.recovery import REQUEST_ID_KEY

__all__ = ["VERB_KEY", "HttpLog", "go_duration"]

_log = logging.getLogger("kstore.server")

#: Where a route leaves the Kubernetes verb it found, in upper case, for the log line.
VERB_KEY = "kstore.verb"
_READS = frozenset(("GET", "LIST", "WATCH", "HEAD", "OPTIONS"))


def go_duration(seconds: float) -> str:
    """A duration as Go's ``time.Duration.String`` prints it: ``850µs``, ``1.92ms``, ``2.5s``."""
    if seconds < 1e-3:
        return f"{_trim(seconds * 1e6)}µs"
    if seconds < 1:
        return f"{_trim(seconds * 1e3)}ms"
    if seconds < 60:
        return f"{_trim(seconds)}s"
    minutes, rest = divmod(seconds, 60)
    hours, minutes = divmod(int(minutes), 60)
    head = f"{hours}h{minutes}m" if hours else f"{minutes}m"
    return f"{head}{_trim(rest)}s"


def _trim(value: float) -> str:
    text = f"{value:.3f}".rstrip("0").rstrip(".")
    return text or "0"


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers", ()):
        if key == name:
            return bytes(value).decode("latin-1")
    return ""


class HttpLog:
    def __init__(self, app: ASGIApp, verbosity: int = 0) -> None:
        self.app = app
        self.every_request = verbosity >= 2

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        code = 0

        async def send_noting_code(message: Message) -> None:
            nonlocal code
            if message["type"] == "http.response.start":
                code = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_noting_code)
        except BaseException:
            code = code or 500
            raise
        finally:
            self._log(scope, code, time.perf_counter() - started)

    def _log(self, scope: Scope, code: int, elapsed: float) -> None:
        verb = scope.get(VERB_KEY) or scope.get("method", "")
        if self.every_request or code >= 400 or verb not in _READS:
            level = logging.INFO
        else:
            level = logging.DEBUG
        if not _log.isEnabledFor(level):
            return
        uri = scope.get("path", "")
        query = scope.get("query_string", b"")
        if query:
            uri += "?" + bytes(query).decode("latin-1")
        client = scope.get("client")
        src = f"{client[0]}:{client[1]}" if client else ""
        _log.log(
            level,
            '"HTTP" verb=%s URI=%s latency=%s userAgent=%s audit-ID=%s srcIP=%s resp=%d',
            _quoted(verb),
            _quoted(uri),
            _quoted(go_duration(elapsed)),
            _quoted(_header(scope, b"user-agent")),
            _quoted(str(scope.get(REQUEST_ID_KEY, ""))),
            _quoted(src),
            code,
        )
