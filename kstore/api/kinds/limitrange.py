"""core/v1 LimitRange (``limits``): per-namespace bounds and defaults of containers', pods' and
claims' resources (the LimitRanger admission plugin applies them; here they are stored).

One external version, ``v1``, shaped as the hub. Defaulting is ``SetDefaults_LimitRangeItem``:
in a ``Container`` item, a resource with a ``max`` and no ``default`` gets the max as its
default; one with a ``default`` and no ``defaultRequest`` gets the default as its request; one
with a ``min`` and still no ``defaultRequest`` gets the min.

Validation is ``ValidateLimitRange`` (create and update alike; an update adds the ObjectMeta
update rules), with Kubernetes' paths and messages: the item type standard (Pod, Container,
PersistentVolumeClaim) or fully qualified, and not repeated; resource names valid for the type;
no defaults for Pod items; a claim item bounds storage; then per resource min <= defaultRequest
<= default <= max, maxLimitRequestRatio at least 1 and at most max/min, and default equal to
defaultRequest for resources that cannot be overcommitted. Kubernetes walks maps in random
order; kstore reports resources in sorted order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.kinds._lists import list_definition
from kstore.api.kinds._resource_names import (
    is_overcommit_allowed,
    milli_value,
    quantity_amount,
    quantity_text,
    validate_container_resource_name,
    validate_resource_name,
    value_of,
)
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo
from kstore.api.validation.field import Path, duplicate, forbidden, invalid, required
from kstore.api.validation.names import is_qualified_name, name_is_dns_subdomain
from kstore.api.validation.objectmeta import validate_object_meta, validate_object_meta_update
from kstore.errors import Cause

__all__ = [
    "DEFINITIONS",
    "LIMIT_RANGE",
    "default_limit_range_v1",
    "validate_limit_range",
    "validate_limit_range_update",
]

_LIMITS: Final = Path("spec", "limits")
_STANDARD_TYPES: Final = frozenset(("Pod", "Container", "PersistentVolumeClaim"))
# resource.MaxMilliValue: the largest value whose milli-units still fit an int64.
_MAX_MILLI_VALUE: Final = (2**63 - 1) // 1000


def _map(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else {}


def _items(obj: Mapping[str, Any], key: str) -> list[Any]:
    value = obj.get(key)
    return value if isinstance(value, list) else []


# ------------------------------------------------------------------------------ defaulting


def default_limit_range_v1(obj: Object) -> None:
    """v1 ``SetObjectDefaults_LimitRange``, in place (empty maps stay out, as omitempty
    leaves them)."""
    for item in _items(_map(obj, "spec"), "limits"):
        if not isinstance(item, dict) or item.get("type") != "Container":
            continue
        defaults = dict(_map(item, "default"))
        requests = dict(_map(item, "defaultRequest"))
        for key, value in _map(item, "max").items():
            defaults.setdefault(key, value)
        for key, value in defaults.items():
            requests.setdefault(key, value)
        for key, value in _map(item, "min").items():
            requests.setdefault(key, value)
        if defaults:
            item["default"] = defaults
        if requests:
            item["defaultRequest"] = requests


# ------------------------------------------------------------------------------ validation


def _type_name(value: str, path: Path) -> list[Cause]:
    """``validateLimitRangeTypeName``."""
    causes = [invalid(path, value, msg) for msg in is_qualified_name(value)]
    if not causes and "/" not in value and value not in _STANDARD_TYPES:
        causes.append(invalid(path, value, "must be a standard limit type or fully qualified"))
    return causes


def _resource_name(limit_type: str, name: str, path: Path) -> list[Cause]:
    """``validateLimitRangeResourceName``: container rules for Pod and Container items."""
    if limit_type in ("Pod", "Container"):
        return validate_container_resource_name(name, path)
    return validate_resource_name(name, path)


def _ratio_limit(ratio: Any, low: Any, high: Any) -> tuple[float, float]:
    """The ratio and max/min as Kubernetes compares them (milli-units when they fit), with
    Go's float division (a zero min gives an infinity, or NaN for 0/0)."""
    ratio_value: float = value_of(ratio)
    low_value, high_value = value_of(low), value_of(high)
    if value_of(ratio) < _MAX_MILLI_VALUE and max(low_value, high_value) < _MAX_MILLI_VALUE:
        ratio_value = milli_value(ratio) / 1000
        low_value, high_value = milli_value(low), milli_value(high)
    if low_value == 0:
        if high_value == 0:
            return ratio_value, float("nan")
        return ratio_value, math.copysign(float("inf"), high_value)
    return ratio_value, high_value / low_value


def _go_float(value: float) -> str:
    """Go's ``%f``."""
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return f"{value:f}"


