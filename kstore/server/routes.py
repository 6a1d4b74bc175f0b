"""The HTTP routes: discovery, version, health, metrics, OpenAPI and the resource endpoint.

The resource endpoint takes every ``/api/...`` and ``/apis/...`` path with any method, parses
it into a :class:`~kstore.server.request_info.RequestInfo` (discovery paths are answered here),
resolves the resource and the verb, reads the body (the body-limit filter holds it to 3 MiB),
and runs the verb's handler in one worker-thread hop; a write waits for that hop under its
deadline (``?timeout=`` capped at 34 s, then 504: :mod:`kstore.server.handlers.deadline`); a
watch becomes a streaming response. Where the registry's reads are local
(:attr:`~kstore.registry.interface.Registry.reads_are_local`: LMDB), a GET of one object at
no resourceVersion or ``0`` runs on the event loop instead: it is a short read transaction
that waits for nothing, and the thread hop was about a third of its server CPU. A GET at a
given resourceVersion may wait for the watch cache to catch up, so it keeps the hop. Where
the registry's writes may run on the loop too
(:attr:`~kstore.registry.interface.Registry.writes_on_loop`: local reads, no admission hook
that blocks), a create, update or patch runs its registry work on the loop and awaits the
storage's commits there, with no worker thread at all (unless an admission hook finds it
has to wait, as for a new namespace's default ServiceAccount: it says so before anything is
stored, and the request runs again on a worker thread); deletes (graceful deletion,
finalizers, collections) keep the worker thread. Neither holds for a kind whose conversions
call a webhook (:attr:`~kstore.api.scheme.KindDefinition.conversion_blocks`): its requests
always take the worker thread.
Every error answers with a ``Status``, routing errors as go-restful and the API server's
service-error handler answer them: a path no route serves is 404, a method the path has no
route for (``POST`` with a name, ``PUT``/``PATCH`` on a collection, ``TRACE``...) is 405
MethodNotAllowed. A name the store's key function refuses (``.``, ``..``, ``%``) is 400 ``Name
parameter invalid``; a name with a NUL byte is a valid path segment no object can hold, so it
is 404 NotFound without a storage lookup, as the lookup would be in Kubernetes.

Each request is counted in ``/metrics`` and logged: one line per request at INFO with verb,
path, code and latency (DEBUG for reads and health probes, so a busy client does not flood
the log).

Trailing slashes are accepted on the discovery paths (kr8s sends ``/api/``, ``/version/``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any

import anyio
import orjson
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import BaseRoute, Route, request_response
from starlette.types import Receive, Scope, Send

from kstore.api.gvk import GroupVersion
from kstore.codec.recognizer import MEDIA_TYPE_PROTOBUF
from kstore.errors import (
    BadRequest,
    KStoreError,
    MethodNotAllowed,
    NotAcceptable,
    NotFound,
    Unavailable,
    UnsupportedMediaType,
)
from kstore.registry.interface import NeedsWorkerThread
from kstore.registry.patch import PatchType
from kstore.server._review_wire import decode_review_protobuf
from kstore.server.discovery import Document, wants_aggregated
from kstore.server.filters.audit import AUDIT_ANNOTATIONS_KEY
from kstore.server.filters.authentication import (
    ANONYMOUS,
    request_authenticator,
    request_user,
)
from kstore.server.filters.authorization import request_authorizer
from kstore.server.filters.httplog import VERB_KEY
from kstore.server.handlers import create, delete, get, patch, scale, update
from kstore.server.handlers.deadline import AsyncHandler, run_write, run_write_on_loop
from kstore.server.handlers.scope import Call, Reply, ResourceScope, error_reply, warning_header
from kstore.server.handlers.watch import WatchResponse, open_watch
from kstore.server.health import run_checks
from kstore.server.json_body import go_json, with_newline
from kstore.server.metrics import RequestLabels
from kstore.server.negotiation import OutputFormat, body_serializer, negotiate
from kstore.server.openapi import OpenAPIDocument
from kstore.server.request_info import (
    RequestInfo,
    parse_scope_path,
    path_segment_problems,
    query_bool,
    url_path,
    verb_for,
)
from kstore.server.reviews import ReviewResource, answer_review, review_resource
from kstore.server.state import ServerState, path_not_found
from kstore.server.subresource_creates import HANDLERS as SUBRESOURCE_CREATES
from kstore.server.subresource_creates import KINDS as SUBRESOURCE_KINDS
from kstore.server.subresource_creates import SubresourceCall
from kstore.storage.interface import WouldWait

__all__ = ["build_routes"]

_log = logging.getLogger("kstore.server")

Handler = Callable[[ResourceScope, Call], Reply]

_HANDLERS: dict[str, Handler] = {
    "get": get.get,
    "list": get.list_collection,
    "create": create.create,
    "update": update.update,
    "patch": patch.patch,
    "delete": delete.delete,
    "deletecollection": delete.delete_collection,
}
# The writes whose handlers have a form that runs on the event loop (where the registry's
# writes may: Registry.writes_on_loop).
_ON_LOOP: dict[Handler, AsyncHandler] = {
    create.create: create.create_async,
    update.update: update.update_async,
    patch.patch: patch.patch_async,
}
_METRIC_VERBS = {
    "get": "GET",
    "list": "LIST",
    "watch": "WATCH",
    "create": "POST",
    "update": "PUT",
    "patch": "PATCH",
    "delete": "DELETE",
    "deletecollection": "DELETECOLLECTION",
}
_READS = frozenset({"get", "list"})
# Verbs run under the write deadline (the subresource writes are "update" and "patch" too).
_WRITES = frozenset({"create", "update", "patch", "delete", "deletecollection"})
# The resourceVersions a GET is answered at without waiting for the watch cache: none (the
# latest, read from storage) and 0 (whatever the cache holds).
_UNWAITED_VERSIONS = frozenset({"", "0"})
#: The largest page a consistent LIST answers on the event loop's thread (kubectl asks for
#: 500): a bounded page costs less there than its handing to a worker thread and back (about
#: half of a 100-item page's server CPU); larger lists, and lists the watch cache could answer
#: only after catching up, run on a worker thread.
_LOOP_LIST_LIMIT = 500
_JSON = "application/json"
_NOT_FOUND = "the server could not find the requested resource"
METHOD_NOT_ALLOWED_MESSAGE = "the server does not allow this method on the requested resource"
# The methods go-restful has a route for, on an object path and on a collection path
# (subresources are checked against their own verbs by the server state).
_OBJECT_METHODS = frozenset({"GET", "HEAD", "PUT", "PATCH", "DELETE"})
_COLLECTION_METHODS = frozenset({"GET", "HEAD", "POST", "DELETE"})
# Verbs whose handler turns the path's name into a storage key.
_KEYED_VERBS = frozenset({"get", "update", "patch", "delete"})


def _reply_response(reply: Reply, endpoint_warning: str = "") -> Response:
    response: Response
    if reply.stream is not None:  # a large list, written as it is encoded
        response = StreamingResponse(
            reply.stream, status_code=reply.status, media_type=reply.content_type
        )
    else:
        body = reply.body
        if reply.content_type.startswith(_JSON):
            body = with_newline(body)
        response = Response(body, status_code=reply.status, media_type=reply.content_type)
    # The endpoint's deprecation first, each text once, as kube-apiserver's recorder adds them.
    warnings = [endpoint_warning] if endpoint_warning else []
    warnings.extend(w for w in reply.warnings if w not in warnings)
    for warning in warnings:
        response.headers.append("Warning", warning_header(warning))
    for key, value in reply.headers.items():
        response.headers[key] = value
    return response


def _with_warning(response: Response, warning: str) -> Response:
    if warning:
        response.headers.append("Warning", warning_header(warning))
    return response


def _error_response(error: BaseException, accept: str | None = None) -> Response:
    fmt: OutputFormat | None = None
    if accept:
        try:
            fmt = negotiate(accept)
        except KStoreError:
            fmt = None
    return _reply_response(error_reply(error, fmt))


def _document_response(
    request: Request, doc: Document, extra: dict[str, str] | None = None
) -> Response:
    headers = {"ETag": doc.etag, **(extra or {})}
    if request.headers.get("if-none-match") == doc.etag:
        return Response(status_code=304, headers=headers)
    return Response(doc.body, media_type=doc.content_type, headers=headers)


def _is_apply(content_type: str | None) -> bool:
    return bool(content_type) and content_type.startswith("application/apply-patch")  # type: ignore[union-attr]


def _scope_label(info: RequestInfo, verb: str) -> str:
    if info.name and verb not in ("list", "watch", "deletecollection", "create"):
        return "resource"
    return "namespace" if info.namespace else "cluster"


def _check_route(method: str, info: RequestInfo) -> None:
    """405 for a method the path has no route for (subresources: see ``scope_for``)."""
    if info.subresource:
        return
    allowed = _OBJECT_METHODS if info.name else _COLLECTION_METHODS
    if method not in allowed:
        raise MethodNotAllowed(METHOD_NOT_ALLOWED_MESSAGE)


#: What go-restful's PATCH route of a built-in kind consumes.
_PATCH_MEDIA_TYPES = frozenset(t.value for t in PatchType)


def _check_patch_route(content_type: str | None, body: bytes) -> None:
    """go-restful's 415 for a PATCH body of a type the built-in kinds' route does not consume
    (a missing type is ``application/octet-stream``), before any handler: its own words and
    empty details. Custom resources are not go-restful's: their handler words it."""
    base = (content_type or "application/octet-stream").split(";", 1)[0].strip().lower()
    if body and base not in _PATCH_MEDIA_TYPES:
        raise UnsupportedMediaType("415: Unsupported Media Type", details=True)


