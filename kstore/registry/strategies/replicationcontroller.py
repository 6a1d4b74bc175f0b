"""core ReplicationController: Kubernetes' ``pkg/registry/core/replicationcontroller`` strategy.

- create: ``status`` the zero struct (``{replicas: 0}``: that count is not omitempty),
  ``generation`` 1; a warning when the name is not a DNS label (pod names and hostnames are
  made from it);
- update: ``status`` kept; ``generation`` bumped when ``spec`` changes;
- ``status`` writes: ``spec`` kept; validated by Kubernetes' status rules;
- the ``scale`` subresource changes ``spec.replicas`` only
  (:mod:`kstore.registry.strategies._scale`), and is otherwise a main-resource update;
- deleting without a propagation policy orphans the pods: Kubernetes keeps core/v1's old
  default for replication controllers.
"""

from __future__ import annotations

from kstore.api.gvk import Object
from kstore.api.kinds.replicationcontroller import (
    validate_replication_controller_status_update,
    validate_replication_controller_update,
)
from kstore.errors import Cause
from kstore.registry.interface import RequestContext
from kstore.registry.strategies._scale import SCALE, keep_all_but_replicas
from kstore.registry.strategies.base import (
    ORPHAN_DEPENDENTS,
    STATUS,
    BuiltinStrategy,
    pod_name_warnings,
)

__all__ = ["ReplicationControllerStrategy"]


class ReplicationControllerStrategy(BuiltinStrategy):
    # Generation follows everything outside metadata and status: the spec.
    tracks_generation = True
    default_policy = ORPHAN_DEPENDENTS

    def subresources(self) -> tuple[str, ...]:
        return (STATUS, SCALE)

    def prepare_for_create(self, ctx: RequestContext, obj: Object) -> list[str]:
        warnings = super().prepare_for_create(ctx, obj)
        obj[STATUS] = {"replicas": 0}
        warnings.extend(pod_name_warnings(obj))
        return warnings

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
            return validate_replication_controller_status_update(obj, old)
        return validate_replication_controller_update(obj, old)
