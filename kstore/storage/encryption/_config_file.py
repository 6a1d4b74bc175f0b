"""The ``EncryptionConfiguration`` document read into validated rules.

Validation follows kube-apiserver's (``apis/config/validation``): every problem is collected
with its field path and Kubernetes' wording, then raised together as one
:class:`~kstore.errors.BadRequest` (``[first, second, ...]`` when there are several). Unknown
fields are ignored, as Kubernetes' non-strict decoder does; a provider field set to null
counts as absent. Secrets never appear in messages: Kubernetes prints ``"REDACTED"``.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import yaml

from kstore.errors import BadRequest
from kstore.storage.encryption.providers import AES_KEY_SIZES, SECRETBOX_KEY_SIZE

__all__ = [
    "ANY_RESOURCE",
    "API_VERSION",
    "KIND",
    "EncryptionKey",
    "GroupResource",
    "ProviderConfig",
    "ResourceRule",
    "read_rules",
]

API_VERSION: Final = "apiserver.config.k8s.io/v1"
KIND: Final = "EncryptionConfiguration"
_KEY_SIZES: Final = {
    "aescbc": AES_KEY_SIZES,
    "aesgcm": AES_KEY_SIZES,
    "secretbox": (SECRETBOX_KEY_SIZE,),
}
#: Field order of a provider element as Kubernetes' ProviderConfiguration lists them.
_PROVIDER_FIELDS: Final = ("aesgcm", "aescbc", "secretbox", "kms", "identity")
_NON_REST_RESOURCES: Final = frozenset(
    {"apiserveripinfo", "serviceipallocations", "servicenodeportallocations"}
)
_ONE_PROVIDER_ERR: Final = (
    "more than one provider specified in a single element, should split into different "
    "list elements"
)
_NO_PROVIDER_ERR: Final = (
    "provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, "
    "Secretbox, Identity"
)
_KMS_ERR: Final = "kms providers are not supported by kstore (use aescbc, aesgcm or secretbox)"
_OVERLAP_ERR: Final = (
    "using overlapping resources such as 'secrets' and '*.' in the same resource list is "
    "not allowed as they will be masked"
)
_DUPLICATE_ERR: Final = "the same resource cannot be specified multiple times"
_EVENTS_GROUP_ERR: Final = (
    "'*.events.k8s.io' objects are stored using the 'events' API group in etcd. Use 'events' "
    "instead in the config file"
)
_STAR_ERR: Final = (
    "use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources"
)


@dataclass(frozen=True, slots=True)
class GroupResource:
    """A resource and its API group; ``*`` stands for any in either place."""

    group: str
    resource: str

    @classmethod
    def parse(cls, text: str) -> GroupResource:
        """``deployments.apps`` -> (apps, deployments); the group follows the first dot."""
        resource, dot, group = text.partition(".")
        return cls(group if dot else "", resource)

    def __str__(self) -> str:
        # As Kubernetes writes a rule back: the core wildcard is "*.", others resource.group.
        if self.group == "" and self.resource == "*":
            return "*."
        return f"{self.resource}.{self.group}" if self.group else self.resource


ANY_RESOURCE: Final = GroupResource("*", "*")


@dataclass(frozen=True, kw_only=True, slots=True)
class EncryptionKey:
    """A named key; ``secret`` is the decoded key material."""

    name: str
    secret: bytes = field(repr=False)


@dataclass(frozen=True, kw_only=True, slots=True)
class ProviderConfig:
    """One provider: ``type`` is ``aescbc``, ``aesgcm``, ``secretbox`` or ``identity``."""

    type: str
    keys: tuple[EncryptionKey, ...] = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class ResourceRule:
    """Resources (as written in the file) and the providers they use, first one writing."""

    resources: tuple[str, ...]
    providers: tuple[ProviderConfig, ...]


def _go_quote(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _go_strings(values: Sequence[str]) -> str:
    return "[]string{" + ", ".join(_go_quote(v) for v in values) + "}"


class _Errors:
    """Field errors rendered as Kubernetes' ``field.Error``; raised together at the end."""

    def __init__(self) -> None:
        self.messages: list[str] = []

    def required(self, path: str, detail: str) -> None:
        self.messages.append(f"{path}: Required value: {detail}")

    def invalid(self, path: str, value: str, detail: str) -> None:
        self.messages.append(f"{path}: Invalid value: {value}: {detail}")

    def wrong_type(self, path: str, expected: str) -> None:
        self.messages.append(f"{path}: Invalid value: must be {expected}")

    def raise_any(self) -> None:
        if not self.messages:
            return
        if len(self.messages) == 1:
            raise BadRequest(self.messages[0])
        raise BadRequest("[" + ", ".join(self.messages) + "]")


def _list_at(value: Any, path: str, errors: _Errors) -> list[Any] | None:
    if value is None:
        return []
    if not isinstance(value, list):
        errors.wrong_type(path, "a list")
        return None
    return value


def _validate_names(names: list[str], path: str, errors: _Errors) -> None:
    parsed = [GroupResource.parse(n) for n in names]
    duplicate = overlap = False
    # The same walk as Kubernetes' validateResourceOverlap, so the same lists are refused.
    for i, first in enumerate(parsed):
        for j, second in enumerate(parsed):
            if i == j:
                continue
            if first == second and not duplicate:
                duplicate = True
                continue
            if overlap:
                continue
            if first == ANY_RESOURCE or (
                first.group == second.group and "*" in (first.resource, second.resource)
            ):
                overlap = True
    if duplicate:
        errors.invalid(path, _go_strings(names), _DUPLICATE_ERR)
    if overlap:
        errors.invalid(path, _go_strings(names), _OVERLAP_ERR)
    for j, name in enumerate(names):
        at, gr = f"{path}[{j}]", GroupResource.parse(name)
        if name.lower() != name:
            detail = "resource name should not contain capital letters"
        elif name == "*":
            detail = _STAR_ERR
        elif name in _NON_REST_RESOURCES:
            detail = "resources which do not have REST API/s cannot be encrypted"
        elif gr.group == "events.k8s.io":
            detail = _EVENTS_GROUP_ERR
        elif gr.group == "extensions":
            detail = "'extensions' group has been removed and cannot be used for encryption"
        elif gr.group == "*" and gr.resource != "*":
            detail = "encrypting the same resource across groups is not supported"
        else:
            continue
        errors.invalid(at, _go_quote(name), detail)