def _go_quote(text: str) -> str:
    # Go's %q, as the store quotes names in its messages (NUL and control bytes escaped).
    out = []
    for ch in text:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x100:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(f"\\u{ord(ch):04x}")
    return '"' + "".join(out) + '"'


def _check_name(scope: ResourceScope, info: RequestInfo, verb: str) -> None:
    """The store's key-function checks on the name of the path, before any handler work."""
    if verb == "create" and info.namespace and path_segment_problems(info.namespace):
        # No namespace can be named so; namespace lifecycle admission refuses the create.
        raise NotFound(
            f"namespaces {_go_quote(info.namespace)} not found",
            name=info.namespace,
            kind="namespaces",
        )
    if not info.name or (verb not in _KEYED_VERBS and not info.subresource):
        return
    problems = path_segment_problems(info.name)
    if problems:
        raise BadRequest(f"Name parameter invalid: {_go_quote(info.name)}: {';'.join(problems)}")
    if "\x00" in info.name:
        group = scope.gv.group
        resource = f"{scope.plural}.{group}" if group else scope.plural
        raise NotFound(
            f"{resource} {_go_quote(info.name)} not found",
            name=info.name,
            kind=scope.plural,
            group=group,
        )


#: What a kind without a protobuf form is served in (Kubernetes' words for custom resources).
_TEXT_MEDIA_TYPES = "application/json, application/yaml"


