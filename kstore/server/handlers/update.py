"""PUT of a whole object (``update``, and ``update`` of the ``status``/``finalize``
subresources): 200 with the stored object, 201 when the update created it.

The name in the body must be the path's and its namespace agree with the path's. A
``metadata.resourceVersion`` in the body makes the update conditional: a stale one is a 409
Conflict with Kubernetes' wording (the registry's). The change is handed to the registry as a
function of the current object so that an unconditional update survives conflict retries.
"""

from __future__ import annotations

from dataclasses import replace

from kstore.api.gvk import Object
from kstore.errors import BadRequest
from kstore.server.decoding import decode_body
from kstore.server.handlers.create import ensure_namespace
from kstore.server.handlers.scope import Call, Reply, ResourceScope
from kstore.server.negotiation import body_serializer, negotiate
from kstore.server.options import field_validation, update_options
from kstore.storage.interface import Preconditions

__all__ = ["update"]


def update(scope: ResourceScope, call: Call) -> Reply:
    fmt = negotiate(call.accept)
    validation = field_validation(call.query)
    options = update_options(
        call.query, call.dry_run, subresource=call.info.subresource, user_agent=call.user_agent
    )
    decoded = decode_body(
        scope.scheme, call.body, body_serializer(call.content_type), scope.gvk, validation
    )
    hub = decoded.hub
    name = hub["metadata"].get("name") or ""
    if name != call.info.name:
        raise BadRequest(
            f"the name of the object ({name}) does not match the name on the URL ({call.info.name})"
        )
    ensure_namespace(scope, hub, call.info.namespace)
    uid = hub["metadata"].get("uid")
    if isinstance(uid, str) and uid:
        # As Kubernetes' DefaultUpdatedObjectInfo: replacing an object that was deleted and
        # recreated under the same name is a Conflict, not an update of the new one.
        options = replace(options, preconditions=Preconditions(uid=uid))

    def updated(current: Object) -> Object:
        # The registry may fill system fields into what this returns; each conflict retry
        # gets its own top level and metadata, the rest is shared and left alone.
        return {**hub, "metadata": dict(hub["metadata"])}

    ctx = scope.context(call.info)
    result = scope.store.update(ctx, call.info.name, updated, options)
    body = scope.encoder.object(result.object, scope.gv, fmt)
    status = 201 if result.created else 200
    return Reply(status, body, fmt.content_type, [*decoded.warnings, *result.warnings])
