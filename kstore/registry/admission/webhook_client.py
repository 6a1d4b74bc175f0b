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

Only the standard library speaks HTTP here (``http.client`` and ``ssl``): nothing below the
server imports an HTTP library. Connections are kept open per target and reused, so that a
call costs one round trip rather than a TLS handshake. The client is thread-safe; each call
blocks its thread for at most about ``timeout`` seconds.
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
        quoted = orjson.dumps(text).decode()
        return InternalError(
            f"an error on the server ({quoted}) has prevented the request from succeeding"
        )
    return InternalError(
        f"the server responded with the status code {code} but did not return more information"
    )


class _Connection(http.client.HTTPSConnection):
    """An HTTPS connection to an address whose certificate is verified for another name."""

    def __init__(self, target: WebhookTarget, context: ssl.SSLContext, timeout: float) -> None:
        super().__init__(target.host, target.port, timeout=timeout, context=context)
        self._server_name = target.server_name
        self._context = context

    def connect(self) -> None:
        sock = socket.create_connection((self.host, self.port), self.timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            self.sock = self._context.wrap_socket(sock, server_hostname=self._server_name)
        except BaseException:
            sock.close()
            raise


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
        payload = orjson.dumps(body)
        code, data = self._exchange(target, path, payload, timeout, url)
        if not 200 <= code < 300:
            raise WebhookCallError(*_error_response(code, data, url))
        try:
            return orjson.loads(data)
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
                conn.timeout = timeout
                if conn.sock is not None:
                    conn.sock.settimeout(timeout)
            try:
                code, data, keep = _round_trip(conn, target, path, payload)
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


def _round_trip(
    conn: _Connection, target: WebhookTarget, path: str, payload: bytes
) -> tuple[int, bytes, bool]:
    host = target.server_name if target.port == 443 else f"{target.server_name}:{target.port}"
    conn.putrequest("POST", path, skip_host=True, skip_accept_encoding=True)
    conn.putheader("Host", host)
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Accept", "application/json, */*")
    conn.putheader("Content-Length", str(len(payload)))
    conn.endheaders(payload)
    response = conn.getresponse()
    data = response.read()
    return response.status, data, not response.will_close


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
        decoded = orjson.loads(data)
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
