"""POST of a new object (``create``): 201 with the stored object.

The body is decoded for the endpoint's kind and version (:mod:`kstore.server.decoding`), its
namespace made to agree with the path (an empty one takes the path's; a different one is a
400; a cluster-scoped kind's is cleared), then the registry creates it — with ``dryRun=All``
validated and admitted but not persisted. Strict-decoding warnings (``fieldValidation=Warn``)
and the registry's warnings come back as ``Warning`` headers.
"""

from __future__ import annotations

from kstore.api.gvk import Object
from kstore.errors import BadRequest
from kstore.registry.interface import WriteResult
from kstore.server.decoding import decode_body
from kstore.server.handlers.scope import Call, Reply, ResourceScope
from kstore.server.negotiation import body_serializer, negotiate
from kstore.server.options import create_options, field_validation

__all__ = ["create", "create_async", "ensure_namespace"]


def ensure_namespace(scope: ResourceScope, obj: Object, request_namespace: str) -> None:
    """Kubernetes' ``EnsureObjectNamespaceMatchesRequestNamespace`` on a hub object we own."""
    expected = request_namespace if scope.namespaced else ""
    meta = obj["metadata"]
    current = meta.get("namespace") or ""
    if current == expected:
        return
    if not current or not expected:
        if expected:
            meta["namespace"] = expected
        else:
            meta.pop("namespace", None)
        return
    raise BadRequest(
        "the namespace of the provided object does not match the namespace sent on the request"
    )


def create(scope: ResourceScope, call: Call) -> Reply:
    request = _CreateRequest(scope, call)
    result = scope.store.create(request.ctx, request.decoded.hub, request.options)
    return request.reply(result)


async def create_async(scope: ResourceScope, call: Call) -> Reply:
    """:func:`create` on the event loop (where the registry's writes may run there)."""
    request = _CreateRequest(scope, call)
    result = await scope.store.create_async(request.ctx, request.decoded.hub, request.options)
    return request.reply(result)


class _CreateRequest:
    """A POST's body decoded and its options read: everything before the registry."""

    __slots__ = ("ctx", "decoded", "fmt", "options", "scope")

    def __init__(self, scope: ResourceScope, call: Call) -> None:
        self.scope = scope
        self.fmt = negotiate(call.accept)
        validation = field_validation(call.query)
        self.options = create_options(call.query, call.dry_run, call.user_agent)
        self.decoded = decode_body(
            scope.scheme, call.body, body_serializer(call.content_type), scope.gvk, validation
        )
        ensure_namespace(scope, self.decoded.hub, call.info.namespace)
        self.ctx = scope.context(call.info, call)

    def reply(self, result: WriteResult) -> Reply:
        body = self.scope.encoder.object(result.object, self.scope.gv, self.fmt)
        return Reply(201, body, self.fmt.content_type, [*self.decoded.warnings, *result.warnings])