def _text_only(call: Call) -> Call:
    """The call of a kind that has no protobuf form (a custom resource): a protobuf body is
    415, and protobuf is struck from ``Accept`` (406 when nothing else was acceptable), as
    kube-apiserver negotiates for custom resources."""
    if call.body and MEDIA_TYPE_PROTOBUF in (call.content_type or "").lower():
        raise UnsupportedMediaType(
            "the body of the request was in an unknown format - accepted media types include: "
            + _TEXT_MEDIA_TYPES
        )
    if not call.accept or "protobuf" not in call.accept:
        return call
    kept = [c for c in call.accept.split(",") if c.strip() and "protobuf" not in c]
    if not kept:
        raise NotAcceptable(f"only the following media types are accepted: {_TEXT_MEDIA_TYPES}")
    return replace(call, accept=",".join(kept))


def _call(scope: ResourceScope, request: Request, info: RequestInfo, body: bytes) -> Call:
    params = request.query_params
    call = Call(
        method=request.method,
        info=info,
        query=dict(params),
        dry_run=params.getlist("dryRun"),
        accept=request.headers.get("accept"),
        content_type=request.headers.get("content-type"),
        body=body,
        user_agent=request.headers.get("user-agent", ""),
        user=request_user(request.scope),
        audit_annotations=request.scope.setdefault(AUDIT_ANNOTATIONS_KEY, {}),
    )
    return call if scope.protobuf else _text_only(call)


