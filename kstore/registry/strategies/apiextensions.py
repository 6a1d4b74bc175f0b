"""apiextensions.k8s.io CustomResourceDefinition: apiextensions-apiserver's
``pkg/registry/customresourcedefinition`` strategy.

- create: ``status`` cleared (the zero struct, as Go writes it: no conditions, empty accepted
  names) with ``storedVersions`` holding the storage version; ``generation`` 1;
- update: ``status`` kept; ``generation`` bumped when ``spec`` changes; a new storage version is
  appended to ``status.storedVersions`` (a version once used for storage stays listed until a
  storage migration removes it through the ``status`` subresource);
- ``status`` writes: ``spec`` kept; only ``status.acceptedNames`` is checked;
- updates need a resourceVersion (no unconditional updates), and a PUT never creates;
- delete: the ``customresourcecleanup.apiextensions.k8s.io`` finalizer and the ``Terminating``
  condition first, so the CRD stays until the CRD controller has deleted its objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from kstore.api.custom_kinds import CLEANUP_FINALIZER, TERMINATING, set_condition
from kstore.api.gvk import Object
from kstore.api.kinds._crd_validation import validate_custom_resource_definition_status_update
from kstore.errors import Cause
from kstore.registry.interface import RequestContext
from kstore.registry.strategies.base import STATUS, BuiltinStrategy, meta, read_meta

__all__ = ["CustomResourceDefinitionStrategy"]


def _storage_version(obj: Mapping[str, Any]) -> str | None:
    spec = obj.get("spec")
    versions = spec.get("versions") if isinstance(spec, Mapping) else None
    for version in versions if isinstance(versions, list) else ():
        if isinstance(version, Mapping) and version.get("storage") is True:
            name = version.get("name")
            return name if isinstance(name, str) else ""
    return None


def _add_storage_version(obj: Object) -> None:
    """Kubernetes' loop over ``spec.versions``: the first storage version joins
    ``status.storedVersions`` unless it is there already."""
    name = _storage_version(obj)
    if name is None:
        return
    status = obj.get(STATUS)
    if not isinstance(status, dict):
        status = {}
        obj[STATUS] = status
    stored = status.get("storedVersions")
    if not isinstance(stored, list):
        stored = []
        status["storedVersions"] = stored
    if name not in stored:
        stored.append(name)


class CustomResourceDefinitionStrategy(BuiltinStrategy):
    tracks_generation = True
    allow_unconditional_update = False

    def prepare_for_create(self, ctx: RequestContext, obj: Object) -> list[str]:
        warnings = super().prepare_for_create(ctx, obj)
        # CustomResourceDefinitionStatus{} as v1 JSON: conditions and storedVersions have no
        # omitempty (null when empty), acceptedNames' plural and kind neither.
        obj[STATUS] = {
            "conditions": None,
            "acceptedNames": {"plural": "", "kind": ""},
            "storedVersions": None,
        }
        _add_storage_version(obj)
        return warnings

    def prepare_for_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> None:
        super().prepare_for_update(ctx, obj, old, subresource)
        if subresource != STATUS:
            _add_storage_version(obj)

    def prepare_for_delete(self, obj: Object) -> bool:
        """The CRD REST's delete: the cleanup finalizer (so its objects are deleted before it
        goes, by the CRD controller) and ``Terminating`` (``InstanceDeletionPending``)."""
        finalizers = list(read_meta(obj).get("finalizers") or [])
        changed = CLEANUP_FINALIZER not in finalizers
        if changed:
            meta(obj)["finalizers"] = [*finalizers, CLEANUP_FINALIZER]
        status = obj.get(STATUS)
        if not isinstance(status, dict):
            status = {}
            obj[STATUS] = status
        pending = {
            "type": TERMINATING,
            "status": "True",
            "reason": "InstanceDeletionPending",
            "message": "CustomResourceDefinition marked for deletion; CustomResource deletion "
            "will begin soon",
        }
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return set_condition(status, pending, now) or changed

    def validate_kind_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> list[Cause]:
        if subresource == STATUS:
            return validate_custom_resource_definition_status_update(obj, old)
        return super().validate_kind_update(ctx, obj, old, subresource)
