"""A small HTTPS webhook server for tests: loopback, its own CA, one handler per path.

The CA and the server's certificate are made with ``cryptography`` when the server is built;
:attr:`WebhookServer.ca_bundle` is the base64 PEM a ``clientConfig.caBundle`` takes. The
certificate carries the DNS names it is given (by default ``webhook.default.svc``) and, unless
told otherwise, the IP 127.0.0.1, so both ``url: https://127.0.0.1:<port>/...`` and a service
resolved to the server verify. A server made with other names (or none of the right ones)
presents a certificate for another name.

A handler gets the decoded JSON body and returns a :class:`Reply` (or a dict: a 200 JSON
answer). :func:`hang` never answers (until the server stops), :func:`garbage` answers bytes
that are not JSON. Each request is recorded in :attr:`WebhookServer.requests`. HTTP/1.1
keep-alive is on, as a webhook server written with Go's net/http has it.
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import secrets
import ssl
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

__all__ = [
    "CertificateAuthority",
    "Reply",
    "WebhookServer",
    "admission_response",
    "garbage",
    "hang",
]


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


class CertificateAuthority:
    """A self-signed CA that issues server certificates."""

    def __init__(self, common_name: str = "") -> None:
        # A name of its own: a verifier looks a CA up by name before checking its signature.
        common_name = common_name or f"kstore-test-webhook-ca-{secrets.token_hex(4)}"
        self._key = _key()
        now = datetime.datetime.now(datetime.UTC)
        self.certificate = (
            x509.CertificateBuilder()
            .subject_name(_name(common_name))
            .issuer_name(_name(common_name))
            .public_key(self._key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .sign(self._key, hashes.SHA256())
        )
        self.pem = self.certificate.public_bytes(serialization.Encoding.PEM)

    @property
    def ca_bundle(self) -> str:
        """The CA as ``clientConfig.caBundle`` takes it in JSON (base64 of the PEM)."""
        return base64.b64encode(self.pem).decode()

    def issue(self, dns_names: Sequence[str], *, ip: bool = True) -> tuple[bytes, bytes]:
        """A server certificate and its key (PEM) for ``dns_names`` (and 127.0.0.1)."""
        key = _key()
        now = datetime.datetime.now(datetime.UTC)
        alt: list[x509.GeneralName] = [x509.DNSName(n) for n in dns_names]
        if ip:
            alt.append(x509.IPAddress(ipaddress.ip_address("127.0.0.1")))
        certificate = (
            x509.CertificateBuilder()
            .subject_name(_name(dns_names[0] if dns_names else "webhook"))
            .issuer_name(self.certificate.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(alt), critical=False)
            .add_extension(
                x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
            )
            .sign(self._key, hashes.SHA256())
        )
        key_pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        return certificate.public_bytes(serialization.Encoding.PEM), key_pem


@dataclass(frozen=True, kw_only=True)
class Reply:
    """An answer: ``json`` (encoded) or raw ``body``, with a status code; ``hang`` holds the
    request open until the server stops."""

    status: int = 200
    json: Any = None
    body: bytes | None = None
    content_type: str = "application/json"
    hang: bool = False


def hang(_: Any) -> Reply:
    return Reply(hang=True)


def garbage(_: Any) -> Reply:
    return Reply(body=b"garbage, not JSON")


Handler = Callable[[Any], "Reply | dict[str, Any]"]


def admission_response(
    review: Any,
    *,
    allowed: bool = True,
    patch: list[dict[str, Any]] | None = None,
    warnings: Sequence[str] = (),
    status: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """An AdmissionReview v1 answer to ``review`` (its uid echoed)."""
    response: dict[str, Any] = {"uid": review["request"]["uid"], "allowed": allowed}
    if patch is not None:
        response["patchType"] = "JSONPatch"
        response["patch"] = base64.b64encode(orjson.dumps(patch)).decode()
    if warnings:
        response["warnings"] = list(warnings)
    if status is not None:
        response["status"] = status
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}


@dataclass
class _State:
    handlers: dict[str, Handler] = field(default_factory=dict)
    requests: list[tuple[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state: _State  # set on the per-server subclass

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        path = self.path.split("?", 1)[0]
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            body = None
        with self.state.lock:
            self.state.requests.append((self.path, body))
            handler = self.state.handlers.get(path)
        if handler is None:
            self._send(Reply(status=404, body=b"404 page not found\n", content_type="text/plain"))
            return
        reply = handler(body)
        if isinstance(reply, dict):
            reply = Reply(json=reply)
        if reply.hang:
            self.state.stopping.wait(60)
            self.close_connection = True
            return
        self._send(reply)

    def _send(self, reply: Reply) -> None:
        data = reply.body if reply.body is not None else orjson.dumps(reply.json)
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # clients that refuse the certificate or give up are what the tests make


class WebhookServer:
    """A threaded HTTPS server on 127.0.0.1 and a free port (see the module docstring)."""

    def __init__(
        self,
        ca: CertificateAuthority | None = None,
        *,
        names: Sequence[str] = ("webhook.default.svc",),
        ip: bool = True,
    ) -> None:
        self.ca = ca if ca is not None else CertificateAuthority()
        self._state = _State()
        cert, key = self.ca.issue(names, ip=ip)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        with tempfile.TemporaryDirectory() as tmp:
            cert_path, key_path = Path(tmp) / "tls.crt", Path(tmp) / "tls.key"
            cert_path.write_bytes(cert)
            key_path.write_bytes(key)
            context.load_cert_chain(cert_path, key_path)
        handler = type("Handler", (_RequestHandler,), {"state": self._state})
        self._server = _Server(("127.0.0.1", 0), handler)
        # The handshake happens on the handler's thread, so one slow client blocks no other.
        self._server.socket = context.wrap_socket(
            self._server.socket, server_side=True, do_handshake_on_connect=False
        )
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="webhook-server", daemon=True
        )

    @property
    def ca_bundle(self) -> str:
        return self.ca.ca_bundle

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.port}{path}"

    def route(self, path: str, handler: Handler) -> None:
        with self._state.lock:
            self._state.handlers[path] = handler

    @property
    def requests(self) -> list[tuple[str, Any]]:
        """(path with query, decoded body) of every request so far, in order."""
        with self._state.lock:
            return list(self._state.requests)

    def bodies(self, path: str) -> list[Any]:
        return [body for p, body in self.requests if p.split("?", 1)[0] == path]

    def start(self) -> WebhookServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._state.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def __enter__(self) -> WebhookServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
