"""apps DaemonSet: Kubernetes' daemonset strategy (``pkg/registry/apps/daemonset``).

- create: ``status`` the zero struct (its four counts that are not omitempty, at 0),
  ``generation`` 1, ``spec.templateGeneration`` at least 1;
- update: ``status`` kept; ``spec.templateGeneration`` is the stored one, plus one when the
  pod template changes; ``generation`` bumped when the spec changes (annotations and labels do
  not count, unlike a Deployment's);
- ``status`` writes: ``spec`` kept (labels may change, unlike a Deployment's); validated by
  Kubernetes' status rules;
- ``spec.selector`` is immutable for requests made in any served version (Kubernetes exempts
  only extensions/v1beta1, and requests without a request version);
- deleting through extensions/v1beta1 or apps/v1beta2 without a propagation policy orphans
  the dependents (their default garbage-collection policy), other versions delete them.

``spec.templateGeneration`` is the hub's (apps/v1 clients see the
``deprecated.daemonset.template.generation`` annotation, see :mod:`kstore.api.kinds.daemonset`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from kstore.api.gvk import GroupVersion, Object
from kstore.api.kinds.daemonset import (
    validate_daemon_set_status_update,
    validate_daemon_set_update,
)
from kstore.errors import Cause
from kstore.registry.interface import RequestContext
from kstore.registry.strategies.base import (
    DELETE_DEPENDENTS,
    ORPHAN_DEPENDENTS,
    STATUS,
    BuiltinStrategy,
)

__all__ = ["DaemonSetStrategy"]

_TEMPLATE_GENERATION: Final = "templateGeneration"
_ORPHANING_VERSIONS: Final = frozenset(
    {GroupVersion("apps", "v1beta2"), GroupVersion("extensions", "v1beta1")}
)
_MUTABLE_SELECTOR_VERSIONS: Final = frozenset({GroupVersion("extensions", "v1beta1")})


def _template_generation(spec: object) -> int:
    value = spec.get(_TEMPLATE_GENERATION) if isinstance(spec, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


class DaemonSetStrategy(BuiltinStrategy):
    # Generation follows everything outside metadata and status: the spec.
    tracks_generation = True

    def prepare_for_create(self, ctx: RequestContext, obj: Object) -> list[str]:
        warnings = super().prepare_for_create(ctx, obj)
        obj[STATUS] = {
            "currentNumberScheduled": 0,
            "numberMisscheduled": 0,
            "desiredNumberScheduled": 0,
            "numberReady": 0,
        }
        spec = obj.get("spec")
        if isinstance(spec, dict) and _template_generation(spec) < 1:
            spec[_TEMPLATE_GENERATION] = 1
        return warnings

    def prepare_for_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> None:
        spec, old_spec = obj.get("spec"), old.get("spec")
        if subresource != STATUS and isinstance(spec, dict):
            # Users may not set it: the stored value, one more for a new template.
            old_template = old_spec.get("template") if isinstance(old_spec, Mapping) else None
            if spec.get("template") != old_template:
                spec[_TEMPLATE_GENERATION] = _template_generation(old_spec) + 1
            elif isinstance(old_spec, Mapping) and _TEMPLATE_GENERATION in old_spec:
                spec[_TEMPLATE_GENERATION] = old_spec[_TEMPLATE_GENERATION]
            else:
                spec.pop(_TEMPLATE_GENERATION, None)
        super().prepare_for_update(ctx, obj, old, subresource)

    def validate_kind_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> list[Cause]:
        if subresource == STATUS:
            return validate_daemon_set_status_update(obj, old)
        version = ctx.request_version
        immutable = version is not None and version not in _MUTABLE_SELECTOR_VERSIONS
        return validate_daemon_set_update(obj, old, selector_immutable=immutable)

    def default_gc_policy(self, ctx: RequestContext) -> str:
        if ctx.request_version in _ORPHANING_VERSIONS:
            return ORPHAN_DEPENDENTS
        return DELETE_DEPENDENTS
