"""discovery.k8s.io EndpointSlice: Kubernetes' ``pkg/registry/discovery/endpointslice``
strategy.

- namespaced; ``generation`` 1 on create, bumped by an update that changes anything outside
  ``metadata``, or the labels;
- ``deprecatedTopology`` cannot be written through discovery.k8s.io/v1: a v1 create clears it
  from every endpoint, a v1 update that changes the endpoints too (an update that leaves them
  as they were keeps what is stored). Writes that speak no version (the registry's own
  clients) are left as they are, as Kubernetes does without request information.
"""

from __future__ import annotations

from typing import Any

from kstore.api.gvk import Object
from kstore.registry.interface import RequestContext
from kstore.registry.strategies.base import BuiltinStrategy, generation_of, meta, read_meta

__all__ = ["EndpointSliceStrategy"]

_GROUP = "discovery.k8s.io"


def _drop_topology(ctx: RequestContext, obj: Object, old: Object | None) -> None:
    version = ctx.request_version
    if version is None or version.group != _GROUP:
        return
    endpoints: Any = obj.get("endpoints")
    if old is not None and old.get("endpoints") == endpoints:
        return
    for endpoint in endpoints if isinstance(endpoints, list) else ():
        if isinstance(endpoint, dict):
            endpoint.pop("deprecatedTopology", None)


class EndpointSliceStrategy(BuiltinStrategy):
    tracks_generation = True

    def prepare_for_create(self, ctx: RequestContext, obj: Object) -> list[str]:
        warnings = super().prepare_for_create(ctx, obj)
        _drop_topology(ctx, obj, None)
        return warnings

    def prepare_for_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> None:
        super().prepare_for_update(ctx, obj, old, subresource)
        if read_meta(obj).get("labels") != read_meta(old).get("labels"):
            meta(obj)["generation"] = generation_of(old) + 1
        _drop_topology(ctx, obj, old)
