"""Encryption at rest: Kubernetes' ``EncryptionConfiguration`` and its value transformers.

Where each part lives:

- :mod:`.config` — parsing and validating the configuration file, and the transformer of
  each resource (:meth:`EncryptionConfig.transformer_for`, which a registry takes as its
  per-resource transformer factory);
- :mod:`.providers` — ``aescbc``, ``aesgcm``, ``secretbox`` and ``identity`` for one key, in
  Kubernetes' byte layouts;
- :mod:`.prefix` — the prefix chain (``k8s:enc:<provider>:v1:<key name>:``): the first
  provider and key write, all read, reads through the others are ``stale``;
- :mod:`.rewrite` — re-encrypting every object with the current first key.

Stored values are interchangeable with Kubernetes' for the same key and storage key (the
storage key is the authenticated data of ``aesgcm``).
"""

from kstore.storage.encryption.config import (
    EncryptionConfig,
    GroupResource,
    load_encryption_config,
    parse_encryption_config,
)
from kstore.storage.encryption.rewrite import RewriteResult, RewriteTarget, rewrite

__all__ = [
    "EncryptionConfig",
    "GroupResource",
    "RewriteResult",
    "RewriteTarget",
    "load_encryption_config",
    "parse_encryption_config",
    "rewrite",
]
