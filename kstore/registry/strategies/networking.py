"""networking.k8s.io Ingress and IngressClass: Kubernetes' ``pkg/registry/networking/ingress``
and ``.../ingressclass`` strategies.

Ingress:

- create: ``status`` starts empty, ``generation`` at 1;
- update: ``status`` kept, ``generation`` bumped when ``spec`` changes;
- ``status`` writes keep ``spec`` and check only the load balancer's ingress points
  (:func:`kstore.api.kinds._ingress_validation.validate_ingress_status_update`).

IngressClass: cluster-scoped, no status; ``generation`` starts at 1 and follows ``spec``.
"""

from __future__ import annotations

from kstore.api.gvk import Object
from kstore.api.kinds._ingress_validation import validate_ingress_status_update
from kstore.errors import Cause
from kstore.registry.interface import RequestContext
from kstore.registry.strategies.base import STATUS, BuiltinStrategy

__all__ = ["IngressClassStrategy", "IngressStrategy"]


class IngressStrategy(BuiltinStrategy):
    tracks_generation = True

    def validate_kind_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> list[Cause]:
        if subresource == STATUS:
            return validate_ingress_status_update(obj, old)
        return super().validate_kind_update(ctx, obj, old, subresource)


class IngressClassStrategy(BuiltinStrategy):
    tracks_generation = True
