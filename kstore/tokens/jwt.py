"""Compact JWS (RFC 7515) signing and verification for service-account tokens.

Facts kept from kube-apiserver's token issuer:

- the header is ``{"alg": ..., "kid": ...}``; the key id is the unpadded base64url SHA-256 of
  the public key's DER (SubjectPublicKeyInfo) encoding, so a verifier holding several keys
  (``--service-account-key-file`` may repeat) picks the right one, and any key is tried when
  a token names none;
- RSA keys sign with RS256 (PKCS#1 v1.5, SHA-256), P-256 keys with ES256 (the signature is
  the 64-byte ``r || s``, not DER); other key types are refused when the key is loaded;
- a key file may hold a private key (its public half is used to verify) or public keys,
  PEM-encoded, several blocks to a file.

Invariant: :meth:`VerifyingKeys.verify` returns claims only for a token whose signature one
of the keys made over exactly the bytes of its first two segments.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature,
    encode_dss_signature,
)

from kstore.errors import BadRequest

__all__ = [
    "SigningKey",
    "TokenError",
    "VerifyingKeys",
    "ensure_key_file",
    "generate_signing_key",
    "load_signing_key",
    "load_verifying_keys",
]

_PublicKey = rsa.RSAPublicKey | ec.EllipticCurvePublicKey
_PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey
_PEM_BLOCK = re.compile(rb"-----BEGIN ([A-Z ]+)-----.+?-----END \1-----", re.S)


class TokenError(Exception):
    """A token that is not a well-formed JWS signed by one of the keys."""


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as exc:
        raise TokenError("malformed token segment") from exc


def _key_id(public: _PublicKey) -> str:
    der = public.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return _b64encode(hashlib.sha256(der).digest())


def _algorithm(public: _PublicKey, where: str) -> str:
    if isinstance(public, rsa.RSAPublicKey):
        return "RS256"
    if isinstance(public.curve, ec.SECP256R1):
        return "ES256"
    raise BadRequest(f"{where}: unsupported elliptic curve {public.curve.name} (use P-256)")


@dataclass(frozen=True, slots=True)
class SigningKey:
    """A private key that issues tokens, with its algorithm and key id."""

    private: _PrivateKey
    algorithm: str
    key_id: str

    def sign(self, claims: dict[str, Any]) -> str:
        header = orjson.dumps({"alg": self.algorithm, "kid": self.key_id})
        signing_input = f"{_b64encode(header)}.{_b64encode(orjson.dumps(claims))}"
        data = signing_input.encode("ascii")
        if isinstance(self.private, rsa.RSAPrivateKey):
            signature = self.private.sign(data, padding.PKCS1v15(), hashes.SHA256())
        else:
            r, s = decode_dss_signature(self.private.sign(data, ec.ECDSA(hashes.SHA256())))
            signature = r.to_bytes(32, "big") + s.to_bytes(32, "big")
        return f"{signing_input}.{_b64encode(signature)}"


class VerifyingKeys:
    """The public keys tokens are verified with."""

    def __init__(self, keys: list[_PublicKey]) -> None:
        self._keys = [(_key_id(k), k) for k in keys]

    def __len__(self) -> int:
        return len(self._keys)

    @staticmethod
    def looks_like_jwt(token: str) -> bool:
        """Whether ``token`` has a JWS's shape (three segments, a JSON header)."""
        return token.count(".") == 2 and token.startswith("eyJ")

    @staticmethod
    def unverified_claims(token: str) -> dict[str, Any]:
        """The claims of a JWS-shaped token, before any signature check (to see its issuer)."""
        parts = token.split(".")
        if len(parts) != 3:
            raise TokenError("malformed token")
        try:
            claims = orjson.loads(_b64decode(parts[1]))
        except orjson.JSONDecodeError as exc:
            raise TokenError("malformed token claims") from exc
        if not isinstance(claims, dict):
            raise TokenError("malformed token claims")
        return claims

    def verify(self, token: str) -> dict[str, Any]:
        """The claims of ``token`` once one of the keys verifies its signature."""
        parts = token.split(".")
        if len(parts) != 3:
            raise TokenError("malformed token")
        try:
            header = orjson.loads(_b64decode(parts[0]))
        except orjson.JSONDecodeError as exc:
            raise TokenError("malformed token header") from exc
        if not isinstance(header, dict):
            raise TokenError("malformed token header")
        algorithm, key_id = header.get("alg"), header.get("kid")
        data = f"{parts[0]}.{parts[1]}".encode("ascii", "replace")
        signature = _b64decode(parts[2])
        for kid, key in self._keys:
            if key_id and kid != key_id:
                continue
            if _verifies(key, algorithm, data, signature):
                return self.unverified_claims(token)
        raise TokenError("crypto/rsa: verification error")


