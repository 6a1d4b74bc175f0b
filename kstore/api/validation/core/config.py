"""core/v1 ConfigMap and Secret validation (Kubernetes v1.36 rules, paths and messages).

ConfigMap: DNS-subdomain name; ``data`` and ``binaryData`` keys are config keys and may not
repeat across the two maps; their values total at most 1 MiB (reported on the root path ``[]``,
as Kubernetes does); once ``immutable: true`` is stored, ``immutable``, ``data`` and
``binaryData`` may not change.

Secret: DNS-subdomain name; ``data`` keys are config keys, values total at most 1 MiB; the keys
each well-known ``type`` needs; ``type`` is immutable; the ``immutable`` rules as for ConfigMaps.

Kubernetes validates its internal Secret, into which the v1 ``stringData`` map has already been
merged (``stringData`` wins over ``data``). The hub here keeps the v1 shape, so the validators
look at that merged view (:func:`secret_data`); byte counts are of the decoded values.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any, Final

from kstore.api.validation._access import get_map, get_str
from kstore.api.validation._gojson import unmarshal_object_error
from kstore.api.validation.field import (
    JSONValue,
    Path,
    forbidden,
    invalid,
    required,
    too_long,
)
from kstore.api.validation.names import is_config_map_key, name_is_dns_subdomain
from kstore.api.validation.objectmeta import (
    FIELD_IMMUTABLE,
    metadata_of,
    validate_object_meta,
    validate_object_meta_update,
)
from kstore.errors import Cause

__all__ = [
    "MAX_SECRET_SIZE",
    "secret_data",
    "validate_config_map",
    "validate_config_map_update",
    "validate_secret",
    "validate_secret_update",
]

#: Kubernetes' core.MaxSecretSize, shared by ConfigMaps.
MAX_SECRET_SIZE: Final = 1024 * 1024
_IMMUTABLE_SET: Final = "field is immutable when `immutable` is set"
_REDACTED: Final = "<secret contents redacted>"


def _decode(value: Any) -> bytes:
    """A base64 JSON value as the bytes Kubernetes holds (undecodable text counts as is)."""
    if not isinstance(value, str):
        return b""
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return value.encode("utf-8", "surrogatepass")


def _go_map(obj: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    """A Go map field: None when absent or null (nil), else the map (possibly empty)."""
    value = obj.get(key)
    return value if isinstance(value, Mapping) else None


def secret_data(secret: Mapping[str, Any]) -> dict[str, bytes] | None:
    """The Secret's data as Kubernetes' internal type holds it: ``data`` decoded, then
    ``stringData`` merged over it. None when both are absent (a nil map)."""
    data = _go_map(secret, "data")
    string_data = _go_map(secret, "stringData")
    if data is None and string_data is None:
        return None
    merged = {k: _decode(v) for k, v in (data or {}).items()}
    for k, v in (string_data or {}).items():
        merged[k] = v.encode("utf-8", "surrogatepass") if isinstance(v, str) else b""
    return merged


def _keys(keys: Any, path: Path) -> list[Cause]:
    causes: list[Cause] = []
    for key in keys:
        causes.extend(invalid(path.key(key), key, msg) for msg in is_config_map_key(key))
    return causes


# ---------------------------------------------------------------------------- ConfigMap


def validate_config_map(cm: Mapping[str, Any]) -> list[Cause]:
    causes = validate_object_meta(cm, True, name_is_dns_subdomain)
    data, binary = get_map(cm, "data"), get_map(cm, "binaryData")
    total = 0
    data_path, binary_path = Path("data"), Path("binaryData")
    for key, value in data.items():
        causes.extend(invalid(data_path.key(key), key, m) for m in is_config_map_key(key))
        if key in binary:
            causes.append(
                invalid(data_path.key(key), key, "duplicate of key present in binaryData")
            )
        total += len(value.encode("utf-8", "surrogatepass")) if isinstance(value, str) else 0
    for key, value in binary.items():
        causes.extend(invalid(binary_path.key(key), key, m) for m in is_config_map_key(key))
        total += len(_decode(value))
    if total > MAX_SECRET_SIZE:
        # Kubernetes reports the whole object with field.NewPath(""), which prints as "[]".
        causes.append(too_long(Path(""), MAX_SECRET_SIZE))
    return causes


def _immutable_causes(
    new: Mapping[str, Any], old: Mapping[str, Any], fields: tuple[tuple[str, Any, Any], ...]
) -> list[Cause]:
    if old.get("immutable") is not True:
        return []
    causes: list[Cause] = []
    if new.get("immutable") is not True:
        causes.append(forbidden(Path("immutable"), _IMMUTABLE_SET))
    for name, new_value, old_value in fields:
        # reflect.DeepEqual: a nil map differs from an empty one.
        if new_value != old_value:
            causes.append(forbidden(Path(name), _IMMUTABLE_SET))
    return causes


def validate_config_map_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    causes = validate_object_meta_update(new, old)
    causes.extend(
        _immutable_causes(
            new,
            old,
            (
                ("data", _go_map(new, "data"), _go_map(old, "data")),
                ("binaryData", _binary(new), _binary(old)),
            ),
        )
    )
    causes.extend(validate_config_map(new))
    return causes


def _binary(cm: Mapping[str, Any]) -> dict[str, bytes] | None:
    binary = _go_map(cm, "binaryData")
    return None if binary is None else {k: _decode(v) for k, v in binary.items()}


# ---------------------------------------------------------------------------- Secret

_SERVICE_ACCOUNT_NAME_KEY: Final = "kubernetes.io/service-account.name"


def _type_specific(secret: Mapping[str, Any], data: Mapping[str, bytes]) -> list[Cause]:
    data_path = Path("data")
    kind = get_str(secret, "type")
    if kind == "kubernetes.io/service-account-token":
        annotations = get_map(metadata_of(secret), "annotations")
        if not get_str(annotations, _SERVICE_ACCOUNT_NAME_KEY):
            return [required(Path("metadata", "annotations").key(_SERVICE_ACCOUNT_NAME_KEY))]
        return []
    if kind in ("kubernetes.io/dockercfg", "kubernetes.io/dockerconfigjson"):
        key = ".dockercfg" if kind == "kubernetes.io/dockercfg" else ".dockerconfigjson"
        if key not in data:
            return [required(data_path.key(key))]
        error = unmarshal_object_error(data[key])
        return [] if error is None else [invalid(data_path.key(key), _REDACTED, error)]
    if kind == "kubernetes.io/basic-auth":
        if "username" not in data and "password" not in data:
            return [required(data_path.key("username")), required(data_path.key("password"))]
        return []
    if kind == "kubernetes.io/ssh-auth":
        return [] if data.get("ssh-privatekey") else [required(data_path.key("ssh-privatekey"))]
    if kind == "kubernetes.io/tls":
        return [required(data_path.key(k)) for k in ("tls.crt", "tls.key") if k not in data]
    return []


def validate_secret(secret: Mapping[str, Any]) -> list[Cause]:
    causes = validate_object_meta(secret, True, name_is_dns_subdomain)
    data = secret_data(secret) or {}
    causes.extend(_keys(data, Path("data")))
    if sum(len(v) for v in data.values()) > MAX_SECRET_SIZE:
        causes.append(too_long(Path("data"), MAX_SECRET_SIZE))
    causes.extend(_type_specific(secret, data))
    return causes


def validate_secret_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    causes = validate_object_meta_update(new, old)
    new_type, old_type = get_str(new, "type"), get_str(old, "type")
    if new_type != old_type:
        causes.append(invalid(Path("type"), JSONValue(new_type), FIELD_IMMUTABLE))
    causes.extend(_immutable_causes(new, old, (("data", secret_data(new), secret_data(old)),)))
    causes.extend(validate_secret(new))
    return causes
