"""Kubernetes' ``EncryptionConfiguration`` (``--encryption-provider-config``) and the value
transformer it gives each resource.

The file is YAML or JSON, ``apiVersion: apiserver.config.k8s.io/v1``,
``kind: EncryptionConfiguration``::

    resources:
      - resources: [secrets, configmaps, "*.apps"]
        providers:
          - aescbc: {keys: [{name: key2, secret: <base64 of 32 bytes>}]}
          - aescbc: {keys: [{name: key1, secret: <base64>}]}
          - identity: {}

Providers: ``aescbc``, ``aesgcm``, ``secretbox`` and ``identity``. ``kms`` (v1 and v2) needs a
KMS plugin over gRPC and is **not supported**: a configuration naming it is refused with a
clear error rather than silently storing data unencrypted.

The rules kept from kube-apiserver (``encryptionconfig/config.go`` and the config validation):

- resource names are parsed as ``<resource>.<group>``: ``secrets`` (core), ``deployments.apps``,
  ``*.apps`` (every resource of a group), ``*.`` (every core resource), ``*.*`` (everything);
- validation collects every error, each with its field path and Kubernetes' wording: at least
  one rule, resource and provider; exactly one provider per list element; keys with a name and
  a base64 secret of 16, 24 or 32 bytes (AES) or 32 bytes (secretbox); no capital letters,
  bare ``*``, ``resource.*``, ``events.k8s.io`` or ``extensions`` names; no duplicate or
  overlapping names inside one list;
- a name after an earlier ``*.<group>`` or ``*.*`` rule is refused as masked; a name given in
  two rules gets the providers of both, in order;
- a resource's transformer is the one of its exact name, else of ``*.<its group>``, else of
  ``*.*``; a resource the file does not name keeps plain data but refuses encrypted data.

Inside a resource's transformer the first provider (and its first key) encrypts every write;
every provider and key can read (see :mod:`kstore.storage.encryption.prefix`). The file is
read and validated by :mod:`kstore.storage.encryption._config_file`. Errors are
:class:`~kstore.errors.BadRequest`. Secrets never appear in messages or reprs.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Final

from kstore.errors import BadRequest
from kstore.storage.encryption._config_file import (
    ANY_RESOURCE,
    API_VERSION,
    KIND,
    EncryptionKey,
    GroupResource,
    ProviderConfig,
    ResourceRule,
    read_rules,
)
from kstore.storage.encryption.prefix import PrefixedTransformer, PrefixTransformers
from kstore.storage.encryption.providers import (
    AesCbcTransformer,
    AesGcmTransformer,
    IdentityCheckTransformer,
    SecretboxTransformer,
)
from kstore.storage.interface import ValueTransformer

__all__ = [
    "API_VERSION",
    "KIND",
    "PROVIDER_PREFIXES",
    "EncryptionConfig",
    "EncryptionKey",
    "GroupResource",
    "ProviderConfig",
    "ResourceRule",
    "load_encryption_config",
    "parse_encryption_config",
]

#: The prefix of each encrypting provider; a key's name and ``:`` follow it.
PROVIDER_PREFIXES: Final = {
    "aescbc": b"k8s:enc:aescbc:v1:",
    "aesgcm": b"k8s:enc:aesgcm:v1:",
    "secretbox": b"k8s:enc:secretbox:v1:",
}
_NO_MATCHING_KEY: Final = {
    "aescbc": "no matching key was found for the provided AES transformer",
    "aesgcm": "no matching key was found for the provided AES transformer",
    "secretbox": "no matching key was found for the provided Secretbox transformer",
}


def _provider_pair(provider: ProviderConfig) -> PrefixedTransformer:
    if provider.type == "identity":
        return PrefixedTransformer(b"", IdentityCheckTransformer())
    keyed: list[PrefixedTransformer] = []
    for key in provider.keys:
        inner: ValueTransformer
        if provider.type == "aescbc":
            inner = AesCbcTransformer(key.secret)
        elif provider.type == "aesgcm":
            inner = AesGcmTransformer(key.secret)
        else:
            inner = SecretboxTransformer(key.secret)
        keyed.append(PrefixedTransformer(key.name.encode() + b":", inner))
    by_key = PrefixTransformers(keyed, no_match=_NO_MATCHING_KEY[provider.type])
    return PrefixedTransformer(PROVIDER_PREFIXES[provider.type], by_key)


class EncryptionConfig:
    """A validated configuration and the transformer of every resource it names.

    Transformers (and their ciphers) are built once here and shared by every caller."""

    def __init__(self, rules: Sequence[ResourceRule]) -> None:
        self._rules = tuple(rules)
        chains: dict[GroupResource, list[PrefixedTransformer]] = {}
        for rule in self._rules:
            pairs = [_provider_pair(p) for p in rule.providers]
            for name in rule.resources:
                gr = GroupResource.parse(name)
                for wider in (GroupResource(gr.group, "*"), ANY_RESOURCE):
                    if wider in chains:
                        raise BadRequest(f'resource "{gr}" is masked by earlier rule "{wider}"')
                chains.setdefault(gr, []).extend(pairs)
        self._transformers: dict[GroupResource, ValueTransformer] = {
            gr: PrefixTransformers(pairs, no_match="no matching prefix found")
            for gr, pairs in chains.items()
        }
        self._unnamed = IdentityCheckTransformer()

    @property
    def rules(self) -> tuple[ResourceRule, ...]:
        return self._rules

    def _match(self, group: str, resource: str) -> ValueTransformer | None:
        for gr in (GroupResource(group, resource), GroupResource(group, "*"), ANY_RESOURCE):
            found = self._transformers.get(gr)
            if found is not None:
                return found
        return None

    def covers(self, group: str, resource: str) -> bool:
        """Whether a rule names the resource (exactly or through a wildcard)."""
        return self._match(group, resource) is not None

    def transformer_for(self, group: str, resource: str) -> ValueTransformer:
        """The transformer of a resource (``""`` is the core group, ``resource`` the plural).
        Resources no rule names get the identity that refuses encrypted data."""
        return self._match(group, resource) or self._unnamed


def parse_encryption_config(text: str | bytes) -> EncryptionConfig:
    """An :class:`EncryptionConfig` from the text of a configuration file (YAML or JSON).
    Raises BadRequest listing every problem."""
    return EncryptionConfig(read_rules(text))


def load_encryption_config(path: str | os.PathLike[str]) -> EncryptionConfig:
    """The configuration in the file at ``path`` (``--encryption-provider-config``)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise BadRequest(
            f'error opening encryption provider configuration file "{os.fspath(path)}": '
            f"{exc.strerror or exc}"
        ) from None
    if not data.strip():
        raise BadRequest(f'encryption provider configuration file "{os.fspath(path)}" is empty')
    try:
        return parse_encryption_config(data)
    except BadRequest as exc:
        raise BadRequest(f"error while parsing file: {exc.message}") from None
