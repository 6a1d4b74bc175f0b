"""A no-op admission webhook for ``kstore bench rest --webhook``, in a process of its own.

:class:`NoopWebhook` makes a throwaway CA and a certificate for 127.0.0.1 (``cryptography``),
starts ``python -m kstore.benchmarks.webhook`` with them on a free loopback port, and gives the
``clientConfig`` (``url`` and ``caBundle``) that reaches it. The child answers every
AdmissionReview ``allowed`` without a patch, except for objects labelled ``forbidden``, which
it refuses (the bench's probe that a configuration has taken effect). It runs apart so that
its CPU is neither the server's nor the load generator's; HTTP/1.1 keep-alive is on, as in a
webhook written with Go's net/http.
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import os
import socket
import ssl
import subprocess
import sys
import tempfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson

from kstore.benchmarks._child import stop_child

__all__ = ["NoopWebhook"]


def _certificates(directory: Path) -> bytes:
    """A CA and a server certificate for 127.0.0.1 written to ``directory``; the CA's PEM."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kstore-bench-webhook-ca")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    certificate = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    (directory / "tls.crt").write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    (directory / "tls.key").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return ca.public_bytes(serialization.Encoding.PEM)


class NoopWebhook:
    """The child process (see the module docstring); a context manager."""

    def __init__(self) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="kstore-bench-webhook-")
        directory = Path(self._dir.name)
        ca = _certificates(directory)
        self.ca_bundle = base64.b64encode(ca).decode()
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kstore.benchmarks.webhook",
                str(directory / "tls.crt"),
                str(directory / "tls.key"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline().strip()
        if not line.isdigit():
            self.stop()
            raise RuntimeError(f"the bench webhook did not start: {line!r}")
        self.url = f"https://127.0.0.1:{line}/admit"

    def client_config(self) -> dict[str, Any]:
        return {"url": self.url, "caBundle": self.ca_bundle}

    def stop(self) -> None:
        stop_child(self.process, timeout=10)
        self._dir.cleanup()

    def __enter__(self) -> NoopWebhook:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        # As Go's net/http: no Nagle delay between the headers and the body it writes apart.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        review = orjson.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        request = review.get("request") or {}
        obj = request.get("object") or {}
        labels = (obj.get("metadata") or {}).get("labels") or {}
        response: dict[str, Any] = {"uid": request.get("uid", ""), "allowed": True}
        if "forbidden" in labels:
            response = {**response, "allowed": False, "status": {"message": "forbidden label"}}
        body = orjson.dumps(
            {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}
        )
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _serve(cert: str, key: str) -> None:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.socket = context.wrap_socket(
        server.socket, server_side=True, do_handshake_on_connect=False
    )
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    _serve(sys.argv[1], sys.argv[2])
