"""policy PodDisruptionBudget: Kubernetes' ``pkg/registry/policy/poddisruptionbudget`` strategy.

- create: ``status`` the zero struct (its four counters are not omitempty, so they show as 0),
  ``generation`` 1;
- update: ``status`` kept; ``generation`` bumped when ``spec`` changes;
- ``status`` writes: everything but ``status`` kept; the counters may not be negative;
- deletes without a propagation policy take dependents along (Kubernetes' default).
"""

from __future__ import annotations

from typing import Final

from kstore.api.gvk import Object
from kstore.api.kinds.poddisruptionbudget import validate_pod_disruption_budget_status_update
from kstore.errors import Cause
from kstore.registry.interface import RequestContext
from kstore.registry.strategies.base import STATUS, BuiltinStrategy

__all__ = ["PodDisruptionBudgetStrategy"]

_ZERO_STATUS: Final = {
    "disruptionsAllowed": 0,
    "currentHealthy": 0,
    "desiredHealthy": 0,
    "expectedPods": 0,
}


class PodDisruptionBudgetStrategy(BuiltinStrategy):
    # Generation follows everything outside metadata and status: the spec.
    tracks_generation = True

    def prepare_for_create(self, ctx: RequestContext, obj: Object) -> list[str]:
        warnings = super().prepare_for_create(ctx, obj)
        obj[STATUS] = dict(_ZERO_STATUS)
        return warnings

    def validate_kind_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> list[Cause]:
        if subresource == STATUS:
            return validate_pod_disruption_budget_status_update(obj, old)
        return super().validate_kind_update(ctx, obj, old, subresource)
