"""PUT of a whole object (``update``, and ``update`` of the ``status``/``finalize``
subresources): 200 with the stored object, 201 when the update created it.

The name in the body must be the path's and its namespace agree with the path's. A
``metadata.resourceVersion`` in the body makes the update conditional: a stale one is a 409
Conflict with Kubernetes' wording (the registry's). The change is handed to the registry as a
function of the current object so that an unconditional update survives conflict retries.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

from kstore.api.gvk import Object
from kstore.errors import BadRequest
from kstore.registry.interface import RequestContext, UpdateOptions, WriteResult
from kstore.server.decoding import decode_body
from kstore.server.handlers.create import ensure_namespace
from kstore.server.handlers.scope import Call, Reply, ResourceScope
from kstore.server.negotiation import body_serializer, negotiate
from kstore.server.options import field_validation, update_options
from kstore.storage.interface import Preconditions

__all__ = ["UpdateCall", "store_update", "store_update_async", "update", "update_async"]


def update(scope: ResourceScope, call: Call) -> Reply:
    return store_update(scope, call, _UpdateRequest(scope, call))


async def update_async(scope: ResourceScope, call: Call) -> Reply:
    """:func:`update` on the event loop (where the registry's writes may run there)."""
    return await store_update_async(scope, call, _UpdateRequest(scope, call))


class UpdateCall(Protocol):
    """A PUT or PATCH ready for the registry: its context, options, update function, reply."""

    ctx: RequestContext
    options: UpdateOptions

    def updated(self, current: Object) -> Object: ...

    def reply(self, result: WriteResult) -> Reply: ...


def store_update(scope: ResourceScope, call: Call, request: UpdateCall) -> Reply:
    """Have the registry apply ``request`` to the object the path names; its reply."""
    result = scope.store.update(request.ctx, call.info.name, request.updated, request.options)
    return request.reply(result)


async def store_update_async(scope: ResourceScope, call: Call, request: UpdateCall) -> Reply:
    """:func:`store_update` on the event loop."""
    store = scope.store
    result = await store.update_async(request.ctx, call.info.name, request.updated, request.options)
    return request.reply(result)


class _UpdateRequest:
    """A PUT's body decoded and checked against the path, its options read."""

    __slots__ = ("ctx", "decoded", "fmt", "hub", "options", "scope")

    def __init__(self, scope: ResourceScope, call: Call) -> None:
        self.scope = scope
        self.fmt = negotiate(call.accept)
        validation = field_validation(call.query)
        options = update_options(
            call.query, call.dry_run, subresource=call.info.subresource, user_agent=call.user_agent
        )
        self.decoded = decode_body(
            scope.scheme, call.body, body_serializer(call.content_type), scope.gvk, validation
        )
        hub = self.hub = self.decoded.hub
        name = hub["metadata"].get("name") or ""
        if name != call.info.name:
            raise BadRequest(
                f"the name of the object ({name}) does not match the name on the URL "
                f"({call.info.name})"
            )
        ensure_namespace(scope, hub, call.info.namespace)
        uid = hub["metadata"].get("uid")
        if isinstance(uid, str) and uid:
            # As Kubernetes' DefaultUpdatedObjectInfo: replacing an object that was deleted and
            # recreated under the same name is a Conflict, not an update of the new one.
            options = replace(options, preconditions=Preconditions(uid=uid))
        self.options = options
        self.ctx = scope.context(call.info, call)

    def updated(self, current: Object) -> Object:
        # The registry may fill system fields into what this returns; each conflict retry
        # gets its own top level and metadata, the rest is shared and left alone.
        hub = self.hub
        return {**hub, "metadata": dict(hub["metadata"])}

    def reply(self, result: WriteResult) -> Reply:
        body = self.scope.encoder.object(result.object, self.scope.gv, self.fmt)
        status = 201 if result.created else 200
        return Reply(
            status, body, self.fmt.content_type, [*self.decoded.warnings, *result.warnings]
        )
