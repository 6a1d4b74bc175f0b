"""core PersistentVolumeClaim: Kubernetes' claim strategy
(``pkg/registry/core/persistentvolumeclaim``).

- create: ``status`` cleared (reads default its ``phase`` to ``Pending``); a ``dataSource`` that
  is neither a claim nor a ``snapshot.storage.k8s.io`` VolumeSnapshot is dropped when no
  ``dataSourceRef`` is given (the legacy behaviour), then ``dataSource`` and ``dataSourceRef``
  are filled from each other; warnings for the deprecated beta storage-class annotation and for
  a fractional number of bytes; no ``metadata.generation``;
- update: ``status`` kept, the same data-source rules (a claim that already had a data source
  keeps it); the spec is immutable but for what the validation allows;
- ``status`` writes: ``spec`` kept; a status write needs a ``resourceVersion``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.kinds._persistentvolumeclaim_validation import (
    BETA_STORAGE_CLASS_ANNOTATION,
    fractional_storage_warnings,
    normalize_data_sources,
    validate_persistent_volume_claim_status_update,
)
from kstore.api.validation.field import Path
from kstore.errors import Cause
from kstore.registry.interface import RequestContext
from kstore.registry.strategies.base import STATUS, BuiltinStrategy, read_meta

__all__ = ["PersistentVolumeClaimStrategy"]

_SNAPSHOT_GROUP: Final = "snapshot.storage.k8s.io"
_DEPRECATED_CLASS: Final = (
    f"{Path('metadata', 'annotations').key(BETA_STORAGE_CLASS_ANNOTATION)}: "
    'deprecated since v1.8; use "storageClassName" attribute instead'
)


def _spec(obj: Object) -> dict[str, Any] | None:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else None


def _legacy_data_source(spec: dict[str, Any], old_spec: Mapping[str, Any] | None) -> None:
    """``EnforceDataSourceBackwardsCompatibility``."""
    if old_spec is not None and (
        old_spec.get("dataSource") is not None or old_spec.get("dataSourceRef") is not None
    ):
        return
    source = spec.get("dataSource")
    if spec.get("dataSourceRef") is not None or source is None:
        return
    group = source.get("apiGroup") if isinstance(source, dict) else None
    kind = source.get("kind") if isinstance(source, dict) else None
    if (kind, group or "") not in (
        ("PersistentVolumeClaim", ""),
        ("VolumeSnapshot", _SNAPSHOT_GROUP),
    ):
        del spec["dataSource"]


class PersistentVolumeClaimStrategy(BuiltinStrategy):
    def prepare_for_create(self, ctx: RequestContext, obj: Object) -> list[str]:
        super().prepare_for_create(ctx, obj)
        spec = _spec(obj)
        if spec is None:
            return []
        _legacy_data_source(spec, None)
        normalize_data_sources(spec)
        warnings = []
        annotations = read_meta(obj).get("annotations")
        if isinstance(annotations, dict) and BETA_STORAGE_CLASS_ANNOTATION in annotations:
            warnings.append(_DEPRECATED_CLASS)
        warnings.extend(fractional_storage_warnings(spec, Path("spec")))
        return warnings

    def prepare_for_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> None:
        super().prepare_for_update(ctx, obj, old, subresource)
        spec = _spec(obj)
        if subresource == STATUS or spec is None:
            return
        old_spec = old.get("spec")
        _legacy_data_source(spec, old_spec if isinstance(old_spec, Mapping) else None)
        normalize_data_sources(spec)

    def validate_kind_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> list[Cause]:
        if subresource == STATUS:
            return validate_persistent_volume_claim_status_update(obj, old)
        return super().validate_kind_update(ctx, obj, old, subresource)