def _bounded_consistent_page(query: Mapping[str, str]) -> bool:
    """A consistent LIST (no resourceVersion) of at most :data:`_LOOP_LIST_LIMIT` items."""
    if query.get("resourceVersion", ""):
        return False
    limit = query.get("limit", "")
    return limit.isdigit() and 0 < int(limit) <= _LOOP_LIST_LIMIT


def _verb_labels(info: RequestInfo, verb: str) -> RequestLabels:
    """A routed request's metric labels: Kubernetes' verb and scope, once the route is known."""
    return RequestLabels(
        _METRIC_VERBS.get(verb, verb.upper()),
        info.group,
        info.version,
        info.resource,
        info.subresource,
        _scope_label(info, verb),
    )


def _review_format(accept: str | None) -> OutputFormat:
    """The answer format of a review: the review kinds have no protobuf encoding here, so a
    client that prefers protobuf (kubectl: ``protobuf, json``) gets the next type it accepts;
    one that accepts only protobuf gets 406."""
    fmt = negotiate(accept)
    if not fmt.is_protobuf:
        return fmt
    rest = [c for c in (accept or "").split(",") if c.strip() and "protobuf" not in c]
    if not rest:
        raise NotAcceptable(
            "only the following media types are accepted: application/json, application/yaml"
        )
    return negotiate(",".join(rest))


