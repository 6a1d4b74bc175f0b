"""apps Deployment: Kubernetes' deployment strategy (``pkg/registry/apps/deployment``).

- create: ``status`` a zero struct, ``generation`` 1;
- update: ``status`` kept; ``generation`` bumped when ``spec`` **or annotations** change
  (annotations are copied to the ReplicaSets, so a change is a new generation);
- ``status`` writes: ``spec`` and labels kept; validated by Kubernetes' status rules;
- ``spec.selector`` is immutable except for requests made in apps/v1beta1 (or without a
  request version, where Kubernetes falls back to the old, mutable behaviour);
- deleting through apps/v1beta1 or apps/v1beta2 without a propagation policy orphans the
  dependents (their default garbage-collection policy), other versions delete them.
"""

from __future__ import annotations

from typing import Final

from kstore.api.gvk import GroupVersion, Object
from kstore.api.kinds.apps import validate_deployment_status_update, validate_deployment_update
from kstore.errors import Cause
from kstore.registry.fieldpath import FieldPath, FieldTypes, ListType
from kstore.registry.interface import RequestContext
from kstore.registry.strategies.base import (
    DELETE_DEPENDENTS,
    OBJECT_META_TYPES,
    ORPHAN_DEPENDENTS,
    STATUS,
    BuiltinStrategy,
    copy_value,
    keep,
    meta,
    read_meta,
)
from kstore.registry.strategies.pod import pod_template_types

__all__ = ["DeploymentStrategy"]

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


def _deployment_types() -> FieldTypes:
    types = OBJECT_META_TYPES.mounted((), pod_template_types(("spec", "template"))).mounted(
        (STATUS,), FieldTypes(lists={("conditions",): ListType(("type",))})
    )
    # metav1.LabelSelector is an atomic struct.
    return FieldTypes(lists=types.lists, atomic=types.atomic | {("spec", "selector")})


_TYPES: Final = _deployment_types()


class DeploymentStrategy(BuiltinStrategy):
    tracks_generation = True

    @property
    def field_types(self) -> FieldTypes:
        return _TYPES

    def zero_object(self) -> Object:
        return {
            "metadata": {},
            "spec": {
                "selector": None,
                "template": {"metadata": {}, "spec": {"containers": None}},
                "strategy": {},
            },
            STATUS: {},
        }

    def reset_fields(self, subresource: str) -> frozenset[FieldPath]:
        if subresource == STATUS:
            return frozenset({("f:spec",), ("f:metadata", "f:labels")})
        return frozenset({("f:status",)})

    def generation_changed(self, obj: Object, old: Object) -> bool:
        return obj.get("spec") != old.get("spec") or (
            read_meta(obj).get("annotations") != read_meta(old).get("annotations")
        )

    def prepare_for_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> None:
        if subresource != STATUS:
            super().prepare_for_update(ctx, obj, old, subresource)
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
