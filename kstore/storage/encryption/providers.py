"""The encryption providers of one key each, in Kubernetes' exact byte layouts.

Each class is a :class:`~kstore.storage.interface.ValueTransformer` for a single key and knows
nothing about prefixes (``k8s:enc:<provider>:v1:<key name>:`` is added and stripped by
:mod:`kstore.storage.encryption.prefix`). The bytes each one reads and writes after the prefix:

- ``aescbc``: a random 16-byte IV, then AES-CBC of the data padded with PKCS#7 (a full block
  of padding when the data fills its last block). No integrity and no authenticated data, as
  in Kubernetes, which is why Kubernetes no longer recommends it.
- ``aesgcm``: a random 12-byte nonce, then AES-GCM's ciphertext followed by its 16-byte tag,
  with the full storage key as additional authenticated data: bytes copied to another key do
  not decrypt.
- ``secretbox``: a random 24-byte nonce, then NaCl's secretbox (XSalsa20-Poly1305): the
  16-byte Poly1305 tag followed by the ciphertext. The key is not authenticated (Kubernetes
  does not pass it either).
- ``identity`` (:class:`IdentityCheckTransformer`): the data unchanged, but data that starts
  with ``k8s:enc:`` is refused, so a resource whose encryption config was dropped fails loudly
  instead of handing ciphertext to the decoder.

Reading bytes that do not decrypt raises :class:`~kstore.errors.CorruptObject` with
Kubernetes' message where it has a clear one; a failure to encrypt is an
:class:`~kstore.errors.InternalError`. Every object here is immutable and thread-safe.

``random_bytes`` lets a caller fix IVs and nonces (published test vectors are computed with
fixed ones); anything else must keep the default, the operating system's CSPRNG.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Final

import nacl.exceptions
import nacl.secret
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from kstore.errors import CorruptObject, InternalError
from kstore.storage.interface import ValueTransformer

__all__ = [
    "AES_BLOCK_SIZE",
    "AES_KEY_SIZES",
    "ENCRYPTED_PREFIX",
    "GCM_NONCE_SIZE",
    "SECRETBOX_KEY_SIZE",
    "SECRETBOX_NONCE_SIZE",
    "SECRETBOX_TAG_SIZE",
    "AesCbcTransformer",
    "AesGcmTransformer",
    "IdentityCheckTransformer",
    "RandomBytes",
    "SecretboxTransformer",
    "authenticated_data",
]

#: Reserved by Kubernetes for encrypted values (JSON starts with ``{``, protobuf with ``k8s\0``).
ENCRYPTED_PREFIX: Final = b"k8s:enc:"
AES_BLOCK_SIZE: Final = 16
AES_KEY_SIZES: Final = (16, 24, 32)
GCM_NONCE_SIZE: Final = 12
SECRETBOX_KEY_SIZE: Final = 32
SECRETBOX_NONCE_SIZE: Final = 24
SECRETBOX_TAG_SIZE: Final = 16

#: ``random_bytes(n)`` returns ``n`` unpredictable bytes.
RandomBytes = Callable[[int], bytes]

_SHORT = "the stored data was shorter than the required size"


def authenticated_data(key: str) -> bytes:
    """The storage key as the bytes AES-GCM authenticates. Keys read back from etcd may hold
    bytes that are not UTF-8 (kept as surrogates), so they round-trip to the original bytes."""
    return key.encode("utf-8", "surrogateescape")


def _random(random_bytes: RandomBytes, size: int) -> bytes:
    try:
        value = random_bytes(size)
    except Exception as exc:
        raise InternalError(f"unable to read sufficient random bytes: {exc}") from exc
    if len(value) != size:
        raise InternalError("unable to read sufficient random bytes")
    return value


class AesCbcTransformer(ValueTransformer):
    """``aescbc`` with one key of 16, 24 or 32 bytes (see the module docstring)."""

    __slots__ = ("_algorithm", "_random_bytes")

    def __init__(self, secret: bytes, *, random_bytes: RandomBytes = os.urandom) -> None:
        if len(secret) not in AES_KEY_SIZES:
            raise ValueError(f"invalid AES key size {len(secret)}")
        self._algorithm = algorithms.AES(secret)
        self._random_bytes = random_bytes

    def to_storage(self, data: bytes, key: str) -> bytes:
        iv = _random(self._random_bytes, AES_BLOCK_SIZE)
        padding = AES_BLOCK_SIZE - len(data) % AES_BLOCK_SIZE
        encryptor = Cipher(self._algorithm, modes.CBC(iv)).encryptor()
        body = encryptor.update(data + bytes([padding]) * padding) + encryptor.finalize()
        return iv + body

    def from_storage(self, data: bytes, key: str) -> tuple[bytes, bool]:
        if len(data) < AES_BLOCK_SIZE:
            raise CorruptObject(_SHORT)
        iv, body = data[:AES_BLOCK_SIZE], data[AES_BLOCK_SIZE:]
        if len(body) % AES_BLOCK_SIZE:
            raise CorruptObject("the stored data is not a multiple of the block size")
        decryptor = Cipher(self._algorithm, modes.CBC(iv)).decryptor()
        plain = decryptor.update(body) + decryptor.finalize()
        # PKCS#7 checked as Kubernetes checks it (any count up to the data's length).
        count = plain[-1] if plain else 0
        if count == 0 or count > len(plain):
            raise CorruptObject("invalid PKCS7 data (empty or not padded)")
        if plain[-count:] != bytes([count]) * count:
            raise CorruptObject("invalid padding on input")
        return plain[:-count], False


class AesGcmTransformer(ValueTransformer):
    """``aesgcm`` with one key of 16, 24 or 32 bytes; the storage key is authenticated."""

    __slots__ = ("_aead", "_random_bytes")

    def __init__(self, secret: bytes, *, random_bytes: RandomBytes = os.urandom) -> None:
        if len(secret) not in AES_KEY_SIZES:
            raise ValueError(f"invalid AES key size {len(secret)}")
        self._aead = AESGCM(secret)
        self._random_bytes = random_bytes

    def to_storage(self, data: bytes, key: str) -> bytes:
        nonce = _random(self._random_bytes, GCM_NONCE_SIZE)
        return nonce + self._aead.encrypt(nonce, data, authenticated_data(key))

    def from_storage(self, data: bytes, key: str) -> tuple[bytes, bool]:
        if len(data) < GCM_NONCE_SIZE:
            raise CorruptObject(_SHORT)
        nonce, sealed = data[:GCM_NONCE_SIZE], data[GCM_NONCE_SIZE:]
        try:
            return self._aead.decrypt(nonce, sealed, authenticated_data(key)), False
        except (InvalidTag, ValueError):
            # Go's crypto/cipher wording: wrong key, other storage key, or altered bytes.
            raise CorruptObject("cipher: message authentication failed") from None


class SecretboxTransformer(ValueTransformer):
    """``secretbox`` (XSalsa20-Poly1305) with one 32-byte key."""

    __slots__ = ("_box", "_random_bytes")

    def __init__(self, secret: bytes, *, random_bytes: RandomBytes = os.urandom) -> None:
        if len(secret) != SECRETBOX_KEY_SIZE:
            raise ValueError(f"expected key size 32 for secretbox provider, got {len(secret)}")
        self._box = nacl.secret.SecretBox(secret)
        self._random_bytes = random_bytes

    def to_storage(self, data: bytes, key: str) -> bytes:
        nonce = _random(self._random_bytes, SECRETBOX_NONCE_SIZE)
        # PyNaCl returns nonce || tag || ciphertext: the layout Go's secretbox.Seal appends
        # to the nonce in Kubernetes.
        return bytes(self._box.encrypt(data, nonce))

    def from_storage(self, data: bytes, key: str) -> tuple[bytes, bool]:
        if len(data) < SECRETBOX_NONCE_SIZE + SECRETBOX_TAG_SIZE:
            raise CorruptObject(_SHORT)
        try:
            plain = self._box.decrypt(data[SECRETBOX_NONCE_SIZE:], data[:SECRETBOX_NONCE_SIZE])
        except nacl.exceptions.CryptoError:
            # Kubernetes says "output array was not large enough for encryption" here, which
            # misleads whoever reads it; this names what happened.
            raise CorruptObject("secretbox: message authentication failed") from None
        return plain, False


class IdentityCheckTransformer(ValueTransformer):
    """``identity``: data as it is, refusing data that carries the encrypted prefix."""

    __slots__ = ()

    def to_storage(self, data: bytes, key: str) -> bytes:
        return data

    def from_storage(self, data: bytes, key: str) -> tuple[bytes, bool]:
        if data.startswith(ENCRYPTED_PREFIX):
            raise CorruptObject("identity transformer tried to read encrypted data")
        return data, False
