"""Encryption configurations the tests build: fixed keys and a small document builder."""

from __future__ import annotations

import base64
import json
from typing import Any

from kstore.storage.encryption import EncryptionConfig, parse_encryption_config

KEY1 = bytes(range(32))
KEY2 = bytes(range(100, 132))
KEY3 = bytes(range(200, 232))
AES128_KEY = bytes(range(16))
AES192_KEY = bytes(range(24))


def b64(secret: bytes) -> str:
    return base64.b64encode(secret).decode()


def provider(kind: str, *keys: tuple[str, bytes]) -> dict[str, Any]:
    """``{"aescbc": {"keys": [...]}}``; ``identity`` takes no keys."""
    if kind == "identity":
        return {"identity": {}}
    return {kind: {"keys": [{"name": name, "secret": b64(secret)} for name, secret in keys]}}


def document(*rules: tuple[list[str], list[dict[str, Any]]]) -> dict[str, Any]:
    return {
        "apiVersion": "apiserver.config.k8s.io/v1",
        "kind": "EncryptionConfiguration",
        "resources": [{"resources": names, "providers": providers} for names, providers in rules],
    }


def config(*rules: tuple[list[str], list[dict[str, Any]]]) -> EncryptionConfig:
    return parse_encryption_config(json.dumps(document(*rules)))


def secrets_with(*providers: dict[str, Any]) -> EncryptionConfig:
    """Secrets encrypted by ``providers`` (first one writes); nothing else named."""
    return config((["secrets"], list(providers)))
