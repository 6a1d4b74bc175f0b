"""scheduling.k8s.io PriorityClass: Kubernetes' ``pkg/registry/scheduling/priorityclass``
strategy. Cluster-scoped; ``generation`` is 1 on create and never bumped (its
``PrepareForUpdate`` does nothing, and the generic update keeps the stored generation); no
create on update; updates without a resourceVersion allowed."""

from __future__ import annotations

from kstore.api.gvk import Object
from kstore.registry.strategies.base import BuiltinStrategy

__all__ = ["PriorityClassStrategy"]


class PriorityClassStrategy(BuiltinStrategy):
    tracks_generation = True

    def generation_changed(self, obj: Object, old: Object) -> bool:
        return False
