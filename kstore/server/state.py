"""The server's shared state: the registry, the per-resource scopes, the built documents.

One :class:`ServerState` per app, built when the app is built (everything derived from the
Scheme — scopes, discovery, OpenAPI — is computed here, never per request, and computed again
when the registry serves a new Scheme: a CustomResourceDefinition came or went). It also holds
the shutdown flag: once :meth:`ServerState.begin_shutdown` runs, ``/readyz`` fails, new
watches are refused and open ones end, while requests in flight finish.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from importlib import metadata

from kstore.api.gvk import GroupVersion, GroupVersionKind
from kstore.api.proto_schema import message_for_gvk
from kstore.api.scheme import RegisteredResource, Scheme
from kstore.errors import MethodNotAllowed, NotFound
from kstore.registry.interface import Registry
from kstore.server.column_printer import columns_printer
from kstore.server.discovery import SERVED_SUBRESOURCES, Discovery
from kstore.server.encoding import ResponseEncoder
from kstore.server.filters.authentication import Authenticator
from kstore.server.handlers.scope import ResourceScope, selectable_fields
from kstore.server.handlers.watch import WatchRegistry
from kstore.server.metrics import Metrics
from kstore.server.openapi import OpenAPIV2, OpenAPIV3
from kstore.server.printers import Printer, printer_for
from kstore.server.request_info import RequestInfo
from kstore.server.service_accounts import ServiceAccountTokens

__all__ = [
    "KUBERNETES_MINOR",
    "ServerState",
    "VersionInfo",
    "deprecation_warnings",
    "path_not_found",
]

#: The Kubernetes minor version whose API behaviour kstore follows; kubectl 1.37 accepts it
#: without a version-skew warning (one minor apart).
KUBERNETES_MINOR = 36

_NOT_FOUND = "the server could not find the requested resource"


@dataclass(frozen=True, slots=True)
class VersionInfo:
    """The ``/version`` answer."""

    major: str
    minor: str
    git_version: str
    build_date: str

    @classmethod
    def current(cls) -> VersionInfo:
        try:
            own = metadata.version("kstore")
        except metadata.PackageNotFoundError:
            own = "0.0.0"
        return cls(
            "1",
            str(KUBERNETES_MINOR),
            f"v1.{KUBERNETES_MINOR}.0+kstore.{own}",
            datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        )

    def to_dict(self) -> dict[str, str]:
        return {
            "major": self.major,
            "minor": self.minor,
            "emulationMajor": self.major,
            "emulationMinor": self.minor,
            "gitVersion": self.git_version,
            "gitCommit": "",
            "gitTreeState": "clean",
            "buildDate": self.build_date,
            "goVersion": "python",
            "compiler": "cpython",
            "platform": "linux/amd64",
        }


#: The release kstore serves as, for the lifecycle of deprecated versions.
_RELEASE = (1, KUBERNETES_MINOR)
#: What a deprecated group version's Scale is replaced by (prerelease-lifecycle-gen gives the
#: apps/v1beta1 and v1beta2 Scale the releases of their Deployment).
_SCALE_REPLACEMENT = GroupVersionKind("autoscaling", "v1", "Scale")


def deprecation_warnings(resource: RegisteredResource) -> dict[str, str]:
    """The ``Warning`` kube-apiserver adds to every request to a deprecated version, by
    subresource ("" for the resource): from the version's lifecycle in the Scheme, for the
    kind each endpoint serves (``Scale`` for ``scale``)."""
    lifecycle = resource.definition.version(resource.group_version.version).lifecycle
    if lifecycle is None:
        return {}
    warning = lifecycle.deprecation_warning(resource.gvk, _RELEASE)
    if not warning:
        return {}
    out = dict.fromkeys(("", *resource.info.subresources), warning)
    if "scale" in out and lifecycle.warning is None:
        scale = replace(lifecycle, replacement=_SCALE_REPLACEMENT)
        out["scale"] = scale.deprecation_warning(
            resource.group_version.with_kind("Scale"), _RELEASE
        )
    return out


def _removed_release(resource: RegisteredResource) -> str:
    lifecycle = resource.definition.version(resource.group_version.version).lifecycle
    if lifecycle is None or lifecycle.removed is None:
        return ""
    return f"{lifecycle.removed[0]}.{lifecycle.removed[1]}"


def path_not_found(discovery: Discovery, group: str) -> NotFound:
    """The 404 of a path no route serves. Under a served group it is go-restful's (its
    ``details`` set and empty); under a group nobody serves the request falls through to the
    API server's final not-found handler. That handler wrote ``http.NotFound``'s plain text
    (``404 page not found``) up to v1.36 and writes a Status without ``details`` since
    (kubernetes#138219); kstore answers with that Status, so every client reads a Status."""
    if not group or discovery.group(group) is not None:
        return NotFound(_NOT_FOUND)
    return NotFound(_NOT_FOUND, details=False)


def _printer(resource: RegisteredResource) -> Printer | None:
    """The table columns of a resource: its kind's printer, else its version's columns."""
    definition = resource.definition
    printer = printer_for(definition.group, definition.kind)
    if printer is not None:
        return printer
    columns = definition.version(resource.group_version.version).printer_columns
    return columns_printer(columns) if columns else None


@dataclass
class ServerState:
    registry: Registry
    metrics: Metrics = field(default_factory=Metrics)
    watches: WatchRegistry = field(default_factory=WatchRegistry)
    version: VersionInfo = field(default_factory=VersionInfo.current)
    max_body_bytes: int = 3 * 1024 * 1024
    #: Who TokenReview asks when no authentication filter is installed (None: no tokens).
    authenticator: Authenticator | None = None
    #: What ``serviceaccounts/token`` issues tokens with (None: the subresource is 404).
    service_account_tokens: ServiceAccountTokens | None = None

    def __post_init__(self) -> None:
        self._rebuild_lock = threading.Lock()
        self.openapi_v2 = OpenAPIV2(self.version.git_version)
        self._scopes: dict[tuple[GroupVersion, str], ResourceScope] = {}
        self._openapi_before: OpenAPIV3 | None = None
        self._follow(self.registry.scheme)
        self.registry.add_scheme_listener(self._follow)
        self._shutting_down = threading.Event()

    def _follow(self, scheme: Scheme) -> None:
        """Derive the scopes, discovery and OpenAPI of ``scheme`` and swap them in (each a
        whole value, so a request sees either the old set or the new one). The scope of a
        resource whose store did not change is kept, with its encoder."""
        with self._rebuild_lock:
            encoder = ResponseEncoder(scheme)
            old = self._scopes
            scopes: dict[tuple[GroupVersion, str], ResourceScope] = {}
            for resource in scheme.resources():
                key = (resource.group_version, resource.info.plural)
                store = self.registry.store(resource.group_version.group, resource.info.plural)
                kept = old.get(key)
                if kept is not None and kept.store is store and kept.resource == resource:
                    scopes[key] = kept
                    continue
                scopes[key] = ResourceScope(
                    resource=resource,
                    store=store,
                    scheme=scheme,
                    encoder=encoder,
                    selectable_fields=selectable_fields(resource.definition),
                    printer=_printer(resource),
                    protobuf=message_for_gvk(resource.gvk) is not None,
                    deprecation=deprecation_warnings(resource),
                    removed_release=_removed_release(resource),
                )
            self.discovery = Discovery(scheme)
            self.openapi = OpenAPIV3(scheme, self.version.git_version, self._openapi_before)
            self._openapi_before = self.openapi
            self._scopes = scopes

    def scope_for(self, info: RequestInfo, method: str) -> ResourceScope:
        """The scope a resource path names; 404/405 as the API server routes them."""
        scope = self._scopes.get((GroupVersion(info.group, info.version), info.resource))
        if scope is None:
            raise path_not_found(self.discovery, info.group)
        namespaced = scope.namespaced
        is_namespace_itself = info.group == "" and info.resource == "namespaces"
        if not namespaced and info.namespace and not is_namespace_itself:
            raise NotFound(_NOT_FOUND)
        if namespaced and not info.namespace:
            if info.name:
                raise NotFound(_NOT_FOUND)
            if method not in ("GET", "HEAD"):
                raise MethodNotAllowed(
                    "the server does not allow this method on the requested resource "
                    f"({method} {info.resource})"
                )
        if info.subresource:
            verbs = SERVED_SUBRESOURCES.get(info.subresource)
            if verbs is None or info.subresource not in scope.resource.info.subresources:
                raise NotFound(_NOT_FOUND)
            allowed = {"get": "GET", "update": "PUT", "patch": "PATCH", "create": "POST"}
            if method not in {allowed[v] for v in verbs} | ({"HEAD"} if "get" in verbs else set()):
                raise MethodNotAllowed(
                    f"the server does not allow this method on the requested resource "
                    f"({method} {info.resource}/{info.subresource})"
                )
        return scope

    def scopes(self) -> list[ResourceScope]:
        return list(self._scopes.values())

    # ----------------------------------------------------------------- lifecycle

    @property
    def shutting_down(self) -> bool:
        return self._shutting_down.is_set()

    def begin_shutdown(self) -> None:
        """Stop being ready and end every watch; requests in flight carry on. Thread-safe
        and idempotent (a signal handler calls it)."""
        self._shutting_down.set()
        self.watches.stop_all()
