"""DELETE of one object (``delete``) and of a collection (``deletecollection``).

DeleteOptions come from the body when there is one (JSON, YAML or protobuf, with or without
``kind``/``apiVersion``), else from the query (``gracePeriodSeconds``, ``propagationPolicy``,
``orphanDependents``, ``dryRun``), never from both, as in Kubernetes. The answer:

- the object is gone: a ``Status{status: Success}`` naming it (details.kind is the resource's
  plural), except for the kinds whose Kubernetes storage returns the deleted object (pods,
  services, namespaces), which get the object;
- the object is still there (finalizers, a grace period): the object with its
  ``deletionTimestamp``, 200 — or 202 when the client asked ``orphanDependents: false``;
- a collection: the ``<Kind>List`` of what was deleted.
"""

from __future__ import annotations

from kstore.api.gvk import Object
from kstore.registry.interface import DeleteOptions
from kstore.server.handlers.scope import Call, Reply, ResourceScope, status_success
from kstore.server.negotiation import body_serializer, negotiate
from kstore.server.options import delete_options, list_request
from kstore.storage.interface import ListResult

__all__ = ["delete", "delete_collection"]


def _options(call: Call) -> DeleteOptions:
    body: Object | None = None
    if call.body.strip():
        body = body_serializer(call.content_type).decode(call.body)
    return delete_options(body, call.query, call.dry_run)


def delete(scope: ResourceScope, call: Call) -> Reply:
    fmt = negotiate(call.accept)
    options = _options(call)
    ctx = scope.context(call.info, call)
    result = scope.store.delete(ctx, call.info.name, options)
    if result.deleted and not scope.returns_deleted_object:
        uid = str((result.object.get("metadata") or {}).get("uid") or "")
        return status_success(scope, call.info.name, uid, fmt)
    status = 202 if not result.deleted and options.orphan_dependents is False else 200
    body = scope.encoder.object(result.object, scope.gv, fmt)
    return Reply(status, body, fmt.content_type, result.warnings)


def delete_collection(scope: ResourceScope, call: Call) -> Reply:
    fmt = negotiate(call.accept)
    request = list_request(
        call.query, name="", watch=False, selectable_fields=scope.selectable_fields
    )
    options = _options(call)
    ctx = scope.context(call.info, call)
    deleted = list(scope.store.delete_collection(ctx, request.options, options))
    result = ListResult(items=deleted, resource_version=0)
    body = scope.encoder.list(result, scope.gv, scope.list_kind, fmt, metadata={})
    return Reply(200, body, fmt.content_type)
