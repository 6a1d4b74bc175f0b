"""The serializer contract: bytes <-> an object dict in one media type, with no version logic.

A serializer only moves between bytes and the Kubernetes JSON shape of an object; which version
an object is in, defaulting and conversion belong to :mod:`kstore.codec.versioning`.

Guarantees every serializer gives:

- ``encode`` is deterministic: the same object encodes to the same bytes (so an unchanged
  object is never rewritten to storage);
- ``encode`` never mutates its argument, ``decode`` returns a fresh object the caller owns;
- malformed input raises :class:`kstore.errors.BadRequest` (never another exception type).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from kstore.api.gvk import Object

__all__ = ["DecodeResult", "Serializer"]


@dataclass(frozen=True, slots=True)
class DecodeResult:
    """An object decoded in strict mode, with the strict-decoding problems found on the way.

    ``problems`` are Kubernetes' strict-decoding messages, e.g. ``duplicate field "foo"`` or
    ``unknown field "spec.foo"``; the caller decides whether they fail the request
    (``fieldValidation=Strict``), become warnings (``Warn``) or are dropped (``Ignore``).
    """

    obj: Object
    problems: list[str] = field(default_factory=list)


@runtime_checkable
class Serializer(Protocol):
    """Bytes <-> object for one media type."""

    @property
    def media_type(self) -> str:
        """The media type this serializer reads and writes, e.g. ``application/json``."""
        ...

    def decode(self, data: bytes) -> Object:
        """Decode one object; raise BadRequest on malformed input."""
        ...

    def decode_strict(self, data: bytes) -> DecodeResult:
        """Decode one object and report what strict decoding finds at this level
        (duplicate fields; for self-describing binary formats, unknown fields)."""
        ...

    def encode(self, obj: Object) -> bytes:
        """Encode one object deterministically."""
        ...
