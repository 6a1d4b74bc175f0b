"""``metadata.generateName``: names made of a prefix and five random characters.

As Kubernetes' ``names.SimpleNameGenerator``: the prefix is cut to 58 characters so the result
never exceeds 63, and the suffix comes from an alphabet without vowels (no accidental words) and
without look-alikes (``0``/``o``, ``1``/``l``/``i``, ``3``/``e``). The generator does not check
that the name is free; the store retries a create whose generated name collides
(:data:`MAX_GENERATE_NAME_ATTEMPTS` times, as Kubernetes' ``maxNameGenerationCreateAttempts``).
"""

from __future__ import annotations

import os
import threading
from typing import Final

__all__ = [
    "MAX_GENERATED_NAME_PREFIX",
    "MAX_GENERATE_NAME_ATTEMPTS",
    "RANDOM_SUFFIX_LENGTH",
    "generate_name",
    "random_bytes",
]

_ALPHABET: Final = "bcdfghjklmnpqrstvwxz2456789"
#: Random bytes below this are used (``byte % 27``, every character equally likely); the rest
#: (13 values in 256) are skipped.
_USABLE_BYTE: Final = 256 - 256 % len(_ALPHABET)
RANDOM_SUFFIX_LENGTH: Final = 5
MAX_GENERATED_NAME_PREFIX: Final = 63 - RANDOM_SUFFIX_LENGTH
MAX_GENERATE_NAME_ATTEMPTS: Final = 8


class _RandomPool:
    """Bytes from ``os.urandom`` read 4 KiB at a time and handed out a few at a time.

    ``os.urandom`` lets go of the GIL around its system call, and on a busy server taking the
    GIL back costs far more than the call (151 us per uid under cProfile with 16 concurrent
    creates on the dev VM, against ~1 us alone): one call per 256 uids instead of one per uid.
    The bytes are the same kernel randomness; the lock only guards the slice position.
    """

    _CHUNK = 4096

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._buffer = b""
        self._pos = 0

    def reset(self) -> None:
        """Forget the bytes held (in a forked child, which must not reuse its parent's) and
        take a new lock (another thread may have held the old one at the fork)."""
        self._lock = threading.Lock()
        self._buffer = b""
        self._pos = 0

    def take(self, size: int) -> bytes:
        with self._lock:
            if self._pos + size > len(self._buffer):
                self._buffer = os.urandom(self._CHUNK)
                self._pos = 0
            start = self._pos
            self._pos = start + size
            return self._buffer[start : start + size]


_RANDOM = _RandomPool()
# A forked child must not hand out the bytes its parent still holds (the same uids).
os.register_at_fork(after_in_child=_RANDOM.reset)


def random_bytes(size: int) -> bytes:
    """``size`` bytes of kernel randomness, from a pool read ahead (see :class:`_RandomPool`),
    for uids and generated names: never a system call per use."""
    return _RANDOM.take(size)


def generate_name(base: str) -> str:
    """``base`` (cut to 58 characters) followed by five random characters (from pooled
    kernel randomness, as :func:`secrets.choice` would pick them, without its system call
    per character: about one in 20 bytes is skipped to keep the characters equally likely)."""
    chars: list[str] = []
    while len(chars) < RANDOM_SUFFIX_LENGTH:
        for byte in random_bytes(8):
            if byte < _USABLE_BYTE:
                chars.append(_ALPHABET[byte % len(_ALPHABET)])
                if len(chars) == RANDOM_SUFFIX_LENGTH:
                    break
    return base[:MAX_GENERATED_NAME_PREFIX] + "".join(chars)
