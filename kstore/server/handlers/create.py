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
from kstore.server.decoding import decode_body
from kstore.server.handlers.scope import Call, Reply, ResourceScope
from kstore.server.negotiation import body_serializer, negotiate
from kstore.server.options import create_options, field_validation

__all__ = ["create", "ensure_namespace"]


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
    fmt = negotiate(call.accept)
    validation = field_validation(call.query)
    options = create_options(call.query, call.dry_run, call.user_agent)
    decoded = decode_body(
        scope.scheme, call.body, body_serializer(call.content_type), scope.gvk, validation
    )
    ensure_namespace(scope, decoded.hub, call.info.namespace)
    ctx = scope.context(call.info)
    result = scope.store.create(ctx, decoded.hub, options)
    body = scope.encoder.object(result.object, scope.gv, fmt)
    return Reply(201, body, fmt.content_type, [*decoded.warnings, *result.warnings])
