"""storage.k8s.io StorageClass, CSIDriver, CSINode and VolumeAttachment: Kubernetes'
``pkg/registry/storage`` strategies. All four are cluster-scoped; VolumeAttachment alone has a
status subresource.

- StorageClass: no generation; updates without a resourceVersion are allowed;
- CSIDriver: no generation on create (it stays unset), bumped on every spec change, as
  Kubernetes' strategy does; updates need a resourceVersion;
- CSINode: no generation; ``status`` the zero struct when a create has none (Go's field is not
  a pointer, so v1.36 serves ``status: {}``); updates need a resourceVersion;
- VolumeAttachment: see :class:`VolumeAttachmentStrategy`.
"""

from __future__ import annotations

from kstore.api.gvk import Object
from kstore.registry.interface import RequestContext
from kstore.registry.strategies.base import STATUS, BuiltinStrategy, generation_of, meta

__all__ = [
    "CSIDriverStrategy",
    "CSINodeStrategy",
    "StorageClassStrategy",
    "VolumeAttachmentStrategy",
]


class StorageClassStrategy(BuiltinStrategy):
    pass


class CSIDriverStrategy(BuiltinStrategy):
    allow_unconditional_update = False

    def prepare_for_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> None:
        super().prepare_for_update(ctx, obj, old, subresource)
        if obj.get("spec") != old.get("spec"):
            meta(obj)["generation"] = generation_of(old) + 1


class CSINodeStrategy(BuiltinStrategy):
    allow_unconditional_update = False

    def prepare_for_create(self, ctx: RequestContext, obj: Object) -> list[str]:
        warnings = super().prepare_for_create(ctx, obj)
        if not isinstance(obj.get(STATUS), dict):
            obj[STATUS] = {}
        return warnings


class VolumeAttachmentStrategy(BuiltinStrategy):
    """Kubernetes' v1 behaviour: ``status`` the zero struct on create (``attached`` has no
    omitempty, so it shows as false), kept by spec writes; the ``status`` subresource keeps the
    spec; no generation (the spec is immutable); updates need a resourceVersion."""

    allow_unconditional_update = False

    def prepare_for_create(self, ctx: RequestContext, obj: Object) -> list[str]:
        warnings = super().prepare_for_create(ctx, obj)
        obj[STATUS] = {"attached": False}
        return warnings