def _parse_keys(kind: str, body: Any, path: str, errors: _Errors) -> tuple[EncryptionKey, ...]:
    if not isinstance(body, dict):
        errors.wrong_type(path, "an object")
        return ()
    keys_path = f"{path}.keys"
    items = _list_at(body.get("keys"), keys_path, errors)
    if items is None:
        return ()
    if not items:
        errors.required(keys_path, "at least one keys is required")
        return ()
    sizes = _KEY_SIZES[kind]
    keys: list[EncryptionKey] = []
    for i, item in enumerate(items):
        at = f"{keys_path}[{i}]"
        if not isinstance(item, dict):
            errors.wrong_type(at, "an object")
            continue
        name, secret = item.get("name") or "", item.get("secret") or ""
        if not isinstance(name, str) or not isinstance(secret, str):
            errors.wrong_type(at, "an object of strings (name, secret)")
            continue
        if not name:
            errors.required(f"{at}.name", "name is a mandatory field for a key")
        if not secret:
            errors.required(f"{at}.secret", "secret is a mandatory field for a key")
            continue
        try:
            # Go's base64.StdEncoding skips line breaks and is otherwise strict.
            material = base64.b64decode(secret.replace("\r", "").replace("\n", ""), validate=True)
        except (binascii.Error, ValueError):
            errors.invalid(f"{at}.secret", '"REDACTED"', "secrets must be base64 encoded")
            continue
        if len(material) not in sizes:
            expected = "[" + " ".join(str(s) for s in sizes) + "]"
            errors.invalid(
                f"{at}.secret",
                '"REDACTED"',
                f"secret is not of the expected length, got {len(material)}, "
                f"expected one of {expected}",
            )
            continue
        if name:
            keys.append(EncryptionKey(name=name, secret=material))
    return tuple(keys)


def _parse_provider(item: Any, path: str, errors: _Errors) -> ProviderConfig | None:
    if not isinstance(item, dict):
        errors.wrong_type(path, "an object")
        return None
    # A provider field set to null counts as absent, as a nil pointer does in Go.
    present = [name for name in _PROVIDER_FIELDS if item.get(name) is not None]
    if not present:
        errors.invalid(path, _go_strings(sorted(map(str, item))), _NO_PROVIDER_ERR)
        return None
    if len(present) > 1:
        errors.invalid(path, _go_strings(present), _ONE_PROVIDER_ERR)
        return None
    kind = present[0]
    if kind == "kms":
        body = item["kms"]
        name = body.get("name", "") if isinstance(body, dict) else ""
        errors.invalid(f"{path}.kms", _go_quote(str(name)), _KMS_ERR)
        return None
    if kind == "identity":
        return ProviderConfig(type="identity")
    return ProviderConfig(type=kind, keys=_parse_keys(kind, item[kind], f"{path}.{kind}", errors))


def _parse_rule(item: Any, path: str, errors: _Errors) -> ResourceRule | None:
    if not isinstance(item, dict):
        errors.wrong_type(path, "an object")
        return None
    names_path, providers_path = f"{path}.resources", f"{path}.providers"
    names = _list_at(item.get("resources"), names_path, errors)
    if names is not None and not all(isinstance(n, str) for n in names):
        errors.wrong_type(names_path, "a list of strings")
        names = None
    if names is not None:
        if not names:
            errors.required(names_path, f"at least one {names_path} is required")
        _validate_names(names, names_path, errors)
    items = _list_at(item.get("providers"), providers_path, errors)
    providers: list[ProviderConfig | None] = []
    if items is not None:
        if not items:
            errors.required(providers_path, f"at least one {providers_path} is required")
        providers = [
            _parse_provider(p, f"{providers_path}[{j}]", errors) for j, p in enumerate(items)
        ]
    if names is None or items is None or any(p is None for p in providers):
        return None
    return ResourceRule(
        resources=tuple(names), providers=tuple(p for p in providers if p is not None)
    )


def read_rules(text: str | bytes) -> list[ResourceRule]:
    """The rules of a configuration file's text (YAML or JSON); BadRequest listing every
    problem otherwise."""
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise BadRequest(f"invalid YAML or JSON: {exc}") from None
    if not isinstance(document, dict):
        raise BadRequest("the configuration must be an object")
    api_version, kind = document.get("apiVersion"), document.get("kind")
    if api_version != API_VERSION or kind != KIND:
        raise BadRequest(
            f'expected apiVersion "{API_VERSION}" and kind "{KIND}", got apiVersion '
            f"{_go_quote(str(api_version or ''))} and kind {_go_quote(str(kind or ''))}"
        )
    errors = _Errors()
    items = _list_at(document.get("resources"), "resources", errors)
    rules: list[ResourceRule | None] = []
    if items is not None:
        if not items:
            errors.required("resources", "at least one resources is required")
        rules = [_parse_rule(r, f"resources[{i}]", errors) for i, r in enumerate(items)]
    errors.raise_any()
    return [r for r in rules if r is not None]
