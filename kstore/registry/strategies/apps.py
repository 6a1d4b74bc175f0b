"""apps Deployment: Kubernetes' deployment strategy (``pkg/registry/apps/deployment``).

- create: ``status`` a zero struct, ``generation`` 1;
- update: ``status`` kept; ``generation`` bumped when ``spec`` **or annotations** change
  (annotations are copied to the ReplicaSets, so a change is a new generation);
- ``status`` writes: ``spec`` and labels kept; validated by Kubernetes' status rules;
- ``spec.selector`` is immutable except for requests made in apps/v1beta1 (or without a
  request version, where Kubernetes falls back to the old, mutable behaviour);
- deleting through apps/v1beta1 or apps/v1beta2 without a propagation policy orphans the
  dependents (their default garbage-collection policy), other versions delete them;
- the ``scale`` subresource changes ``spec.replicas`` only
  (:mod:`kstore.registry.strategies._scale`), and is otherwise a main-resource update
  (generation, validation).
"""

from __future__ import annotations

from typing import Final

from kstore.api.gvk import GroupVersion, Object
from kstore.api.kinds.apps import validate_deployment_status_update, validate_deployment_update
from kstore.errors import Cause
from kstore.registry.interface import RequestContext
from kstore.registry.strategies._scale import SCALE, keep_all_but_replicas
from kstore.registry.strategies.base import (
    DELETE_DEPENDENTS,
    ORPHAN_DEPENDENTS,
    STATUS,
    BuiltinStrategy,
    copy_value,
    keep,
    meta,
    read_meta,
)

__all__ = ["SCALE", "DeploymentStrategy"]

_ORPHANING_VERSIONS: Final = frozenset(
    {
        GroupVersion("apps", "v1beta1"),
        GroupVersion("apps", "v1beta2"),
        GroupVersion("extensions", "v1beta1"),
    }
)
_MUTABLE_SELECTOR_VERSIONS: Final = frozenset(
    {GroupVersion("apps", "v1beta1"), GroupVersion("extensions", "v1beta1")}
)


class DeploymentStrategy(BuiltinStrategy):
    tracks_generation = True

    def subresources(self) -> tuple[str, ...]:
        return (STATUS, SCALE)

    def reset_fields(self, subresource: str) -> frozenset[tuple[str, ...]]:
        if subresource == STATUS:
            return frozenset({("spec",), ("metadata", "labels")})
        return frozenset({("status",)})

    def generation_changed(self, obj: Object, old: Object) -> bool:
        return obj.get("spec") != old.get("spec") or (
            read_meta(obj).get("annotations") != read_meta(old).get("annotations")
        )

    def prepare_for_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> None:
        if subresource == SCALE:
            keep_all_but_replicas(obj, old)
        if subresource != STATUS:
            super().prepare_for_update(ctx, obj, old, "")
            return
        keep(obj, old, "spec")
        labels = read_meta(old).get("labels")
        if labels is None:
            meta(obj).pop("labels", None)
        else:
            meta(obj)["labels"] = copy_value(labels)

    def validate_kind_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> list[Cause]:
        if subresource == STATUS:
            return validate_deployment_status_update(obj, old)
        version = ctx.request_version
        immutable = version is not None and version not in _MUTABLE_SELECTOR_VERSIONS
        return validate_deployment_update(obj, old, selector_immutable=immutable)

    def default_gc_policy(self, ctx: RequestContext) -> str:
        if ctx.request_version in _ORPHANING_VERSIONS:
            return ORPHAN_DEPENDENTS
        return DELETE_DEPENDENTS
