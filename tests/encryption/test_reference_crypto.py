"""The test-only reference ciphers reproduce the specifications' own test vectors, so the
interop tests that use them check kstore's bytes against the published algorithms."""

from __future__ import annotations

import pytest

from tests.encryption import reference_crypto as ref
from tests.encryption import vectors as v


def h(text: str) -> bytes:
    return bytes.fromhex(text)


@pytest.mark.parametrize(
    ("key", "cipher"),
    [
        (v.FIPS197_AES128_KEY, v.FIPS197_AES128_CIPHER),
        (v.FIPS197_AES256_KEY, v.FIPS197_AES256_CIPHER),
    ],
)
def test_reference_aes_matches_fips197(key: str, cipher: str) -> None:
    assert ref.aes_encrypt_block(h(key), h(v.FIPS197_PLAIN)) == h(cipher)
    assert ref.aes_decrypt_block(h(key), h(cipher)) == h(v.FIPS197_PLAIN)


def test_reference_cbc_matches_sp800_38a() -> None:
    body = ref.cbc_encrypt(h(v.CBC_KEY), h(v.CBC_IV), h(v.CBC_PLAIN), pad=False)
    assert body == h(v.CBC_CIPHER)
    assert ref.cbc_decrypt(h(v.CBC_KEY), h(v.CBC_IV), body, unpad=False) == h(v.CBC_PLAIN)


def test_reference_cbc_pads_a_full_block_and_refuses_bad_padding() -> None:
    body = ref.cbc_encrypt(h(v.CBC_KEY), h(v.CBC_IV), h(v.CBC_PLAIN))
    assert len(body) == len(h(v.CBC_PLAIN)) + 16
    assert ref.cbc_decrypt(h(v.CBC_KEY), h(v.CBC_IV), body) == h(v.CBC_PLAIN)
    with pytest.raises(ValueError, match="padding"):
        ref.cbc_decrypt(h(v.CBC_KEY), h(v.CBC_IV), h(v.CBC_CIPHER))


def test_reference_gcm_matches_test_case_16() -> None:
    sealed = ref.gcm_encrypt(h(v.GCM_KEY), h(v.GCM_NONCE), h(v.GCM_PLAIN), h(v.GCM_AAD))
    assert sealed == h(v.GCM_CIPHER + v.GCM_TAG)
    assert ref.gcm_decrypt(h(v.GCM_KEY), h(v.GCM_NONCE), sealed, h(v.GCM_AAD)) == h(v.GCM_PLAIN)
    with pytest.raises(ValueError, match="tag"):
        ref.gcm_decrypt(h(v.GCM_KEY), h(v.GCM_NONCE), sealed, b"other additional data")


def test_reference_secretbox_matches_go_and_libsodium_vectors() -> None:
    key, nonce = h(v.SECRETBOX_KEY), h(v.SECRETBOX_NONCE)
    sealed = ref.secretbox_seal(key, nonce, h(v.SECRETBOX_PLAIN))
    assert sealed == h(v.SECRETBOX_SEALED)
    assert ref.secretbox_open(key, nonce, sealed) == h(v.SECRETBOX_PLAIN)
    assert ref.secretbox_seal(bytes(32), bytes(24), b"test") == h(v.SECRETBOX_ZERO_TEST_SEALED)
    with pytest.raises(ValueError, match="tag"):
        ref.secretbox_open(key, nonce, sealed[:-1] + bytes([sealed[-1] ^ 1]))
