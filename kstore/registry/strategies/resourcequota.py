"""core ResourceQuota: Kubernetes' ``pkg/registry/core/resourcequota`` strategy.

- create: ``status`` the zero struct (every field omitempty, so ``{}``); no generation;
- update: ``status`` kept; validated by ``ValidateResourceQuotaUpdate`` (the scopes may not
  change);
- ``status`` writes: ``spec`` kept; validated by the status rules (a resourceVersion required).

Quota usage (admission charging, ``status.used``) is not kept here.
"""

from __future__ import annotations

from kstore.api.gvk import Object
from kstore.api.kinds.resourcequota import (
    validate_resource_quota_status_update,
    validate_resource_quota_update,
)
from kstore.errors import Cause
from kstore.registry.interface import RequestContext
from kstore.registry.strategies.base import STATUS, BuiltinStrategy

__all__ = ["ResourceQuotaStrategy"]


class ResourceQuotaStrategy(BuiltinStrategy):
    def validate_kind_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> list[Cause]:
        if subresource == STATUS:
            return validate_resource_quota_status_update(obj, old)
        return validate_resource_quota_update(obj, old)
