"""kstore.tokens: JWS signing and verification of service-account tokens, and the key files
kube-apiserver's flags name."""

from __future__ import annotations

import base64
import json
import stat
import threading
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from kstore.errors import BadRequest
from kstore.tokens import (
    TokenError,
    VerifyingKeys,
    ensure_key_file,
    generate_signing_key,
    load_signing_key,
    load_verifying_keys,
)


def _pem_private(
    key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey,
) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _pem_public(key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey) -> bytes:
    return key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def _segment(token: str, index: int) -> dict[str, object]:
    part = token.split(".")[index]
    decoded: dict[str, object] = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    return decoded


def test_rsa_key_signs_rs256_and_its_public_key_verifies(tmp_path: Path) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    (tmp_path / "sa.key").write_bytes(_pem_private(key))
    (tmp_path / "sa.pub").write_bytes(_pem_public(key))
    signing = load_signing_key(tmp_path / "sa.key")
    token = signing.sign({"iss": "me", "sub": "x"})
    assert _segment(token, 0) == {"alg": "RS256", "kid": signing.key_id}
    assert _segment(token, 1) == {"iss": "me", "sub": "x"}
    keys = load_verifying_keys([tmp_path / "sa.pub"])
    assert keys.verify(token) == {"iss": "me", "sub": "x"}


def test_ec_signature_is_raw_r_and_s(tmp_path: Path) -> None:
    signing = generate_signing_key()
    token = signing.sign({"a": 1})
    assert _segment(token, 0)["alg"] == "ES256"
    signature = token.split(".")[2]
    assert len(base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4))) == 64
    assert load_verifying_keys([], signing).verify(token) == {"a": 1}


def test_tampered_token_and_another_key_are_refused() -> None:
    signing, other = generate_signing_key(), generate_signing_key()
    token = signing.sign({"sub": "a"})
    head, _, signature = token.split(".")
    forged = base64.urlsafe_b64encode(b'{"sub":"b"}').rstrip(b"=").decode()
    keys = load_verifying_keys([], signing)
    with pytest.raises(TokenError):
        keys.verify(f"{head}.{forged}.{signature}")
    with pytest.raises(TokenError):
        load_verifying_keys([], other).verify(token)
    with pytest.raises(TokenError):
        keys.verify("not-a-token")
    assert not VerifyingKeys.looks_like_jwt("abc")
    assert VerifyingKeys.looks_like_jwt(token)


def test_a_key_file_may_hold_several_keys_private_or_public(tmp_path: Path) -> None:
    first = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    second = ec.generate_private_key(ec.SECP256R1())
    path = tmp_path / "keys.pem"
    path.write_bytes(_pem_public(first) + _pem_private(second))
    keys = load_verifying_keys([path])
    assert len(keys) == 2
    (tmp_path / "second.key").write_bytes(_pem_private(second))
    token = load_signing_key(tmp_path / "second.key").sign({"ok": True})
    assert keys.verify(token) == {"ok": True}


def test_unusable_key_files_are_bad_requests(tmp_path: Path) -> None:
    (tmp_path / "ed.key").write_bytes(_pem_private(ed25519.Ed25519PrivateKey.generate()))
    with pytest.raises(BadRequest, match="unsupported key type"):
        load_signing_key(tmp_path / "ed.key")
    (tmp_path / "p384.key").write_bytes(_pem_private(ec.generate_private_key(ec.SECP384R1())))
    with pytest.raises(BadRequest, match="unsupported elliptic curve secp384r1"):
        load_signing_key(tmp_path / "p384.key")
    (tmp_path / "empty.pem").write_text("nothing here\n")
    with pytest.raises(BadRequest, match="no public keys found"):
        load_verifying_keys([tmp_path / "empty.pem"])
    with pytest.raises(BadRequest, match="cannot read"):
        load_signing_key(tmp_path / "missing.key")


def test_ensure_key_file_makes_a_private_key_once(tmp_path: Path) -> None:
    path = ensure_key_file(tmp_path / "dir" / "service-account.key")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    first = path.read_bytes()
    assert ensure_key_file(path).read_bytes() == first
    assert load_signing_key(path).algorithm == "ES256"


def test_ensure_key_file_from_servers_starting_together_gives_every_one_the_same_key(
    tmp_path: Path,
) -> None:
    """Workers of ``kstore serve --workers N`` start at once on one data directory: none
    may fail, and all sign with the one key that was kept (no temporary file left)."""
    for round_ in range(20):
        path = tmp_path / str(round_) / "service-account.key"
        start = threading.Barrier(6)
        results: list[bytes | BaseException] = []

        def make(
            path: Path = path,
            start: threading.Barrier = start,
            results: list[bytes | BaseException] = results,
        ) -> None:
            start.wait()
            try:
                results.append(ensure_key_file(path).read_bytes())
            except BaseException as exc:  # reported below, with the round
                results.append(exc)

        threads = [threading.Thread(target=make) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert results == [path.read_bytes()] * 6, round_
        assert sorted(p.name for p in path.parent.iterdir()) == ["service-account.key"]
