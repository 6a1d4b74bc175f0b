"""Calling a webhook: one JSON POST to a ``clientConfig`` over HTTPS, as kube-apiserver makes it.

Admission webhooks and CRD conversion webhooks both call through :class:`WebhookClient`; it
knows nothing of what the body means. A ``clientConfig`` names its target by ``url`` or by
``service`` (``namespace``, ``name``, ``path``, ``port`` default 443). A service is reached at
the address a :data:`ServiceResolver` gives (its clusterIP and port; with no proxy in kstore, a
``--webhook-service-resolver`` rule ``namespace/name=host:port`` wins), and its certificate is
verified for the name ``<name>.<namespace>.svc``, as kube-apiserver's dialer does. The
certificate is verified against ``caBundle`` (PEM; base64 in JSON), or the system's roots when
there is none.

Every failure is a :class:`WebhookCallError` whose text is what Go's HTTP client would report
(``Post "https://name.ns.svc:443/path?timeout=10s": context deadline exceeded``) and whose
``status`` is the error kube-apiserver keeps beside it. The caller words the rest
(``failed calling webhook "<name>": failed to call webhook: ...``).

Nothing below the server imports an HTTP library: a call is a small HTTP/1.1 exchange over
an ``ssl`` socket (``http.client`` lends only its exception types). Connections are kept open
per target and reused, so that a call costs one round trip rather than a TLS handshake. The
client is thread-safe; each call blocks its thread for at most about ``timeout`` seconds.
"""

from __future__ import annotations

import base64
import binascii
import http.client
import socket
import ssl
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

import orjson

from kstore.codec.json import dumps as json_dumps
from kstore.codec.json import loads as json_loads
from kstore.errors import (
    BadRequest,
    Forbidden,
    InternalError,
    KStoreError,
    NotFound,
    Timeout,
    Unavailable,
)

__all__ = [
    "ServiceResolver",
    "WebhookCallError",
    "WebhookClient",
    "WebhookTarget",
    "parse_service_resolver_rules",
    "rule_resolver",
]

#: The address (host, port) of a service port: ``(namespace, name, port)`` → address.
#: Raises a :class:`~kstore.errors.KStoreError` when the service cannot be reached.
ServiceResolver = Callable[[str, str, int], tuple[str, int]]

#: Idle connections kept per target.
_POOL_SIZE: Final = 8


