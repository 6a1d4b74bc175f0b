"""What every resource handler works with: the resolved resource, the request, the reply.

A :class:`ResourceScope` is built once per served (group version, resource) when the app
starts; a :class:`Call` is the parsed request (path, query, headers, body) handed to a handler;
a handler returns a :class:`Reply`. Handlers are plain synchronous functions: the registry and
storage below them are synchronous and may block (a durable commit, a consistent read), so the
route runs each call in one worker-thread hop (a write under its deadline), except a GET that
cannot block (a local read: see :mod:`kstore.server.routes`), which it runs on the event loop.
Handlers therefore keep no per-thread state.

Errors are raised as kstore errors; :func:`error_reply` is where the REST layer turns one into
its ``Status`` answer (through :func:`kstore.errors.to_status`), encoded as the client accepts.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kstore.api.gvk import GroupVersion, GroupVersionKind, Object
from kstore.api.scheme import KindDefinition, RegisteredResource, Scheme
from kstore.errors import KStoreError, to_status
from kstore.registry.interface import RequestContext, ResourceStore, UserInfo
from kstore.server.encoding import ResponseEncoder
from kstore.server.json_body import status_json
from kstore.server.negotiation import OutputFormat, json_format
from kstore.server.printers import Printer
from kstore.server.request_info import RequestInfo

__all__ = [
    "Call",
    "Reply",
    "ResourceScope",
    "error_reply",
    "selectable_fields",
    "status_success",
    "warning_header",
]

#: Kinds whose delete answers with the object rather than a Status, as their Kubernetes
#: storage sets ``ReturnDeletedObject`` (pods, services, pod templates, resource quotas,
#: persistent volumes and their claims, the storage.k8s.io kinds) or answers with the namespace.
_RETURNS_DELETED_OBJECT = frozenset(
    {
        ("", "pods"),
        ("", "services"),
        ("", "namespaces"),
        ("", "persistentvolumes"),
        ("", "persistentvolumeclaims"),
        ("storage.k8s.io", "storageclasses"),
        ("storage.k8s.io", "csidrivers"),
        ("storage.k8s.io", "csinodes"),
        ("storage.k8s.io", "volumeattachments"),
        ("", "podtemplates"),
        ("", "resourcequotas"),
    }
)


def selectable_fields(definition: KindDefinition) -> frozenset[str]:
    """The field-selector fields a kind supports: name, namespace and its own field labels."""
    fields = {"metadata.name", "metadata.namespace"}
    if definition.field_labels is not None:
        # A labeller that needs a full object contributes nothing here.
        with contextlib.suppress(AttributeError, KeyError, TypeError):
            fields.update(definition.field_labels({}))
    return frozenset(fields)


@dataclass(frozen=True, slots=True)
class ResourceScope:
    """One served resource at one group version, with its store and its encoder."""

    resource: RegisteredResource
    store: ResourceStore
    scheme: Scheme
    encoder: ResponseEncoder
    selectable_fields: frozenset[str]
    #: The columns of ``kubectl get`` (None: Name and Created At).
    printer: Printer | None = None
    #: Whether the kind has a protobuf form (custom resources are JSON and YAML only).
    protobuf: bool = True
    #: The deprecation ``Warning`` of each endpoint, by subresource ("" for the resource
    #: itself); absent when the version is not deprecated.
    deprecation: Mapping[str, str] = field(default_factory=dict)
    #: The release a deprecated version is removed in (``1.16``; "" when none is planned).
    removed_release: str = ""

    @property
    def gv(self) -> GroupVersion:
        return self.resource.group_version

    @property
    def gvk(self) -> GroupVersionKind:
        return self.resource.gvk

    @property
    def definition(self) -> KindDefinition:
        return self.resource.definition

    @property
    def kind(self) -> str:
        return self.resource.definition.kind

    @property
    def list_kind(self) -> str:
        return self.resource.definition.list_kind or f"{self.kind}List"

    @property
    def plural(self) -> str:
        return self.resource.info.plural

    @property
    def namespaced(self) -> bool:
        return self.resource.info.namespaced

    @property
    def returns_deleted_object(self) -> bool:
        return (self.gv.group, self.plural) in _RETURNS_DELETED_OBJECT

    def context(self, info: RequestInfo, call: Call | None = None) -> RequestContext:
        """The registry's context; a write's ``call`` adds who asks and where admission's
        audit annotations go."""
        if call is None:
            return RequestContext(
                namespace=info.namespace if self.namespaced else "", request_version=self.gv
            )
        return RequestContext(
            namespace=info.namespace if self.namespaced else "",
            request_version=self.gv,
            user=call.user,
            audit_annotations=call.audit_annotations,
        )


@dataclass(frozen=True, slots=True)
class Call:
    """A parsed resource request. ``query`` holds the last value of each parameter;
    ``dry_run`` every ``dryRun`` value (the parameter may repeat)."""

    method: str
    info: RequestInfo
    query: Mapping[str, str]
    dry_run: list[str]
    accept: str | None
    content_type: str | None
    body: bytes = b""
    user_agent: str = ""
    user: UserInfo | None = None
    #: The request's audit annotations (the audit filter records them), None when unused.
    audit_annotations: dict[str, str] | None = None


@dataclass(slots=True)
class Reply:
    status: int
    body: bytes
    content_type: str
    warnings: Sequence[str] = ()
    headers: dict[str, str] = field(default_factory=dict)
    #: When set, the body is these chunks, written as they are made (``body`` is unused).
    stream: Iterator[bytes] | None = None


def warning_header(text: str) -> str:
    """An RFC 7234 warning as the API server writes it: ``299 - "<text>"``."""
    return "299 - " + json.dumps(" ".join(text.split()))


def _status_body(status: Object, fmt: OutputFormat | None) -> tuple[bytes, str]:
    if fmt is not None and fmt.is_protobuf:
        return fmt.serializer.encode(status), fmt.media_type
    if fmt is not None and fmt.media_type == "application/yaml":
        return fmt.serializer.encode(status), fmt.media_type
    return status_json(status), "application/json"


def error_reply(error: BaseException, fmt: OutputFormat | None = None) -> Reply:
    """The Status answer for an error; protobuf or YAML when the client accepts that."""
    status = to_status(error)
    code = int(status["code"])
    body, content_type = _status_body(status, fmt)
    reply = Reply(code, body, content_type)
    if isinstance(error, KStoreError) and error.retry_after_seconds:
        reply.headers["Retry-After"] = str(error.retry_after_seconds)
    return reply


def status_success(
    scope: ResourceScope, name: str, uid: str, fmt: OutputFormat, code: int = 200
) -> Reply:
    """The ``Status{status: Success}`` a delete answers with for most kinds."""
    # Go's StatusDetails: every field omitted when empty (the core group's "" too).
    details: dict[str, Any] = {"name": name}
    if scope.gv.group:
        details["group"] = scope.gv.group
    details["kind"] = scope.plural
    if uid:
        details["uid"] = uid
    status = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    }
    body, content_type = _status_body(status, fmt if fmt.target.value == "" else json_format())
    return Reply(code, body, content_type)
