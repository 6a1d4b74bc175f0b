"""apiregistration.k8s.io APIService: the aggregator's ``pkg/registry/apiservice`` strategy.

- cluster-scoped; no generation; updates need a resourceVersion;
- create: ``status`` emptied, and a local APIService (no ``spec.service``) is marked
  ``Available`` at once (reason ``Local``), as the aggregator's strategy does; a service-backed
  one gets its condition from :mod:`kstore.controllers.apiservice_controller`;
- update: ``status`` kept;
- ``status`` writes keep the spec, labels, annotations, finalizers and owner references;
- no reset fields: the aggregator's strategy declares none, so an apply of the main resource
  may own status fields in managedFields (the values are still kept from the stored object).
"""

from __future__ import annotations

from datetime import UTC, datetime

from kstore.api.gvk import Object
from kstore.api.kinds.apiregistration import LOCAL_AVAILABLE, validate_api_service_status_update
from kstore.errors import Cause
from kstore.registry.interface import RequestContext
from kstore.registry.strategies.base import STATUS, BuiltinStrategy, meta, read_meta

__all__ = ["APIServiceStrategy"]

#: What a status write may not change (``apiServerStatusStrategy.PrepareForUpdate``).
_KEPT_BY_STATUS_WRITES = ("labels", "annotations", "finalizers", "ownerReferences")


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class APIServiceStrategy(BuiltinStrategy):
    allow_unconditional_update = False

    def prepare_for_create(self, ctx: RequestContext, obj: Object) -> list[str]:
        warnings = super().prepare_for_create(ctx, obj)
        spec = obj.get("spec")
        if not isinstance(spec, dict) or not isinstance(spec.get("service"), dict):
            obj[STATUS] = {"conditions": [{**LOCAL_AVAILABLE, "lastTransitionTime": _now()}]}
        return warnings

    def prepare_for_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> None:
        super().prepare_for_update(ctx, obj, old, subresource)
        if subresource != STATUS:
            return
        old_meta, new_meta = read_meta(old), meta(obj)
        for key in _KEPT_BY_STATUS_WRITES:
            if key in old_meta:
                new_meta[key] = old_meta[key]
            else:
                new_meta.pop(key, None)

    def reset_fields(self, subresource: str) -> frozenset[tuple[str, ...]]:
        return frozenset()

    def validate_kind_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> list[Cause]:
        if subresource == STATUS:
            return validate_api_service_status_update(obj, old)
        return super().validate_kind_update(ctx, obj, old, subresource)
