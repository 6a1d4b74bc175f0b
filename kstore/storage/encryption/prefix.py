"""Choosing a transformer by the prefix of the stored bytes: how key rotation works.

:class:`PrefixTransformers` holds an ordered list of (prefix, transformer) pairs, as
Kubernetes' ``value.NewPrefixTransformers`` does, and is used at two levels: the providers
of a resource (``k8s:enc:aescbc:v1:``, ``k8s:enc:secretbox:v1:``, the empty prefix of
``identity``) and, inside one provider, its keys (``<key name>:``). The rules:

- **writing** always uses the first pair and puts its prefix in front of what it returns;
- **reading** tries, in order, every pair whose prefix starts the data, with the prefix
  stripped. A pair that matches but fails does not end the search: two ``aescbc`` providers
  (the key being rotated to, and the one being rotated away from) share a prefix;
- a read by any pair but the first is **stale** (as is one its inner transformer calls
  stale), so the next update rewrites the value with the first pair even when the object is
  unchanged. A new first key therefore takes over gradually, or at once with
  :mod:`kstore.storage.encryption.rewrite`;
- the empty prefix (``identity``) matches everything; when it refuses the data (encrypted
  bytes) its error is dropped so the later providers are tried;
- when nothing reads the data the errors of the pairs that matched are raised together as
  one :class:`~kstore.errors.CorruptObject` (``[first, second]`` when there are several, each
  message once), or the configured "no match" message when no prefix matched.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kstore.errors import CorruptObject
from kstore.storage.interface import ValueTransformer

__all__ = ["PrefixTransformers", "PrefixedTransformer"]


@dataclass(frozen=True, slots=True)
class PrefixedTransformer:
    """One transformer and the prefix its stored bytes carry."""

    prefix: bytes
    transformer: ValueTransformer


class PrefixTransformers(ValueTransformer):
    """The first pair writes; reads go by prefix (see the module docstring)."""

    __slots__ = ("_no_match", "_pairs")

    def __init__(self, pairs: Sequence[PrefixedTransformer], *, no_match: str) -> None:
        if not pairs:
            raise ValueError("at least one prefixed transformer is required")
        self._pairs = tuple(pairs)
        self._no_match = no_match

    @property
    def pairs(self) -> tuple[PrefixedTransformer, ...]:
        return self._pairs

    def to_storage(self, data: bytes, key: str) -> bytes:
        first = self._pairs[0]
        return first.prefix + first.transformer.to_storage(data, key)

    def from_storage(self, data: bytes, key: str) -> tuple[bytes, bool]:
        errors: list[str] = []
        for index, pair in enumerate(self._pairs):
            if not data.startswith(pair.prefix):
                continue
            try:
                plain, stale = pair.transformer.from_storage(data[len(pair.prefix) :], key)
            except Exception as exc:
                if pair.prefix:
                    errors.append(str(exc))
                continue
            return plain, stale or index != 0
        if errors:
            unique = list(dict.fromkeys(errors))
            raise CorruptObject(unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]")
        raise CorruptObject(self._no_match)
