"""networking.k8s.io ServiceCIDR: Kubernetes' ``pkg/registry/networking/servicecidr`` strategy.

Cluster-scoped, no generation; ``status`` starts empty and is kept by writes of the main
resource; ``status`` writes keep ``spec`` and check only the metadata.
"""

from __future__ import annotations

from kstore.api.gvk import Object
from kstore.api.kinds.servicecidr import validate_service_cidr_status_update
from kstore.errors import Cause
from kstore.registry.interface import RequestContext
from kstore.registry.strategies.base import STATUS, BuiltinStrategy

__all__ = ["ServiceCIDRStrategy"]


class ServiceCIDRStrategy(BuiltinStrategy):
    def validate_kind_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> list[Cause]:
        if subresource == STATUS:
            return validate_service_cidr_status_update(obj, old)
        return super().validate_kind_update(ctx, obj, old, subresource)
