"""Real PKCS#10 requests and certificates for the CertificateSigningRequest tests (made with
the ``cryptography`` package, which kstore itself does not use for them)."""

from __future__ import annotations

import base64
import datetime

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def csr_pem(common_name: str = "alice", organizations: tuple[str, ...] = ()) -> bytes:
    """A signed request for ``common_name``, with one relative name per organization."""
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
            *(x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations),
        ]
    )
    request = (
        x509.CertificateSigningRequestBuilder().subject_name(name).sign(_key(), hashes.SHA256())
    )
    return request.public_bytes(serialization.Encoding.PEM)


def certificate_pem(common_name: str = "alice") -> bytes:
    key = _key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    return certificate.public_bytes(serialization.Encoding.PEM)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()
