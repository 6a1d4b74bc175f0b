"""The providers write Kubernetes' exact byte layouts: published vectors come out of them
with fixed IVs and nonces, what they write opens with independent implementations of the
published algorithms (and the reverse), and bad bytes are clear CorruptObject errors."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest

from kstore.errors import CorruptObject
from kstore.storage.encryption.providers import (
    AesCbcTransformer,
    AesGcmTransformer,
    IdentityCheckTransformer,
    SecretboxTransformer,
)
from kstore.storage.interface import ValueTransformer
from tests.encryption import reference_crypto as ref
from tests.encryption import vectors as v
from tests.encryption.configs import AES128_KEY, AES192_KEY, KEY1, KEY2, provider, secrets_with

STORAGE_KEY = "/secrets/default/db-password"
PLAIN = b'{"apiVersion":"v1","kind":"Secret","data":{"password":"aHVudGVyMg=="}}'


def h(text: str) -> bytes:
    return bytes.fromhex(text)


def fixed(value: bytes) -> Callable[[int], bytes]:
    def random_bytes(size: int) -> bytes:
        assert size == len(value)
        return value

    return random_bytes


# -- published vectors with fixed IVs and nonces ----------------------------------------------


def test_aescbc_layout_is_iv_then_cbc_of_pkcs7_padded_data() -> None:
    cbc = AesCbcTransformer(h(v.CBC_KEY), random_bytes=fixed(h(v.CBC_IV)))
    stored = cbc.to_storage(h(v.CBC_PLAIN), STORAGE_KEY)
    # IV, the four SP 800-38A blocks, then one whole block of padding (16 x 0x10).
    assert stored[:16] == h(v.CBC_IV)
    assert stored[16:80] == h(v.CBC_CIPHER)
    assert len(stored) == 16 + 64 + 16
    padding = ref.cbc_decrypt(h(v.CBC_KEY), stored[64:80], stored[80:], unpad=False)
    assert padding == bytes([16]) * 16
    assert cbc.from_storage(stored, STORAGE_KEY) == (h(v.CBC_PLAIN), False)


def test_aesgcm_layout_is_nonce_then_ciphertext_and_tag_with_the_key_authenticated() -> None:
    # The GCM test case's additional data is not UTF-8; a storage key read back from etcd
    # with such bytes carries them as surrogates and must authenticate exactly those bytes.
    storage_key = h(v.GCM_AAD).decode("utf-8", "surrogateescape")
    gcm = AesGcmTransformer(h(v.GCM_KEY), random_bytes=fixed(h(v.GCM_NONCE)))
    stored = gcm.to_storage(h(v.GCM_PLAIN), storage_key)
    assert stored == h(v.GCM_NONCE + v.GCM_CIPHER + v.GCM_TAG)
    assert gcm.from_storage(stored, storage_key) == (h(v.GCM_PLAIN), False)


def test_secretbox_layout_is_nonce_then_tag_and_ciphertext() -> None:
    box = SecretboxTransformer(h(v.SECRETBOX_KEY), random_bytes=fixed(h(v.SECRETBOX_NONCE)))
    stored = box.to_storage(h(v.SECRETBOX_PLAIN), STORAGE_KEY)
    assert stored == h(v.SECRETBOX_NONCE + v.SECRETBOX_SEALED)
    assert box.from_storage(stored, STORAGE_KEY) == (h(v.SECRETBOX_PLAIN), False)


# -- interop with the reference implementations, through the configured chain -----------------


@pytest.mark.parametrize("secret", [AES128_KEY, AES192_KEY, KEY1], ids=["128", "192", "256"])
def test_aescbc_values_open_with_an_independent_cbc(secret: bytes) -> None:
    transformer = secrets_with(provider("aescbc", ("key1", secret))).transformer_for("", "secrets")
    stored = transformer.to_storage(PLAIN, STORAGE_KEY)
    prefix = b"k8s:enc:aescbc:v1:key1:"
    assert stored.startswith(prefix)
    iv, body = stored[len(prefix) : len(prefix) + 16], stored[len(prefix) + 16 :]
    assert ref.cbc_decrypt(secret, iv, body) == PLAIN


@pytest.mark.parametrize("secret", [AES128_KEY, KEY1], ids=["128", "256"])
def test_aesgcm_values_open_with_an_independent_gcm_over_the_storage_key(secret: bytes) -> None:
    transformer = secrets_with(provider("aesgcm", ("k", secret))).transformer_for("", "secrets")
    stored = transformer.to_storage(PLAIN, STORAGE_KEY)
    prefix = b"k8s:enc:aesgcm:v1:k:"
    assert stored.startswith(prefix)
    nonce, sealed = stored[len(prefix) : len(prefix) + 12], stored[len(prefix) + 12 :]
    assert ref.gcm_decrypt(secret, nonce, sealed, STORAGE_KEY.encode()) == PLAIN
    with pytest.raises(ValueError, match="tag"):
        ref.gcm_decrypt(secret, nonce, sealed, b"/secrets/default/other")


def test_secretbox_values_open_with_an_independent_xsalsa20_poly1305() -> None:
    transformer = secrets_with(provider("secretbox", ("sb", KEY2))).transformer_for("", "secrets")
    stored = transformer.to_storage(PLAIN, STORAGE_KEY)
    prefix = b"k8s:enc:secretbox:v1:sb:"
    assert stored.startswith(prefix)
    nonce, sealed = stored[len(prefix) : len(prefix) + 24], stored[len(prefix) + 24 :]
    assert ref.secretbox_open(KEY2, nonce, sealed) == PLAIN


def test_values_written_in_the_published_layouts_are_read() -> None:
    """What Kubernetes writes (built here by the reference ciphers) kstore reads."""
    iv, gcm_nonce, box_nonce = bytes(range(16)), bytes(range(12)), bytes(range(24))
    written = {
        "aescbc": b"k8s:enc:aescbc:v1:key1:" + iv + ref.cbc_encrypt(KEY1, iv, PLAIN),
        "aesgcm": b"k8s:enc:aesgcm:v1:key1:"
        + gcm_nonce
        + ref.gcm_encrypt(KEY1, gcm_nonce, PLAIN, STORAGE_KEY.encode()),
        "secretbox": b"k8s:enc:secretbox:v1:key1:"
        + box_nonce
        + ref.secretbox_seal(KEY1, box_nonce, PLAIN),
    }
    for kind, stored in written.items():
        transformer = secrets_with(provider(kind, ("key1", KEY1))).transformer_for("", "secrets")
        assert transformer.from_storage(stored, STORAGE_KEY) == (PLAIN, False), kind


# -- round trips and failures -------------------------------------------------------------------

TRANSFORMERS: dict[str, Callable[[bytes], ValueTransformer]] = {
    "aescbc": AesCbcTransformer,
    "aesgcm": AesGcmTransformer,
    "secretbox": SecretboxTransformer,
}


@pytest.mark.parametrize(
    ("kind", "length"), list(itertools.product(TRANSFORMERS, [0, 1, 15, 16, 17, 4096]))
)
def test_each_provider_round_trips_any_length(kind: str, length: int) -> None:
    transformer = TRANSFORMERS[kind](KEY1)
    data = bytes(i % 251 for i in range(length))
    stored = transformer.to_storage(data, STORAGE_KEY)
    assert transformer.from_storage(stored, STORAGE_KEY) == (data, False)


@pytest.mark.parametrize("kind", list(TRANSFORMERS))
def test_every_write_uses_a_fresh_iv_or_nonce(kind: str) -> None:
    transformer = TRANSFORMERS[kind](KEY1)
    first, second = (transformer.to_storage(PLAIN, STORAGE_KEY) for _ in range(2))
    assert first != second
    assert PLAIN not in first


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("aesgcm", "cipher: message authentication failed"),
        ("secretbox", "secretbox: message authentication failed"),
    ],
)
def test_authenticated_providers_refuse_a_wrong_key(kind: str, message: str) -> None:
    stored = TRANSFORMERS[kind](KEY1).to_storage(PLAIN, STORAGE_KEY)
    with pytest.raises(CorruptObject, match=message) as info:
        TRANSFORMERS[kind](KEY2).from_storage(stored, STORAGE_KEY)
    assert info.value.code == 500


def test_aescbc_with_a_wrong_key_is_a_padding_error() -> None:
    # A fixed IV makes the garbage the wrong key produces, and so the outcome, deterministic.
    stored = AesCbcTransformer(KEY1, random_bytes=fixed(bytes(16))).to_storage(PLAIN, "")
    with pytest.raises(CorruptObject, match=r"padding|PKCS7"):
        AesCbcTransformer(KEY2).from_storage(stored, STORAGE_KEY)


def test_aesgcm_refuses_a_value_moved_to_another_storage_key() -> None:
    gcm = AesGcmTransformer(KEY1)
    stored = gcm.to_storage(PLAIN, STORAGE_KEY)
    with pytest.raises(CorruptObject, match="message authentication failed"):
        gcm.from_storage(stored, "/secrets/default/other")


@pytest.mark.parametrize(
    ("kind", "stored", "message"),
    [
        ("aescbc", b"short", "shorter than the required size"),
        ("aescbc", bytes(16 + 5), "not a multiple of the block size"),
        ("aescbc", bytes(16), "invalid PKCS7 data"),
        ("aesgcm", b"short", "shorter than the required size"),
        ("aesgcm", bytes(12 + 3), "message authentication failed"),
        ("secretbox", bytes(39), "shorter than the required size"),
    ],
)
def test_truncated_values_are_corrupt_objects(kind: str, stored: bytes, message: str) -> None:
    with pytest.raises(CorruptObject, match=message):
        TRANSFORMERS[kind](KEY1).from_storage(stored, STORAGE_KEY)


def test_identity_passes_plain_data_and_refuses_encrypted_data() -> None:
    identity = IdentityCheckTransformer()
    assert identity.to_storage(PLAIN, STORAGE_KEY) == PLAIN
    assert identity.from_storage(PLAIN, STORAGE_KEY) == (PLAIN, False)
    assert identity.from_storage(b"k8s\x00proto", STORAGE_KEY) == (b"k8s\x00proto", False)
    with pytest.raises(CorruptObject, match="identity transformer tried to read encrypted data"):
        identity.from_storage(b"k8s:enc:aescbc:v1:key1:abc", STORAGE_KEY)


@pytest.mark.parametrize(("kind", "size"), [("aescbc", 20), ("aesgcm", 33), ("secretbox", 16)])
def test_keys_of_the_wrong_size_are_refused(kind: str, size: int) -> None:
    with pytest.raises(ValueError, match="key size"):
        TRANSFORMERS[kind](bytes(size))
