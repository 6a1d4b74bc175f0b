"""``metadata.generateName``: names made of a prefix and five random characters.

As Kubernetes' ``names.SimpleNameGenerator``: the prefix is cut to 58 characters so the result
never exceeds 63, and the suffix comes from an alphabet without vowels (no accidental words) and
without look-alikes (``0``/``o``, ``1``/``l``/``i``, ``3``/``e``). The generator does not check
that the name is free; the store retries a create whose generated name collides
(:data:`MAX_GENERATE_NAME_ATTEMPTS` times, as Kubernetes' ``maxNameGenerationCreateAttempts``).
"""

from __future__ import annotations

import secrets
from typing import Final

__all__ = [
    "MAX_GENERATED_NAME_PREFIX",
    "MAX_GENERATE_NAME_ATTEMPTS",
    "RANDOM_SUFFIX_LENGTH",
    "generate_name",
]

_ALPHABET: Final = "bcdfghjklmnpqrstvwxz2456789"
RANDOM_SUFFIX_LENGTH: Final = 5
MAX_GENERATED_NAME_PREFIX: Final = 63 - RANDOM_SUFFIX_LENGTH
MAX_GENERATE_NAME_ATTEMPTS: Final = 8


def generate_name(base: str) -> str:
    """``base`` (cut to 58 characters) followed by five random characters."""
    suffix = "".join(secrets.choice(_ALPHABET) for _ in range(RANDOM_SUFFIX_LENGTH))
    return base[:MAX_GENERATED_NAME_PREFIX] + suffix
