"""GET of one object and LIST of a collection (``get`` and ``list`` verbs).

Both answer in the version of the request path, as ``Accept`` asks: the object or
``<Kind>List`` (``items`` always an array, ``metadata.resourceVersion``/``continue``/
``remainingItemCount``), a Table for ``kubectl get``, or PartialObjectMetadata. List options
are validated as Kubernetes validates them (:func:`kstore.server.options.list_request`);
paging, selectors and ``resourceVersion`` semantics are the registry's and storage's.
"""

from __future__ import annotations

from dataclasses import replace

from kstore.server.encoding import list_metadata
from kstore.server.handlers.deadline import request_timeout
from kstore.server.handlers.scope import Call, Reply, ResourceScope
from kstore.server.list_stream import json_list_chunks, streams_list
from kstore.server.negotiation import Target, negotiate
from kstore.server.options import list_request
from kstore.server.table import build_table

__all__ = ["get", "list_collection", "list_collection_now"]


def get(scope: ResourceScope, call: Call) -> Reply:
    # A malformed ?timeout= is a 400 on every request (reads are bounded by the
    # --request-timeout filter alone; the 34 s storage cap is for writes).
    request_timeout(call.query)
    fmt = negotiate(call.accept, transforms=True)
    hub = scope.store.get(
        scope.context(call.info),
        call.info.name,
        resource_version=call.query.get("resourceVersion", ""),
    )
    if fmt.target is Target.TABLE:
        table = build_table(
            [scope.encoder.external(hub, scope.gv)],
            kind=scope.kind,
            group=scope.gv.group,
            printer=scope.printer,
            meta_version=fmt.meta_version,
            include_object=call.query.get("includeObject", "Metadata"),
        )
        return Reply(200, fmt.serializer.encode(table), fmt.content_type)
    return Reply(200, scope.encoder.object(hub, scope.gv, fmt), fmt.content_type)


def list_collection(scope: ResourceScope, call: Call) -> Reply:
    return _list_collection(scope, call, wait=True)


def list_collection_now(scope: ResourceScope, call: Call) -> Reply:
    """:func:`list_collection` for the event loop's thread: WouldWait (nothing answered)
    where the watch cache would first have to catch up."""
    return _list_collection(scope, call, wait=False)


def _list_collection(scope: ResourceScope, call: Call, *, wait: bool) -> Reply:
    request_timeout(call.query)
    fmt = negotiate(call.accept, transforms=True)
    request = list_request(
        call.query, name="", watch=False, selectable_fields=scope.selectable_fields
    )
    options = request.options if wait else replace(request.options, wait=False)
    result = scope.store.list(scope.context(call.info), options)
    if fmt.target is Target.TABLE:
        table = build_table(
            scope.encoder.external_many(result.items, scope.gv),
            kind=scope.kind,
            group=scope.gv.group,
            printer=scope.printer,
            meta_version=fmt.meta_version,
            list_metadata=list_metadata(result),
            include_object=call.query.get("includeObject", "Metadata"),
        )
        return Reply(200, fmt.serializer.encode(table), fmt.content_type)
    if streams_list(result, fmt, conversion_blocks=scope.definition.conversion_blocks):
        chunks = json_list_chunks(scope.encoder, result, scope.gv, scope.list_kind, fmt)
        return Reply(200, b"", fmt.content_type, stream=chunks)
    body = scope.encoder.list(result, scope.gv, scope.list_kind, fmt)
    return Reply(200, body, fmt.content_type)
