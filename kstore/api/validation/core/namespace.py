"""core/v1 Namespace validation (Kubernetes v1.36 rules, paths and messages).

Create: metadata with a DNS-1123 *label* name and no namespace; each ``spec.finalizers`` entry a
qualified name and, when unqualified, a standard finalizer (problems point at
``spec.finalizers`` without an index, as in Kubernetes). Update: the same, plus the metadata
update rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kstore.api.validation._access import get_list, get_map
from kstore.api.validation.field import Path, invalid
from kstore.api.validation.names import is_qualified_name, name_is_dns_label
from kstore.api.validation.objectmeta import (
    validate_kube_finalizer_name,
    validate_object_meta,
    validate_object_meta_update,
)
from kstore.errors import Cause

__all__ = ["validate_namespace", "validate_namespace_update"]


def validate_namespace(ns: Mapping[str, Any]) -> list[Cause]:
    causes = validate_object_meta(ns, False, name_is_dns_label)
    path = Path("spec", "finalizers")
    for finalizer in get_list(get_map(ns, "spec"), "finalizers"):
        name = finalizer if isinstance(finalizer, str) else ""
        causes.extend(invalid(path, name, msg) for msg in is_qualified_name(name))
        causes.extend(validate_kube_finalizer_name(name, path))
    return causes


def validate_namespace_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    return validate_namespace(new) + validate_object_meta_update(new, old)