class _Endpoints:
    """The route functions, bound to one server state."""

    def __init__(self, state: ServerState) -> None:
        self.state = state
        self._local_reads = state.registry.reads_are_local

    # ------------------------------------------------------------------- resources

    async def resources(self, request: Request) -> Response:
        started = time.perf_counter()
        path = url_path(request.scope)
        accept = request.headers.get("accept")
        try:
            info = parse_scope_path(request.scope, path)
        except KStoreError as exc:
            return _error_response(exc, accept)
        if info is None:
            return self._discovery(request, path)
        labels = RequestLabels(
            request.method, info.group, info.version, info.resource, info.subresource
        )
        verb = request.method.lower()
        # A deprecated version's warning, on every answer once the route is known.
        endpoint_warning = ""
        try:
            watch_param = request.query_params.get("watch")
            verb = verb_for(
                request.method, info, watch_param is not None and query_bool(watch_param)
            )
            review = review_resource(info.group, info.version, info.resource)
            if review is not None:
                labels = _verb_labels(info, verb)
                response = await self._review(request, info, review)
            else:
                scope = self.state.scope_for(info, request.method)
                endpoint_warning = scope.deprecation.get(info.subresource, "")
                if endpoint_warning:
                    self._note_deprecated(request, info, scope.removed_release)
                _check_route(request.method, info)
                _check_name(scope, info, verb)
                labels = _verb_labels(info, verb)
                if verb == "patch" and _is_apply(request.headers.get("content-type")):
                    labels = replace(labels, verb="APPLY")
                if verb == "watch":
                    request.scope[VERB_KEY] = labels.verb
                    call = _call(scope, request, info, b"")
                    watch = await self._watch(scope, call, labels, path)
                    return _with_warning(watch, endpoint_warning)
                created = SUBRESOURCE_CREATES.get((info.group, info.resource, info.subresource))
                if created is not None:
                    response = await self._create_subresource(request, info, created)
                    self.state.metrics.observe(
                        labels, response.status_code, time.perf_counter() - started
                    )
                    request.scope[VERB_KEY] = labels.verb
                    return response
                handlers = scale.HANDLERS if info.subresource == "scale" else _HANDLERS
                handler = handlers.get(verb)
                if handler is None:
                    raise NotFound(_NOT_FOUND)
                body = b""
                if verb not in _READS:
                    body = await request.body()
                if verb == "patch" and scope.protobuf:
                    _check_patch_route(request.headers.get("content-type"), body)
                call = _call(scope, request, info, body)
                on_loop = _ON_LOOP.get(handler)
                # A kind converted by a webhook waits on it: never on the loop.
                blocks = scope.definition.conversion_blocks
                if on_loop is not None and self.state.registry.writes_on_loop and not blocks:
                    try:
                        reply = await run_write_on_loop(on_loop, scope, call)
                    except NeedsWorkerThread:
                        # An admission hook has to wait: nothing was stored; the same
                        # request again, on a worker thread.
                        reply = await run_write(handler, scope, call)
                elif verb in _WRITES:
                    reply = await run_write(handler, scope, call)
                elif (
                    verb == "get"
                    and self._local_reads
                    and not blocks
                    and call.query.get("resourceVersion", "") in _UNWAITED_VERSIONS
                ):
                    reply = handler(scope, call)
                elif (
                    handler is get.list_collection
                    and self._local_reads
                    and not blocks
                    and _bounded_consistent_page(call.query)
                ):
                    try:
                        reply = get.list_collection_now(scope, call)
                    except WouldWait:
                        reply = await anyio.to_thread.run_sync(handler, scope, call)
                else:
                    reply = await anyio.to_thread.run_sync(handler, scope, call)
                response = _reply_response(reply, endpoint_warning)
        except KStoreError as exc:
            response = _with_warning(_error_response(exc, accept), endpoint_warning)
        except Exception as exc:
            _log.exception("%s %s failed", request.method, path)
            response = _with_warning(_error_response(exc, accept), endpoint_warning)
        self.state.metrics.observe(labels, response.status_code, time.perf_counter() - started)
        request.scope[VERB_KEY] = labels.verb
        return response

    def _note_deprecated(self, request: Request, info: RequestInfo, removed_release: str) -> None:
        """A request to a deprecated version: the metric and the audit annotations
        kube-apiserver records for it."""
        self.state.metrics.deprecated_requested(
            info.group, info.version, info.resource, info.subresource, removed_release
        )
        annotations = {"k8s.io/deprecated": "true"}
        if removed_release:
            annotations["k8s.io/removed-release"] = removed_release
        request.scope.setdefault(AUDIT_ANNOTATIONS_KEY, {}).update(annotations)

    async def _review(
        self, request: Request, info: RequestInfo, review: ReviewResource
    ) -> Response:
        """A review (:mod:`kstore.server.reviews`): create only, answered and not stored."""
        if info.name or info.subresource or review.namespaced != bool(info.namespace):
            raise NotFound(_NOT_FOUND)
        if request.method != "POST":
            raise MethodNotAllowed(METHOD_NOT_ALLOWED_MESSAGE)
        fmt = _review_format(request.headers.get("accept"))
        serializer = body_serializer(request.headers.get("content-type"))
        data = await request.body()
        if not data.strip():
            raise BadRequest(f"the body of the request was empty: a {review.kind} is required")
        body: object
        if serializer.media_type == MEDIA_TYPE_PROTOBUF:
            # kubectl sends its reviews as protobuf; the codec knows no review kind.
            body = decode_review_protobuf(data, review.kind)
        else:
            body = serializer.decode(data)
        user = request_user(request.scope) or ANONYMOUS
        answer = await anyio.to_thread.run_sync(
            answer_review,
            review,
            body,
            user,
            request_authorizer(request.scope),
            info.namespace,
            request_authenticator(request.scope, self.state.authenticator),
        )
        body = fmt.serializer.encode(answer)
        if fmt.media_type == _JSON:
            body = with_newline(body)
        return Response(body, 201, media_type=fmt.content_type)

    async def _create_subresource(
        self,
        request: Request,
        info: RequestInfo,
        handler: Callable[[SubresourceCall], tuple[int, dict[str, Any]]],
    ) -> Response:
        """A POST to a subresource that answers with a kind of its own
        (:mod:`kstore.server.subresource_creates`); JSON or YAML out, as for reviews."""
        fmt = _review_format(request.headers.get("accept"))
        data = await request.body()
        body: object = None
        if data.strip():
            serializer = body_serializer(request.headers.get("content-type"))
            if serializer.media_type == MEDIA_TYPE_PROTOBUF:
                body = decode_review_protobuf(data, SUBRESOURCE_KINDS[info.subresource])
            else:
                body = serializer.decode(data)
        call = SubresourceCall(
            registry=self.state.registry,
            namespace=info.namespace,
            name=info.name,
            body=body,
            dry_run=bool(request.query_params.getlist("dryRun")),
            tokens=self.state.service_account_tokens,
        )
        status, answer = await anyio.to_thread.run_sync(handler, call)
        out = fmt.serializer.encode(answer)
        if fmt.media_type == _JSON:
            out = with_newline(out)
        return Response(out, status, media_type=fmt.content_type)

    async def _watch(
        self, scope: ResourceScope, call: Call, labels: RequestLabels, path: str
    ) -> Response:
        if self.state.shutting_down:
            raise Unavailable("the server is shutting down", retry_after_seconds=1)
        plan = await anyio.to_thread.run_sync(open_watch, scope, call)
        metrics = self.state.metrics
        metrics.observe(labels, 200, None)
        metrics.watch_opened(labels)
        _log.info("WATCH %s started", path)
        gv = scope.gv

        def on_events(count: int) -> None:
            metrics.watch_events(gv.group, gv.version, scope.kind, count)

        def on_close() -> None:
            metrics.watch_closed(labels)
            _log.info("WATCH %s ended", path)

        events_key = ("watch-events", gv.group, gv.version, scope.kind)
        return WatchResponse(plan, self.state.watches, on_events, on_close, events_key)

    # ------------------------------------------------------------------- discovery

    def _discovery(self, request: Request, path: str) -> Response:
        parts = [p for p in path.split("/") if p]
        discovery = self.state.discovery
        if parts == ["api"]:
            return self.api(request)
        if parts == ["apis"]:
            return self.apis(request)
        doc: Document | None = None
        if parts[0] == "api" and len(parts) == 2:
            doc = discovery.resource_list(GroupVersion("", parts[1]))
        elif parts[0] == "apis" and len(parts) == 2:
            doc = discovery.group(parts[1])
        elif parts[0] == "apis" and len(parts) == 3:
            doc = discovery.resource_list(GroupVersion(parts[1], parts[2]))
        if doc is None:
            group = parts[1] if parts[0] == "apis" else ""
            return _error_response(path_not_found(discovery, group))
        return _document_response(request, doc)

    def api(self, request: Request) -> Response:
        discovery = self.state.discovery
        if wants_aggregated(request.headers.get("accept")):
            return _document_response(request, discovery.aggregated_core, {"Vary": "Accept"})
        host = request.headers.get("host") or (
            f"{request.url.hostname}:{request.url.port}" if request.url.port else ""
        )
        return Response(discovery.api_versions(host), media_type=_JSON, headers={"Vary": "Accept"})

    def apis(self, request: Request) -> Response:
        discovery = self.state.discovery
        if wants_aggregated(request.headers.get("accept")):
            return _document_response(request, discovery.aggregated_groups, {"Vary": "Accept"})
        return _document_response(request, discovery.group_list, {"Vary": "Accept"})

    # --------------------------------------------------------------- the rest

    async def version(self, request: Request) -> Response:
        # WriteRawJSON: indented, no newline.
        body = go_json(self.state.version.to_dict(), orjson.OPT_INDENT_2)
        return Response(body, media_type=_JSON)

    async def health(self, request: Request) -> Response:
        parts = [p for p in request.url.path.split("/") if p]
        endpoint = parts[0]
        only = parts[1] if len(parts) > 1 else None
        verbose = "verbose" in request.query_params
        result = await run_checks(self.state, endpoint, only, verbose)
        if result is None:
            return Response("404 page not found\n", status_code=404, media_type="text/plain")
        return Response(
            result.body,
            status_code=result.status,
            media_type="text/plain; charset=utf-8",
            headers={"X-Content-Type-Options": "nosniff"},
        )

    async def metrics(self, request: Request) -> Response:
        body = await anyio.to_thread.run_sync(self.state.metrics.render)
        return Response(body, media_type="text/plain; version=0.0.4; charset=utf-8")

    async def openapi_index(self, request: Request) -> Response:
        return Response(self.state.openapi.index, media_type=_JSON)

    async def openapi_document(self, request: Request) -> Response:
        key = request.path_params["rest"]
        doc = self.state.openapi.document(key)
        if doc is None:
            return _error_response(NotFound(_NOT_FOUND))
        return _cached_document(request, doc, _JSON)

    async def openapi_v2(self, request: Request) -> Response:
        doc, media_type = self.state.openapi_v2.document(request.headers.get("accept"))
        return _cached_document(request, doc, media_type)

    async def not_found(self, request: Request) -> Response:
        # Outside /api and /apis: the final not-found handler's Status (no details).
        return _error_response(NotFound(_NOT_FOUND, details=False))


