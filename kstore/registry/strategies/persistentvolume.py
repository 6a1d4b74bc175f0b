"""core PersistentVolume: Kubernetes' volume strategy (``pkg/registry/core/persistentvolume``).

- create: ``status`` replaced by phase ``Pending`` with ``lastPhaseTransitionTime`` now; no
  ``metadata.generation``;
- update: ``status`` kept; the volume source, mode and a set node affinity are immutable;
- ``status`` writes: ``spec`` kept; a new phase without a new transition time gets now as its
  transition time; a status write needs a ``resourceVersion``;
- updates without a resourceVersion are allowed for the main resource.
"""

from __future__ import annotations

from datetime import UTC, datetime

from kstore.api.gvk import Object
from kstore.api.kinds.persistentvolume import validate_persistent_volume_status_update
from kstore.errors import Cause
from kstore.registry.interface import RequestContext
from kstore.registry.strategies.base import STATUS, BuiltinStrategy

__all__ = ["PersistentVolumeStrategy"]


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class PersistentVolumeStrategy(BuiltinStrategy):
    def prepare_for_create(self, ctx: RequestContext, obj: Object) -> list[str]:
        warnings = super().prepare_for_create(ctx, obj)
        obj[STATUS] = {"phase": "Pending", "lastPhaseTransitionTime": _now()}
        return warnings

    def prepare_for_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> None:
        super().prepare_for_update(ctx, obj, old, subresource)
        if subresource != STATUS:
            return
        status = obj.get(STATUS)
        old_status = old.get(STATUS)
        if not isinstance(status, dict):
            return
        old_phase = old_status.get("phase") if isinstance(old_status, dict) else None
        old_time = (
            old_status.get("lastPhaseTransitionTime") if isinstance(old_status, dict) else None
        )
        new_time = status.get("lastPhaseTransitionTime")
        if status.get("phase") != old_phase and (new_time is None or new_time == old_time):
            status["lastPhaseTransitionTime"] = _now()

    def validate_kind_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> list[Cause]:
        if subresource == STATUS:
            return validate_persistent_volume_status_update(obj, old)
        return super().validate_kind_update(ctx, obj, old, subresource)
