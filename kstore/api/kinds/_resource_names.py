"""Resource names and quantities as Kubernetes' core helpers judge them
(``pkg/apis/core/helper`` and ``pkg/apis/core/validation``), for LimitRanges and
ResourceQuotas: which names are standard, native, extended, integer-valued, and the causes of
``validateResourceName``, ``validateContainerResourceName``,
``ValidateResourceQuotaResourceName`` and ``ValidateResourceQuantityValue``.

Quantities are compared exactly (:func:`kstore.api.quantity.parse_quantity`); messages show
them as written.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Final

from kstore.api.quantity import parse_quantity
from kstore.api.validation.field import Path, invalid
from kstore.api.validation.names import is_qualified_name
from kstore.errors import Cause

__all__ = [
    "is_overcommit_allowed",
    "is_standard_quota_resource_name",
    "milli_value",
    "quantity_amount",
    "quantity_text",
    "validate_container_resource_name",
    "validate_quota_resource_name",
    "validate_resource_name",
    "validate_resource_quantity_value",
    "value_of",
]

_HUGE_PAGES: Final = "hugepages-"
_REQUESTS_HUGE_PAGES: Final = "requests.hugepages-"
_NATIVE_PREFIX: Final = "kubernetes.io/"
_REQUESTS_PREFIX: Final = "requests."

_CONTAINER: Final = frozenset(("cpu", "memory", "ephemeral-storage"))
_OBJECT_COUNTS: Final = (
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
)
_QUOTA: Final = frozenset(
    (
        *_CONTAINER,
        "requests.cpu",
        "requests.memory",
        "requests.storage",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        *_OBJECT_COUNTS,
    )
)
_STANDARD: Final = _QUOTA | {"storage"}
_INTEGER: Final = frozenset(_OBJECT_COUNTS)


def _huge_pages(name: str) -> bool:
    return name.startswith(_HUGE_PAGES)


def _quota_huge_pages(name: str) -> bool:
    return name.startswith(_HUGE_PAGES) or name.startswith(_REQUESTS_HUGE_PAGES)


def _native(name: str) -> bool:
    """``IsNativeResource``: unprefixed, or in the ``kubernetes.io/`` namespace."""
    return "/" not in name or _NATIVE_PREFIX in name


def _extended(name: str) -> bool:
    """``IsExtendedResourceName``."""
    if _native(name) or name.startswith(_REQUESTS_PREFIX):
        return False
    return not is_qualified_name(_REQUESTS_PREFIX + name)


def is_overcommit_allowed(name: str) -> bool:
    """``IsOvercommitAllowed``: native and not huge pages."""
    return _native(name) and not _huge_pages(name)


def is_standard_quota_resource_name(name: str) -> bool:
    """``IsStandardQuotaResourceName``: a resource the quota system tracks."""
    return name in _QUOTA or _quota_huge_pages(name)


def validate_resource_name(name: str, path: Path) -> list[Cause]:
    """``validateResourceName``."""
    causes = [invalid(path, name, msg) for msg in is_qualified_name(name)]
    if causes:
        return causes
    if "/" not in name and not (name in _STANDARD or _quota_huge_pages(name)):
        causes.append(invalid(path, name, "must be a standard resource type or fully qualified"))
    return causes


def validate_container_resource_name(name: str, path: Path) -> list[Cause]:
    """``validateContainerResourceName``."""
    causes = validate_resource_name(name, path)
    if "/" not in name:
        if not (name in _CONTAINER or _huge_pages(name)):
            causes.append(invalid(path, name, "must be a standard resource for containers"))
    elif not _native(name) and not _extended(name):
        causes.append(invalid(path, name, "doesn't follow extended resource name standard"))
    return causes


def validate_quota_resource_name(name: str, path: Path) -> list[Cause]:
    """``ValidateResourceQuotaResourceName``."""
    causes = validate_resource_name(name, path)
    if "/" not in name and not is_standard_quota_resource_name(name):
        causes.append(invalid(path, name, "must be a standard resource for quota"))
    return causes


def quantity_amount(value: Any) -> Fraction:
    """The quantity's exact value (0 for what does not parse: decoding refuses those)."""
    amount = parse_quantity(value) if isinstance(value, (str, int, float)) else None
    return amount if amount is not None else Fraction(0)


def quantity_text(value: Any) -> str:
    """The quantity as messages print it: as written, ``0`` when zero."""
    if quantity_amount(value) == 0:
        return "0"
    return value.strip() if isinstance(value, str) else str(value)


def _rounded_up(amount: Fraction) -> int:
    """Rounded away from zero, as ``Quantity.Value`` and ``MilliValue`` round."""
    rounded = math.ceil(abs(amount))
    return rounded if amount >= 0 else -rounded


def value_of(value: Any) -> int:
    """``Quantity.Value()``."""
    return _rounded_up(quantity_amount(value))


def milli_value(value: Any) -> int:
    """``Quantity.MilliValue()``."""
    return _rounded_up(quantity_amount(value) * 1000)


def validate_resource_quantity_value(name: str, value: Any, path: Path) -> list[Cause]:
    """``ValidateResourceQuantityValue``: not negative; a whole number for integer resources
    (object counts and extended resources)."""
    causes: list[Cause] = []
    if quantity_amount(value) < 0:
        causes.append(invalid(path, quantity_text(value), "must be greater than or equal to 0"))
    if (name in _INTEGER or _extended(name)) and milli_value(value) % 1000 != 0:
        causes.append(invalid(path, quantity_text(value), "must be an integer"))
    return causes