class WebhookCallError(Exception):
    """A webhook could not be called, or answered something that is not a response.

    ``str()`` is the reason as Go's client reports it; ``status`` is the error kube-apiserver
    keeps with it (a 503 for a transport failure, the webhook's own Status for an error
    response that carries one)."""

    def __init__(self, reason: str, status: KStoreError | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status if status is not None else Unavailable("error calling webhook")


@dataclass(frozen=True, kw_only=True, slots=True)
class WebhookTarget:
    """Where one call goes: the URL as messages name it, the address to connect to, the name
    the certificate must carry, and the CA bundle (PEM) to verify it by (empty: system roots)."""

    url: str
    host: str
    port: int
    server_name: str
    path: str
    ca_bundle: bytes = b""


def parse_service_resolver_rules(rules: Sequence[str]) -> dict[tuple[str, str], tuple[str, int]]:
    """``namespace/name=host:port`` rules by (namespace, name); BadRequest for a malformed one."""
    parsed: dict[tuple[str, str], tuple[str, int]] = {}
    for rule in rules:
        service, sep, address = rule.partition("=")
        namespace, slash, name = service.partition("/")
        host, colon, port = address.rpartition(":")
        if not (sep and slash and colon and namespace and name and host and port.isdigit()):
            raise BadRequest(
                f"invalid webhook service resolver rule {rule!r}: want namespace/name=host:port"
            )
        parsed[(namespace, name)] = (host.strip("[]"), int(port))
    return parsed


def rule_resolver(
    rules: Mapping[tuple[str, str], tuple[str, int]], fallback: ServiceResolver | None
) -> ServiceResolver:
    """A resolver trying ``rules`` first, then ``fallback`` (NotFound when there is none)."""

    def resolve(namespace: str, name: str, port: int) -> tuple[str, int]:
        found = rules.get((namespace, name))
        if found is not None:
            return found
        if fallback is None:
            raise NotFound(f'services "{name}" not found', kind="services", name=name)
        return fallback(namespace, name, port)

    return resolve


def _timeout_query(path: str, timeout: float) -> str:
    # kube-apiserver tells the webhook its deadline, in whole seconds rounded up.
    seconds = int(timeout) if timeout == int(timeout) else int(timeout) + 1
    return f"{path}{'&' if '?' in path else '?'}timeout={seconds}s"


def _ca_bundle(config: Mapping[str, Any]) -> bytes:
    value = config.get("caBundle")
    if not value:
        return b""
    if isinstance(value, bytes):
        return value
    try:
        return base64.b64decode(str(value), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise WebhookCallError(f"invalid caBundle: {exc}") from exc


def _go_json_error(body: bytes) -> str:
    """The words of Go's encoding/json for a body that is not JSON (what decoding reports)."""
    text = body.lstrip()
    if not text:
        return "unexpected end of JSON input"
    first = text[:1].decode("latin-1")
    if first not in '{["-0123456789tfn':
        return f"invalid character {first!r} looking for beginning of value"
    return "invalid character after top-level value"


def _generic_response(code: int, body: bytes) -> KStoreError:
    """Kubernetes' error for a non-2xx answer without a Status (``NewGenericServerResponse``)."""
    text = body.decode("utf-8", "replace").strip()
    messages: dict[int, tuple[type[KStoreError], str]] = {
        400: (BadRequest, "the server rejected our request for an unknown reason"),
        403: (Forbidden, text),
        404: (NotFound, "the server could not find the requested resource"),
        503: (Unavailable, "the server is currently unable to handle the request"),
        504: (
            Timeout,
            "the server was unable to return a response in the time allotted, but may still "
            "be processing the request",
        ),
    }
    if code in messages:
        cls, message = messages[code]
        return cls(message)
    if code >= 500:
        quoted = json_dumps(text).decode()
        return InternalError(
            f"an error on the server ({quoted}) has prevented the request from succeeding"
        )
    return InternalError(
        f"the server responded with the status code {code} but did not return more information"
    )


class _Connection:
    """One HTTP/1.1 keep-alive connection over TLS to an address whose certificate is verified
    for another name. Requests go out in one write (headers and body together: no Nagle
    delay), and responses are read by a small parser of the status line, the headers and a
    Content-Length or chunked body (a webhook's answer is one small JSON document)."""

    def __init__(self, target: WebhookTarget, context: ssl.SSLContext, timeout: float) -> None:
        self._target = target
        self._context = context
        self._timeout = timeout
        self._sock: ssl.SSLSocket | None = None
        self._reader: Any = None

    def set_timeout(self, timeout: float) -> None:
        self._timeout = timeout
        if self._sock is not None:
            self._sock.settimeout(timeout)

    def _connect(self) -> ssl.SSLSocket:
        target = self._target
        sock = socket.create_connection((target.host, target.port), self._timeout)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            tls = self._context.wrap_socket(sock, server_hostname=target.server_name)
        except BaseException:
            sock.close()
            raise
        self._sock = tls
        self._reader = tls.makefile("rb")
        return tls

    def exchange(self, request: bytes) -> tuple[int, bytes, bool]:
        """Send ``request``; (status, body, whether the connection may be kept)."""
        sock = self._sock if self._sock is not None else self._connect()
        sock.sendall(request)
        reader = self._reader
        line = reader.readline(_MAX_LINE)
        if not line:
            raise http.client.RemoteDisconnected("Remote end closed connection without response")
        parts = line.split(None, 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
            raise http.client.BadStatusLine(line.decode("latin-1").strip())
        code = int(parts[1])
        headers: dict[bytes, bytes] = {}
        while True:
            header = reader.readline(_MAX_LINE)
            if header in (b"\r\n", b"\n", b""):
                break
            name, _, value = header.partition(b":")
            headers[name.strip().lower()] = value.strip()
        keep = parts[0] == b"HTTP/1.1" and headers.get(b"connection", b"").lower() != b"close"
        if headers.get(b"transfer-encoding", b"").lower() == b"chunked":
            body = self._chunked(reader)
        elif b"content-length" in headers:
            length = int(headers[b"content-length"])
            body = reader.read(length)
            if len(body) != length:
                raise http.client.IncompleteRead(body, length - len(body))
        else:
            body, keep = reader.read(), False
        return code, body, keep

    @staticmethod
    def _chunked(reader: Any) -> bytes:
        chunks: list[bytes] = []
        while True:
            size = int(reader.readline(_MAX_LINE).split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                while reader.readline(_MAX_LINE) not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return b"".join(chunks)
            chunks.append(reader.read(size))
            reader.readline(_MAX_LINE)

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
        if self._sock is not None:
            self._sock.close()
        self._sock = self._reader = None


_MAX_LINE: Final = 65536


class WebhookClient:
    """POSTs JSON to webhooks (see the module docstring). ``resolve_service`` is None when no
    service can be resolved (only ``url`` configurations then work)."""

    def __init__(self, resolve_service: ServiceResolver | None = None) -> None:
        self._resolve = resolve_service
        self._lock = threading.Lock()
        self._contexts: dict[bytes, ssl.SSLContext] = {}
        self._idle: dict[tuple[str, int, str, bytes], list[_Connection]] = {}

    def target(self, config: Mapping[str, Any]) -> WebhookTarget:
        """Where ``config`` (a ``WebhookClientConfig``) points; WebhookCallError when its
        service cannot be resolved."""
        ca = _ca_bundle(config)
        url = config.get("url")
        if isinstance(url, str) and url:
            parts = urlsplit(url)
            host = parts.hostname or ""
            port = parts.port or 443
            path = parts.path or "/"
            if parts.query:
                path += "?" + parts.query
            return WebhookTarget(
                url=url, host=host, port=port, server_name=host, path=path, ca_bundle=ca
            )
        service = config.get("service")
        if not isinstance(service, Mapping):
            raise WebhookCallError("webhook clientConfig has neither url nor service")
        namespace = str(service.get("namespace") or "")
        name = str(service.get("name") or "")
        port = int(service.get("port") or 443)
        path = str(service.get("path") or "/")
        server_name = f"{name}.{namespace}.svc"
        if self._resolve is None:
            raise WebhookCallError(
                f'services "{name}" not found', NotFound(f'services "{name}" not found')
            )
        try:
            host, address_port = self._resolve(namespace, name, port)
        except KStoreError as exc:
            raise WebhookCallError(exc.message, exc) from exc
        return WebhookTarget(
            url=f"https://{server_name}:{port}{path}",
            host=host,
            port=address_port,
            server_name=server_name,
            path=path,
            ca_bundle=ca,
        )

    def post(
        self,
        config: Mapping[str, Any],
        body: Any,
        *,
        timeout: float,
        timeout_query: bool = True,
    ) -> Any:
        """POST ``body`` (encoded as JSON) to ``config``'s target and return the decoded JSON
        answer of a 2xx response. ``timeout`` bounds the connection and each wait on the
        webhook; ``timeout_query`` adds kube-apiserver's ``?timeout=Ns``. WebhookCallError on
        any failure."""
        target = self.target(config)
        path = _timeout_query(target.path, timeout) if timeout_query else target.path
        url = target.url
        if timeout_query:
            url = _timeout_query(url, timeout)
        payload = json_dumps(body)
        code, data = self._exchange(target, path, payload, timeout, url)
        if not 200 <= code < 300:
            raise WebhookCallError(*_error_response(code, data, url))
        try:
            return json_loads(data)
        except orjson.JSONDecodeError as exc:
            reason = f"couldn't get version/kind; json parse error: {_go_json_error(data)}"
            raise WebhookCallError(reason) from exc

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, {}
        for connections in idle.values():
            for conn in connections:
                conn.close()

    # -- transport -------------------------------------------------------------------------

    def _context(self, ca_bundle: bytes) -> ssl.SSLContext:
        with self._lock:
            found = self._contexts.get(ca_bundle)
        if found is not None:
            return found
        context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
        if ca_bundle:
            context.load_verify_locations(cadata=ca_bundle.decode("ascii", "replace"))
        with self._lock:
            self._contexts[ca_bundle] = context
        return context

    def _exchange(
        self, target: WebhookTarget, path: str, payload: bytes, timeout: float, url: str
    ) -> tuple[int, bytes]:
        key = (target.host, target.port, target.server_name, target.ca_bundle)
        with self._lock:
            idle = self._idle.get(key)
            conn = idle.pop() if idle else None
        reused = conn is not None
        try:
            context = self._context(target.ca_bundle)
        except ssl.SSLError as exc:
            raise WebhookCallError(f"unable to load root certificates: {exc}") from exc
        while True:
            if conn is None:
                conn = _Connection(target, context, timeout)
            else:
                conn.set_timeout(timeout)
            try:
                code, data, keep = conn.exchange(_request_bytes(target, path, payload))
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                conn.close()
                if reused:  # a kept connection the webhook closed meanwhile: dial again
                    conn, reused = None, False
                    continue
                raise WebhookCallError(f'Post "{url}": EOF') from None
            except TimeoutError:
                conn.close()
                raise WebhookCallError(f'Post "{url}": context deadline exceeded') from None
            except ssl.SSLCertVerificationError as exc:
                conn.close()
                raise WebhookCallError(f'Post "{url}": {_tls_reason(exc, target)}') from None
            except ssl.SSLError as exc:
                conn.close()
                raise WebhookCallError(f'Post "{url}": remote error: tls: {exc.reason}') from None
            except ConnectionRefusedError:
                conn.close()
                raise WebhookCallError(
                    f'Post "{url}": dial tcp {target.host}:{target.port}: connect: '
                    "connection refused"
                ) from None
            except (OSError, http.client.HTTPException) as exc:
                conn.close()
                raise WebhookCallError(f'Post "{url}": {exc}') from None
            break
        if keep:
            with self._lock:
                pool = self._idle.setdefault(key, [])
                if len(pool) < _POOL_SIZE:
                    pool.append(conn)
                    conn = None
        if conn is not None:
            conn.close()
        return code, data


def _request_bytes(target: WebhookTarget, path: str, payload: bytes) -> bytes:
    host = target.server_name if target.port == 443 else f"{target.server_name}:{target.port}"
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, */*\r\nContent-Length: {len(payload)}\r\n\r\n"
    )
    return head.encode("latin-1") + payload


def _tls_reason(exc: ssl.SSLCertVerificationError, target: WebhookTarget) -> str:
    # Go's crypto/x509 words for the two failures a webhook's certificate can have.
    if exc.verify_code == 62:  # X509_V_ERR_HOSTNAME_MISMATCH
        names = _certificate_names(target)
        if names:
            return (
                "tls: failed to verify certificate: x509: certificate is valid for "
                f"{', '.join(names)}, not {target.server_name}"
            )
        return (
            "tls: failed to verify certificate: x509: certificate is not valid for any names, "
            f"but wanted to match {target.server_name}"
        )
    if exc.verify_code in (7, 18, 19, 20, 21):  # a chain to no CA of the bundle
        return "tls: failed to verify certificate: x509: certificate signed by unknown authority"
    if exc.verify_code == 10:
        return (
            "tls: failed to verify certificate: x509: certificate has expired or is not yet valid"
        )
    return f"tls: failed to verify certificate: {exc.verify_message}"


def _certificate_names(target: WebhookTarget) -> list[str]:
    """The DNS names of the certificate a target presents (its chain verified, its name not):
    Go names them when the name does not match. Empty when they cannot be read."""
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    context.check_hostname = False
    if target.ca_bundle:
        context.load_verify_locations(cadata=target.ca_bundle.decode("ascii", "replace"))
    try:
        with (
            socket.create_connection((target.host, target.port), 2.0) as sock,
            context.wrap_socket(sock, server_hostname=target.server_name) as tls,
        ):
            peer: Any = tls.getpeercert() or {}
    except OSError:
        return []
    alt_names = peer.get("subjectAltName", ())
    return [str(entry[1]) for entry in alt_names if entry[0] == "DNS"]


def _error_response(code: int, data: bytes, url: str) -> tuple[str, KStoreError]:
    """The reason and status of a non-2xx answer: the webhook's Status when it sent one
    (Go's client takes it as the error), else Kubernetes' generic words for the code."""
    try:
        decoded = json_loads(data)
    except orjson.JSONDecodeError:
        decoded = None
    if isinstance(decoded, dict) and decoded.get("kind") == "Status":
        message = str(decoded.get("message") or "")
        status = _status_error(decoded, code)
        return message or status.message, status
    status = _generic_response(code, data)
    return status.message, status


def _status_error(status: Mapping[str, Any], code: int) -> KStoreError:
    value = status.get("code")
    number = value if isinstance(value, int) and value else code
    cls = _STATUS_CLASSES.get(number, InternalError)
    return cls(str(status.get("message") or ""))


_STATUS_CLASSES: Final[dict[int, type[KStoreError]]] = {
    400: BadRequest,
    403: Forbidden,
    404: NotFound,
    503: Unavailable,
    504: Timeout,
}