def _verifies(key: _PublicKey, algorithm: object, data: bytes, signature: bytes) -> bool:
    try:
        if isinstance(key, rsa.RSAPublicKey):
            if algorithm != "RS256":
                return False
            key.verify(signature, data, padding.PKCS1v15(), hashes.SHA256())
            return True
        if algorithm != "ES256" or len(signature) != 64:
            return False
        r, s = int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big")
        key.verify(encode_dss_signature(r, s), data, ec.ECDSA(hashes.SHA256()))
        return True
    except InvalidSignature:
        return False


def _read(path: Path, flag: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise BadRequest(f"{flag}: cannot read '{path}': {exc}") from exc


def _private_key(pem: bytes, where: str) -> _PrivateKey:
    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError) as exc:
        raise BadRequest(f"{where}: not a PEM private key: {exc}") from exc
    if not isinstance(key, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey):
        raise BadRequest(f"{where}: unsupported key type (use an RSA or P-256 key)")
    return key


def load_signing_key(path: Path) -> SigningKey:
    """The key of ``--service-account-signing-key-file``; BadRequest naming the problem."""
    flag = "--service-account-signing-key-file"
    private = _private_key(_read(path, flag), f"{flag} '{path}'")
    public = private.public_key()
    return SigningKey(private, _algorithm(public, f"{flag} '{path}'"), _key_id(public))


def load_verifying_keys(paths: list[Path], signing: SigningKey | None = None) -> VerifyingKeys:
    """The public keys of the ``--service-account-key-file`` files (every PEM block: private
    keys give their public half), plus the signing key's own when given."""
    flag = "--service-account-key-file"
    keys: list[_PublicKey] = []
    for path in paths:
        blocks = _PEM_BLOCK.finditer(_read(path, flag))
        found = 0
        for block in blocks:
            where = f"{flag} '{path}'"
            pem = block.group(0)
            if b"PRIVATE KEY" in block.group(1):
                public: Any = _private_key(pem, where).public_key()
            else:
                try:
                    public = serialization.load_pem_public_key(pem)
                except (ValueError, TypeError) as exc:
                    raise BadRequest(f"{where}: not a PEM public key: {exc}") from exc
            if not isinstance(public, rsa.RSAPublicKey | ec.EllipticCurvePublicKey):
                raise BadRequest(f"{where}: unsupported key type (use an RSA or P-256 key)")
            _algorithm(public, where)
            keys.append(public)
            found += 1
        if not found:
            raise BadRequest(f"{flag}: no public keys found in '{path}'")
    if signing is not None:
        keys.append(signing.private.public_key())
    return VerifyingKeys(keys)


def generate_signing_key() -> SigningKey:
    """A new signing key held in memory only (a server given no key file and no data
    directory: its tokens die with it). Keys kstore makes are ECDSA P-256 (ES256), which
    kube-apiserver accepts as well: made in well under a millisecond, where an RSA key takes
    tens to hundreds, paid by every server start."""
    key = ec.generate_private_key(ec.SECP256R1())
    return SigningKey(key, "ES256", _key_id(key.public_key()))


def ensure_key_file(path: Path) -> Path:
    """``path``, holding a new P-256 private key (PEM, mode 0600) unless it exists already:
    the signing key of a server given none, kept with its data so tokens outlive restarts."""
    if path.exists():
        return path
    key = generate_signing_key().private
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    # A name of this process's own: workers starting together on one directory must not
    # truncate or remove each other's file before it is linked.
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(pem)
    # Two servers starting on one directory: the first link wins, both then read it.
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)
    return path
