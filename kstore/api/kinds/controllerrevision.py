"""apps/v1 ControllerRevision: an immutable snapshot of a controller's state (the StatefulSet
and DaemonSet controllers keep their template history in them). The hub has apps/v1's shape
(one served version); storage is apps/v1.

Defaulting: none (apps/v1 registers none for ControllerRevision).

Validation is ``pkg/apis/apps/validation``'s, with its paths and messages:

- :func:`validate_controller_revision` is ``ValidateControllerRevision``: ObjectMeta (a DNS
  subdomain name), ``data`` present (``data is mandatory``), ``revision`` not negative;
- :func:`validate_controller_revision_update` is ``ValidateControllerRevisionUpdate``'s own part
  (the store checks ObjectMeta): the same rules, and ``data`` immutable.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kstore.api.kinds._lists import list_definition
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo
from kstore.api.validation.field import JSONValue, Path, invalid, required
from kstore.api.validation.names import name_is_dns_subdomain
from kstore.api.validation.objectmeta import (
    FIELD_IMMUTABLE,
    validate_nonnegative_field,
    validate_object_meta,
)
from kstore.errors import Cause

__all__ = [
    "CONTROLLER_REVISION",
    "DEFINITIONS",
    "validate_controller_revision",
    "validate_controller_revision_update",
]

_DATA: Final = Path("data")
_REVISION: Final = Path("revision")


def _revision(obj: Mapping[str, Any]) -> int:
    value = obj.get("revision")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _validate_fields(obj: Mapping[str, Any]) -> list[Cause]:
    causes: list[Cause] = []
    if obj.get("data") is None:
        causes.append(required(_DATA, "data is mandatory"))
    causes.extend(validate_nonnegative_field(_revision(obj), _REVISION))
    return causes


def validate_controller_revision(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidateControllerRevision``."""
    causes = validate_object_meta(obj, True, name_is_dns_subdomain)
    causes.extend(_validate_fields(obj))
    return causes


def validate_controller_revision_update(
    new: Mapping[str, Any], old: Mapping[str, Any]
) -> list[Cause]:
    """``ValidateControllerRevisionUpdate`` without the ObjectMeta rules the store applies."""
    causes = _validate_fields(new)
    if new.get("data") != old.get("data"):
        causes.append(invalid(_DATA, JSONValue(new.get("data")), FIELD_IMMUTABLE))
    return causes


CONTROLLER_REVISION = KindDefinition(
    group="apps",
    kind="ControllerRevision",
    versions=(KindVersion(version="v1"),),
    storage_version="v1",
    validate=validate_controller_revision,
    validate_update=validate_controller_revision_update,
    resource=ResourceInfo(
        plural="controllerrevisions", singular="controllerrevision", namespaced=True
    ),
    list_kind="ControllerRevisionList",
)

DEFINITIONS: tuple[KindDefinition, ...] = (
    CONTROLLER_REVISION,
    list_definition(CONTROLLER_REVISION),
)
