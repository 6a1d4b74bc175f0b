"""ServiceAccount validation: Kubernetes checks only its metadata (a namespaced object named as
a DNS subdomain); secrets, image pull secrets and the automount flag are free-form here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kstore.api.validation.names import name_is_dns_subdomain
from kstore.api.validation.objectmeta import validate_object_meta, validate_object_meta_update
from kstore.errors import Cause

__all__ = ["validate_service_account", "validate_service_account_update"]


def validate_service_account(sa: Mapping[str, Any]) -> list[Cause]:
    return validate_object_meta(sa, True, name_is_dns_subdomain)


def validate_service_account_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    causes = validate_object_meta_update(new, old)
    causes.extend(validate_service_account(new))
    return causes
