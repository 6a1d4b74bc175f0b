"""The strategy of a kind: what the generic store does differently per kind.

A :class:`Strategy` is Kubernetes' ``RESTCreateStrategy`` + ``RESTUpdateStrategy`` +
``RESTDeleteStrategy`` (+ ``RESTGracefulDeleteStrategy``, ``GarbageCollectionDeleteStrategy``,
``ResetFieldsStrategy``, the TTL function) in one object, working on hub dicts.

The base class is the behaviour of a **custom kind** (what Kubernetes gives a custom
resource): generation 1 on create and bumped by any change outside ``metadata`` and
``status``; with a ``status`` subresource, the main resource never writes ``status`` and the
``status`` subresource writes nothing else; updates need a resourceVersion; no create on
update; no graceful deletion; names are DNS subdomains. Built-in kinds subclass it
(:class:`BuiltinStrategy` and the per-kind modules).

Every ``prepare_*`` method mutates the new object it is given, which the store owns; the old
object is read-only (it may be shared with the watch cache), so anything taken from it is
copied with :func:`copy_value` first.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any, ClassVar, Final

from kstore.api.gvk import Object
from kstore.api.scheme import KindDefinition, SchemaRules
from kstore.api.validation.names import (
    is_dns1123_label,
    name_is_dns_subdomain,
    validate_path_segment_name,
)
from kstore.api.validation.objectmeta import validate_object_meta, validate_object_meta_update
from kstore.errors import Cause
from kstore.registry.interface import RequestContext
from kstore.registry.strategies._objects import copy_value, meta, read_meta
from kstore.registry.strategies._scale import SCALE, keep_all_but_replicas

#: The warnings of the update being validated, as Kubernetes' request-scoped warning recorder:
#: the store sets it around ``validate_update``; a schema's ratcheted CEL failures land there.
update_warnings: ContextVar[list[str] | None] = ContextVar("update_warnings", default=None)

__all__ = [
    "DELETE_DEPENDENTS",
    "ORPHAN_DEPENDENTS",
    "STATUS",
    "UNSUPPORTED",
    "BuiltinStrategy",
    "Strategy",
    "copy_value",
    "generation_of",
    "keep",
    "meta",
    "outside_metadata_and_status_changed",
    "pod_name_warnings",
    "read_meta",
]

STATUS: Final = "status"
#: Default garbage-collection policies (``rest.GarbageCollectionPolicy``); "" means none.
DELETE_DEPENDENTS: Final = "DeleteDependents"
ORPHAN_DEPENDENTS: Final = "OrphanDependents"
UNSUPPORTED: Final = "Unsupported"


def outside_metadata_and_status_changed(new: Mapping[str, Any], old: Mapping[str, Any]) -> bool:
    """Whether anything but ``apiVersion``/``kind``/``metadata``/``status`` differs."""
    skip = ("apiVersion", "kind", "metadata", STATUS)
    keys = (new.keys() | old.keys()).difference(skip)
    return any(new.get(k) != old.get(k) for k in keys)


class Strategy:
    """Per-kind rules of the generic store. Thread-safe: it holds no per-request state."""

    #: Whether a PUT of a missing object creates it.
    allow_create_on_update: ClassVar[bool] = False
    #: Whether an update without a resourceVersion overwrites (last write wins).
    allow_unconditional_update: ClassVar[bool] = False
    #: Whether ``metadata.generation`` starts at 1 and follows spec changes.
    tracks_generation: ClassVar[bool] = True
    #: Whether deletes may be graceful (:meth:`graceful_delete_period` decides how).
    supports_graceful_deletion: ClassVar[bool] = False

    def __init__(self, definition: KindDefinition) -> None:
        if definition.resource is None:
            raise ValueError(f"kind {definition.kind} is not an API resource")
        self.definition = definition
        self.info = definition.resource
        self.namespaced = definition.resource.namespaced
        self.status_subresource = STATUS in definition.resource.subresources
        scale = definition.resource.scale
        self._scale_path = tuple(scale.spec_replicas.lstrip(".").split(".")) if scale else ()

    # -- what the field manager needs --------------------------------------------------------

    def reset_fields(self, subresource: str) -> frozenset[tuple[str, ...]]:
        """Fields this (sub)resource's writes do not own (Kubernetes' ``GetResetFields``), as
        paths of field names (``("status",)``)."""
        if not self.status_subresource:
            return frozenset()
        if subresource == STATUS:
            return frozenset({("spec",), ("metadata",)})
        return frozenset({("status",)})

    def subresources(self) -> tuple[str, ...]:
        """The subresources :meth:`prepare_for_update` accepts besides the main resource."""
        return ((STATUS,) if self.status_subresource else ()) + (
            (SCALE,) if self._scale_path else ()
        )

    # -- create ----------------------------------------------------------------------------

    def prepare_for_create(self, ctx: RequestContext, obj: Object) -> list[str]:
        """Clear what users may not set and fill what the server owns; returns warnings."""
        if self.status_subresource:
            obj.pop(STATUS, None)
        if self.tracks_generation:
            meta(obj)["generation"] = 1
        return []

    def validate(self, ctx: RequestContext, obj: Object) -> list[Cause]:
        """The kind's validation of a new object (ObjectMeta included), then what the
        request version's schema says, if it has one."""
        if self.definition.validate is not None:
            causes = self.definition.validate(obj)
        else:
            causes = validate_object_meta(
                obj, self.namespaced, name_is_dns_subdomain, kube_finalizers=False
            )
        rules = self._schema_rules(ctx)
        if rules is not None:
            causes.extend(rules.validate(obj))
        return causes

    def _schema_rules(self, ctx: RequestContext) -> SchemaRules | None:
        """The schema rules of the version the request speaks (the storage version's when it
        speaks none of this kind's): Kubernetes validates a custom object by its version.
        The object validated here is the hub, though: when the request version has a shape of
        its own (converted by a webhook) and the storage version has the hub's, the storage
        version's rules are the ones that fit it."""
        d = self.definition
        gv = ctx.request_version
        version = gv.version if gv is not None and gv.group == d.group else ""
        stored = d.version(d.storage_group_version.version)
        for v in d.versions:
            if v.version == version:
                if v.to_hub is not None and stored.to_hub is None:
                    return stored.schema_rules
                return v.schema_rules
        return stored.schema_rules

    def kind_validates_object_meta(self) -> bool:
        """Whether :meth:`validate` already applies ObjectMeta validation with a name rule at
        least as strict as the generic one (then the generic pass cannot add anything)."""
        return self.definition.validate is None

    def validate_create(self, ctx: RequestContext, obj: Object) -> list[Cause]:
        """Kubernetes' ``ValidateCreate``: the kind's rules, then, only when they pass, the
        generic ObjectMeta rules every stored object obeys."""
        causes = self.validate(ctx, obj)
        if causes or self.kind_validates_object_meta():
            return causes
        return validate_object_meta(
            obj, self.namespaced, validate_path_segment_name, kube_finalizers=False
        )

    # -- update ----------------------------------------------------------------------------

    def prepare_for_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> None:
        """Keep what this (sub)resource may not change, bump the generation."""
        if subresource == STATUS:
            self._keep_all_but_status(obj, old)
            return
        if subresource == SCALE and self._scale_path:
            keep_all_but_replicas(obj, old, self._scale_path)
        if self.status_subresource:
            keep(obj, old, STATUS)
        if self.tracks_generation and self.generation_changed(obj, old):
            meta(obj)["generation"] = generation_of(old) + 1

    def generation_changed(self, obj: Object, old: Object) -> bool:
        return outside_metadata_and_status_changed(obj, old)

    def _keep_all_but_status(self, obj: Object, old: Object) -> None:
        # A custom resource's status write changes status (and managedFields) only.
        managed = read_meta(obj).get("managedFields")
        status = obj.get(STATUS)
        obj.clear()
        obj.update(copy_value(old))
        if managed is None:
            meta(obj).pop("managedFields", None)
        else:
            meta(obj)["managedFields"] = managed
        if status is None:
            obj.pop(STATUS, None)
        else:
            obj[STATUS] = status

    def validate_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> list[Cause]:
        """Kubernetes' ``ValidateUpdate``: generic ObjectMeta rules (create and update), then
        the kind's update rules."""
        causes = validate_object_meta(
            obj, self.namespaced, validate_path_segment_name, kube_finalizers=False
        )
        causes.extend(validate_object_meta_update(obj, old, kube_finalizers=False))
        causes.extend(self.validate_kind_update(ctx, obj, old, subresource))
        return causes

    def validate_kind_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> list[Cause]:
        d = self.definition
        if d.validate_update is not None:
            causes = d.validate_update(obj, old)
        elif d.validate is not None:
            causes = d.validate(obj)
        else:
            causes = validate_object_meta(
                obj, self.namespaced, name_is_dns_subdomain, kube_finalizers=False
            )
        rules = self._schema_rules(ctx)
        if rules is not None:
            causes.extend(rules.validate_update(obj, old, update_warnings.get()))
        return causes

    def should_delete_during_update(self, obj: Object, old: Object) -> bool:
        """An update that removes the last finalizer of an object being deleted (with no
        grace period pending) deletes it."""
        if read_meta(obj).get("finalizers"):
            return False
        old_meta = read_meta(old)
        if not old_meta.get("deletionTimestamp"):
            return False
        return not old_meta.get("deletionGracePeriodSeconds")

    # -- delete ----------------------------------------------------------------------------

    def prepare_for_delete(self, obj: Object) -> bool:
        """Change ``obj`` (a copy of the stored object, not yet being deleted) before its
        delete is decided, e.g. add a finalizer of the kind's own; whether anything changed.
        A change is written first, and finalizers it adds keep the object until removed."""
        return False

    def graceful_delete_period(self, obj: Object, requested: int | None) -> int | None:
        """The grace period of a first graceful delete, or None when the kind deletes
        immediately (Kubernetes' ``CheckGracefulDelete``)."""
        return None

    def default_gc_policy(self, ctx: RequestContext) -> str:
        return DELETE_DEPENDENTS

    # -- storage ---------------------------------------------------------------------------

    @property
    def ttl_seconds(self) -> int | None:
        """Seconds after each write until the object expires (None: never)."""
        return None


