"""apps StatefulSet: Kubernetes' statefulset strategy (``pkg/registry/apps/statefulset``).

- create: ``status`` the zero struct (``replicas`` and ``availableReplicas`` 0, the two counts
  without omitempty), ``generation`` 1; warnings for a negative ``revisionHistoryLimit`` and
  for volume claim templates asking for a fractional number of bytes;
- update: ``status`` kept; ``generation`` bumped when ``spec`` changes;
- ``status`` writes: ``spec`` kept; validated by Kubernetes' status rules;
- the ``scale`` subresource changes ``spec.replicas`` only (the REST layer turns a Scale into
  that update), and is otherwise a main-resource update (generation, validation);
- deleting removes the dependents (pods) by default.
"""

from __future__ import annotations

from typing import Final

from kstore.api.gvk import Object
from kstore.api.kinds._persistentvolumeclaim_validation import fractional_storage_warnings
from kstore.api.kinds._statefulset_validation import validate_stateful_set_status_update
from kstore.api.validation._access import get_list, get_map, maps, opt_int
from kstore.api.validation.field import Path
from kstore.errors import Cause
from kstore.registry.interface import RequestContext
from kstore.registry.strategies._scale import SCALE, keep_all_but_replicas
from kstore.registry.strategies.base import (
    DELETE_DEPENDENTS,
    STATUS,
    BuiltinStrategy,
)

__all__ = ["StatefulSetStrategy"]

_NEGATIVE_HISTORY: Final = (
    "spec.revisionHistoryLimit: a negative value retains all historical revisions; "
    "a value >= 0 is recommended"
)
_CLAIMS: Final = Path("spec", "volumeClaimTemplates")


def _warnings(obj: Object) -> list[str]:
    spec = get_map(obj, "spec")
    warnings: list[str] = []
    for i, claim in enumerate(maps(get_list(spec, "volumeClaimTemplates"))):
        warnings.extend(fractional_storage_warnings(get_map(claim, "spec"), _CLAIMS.index(i)))
    history = opt_int(spec, "revisionHistoryLimit")
    if history is not None and history < 0:
        warnings.append(_NEGATIVE_HISTORY)
    return warnings


class StatefulSetStrategy(BuiltinStrategy):
    tracks_generation = True
    default_policy = DELETE_DEPENDENTS

    def subresources(self) -> tuple[str, ...]:
        return (STATUS, SCALE)

    def prepare_for_create(self, ctx: RequestContext, obj: Object) -> list[str]:
        super().prepare_for_create(ctx, obj)
        obj[STATUS] = {"replicas": 0, "availableReplicas": 0}
        return _warnings(obj)

    def prepare_for_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> None:
        if subresource == SCALE:
            keep_all_but_replicas(obj, old)
            subresource = ""
        super().prepare_for_update(ctx, obj, old, subresource)

    def validate_kind_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> list[Cause]:
        if subresource == STATUS:
            return validate_stateful_set_status_update(obj, old)
        return super().validate_kind_update(ctx, obj, old, subresource)
