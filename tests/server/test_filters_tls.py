"""TLS serving through a real ``kstore serve``: TLS 1.2 and 1.3 are served, TLS 1.1 and plain
HTTP on the secure port are refused. The certificate is made here, self-signed for 127.0.0.1.
"""

from __future__ import annotations

import datetime
import ipaddress
import socket
import ssl
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.server.harness import RunningServer, start_server


def _self_signed(directory: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kstore-test")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "tls.crt", directory / "tls.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningServer, Path]]:
    base = tmp_path_factory.mktemp("kstore")
    cert, key = _self_signed(base)
    running = start_server(
        base / "data",
        "--tls-cert-file",
        str(cert),
        "--tls-private-key-file",
        str(key),
        "--secure-port",
        "0",
    )
    yield running, cert
    assert running.stop() == 0, running.log()


def _client_context(cert: Path, version: ssl.TLSVersion) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(cert))
    context.minimum_version = version
    context.maximum_version = version
    return context


@pytest.mark.parametrize("version", [ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3])
def test_tls_1_2_and_1_3_are_served(
    tls_server: tuple[RunningServer, Path], version: ssl.TLSVersion
) -> None:
    server, cert = tls_server
    assert server.url.startswith("https://127.0.0.1:")
    with httpx.Client(base_url=server.url, verify=_client_context(cert, version)) as client:
        r = client.get("/api/v1/namespaces/default/configmaps")
    assert r.status_code == 200
    assert r.json()["kind"] == "ConfigMapList"


def test_tls_1_1_is_refused(tls_server: tuple[RunningServer, Path]) -> None:
    server, cert = tls_server
    parts = urlsplit(server.url)
    context = ssl.create_default_context(cafile=str(cert))
    # Let this client offer TLS 1.1 at all (OpenSSL's default security level forbids it).
    context.set_ciphers("DEFAULT:@SECLEVEL=0")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # TLS 1.1 is meant to be obsolete
        context.minimum_version = ssl.TLSVersion.TLSv1_1
        context.maximum_version = ssl.TLSVersion.TLSv1_1
    with (
        socket.create_connection((parts.hostname, parts.port), timeout=5) as raw,
        pytest.raises(ssl.SSLError) as refused,
        context.wrap_socket(raw, server_hostname=parts.hostname),
    ):
        pass
    # The server's refusal of the hello (an alert, or the connection closed on it), not this
    # client failing to offer TLS 1.1 in the first place (NO_PROTOCOLS_AVAILABLE).
    assert refused.value.reason in (
        "TLSV1_ALERT_PROTOCOL_VERSION",
        "UNSUPPORTED_PROTOCOL",
        "UNEXPECTED_EOF_WHILE_READING",
    ), refused.value
    # The server is still serving after the refused handshake.
    ok = _client_context(cert, ssl.TLSVersion.TLSv1_2)
    with httpx.Client(base_url=server.url, verify=ok) as client:
        assert client.get("/version").status_code == 200


def test_plain_http_on_the_secure_port_gets_no_api_answer(
    tls_server: tuple[RunningServer, Path],
) -> None:
    server, _ = tls_server
    plain = server.url.replace("https://", "http://")
    with httpx.Client(base_url=plain, timeout=5) as client:
        try:
            r = client.get("/api/v1/namespaces/default/configmaps")
        except httpx.HTTPError:
            return
    assert r.status_code >= 400 and "ConfigMapList" not in r.text


def test_a_key_that_does_not_match_fails_serve_before_it_listens(tmp_path: Path) -> None:
    cert, _ = _self_signed(tmp_path)
    (tmp_path / "other").mkdir()
    _, other_key = _self_signed(tmp_path / "other")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "kstore.cli",
            "serve",
            "--workers",
            "1",
            "--data-dir",
            str(tmp_path / "data"),
            "--tls-cert-file",
            str(cert),
            "--tls-private-key-file",
            str(other_key),
            "--secure-port",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "unable to load server certificate" in result.stderr
    assert "kstore serving" not in result.stdout
