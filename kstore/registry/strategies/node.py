"""core Node: Kubernetes' ``pkg/registry/core/node`` strategy.

- create: everything may be set, status included (a kubelet registers its node with its
  status); the deprecated ``spec.configSource`` is dropped; no generation;
- update: ``status`` kept; ``spec.configSource`` kept only when the stored node has one;
  validated by ``ValidateNode`` then ``ValidateNodeUpdate``;
- ``status`` writes: ``spec`` kept; validated by ``ValidateNodeUpdate``.
"""

from __future__ import annotations

from kstore.api.gvk import Object
from kstore.api.kinds.node import validate_node_and_update, validate_node_update
from kstore.errors import Cause
from kstore.registry.interface import RequestContext
from kstore.registry.strategies.base import STATUS, BuiltinStrategy

__all__ = ["NodeStrategy"]


def _drop_config_source(obj: Object, old: Object | None) -> None:
    """``dropDisabledFields``: no new ``spec.configSource`` (the field is no longer used)."""
    old_spec = old.get("spec") if old is not None else None
    if isinstance(old_spec, dict) and old_spec.get("configSource") is not None:
        return
    spec = obj.get("spec")
    if isinstance(spec, dict):
        spec.pop("configSource", None)


class NodeStrategy(BuiltinStrategy):
    def prepare_for_create(self, ctx: RequestContext, obj: Object) -> list[str]:
        # Unlike other kinds with a status subresource, a node keeps the status it comes with.
        _drop_config_source(obj, None)
        return []

    def prepare_for_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> None:
        super().prepare_for_update(ctx, obj, old, subresource)
        _drop_config_source(obj, old)

    def validate_kind_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> list[Cause]:
        if subresource == STATUS:
            return validate_node_update(obj, old)
        return validate_node_and_update(obj, old)
