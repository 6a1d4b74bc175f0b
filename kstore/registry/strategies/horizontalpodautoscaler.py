"""autoscaling HorizontalPodAutoscaler: Kubernetes' ``pkg/registry/autoscaling/
horizontalpodautoscaler`` strategy.

- create: ``status`` the zero struct (``desiredReplicas`` is not omitempty, so it shows as 0);
  no ``generation`` (the ``HPAGeneration`` gate that would track it is off by default);
- update: ``status`` kept from the stored object;
- ``status`` writes: ``spec`` kept; the replica counts may not be negative;
- ``tolerance`` is kept (the ``HPAConfigurableTolerance`` gate is on by default).
"""

from __future__ import annotations

from kstore.api.gvk import Object
from kstore.api.kinds.horizontalpodautoscaler import validate_hpa_status_update
from kstore.errors import Cause
from kstore.registry.interface import RequestContext
from kstore.registry.strategies.base import STATUS, BuiltinStrategy

__all__ = ["HorizontalPodAutoscalerStrategy"]


class HorizontalPodAutoscalerStrategy(BuiltinStrategy):
    def prepare_for_create(self, ctx: RequestContext, obj: Object) -> list[str]:
        warnings = super().prepare_for_create(ctx, obj)
        obj[STATUS] = {"desiredReplicas": 0}
        return warnings

    def validate_kind_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> list[Cause]:
        if subresource == STATUS:
            return validate_hpa_status_update(obj, old)
        return super().validate_kind_update(ctx, obj, old, subresource)
