"""PATCH (``patch``): json-patch, merge-patch, strategic-merge-patch and server-side apply.

The patch type comes from ``Content-Type`` (415 listing the types the kind accepts otherwise).
The patch is applied by :func:`kstore.registry.patch.apply_patch` to the current object in the
request's version, inside the registry's update function, so a conflict retry patches fresh
state. A server-side apply is flagged to the registry as one (``UpdateOptions.apply``): a missing
object is then created (201) with the apply's own ``Apply`` entry in ``managedFields`` and no
``Update`` entry, as Kubernetes' patcher does with ``forceAllowCreate``; every other patch of a
missing object is a 404 (unless the kind allows create on update). ``dryRun``,
``fieldManager``, ``force`` and ``fieldValidation`` are passed on; patch warnings come back as
``Warning`` headers.
"""

from __future__ import annotations

from dataclasses import replace

from kstore.api.gvk import Object
from kstore.registry.interface import WriteResult
from kstore.registry.patch import PatchOptions, PatchType, apply_patch, parse_patch_type
from kstore.server.handlers.scope import Call, Reply, ResourceScope
from kstore.server.handlers.update import store_update, store_update_async
from kstore.server.negotiation import negotiate
from kstore.server.options import field_validation, update_options
from kstore.server.request_info import query_bool

__all__ = ["patch", "patch_async"]


def _reset_fields(scope: ResourceScope, subresource: str) -> list[tuple[str, ...]]:
    # The fields the kind's strategy resets (e.g. status on the main resource): nobody comes to
    # own them. Stores without a strategy (other ResourceStore implementations) reset none.
    strategy = getattr(scope.store, "strategy", None)
    reset = getattr(strategy, "reset_fields", None)
    return sorted(reset(subresource)) if callable(reset) else []


def patch(scope: ResourceScope, call: Call) -> Reply:
    return store_update(scope, call, _PatchRequest(scope, call))


async def patch_async(scope: ResourceScope, call: Call) -> Reply:
    """:func:`patch` on the event loop (where the registry's writes may run there)."""
    return await store_update_async(scope, call, _PatchRequest(scope, call))


class _PatchRequest:
    """A PATCH's type and options read; :meth:`updated` applies it to the current object."""

    __slots__ = (
        "body",
        "ctx",
        "fmt",
        "options",
        "patch_options",
        "patch_type",
        "scope",
        "warnings",
    )

    def __init__(self, scope: ResourceScope, call: Call) -> None:
        self.scope = scope
        self.body = call.body
        self.fmt = negotiate(call.accept)
        gvk = scope.gvk
        self.patch_type = parse_patch_type(call.content_type or "", gvk)
        raw_force = call.query.get("force")
        force = None if raw_force is None else query_bool(raw_force)
        options = update_options(
            call.query,
            call.dry_run,
            subresource=call.info.subresource,
            kind="PatchOptions",
            user_agent=call.user_agent,
        )
        version = scope.scheme.kind_version(gvk)
        group = scope.gv.group
        self.patch_options = PatchOptions(
            gvk=gvk,
            name=call.info.name,
            namespace=call.info.namespace if scope.namespaced else "",
            resource=f"{scope.plural}.{group}" if group else scope.plural,
            # The parameter itself: apply requires it (the User-Agent does not stand in).
            field_manager=call.query.get("fieldManager", ""),
            user_agent=call.user_agent,
            force=force,
            subresource=call.info.subresource,
            field_validation=field_validation(call.query),
            schema=version.schema,
            default=version.default,
            reset_fields=_reset_fields(scope, call.info.subresource),
            type_node=version.schema_rules.type_node if version.schema_rules else None,
            prune=version.schema_rules.prune if version.schema_rules else None,
        )
        self.warnings: list[str] = []
        self.options = replace(options, apply=self.patch_type is PatchType.APPLY)
        self.ctx = scope.context(call.info, call)

    def updated(self, current: Object) -> Object:
        scheme, version = self.scope.scheme, self.scope.gvk.version
        external = scheme.from_hub(current, version) if current else {}
        result = apply_patch(external, self.body, self.patch_type, self.patch_options)
        self.warnings[:] = result.warnings
        return scheme.to_hub(result.object)

    def reply(self, written: WriteResult) -> Reply:
        body = self.scope.encoder.object(written.object, self.scope.gv, self.fmt)
        status = 201 if written.created else 200
        return Reply(status, body, self.fmt.content_type, [*self.warnings, *written.warnings])