class BuiltinStrategy(Strategy):
    """What the built-in kinds share: unconditional updates allowed, ``status`` a zero struct
    rather than absent, no generation unless the kind has one, a status write keeps ``spec``
    from the stored object. (Their validators, in :mod:`kstore.api.kinds`, add Kubernetes'
    finalizer-name rule.)"""

    allow_unconditional_update = True
    tracks_generation = False
    default_policy: ClassVar[str] = ""

    def prepare_for_create(self, ctx: RequestContext, obj: Object) -> list[str]:
        if self.status_subresource:
            obj[STATUS] = {}
        if self.tracks_generation:
            meta(obj)["generation"] = 1
        return []

    def prepare_for_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> None:
        if subresource == STATUS:
            keep(obj, old, "spec")
            return
        super().prepare_for_update(ctx, obj, old, subresource)

    def reset_fields(self, subresource: str) -> frozenset[tuple[str, ...]]:
        if not self.status_subresource:
            return frozenset()
        if subresource == STATUS:
            return frozenset({("spec",)})
        return frozenset({("status",)})

    def kind_validates_object_meta(self) -> bool:
        # Every built-in validator in kstore.api.kinds starts with ValidateObjectMeta and a
        # DNS name rule, except core/v1 Event's (Kubernetes keeps events' legacy rules).
        return True

    def default_gc_policy(self, ctx: RequestContext) -> str:
        return self.default_policy


def keep(obj: Object, old: Mapping[str, Any], key: str) -> None:
    """``obj[key] = old[key]`` (a copy), or absent when ``old`` has none."""
    if key in old:
        obj[key] = copy_value(old[key])
    else:
        obj.pop(key, None)


def generation_of(obj: Mapping[str, Any]) -> int:
    value = read_meta(obj).get("generation")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def pod_name_warnings(obj: Object) -> list[str]:
    """The warning of the kinds whose name goes into their Pods' names and hostnames
    (ReplicaSet, Job, CronJob) when it is not a DNS label."""
    name = read_meta(obj).get("name")
    problems = is_dns1123_label(name) if isinstance(name, str) and name else []
    if not problems:
        return []
    return [
        "metadata.name: this is used in Pod names and hostnames, which can result in "
        f"surprising behavior; a DNS label is recommended: [{' '.join(problems)}]"
    ]
