"""apps ReplicaSet: Kubernetes' replicaset strategy (``pkg/registry/apps/replicaset``).

- create: ``status`` the zero struct (``{replicas: 0}``: that count is not omitempty),
  ``generation`` 1; a warning when the name is not a DNS
  label (pod names and hostnames are made from it);
- update: ``status`` kept; ``generation`` bumped when ``spec`` changes (annotations do not
  count, unlike a Deployment's);
- ``status`` writes: ``spec`` kept (labels may change, unlike a Deployment's); validated by
  Kubernetes' status rules;
- ``spec.selector`` is immutable for requests made in any served version (Kubernetes exempts
  only extensions/v1beta1, and requests without a request version);
- deleting without a propagation policy deletes the dependents (Kubernetes' default for every
  served version);
- the ``scale`` subresource changes ``spec.replicas`` only
  (:mod:`kstore.registry.strategies._scale`), and is otherwise a main-resource update
  (generation, validation).
"""

from __future__ import annotations

from typing import Final

from kstore.api.gvk import GroupVersion, Object
from kstore.api.kinds.replicaset import (
    validate_replica_set_status_update,
    validate_replica_set_update,
)
from kstore.errors import Cause
from kstore.registry.interface import RequestContext
from kstore.registry.strategies._scale import SCALE, keep_all_but_replicas
from kstore.registry.strategies.base import (
    DELETE_DEPENDENTS,
    STATUS,
    BuiltinStrategy,
    pod_name_warnings,
)

__all__ = ["ReplicaSetStrategy"]

_MUTABLE_SELECTOR_VERSIONS: Final = frozenset({GroupVersion("extensions", "v1beta1")})


class ReplicaSetStrategy(BuiltinStrategy):
    # Generation follows everything outside metadata and status: the spec.
    tracks_generation = True
    default_policy = DELETE_DEPENDENTS

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
            return validate_replica_set_status_update(obj, old)
        version = ctx.request_version
        immutable = version is not None and version not in _MUTABLE_SELECTOR_VERSIONS
        return validate_replica_set_update(obj, old, selector_immutable=immutable)
