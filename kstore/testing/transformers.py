"""Value transformers the conformance suite stores through, to see what a backend does with bytes.

The suite's Pods are always stored through a :class:`PrefixTransformer` (as Kubernetes' suite
does), so every test also checks that a backend applies the transformer on the way in and out
and hands it the storage key. The other transformers here are "views" of the same stored bytes:
a second :class:`~kstore.storage.interface.Storage` for the same resource with another
transformer writes bytes the main view cannot read (corruption), reports them stale, fails on
chosen keys, or writes while a read is in progress. Failures raise :class:`TransformError`, which
is deliberately not a kstore error: a backend must turn any transformer failure into
``CorruptObject``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from kstore.storage.interface import ValueTransformer

__all__ = [
    "FailingTransformer",
    "KeyFailingTransformer",
    "LeadingSpaceTransformer",
    "PrefixTransformer",
    "RawBytesTransformer",
    "ReproducingTransformer",
    "StaleTransformer",
    "TransformError",
]


class TransformError(Exception):
    """A test transformer refused the bytes (like a decryption failure)."""


class PrefixTransformer(ValueTransformer):
    """Prepends ``prefix`` on write and requires it on read; records the keys it is given."""

    def __init__(self, prefix: bytes) -> None:
        self.prefix = prefix
        self._lock = threading.Lock()
        self.write_keys: list[str] = []
        self.read_keys: list[str] = []
        self.written: list[bytes] = []

    def to_storage(self, data: bytes, key: str) -> bytes:
        with self._lock:
            self.write_keys.append(key)
            self.written.append(data)
        return self.prefix + data

    def from_storage(self, data: bytes, key: str) -> tuple[bytes, bool]:
        with self._lock:
            self.read_keys.append(key)
        if not data.startswith(self.prefix):
            raise TransformError(f"value of {key!r} does not have the prefix {self.prefix!r}")
        return data[len(self.prefix) :], False


class StaleTransformer(ValueTransformer):
    """``inner``, but every read reports the bytes stale (e.g. encrypted with an old key)."""

    def __init__(self, inner: ValueTransformer) -> None:
        self.inner = inner

    def to_storage(self, data: bytes, key: str) -> bytes:
        return self.inner.to_storage(data, key)

    def from_storage(self, data: bytes, key: str) -> tuple[bytes, bool]:
        plain, _ = self.inner.from_storage(data, key)
        return plain, True


class FailingTransformer(ValueTransformer):
    """Writes like ``inner``; every read fails."""

    def __init__(self, inner: ValueTransformer) -> None:
        self.inner = inner

    def to_storage(self, data: bytes, key: str) -> bytes:
        return self.inner.to_storage(data, key)

    def from_storage(self, data: bytes, key: str) -> tuple[bytes, bool]:
        raise TransformError(f"failed transformation of {key!r}")


class KeyFailingTransformer(ValueTransformer):
    """``inner``, but reads of keys for which ``fails(key)`` is true fail."""

    def __init__(self, inner: ValueTransformer, fails: Callable[[str], bool]) -> None:
        self.inner = inner
        self.fails = fails

    def to_storage(self, data: bytes, key: str) -> bytes:
        return self.inner.to_storage(data, key)

    def from_storage(self, data: bytes, key: str) -> tuple[bytes, bool]:
        if self.fails(key):
            raise TransformError(f"injected failure reading {key!r}")
        return self.inner.from_storage(data, key)


class LeadingSpaceTransformer(ValueTransformer):
    """Writes ``" " + encoding`` under ``inner``: valid JSON that a codec never produces, so
    the stored bytes differ from the canonical encoding of the same object."""

    def __init__(self, inner: ValueTransformer) -> None:
        self.inner = inner

    def to_storage(self, data: bytes, key: str) -> bytes:
        return self.inner.to_storage(b" " + data, key)

    def from_storage(self, data: bytes, key: str) -> tuple[bytes, bool]:
        return self.inner.from_storage(data, key)


class ReproducingTransformer(ValueTransformer):
    """``inner``, but every read first runs ``on_read`` (which writes a new object), so writes
    land in the middle of list reads. Stops after ``limit`` reads: a list that never settles on
    one revision would otherwise grow its own input forever."""

    def __init__(self, inner: ValueTransformer, on_read: Callable[[], None], limit: int) -> None:
        self.inner = inner
        self.on_read = on_read
        self.limit = limit
        self._lock = threading.Lock()
        self.reads = 0

    def to_storage(self, data: bytes, key: str) -> bytes:
        return self.inner.to_storage(data, key)

    def from_storage(self, data: bytes, key: str) -> tuple[bytes, bool]:
        with self._lock:
            self.reads += 1
            reads = self.reads
        if reads > self.limit:
            raise TransformError(f"more than {self.limit} reads: the list does not settle")
        self.on_read()
        return self.inner.from_storage(data, key)


class RawBytesTransformer(ValueTransformer):
    """Stores ``payload`` whatever the object is, so a backend-agnostic test can put arbitrary
    bytes at a key. Its own reads of ``payload`` give back the encoding it replaced, so the
    writing storage itself stays consistent; other stored bytes are read through ``inner``.
    Every other view of the resource sees ``payload``."""

    def __init__(self, inner: ValueTransformer, payload: bytes) -> None:
        self.inner = inner
        self.payload = payload
        self._lock = threading.Lock()
        self._replaced: dict[str, bytes] = {}

    def to_storage(self, data: bytes, key: str) -> bytes:
        with self._lock:
            self._replaced[key] = data
        return self.payload

    def from_storage(self, data: bytes, key: str) -> tuple[bytes, bool]:
        with self._lock:
            replaced = self._replaced.get(key)
        if data == self.payload and replaced is not None:
            return replaced, False
        return self.inner.from_storage(data, key)