def _cached_document(request: Request, doc: OpenAPIDocument, media_type: str) -> Response:
    """``doc`` with its ``ETag``: immutable when the request names its current hash, 304 when
    the client's copy is current."""
    etag = f'"{doc.hash}"'
    if request.query_params.get("hash") == doc.hash:
        cache = "public, immutable, max-age=31536000"
    else:
        cache = "no-cache, private"
    headers = {"ETag": etag, "Cache-Control": cache}
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers=headers)
    return Response(doc.body, media_type=media_type, headers=headers)


class _AnyMethod:
    """An endpoint as an ASGI app, so that its route matches every method: methods without a
    route get the API server's 405 Status from the endpoint, not the router's plain text."""

    def __init__(self, endpoint: Callable[[Request], Awaitable[Response]]) -> None:
        self._app = request_response(endpoint)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._app(scope, receive, send)


def build_routes(state: ServerState) -> list[BaseRoute]:
    e = _Endpoints(state)
    resources = _AnyMethod(e.resources)

    async def api(request: Request) -> Response:
        return e.api(request)

    async def apis(request: Request) -> Response:
        return e.apis(request)

    routes: list[BaseRoute] = [
        Route("/api", api),
        Route("/api/", api),
        Route("/apis", apis),
        Route("/apis/", apis),
        Route("/api/{rest:path}", resources),
        Route("/apis/{rest:path}", resources),
        Route("/version", e.version),
        Route("/version/", e.version),
        Route("/metrics", e.metrics),
        Route("/openapi/v2", e.openapi_v2),
        Route("/openapi/v3", e.openapi_index),
        Route("/openapi/v3/", e.openapi_index),
        Route("/openapi/v3/{rest:path}", e.openapi_document),
    ]
    for endpoint in ("healthz", "livez", "readyz"):
        routes.append(Route(f"/{endpoint}", e.health))
        routes.append(Route(f"/{endpoint}/{{check}}", e.health))
    return routes