# (lower, higher, the field the cause is at, the field whose value it shows, message), in
# Kubernetes' order; the message gets the lower and the higher value.
_ORDER_RULES: Final = (
    ("min", "max", "min", "min", "min value {} is greater than max value {}"),
    (
        "min",
        "defaultRequest",
        "defaultRequest",
        "defaultRequest",
        "min value {} is greater than default request value {}",
    ),
    (
        "defaultRequest",
        "max",
        "defaultRequest",
        "defaultRequest",
        "default request value {} is greater than max value {}",
    ),
    (
        "defaultRequest",
        "default",
        "defaultRequest",
        "defaultRequest",
        "default request value {} is greater than default limit value {}",
    ),
    ("min", "default", "default", "min", "min value {} is greater than default value {}"),
    ("default", "max", "default", "max", "default value {} is greater than max value {}"),
)


def _compare(found: Mapping[str, Any], key: str, path: Path) -> list[Cause]:
    """The rules between one resource's min, max, default, defaultRequest and ratio
    (``found``: the fields that have it)."""
    amount = {field: quantity_amount(value) for field, value in found.items()}
    text = {field: quantity_text(value) for field, value in found.items()}
    causes: list[Cause] = []
    for lower, higher, at, shown, message in _ORDER_RULES:
        if lower in found and higher in found and amount[lower] > amount[higher]:
            causes.append(
                invalid(
                    path.child(at).key(key), text[shown], message.format(text[lower], text[higher])
                )
            )
    if "maxLimitRequestRatio" in found:
        ratio_text = text["maxLimitRequestRatio"]
        ratio_path = path.child("maxLimitRequestRatio").key(key)
        if amount["maxLimitRequestRatio"] < 1:
            causes.append(invalid(ratio_path, ratio_text, f"ratio {ratio_text} is less than 1"))
        if "min" in found and "max" in found:
            value, limit = _ratio_limit(found["maxLimitRequestRatio"], found["min"], found["max"])
            if value > limit:
                causes.append(
                    invalid(
                        ratio_path,
                        ratio_text,
                        f"ratio {ratio_text} is greater than max/min = {_go_float(limit)}",
                    )
                )
    if (
        not is_overcommit_allowed(key)
        and "default" in found
        and "defaultRequest" in found
        and amount["default"] != amount["defaultRequest"]
    ):
        causes.append(
            invalid(
                path.child("defaultRequest").key(key),
                text["defaultRequest"],
                f"default value {text['default']} must equal to defaultRequest value "
                f"{text['defaultRequest']} in {key}",
            )
        )
    return causes


def _validate_item(item: Mapping[str, Any], path: Path) -> list[Cause]:
    limit_type = item.get("type")
    limit_type = limit_type if isinstance(limit_type, str) else ""
    causes: list[Cause] = []
    keys: set[str] = set()
    fields = ["max", "min"]
    if limit_type == "Pod":
        for field in ("default", "defaultRequest"):
            if _map(item, field):
                causes.append(
                    forbidden(path.child(field), "may not be specified when `type` is 'Pod'")
                )
    else:
        fields += ["default", "defaultRequest"]
    for field in fields:
        for key in _map(item, field):
            causes.extend(_resource_name(limit_type, key, path.child(field).key(key)))
            keys.add(key)
    if limit_type == "PersistentVolumeClaim" and not (
        "storage" in _map(item, "min") or "storage" in _map(item, "max")
    ):
        causes.append(
            required(
                path.child("limits"),
                "either minimum or maximum storage value is required, but neither was provided",
            )
        )
    for key in _map(item, "maxLimitRequestRatio"):
        causes.extend(_resource_name(limit_type, key, path.child("maxLimitRequestRatio").key(key)))
        keys.add(key)
    for key in sorted(keys):
        found = {f: _map(item, f)[key] for f in fields if key in _map(item, f)}
        ratios = _map(item, "maxLimitRequestRatio")
        if key in ratios:
            found["maxLimitRequestRatio"] = ratios[key]
        causes.extend(_compare(found, key, path))
    return causes


def validate_limit_range(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidateLimitRange``."""
    causes = validate_object_meta(obj, True, name_is_dns_subdomain)
    seen: set[str] = set()
    for i, item in enumerate(_items(_map(obj, "spec"), "limits")):
        item_map = item if isinstance(item, Mapping) else {}
        path = _LIMITS.index(i)
        limit_type = item_map.get("type")
        limit_type = limit_type if isinstance(limit_type, str) else ""
        causes.extend(_type_name(limit_type, path.child("type")))
        if limit_type in seen:
            causes.append(duplicate(path.child("type"), limit_type))
        seen.add(limit_type)
        causes.extend(_validate_item(item_map, path))
    return causes


def validate_limit_range_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """The strategy's ``ValidateUpdate``: ObjectMeta update rules, then ``ValidateLimitRange``."""
    causes = validate_object_meta_update(new, old)
    causes.extend(validate_limit_range(new))
    return causes


LIMIT_RANGE = KindDefinition(
    group="",
    kind="LimitRange",
    versions=(KindVersion(version="v1", default=default_limit_range_v1),),
    storage_version="v1",
    validate=validate_limit_range,
    validate_update=validate_limit_range_update,
    resource=ResourceInfo(
        plural="limitranges", singular="limitrange", namespaced=True, short_names=("limits",)
    ),
    list_kind="LimitRangeList",
)

DEFINITIONS: tuple[KindDefinition, ...] = (LIMIT_RANGE, list_definition(LIMIT_RANGE))
