"""The embedding API: kstore's registry in your process, with typed versions and no HTTP.

::

    import kstore

    with kstore.open("lmdb:///tmp/kstore-demo") as client:
        cms = client.resource("v1", "configmaps", namespace="default")
        cms.create({"metadata": {"name": "demo"}, "data": {"greeting": "hello"}})
        cm = cms.get("demo")
        cm["data"]["greeting"] = "hi"
        cms.update(cm)                                  # 409 Conflict if someone else won
        cms.patch("demo", {"metadata": {"labels": {"app": "demo"}}})
        for event in cms.watch(resource_version=cm["metadata"]["resourceVersion"]):
            print(event.type, event.object["metadata"]["name"])
            break
        cms.delete("demo")

:func:`open` takes ``lmdb:///absolute/path`` (``lmdb:relative/path`` also works; query
``?durable=false`` turns fsync off) or ``etcd://host:2379,host2:2379/registry`` (the path is
the key prefix, ``/registry`` by default; ``etcds://`` for TLS endpoints, with ``?cacert=``,
``&cert=`` and ``&key=`` naming the files as ``--etcd-cafile`` etc. do). Any other backend:
``Client(build_registry(scheme, backend, config))``. It builds the same
registry ``kstore serve`` uses (:func:`kstore.registry.registry.build_registry`): the same
validation, defaulting, admission, finalizers, graceful deletion, TTLs and key layout, so a
store written here can be served by ``kstore serve`` and the other way round (one process at a
time for LMDB).

Objects go in and come out as dicts in the version the resource client was made for
(``apiVersion``/``kind`` may be omitted on input); conversion to and from the hub goes through
the Scheme. ``patch`` takes every patch type the REST API does (JSON merge patch by default,
JSON patch, strategic merge patch, server-side apply), through :mod:`kstore.registry.patch`.
Objects returned are the caller's to change. Errors are kstore's (:mod:`kstore.errors`), worded
as Kubernetes words them. Warnings (e.g. a Pod name that is not
a DNS label) go to the ``on_warning`` callback given to :func:`open`, and are dropped without
one.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from kstore.api.custom_kinds import CustomConversions
from kstore.api.gvk import GroupVersion, Object, gvk_of
from kstore.api.kinds import builtin_scheme
from kstore.api.scheme import KindDefinition, Scheme
from kstore.api.selectors import FieldSelector, LabelSelector
from kstore.codec.json import dumps as json_dumps
from kstore.controllers import ControllerSettings, start_controllers
from kstore.controllers.kubernetes_service import EmbeddedKubernetesService, first_service_ip
from kstore.controllers.leader import LeaderElectionConfig
from kstore.controllers.root_ca import read_root_ca
from kstore.errors import BadRequest
from kstore.registry.interface import (
    CreateOptions,
    DeleteOptions,
    RequestContext,
    ResourceStore,
    UpdateOptions,
)
from kstore.registry.patch import PatchOptions, PatchType, apply_patch
from kstore.registry.plugins import resolve_plugins
from kstore.registry.plugins.admission_config import read_admission_config_file
from kstore.registry.registry import RegistryConfig, StoreRegistry, build_registry
from kstore.registry.store import GenericStore
from kstore.registry.strategies.base import copy_value
from kstore.storage.interface import (
    Backend,
    EventType,
    ListOptions,
    Preconditions,
    ResourceVersionMatch,
    Watcher,
)

__all__ = ["Client", "ResourceClient", "Watch", "WatchEvent", "open"]

#: Short names of the patch types (the full Content-Types are accepted too).
_PATCH_TYPES = {
    "merge": PatchType.MERGE.value,
    "json": PatchType.JSON.value,
    "strategic": PatchType.STRATEGIC.value,
    "apply": PatchType.APPLY.value,
}


def _lmdb_backend(url: str, path: str, query: Mapping[str, list[str]]) -> Backend:
    from kstore.storage.lmdb import LmdbBackend, LmdbConfig

    if not path:
        raise BadRequest(f"the LMDB url {url!r} names no directory")
    durable = query.get("durable", ["true"])[-1].lower() not in ("false", "0", "no")
    return LmdbBackend(LmdbConfig(path=path, durable=durable))


def _etcd_backend(
    url: str, hosts: str, prefix: str, tls: bool, query: Mapping[str, list[str]]
) -> Backend:
    from kstore.storage.etcd import EtcdBackend

    return EtcdBackend(_etcd_config(url, hosts, prefix, tls, query))


def _etcd_config(
    url: str, hosts: str, prefix: str, tls: bool, query: Mapping[str, list[str]]
) -> Any:
    from kstore.storage.etcd import EtcdConfig

    endpoints = tuple(h for h in hosts.split(",") if h)
    if not endpoints:
        raise BadRequest(f"the etcd url {url!r} names no endpoint")
    if tls:
        endpoints = tuple(e if "://" in e else f"https://{e}" for e in endpoints)

    def file(name: str) -> str | None:
        values = query.get(name)
        return values[-1] if values else None

    try:
        config = EtcdConfig(
            endpoints=endpoints,
            prefix=prefix or "/registry",
            ca_file=file("cacert"),
            cert_file=file("cert"),
            key_file=file("key"),
        )
    except ValueError as exc:
        raise BadRequest(f"the etcd url {url!r} is not usable: {exc}") from None
    return config


def storage_location(url: str) -> tuple[str, Any]:
    """What a storage url names, without opening it: ``("lmdb", LmdbConfig)`` or
    ``("etcd", EtcdConfig)`` (for the admin verbs that copy stored bytes)."""
    from kstore.storage.lmdb import LmdbConfig

    parts = urlsplit(url)
    query = parse_qs(parts.query)
    if parts.scheme == "lmdb":
        path = unquote(parts.netloc + parts.path)
        if not path:
            raise BadRequest(f"the LMDB url {url!r} names no directory")
        durable = query.get("durable", ["true"])[-1].lower() not in ("false", "0", "no")
        return "lmdb", LmdbConfig(path=path, durable=durable)
    if parts.scheme in ("etcd", "etcds"):
        tls = parts.scheme == "etcds"
        return "etcd", _etcd_config(url, parts.netloc, unquote(parts.path), tls, query)
    raise BadRequest(
        f"unsupported storage url {url!r}: use lmdb:///path or etcd://host:port[,host:port]/prefix"
    )


def backend_for_url(url: str) -> Backend:
    """The backend a storage url names (see the module docstring)."""
    parts = urlsplit(url)
    query = parse_qs(parts.query)
    if parts.scheme == "lmdb":
        return _lmdb_backend(url, unquote(parts.netloc + parts.path), query)
    if parts.scheme in ("etcd", "etcds"):
        tls = parts.scheme == "etcds"
        return _etcd_backend(url, parts.netloc, unquote(parts.path), tls, query)
    raise BadRequest(
        f"unsupported storage url {url!r}: use lmdb:///path or etcd://host:port[,host:port]/prefix"
    )


def open(
    url: str,
    *,
    scheme: Scheme | None = None,
    config: RegistryConfig | None = None,
    on_warning: Callable[[str], None] | None = None,
    conversions: CustomConversions | None = None,
    enable_admission_plugins: Sequence[str] = (),
    disable_admission_plugins: Sequence[str] = (),
    controllers: Sequence[str] | str = ("*",),
    root_ca_file: str | Path | None = None,
    leader_election: LeaderElectionConfig | None = None,
    webhook_service_resolver: Sequence[str] = (),
    admission_control_config_file: str | Path | None = None,
) -> Client:
    """Open the store at ``url`` with ``scheme`` (the built-in kinds by default).

    kube-apiserver's default-on admission plugins run, changed by
    ``enable_admission_plugins`` and ``disable_admission_plugins`` (its names, as its
    ``--enable-admission-plugins`` and ``--disable-admission-plugins``; an unknown name is
    refused with BadRequest). A ``config`` that names ``admission_plugins`` itself keeps them.
    ``admission_control_config_file`` is kube-apiserver's ``--admission-control-config-file``
    (an AdmissionConfiguration; kstore reads PodSecurity's configuration).

    ``config`` tunes the registry (watch cache, storage media type, event TTL, ...). The
    CustomResourceDefinitions stored there are served too, as soon as they are established;
    ``conversions`` gives Python conversions for versions of their kinds, by
    ``(apiVersion, kind)``: ``(to_hub, from_hub)``; the hub has the shape of the versions not
    named, which convert by rewriting ``apiVersion`` only, as ``conversion.strategy: None``,
    or through the CRD's conversion webhook with ``strategy: Webhook``.

    ``controllers`` says which API-only controllers run, as ``kstore serve --controllers``
    (every one by default; ``()`` none); they run on the leader of the processes sharing the
    store, elected on a Lease (``leader_election`` tunes its timings). ``root_ca_file`` is the
    CA published in every namespace's ``kube-root-ca.crt`` ConfigMap (none without it). The
    ``kubernetes`` Service of ``default`` is kept as kube-apiserver keeps it, without
    endpoints (nothing here serves an address; a ``kstore serve`` on the store adds its own):
    :class:`~kstore.controllers.kubernetes_service.EmbeddedKubernetesService`.

    ``webhook_service_resolver`` takes ``namespace/name=host:port`` rules for the services
    that admission and conversion webhooks name, as ``kstore serve
    --webhook-service-resolver`` (added to those of ``config``)."""
    root_ca = read_root_ca(None if root_ca_file is None else Path(root_ca_file), None)
    plugins = resolve_plugins(enable_admission_plugins, disable_admission_plugins)
    config = config or RegistryConfig()
    if not config.admission_plugins:
        config = replace(config, admission_plugins=plugins)
    if webhook_service_resolver:
        rules = (*config.webhook_service_resolver, *webhook_service_resolver)
        config = replace(config, webhook_service_resolver=rules)
    if admission_control_config_file is not None:
        configured = read_admission_config_file(Path(admission_control_config_file))
        config = replace(config, admission_configuration=configured)
    settings = ControllerSettings(
        controllers=controllers,
        root_ca=root_ca,
        leader_election=leader_election,
        # The kubernetes Service without endpoints: an embedded store serves no address.
        kubernetes_service=(
            partial(
                EmbeddedKubernetesService,
                service_ip=first_service_ip(config.service_cluster_ip_range),
            )
            if config.system_namespaces
            else None
        ),
    )
    backend = backend_for_url(url)
    try:
        registry = build_registry(scheme or builtin_scheme(), backend, config)
    except BaseException:
        backend.close()
        raise
    try:
        return Client(
            registry,
            on_warning=on_warning,
            owns_backend=True,
            conversions=conversions,
            controllers=settings,
        )
    except BaseException:
        registry.close()
        backend.close()
        raise


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """One watch event: ``type`` is ADDED, MODIFIED, DELETED, BOOKMARK or ERROR; ``object``
    the object in the watch's version (a ``Status`` for ERROR)."""

    type: str
    object: Object


class Watch:
    """A running watch; iterate it, or call :meth:`next` with a timeout. Stop it (or use it
    as a context manager) when done."""

    def __init__(self, watcher: Watcher, convert: Callable[[Object], Object]) -> None:
        self._watcher = watcher
        self._convert = convert

    def _event(self, event: Any) -> WatchEvent:
        if event.type is EventType.ERROR:
            return WatchEvent(str(event.type), copy_value(event.object))
        return WatchEvent(str(event.type), self._convert(event.object))

    def next(self, timeout: float | None = None) -> WatchEvent | None:
        """The next event; None when ``timeout`` passed or the watch ended."""
        event = self._watcher.next(timeout)
        return None if event is None else self._event(event)

    def __iter__(self) -> Iterator[WatchEvent]:
        for event in self._watcher:
            yield self._event(event)

    def stop(self) -> None:
        self._watcher.stop()

    def __enter__(self) -> Watch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class ResourceClient:
    """The verbs of one resource in one version (and namespace, for namespaced resources)."""

    def __init__(
        self,
        client: Client,
        group_version: GroupVersion,
        definition: KindDefinition,
        store: ResourceStore,
        namespace: str | None,
    ) -> None:
        self._client = client
        self._gv = group_version
        self._definition = definition
        self._store = store
        info = store.info
        self._namespaced = info.namespaced
        self._namespace = namespace if info.namespaced else None
        self._plural = info.plural

    @property
    def api_version(self) -> str:
        return self._gv.api_version

    @property
    def kind(self) -> str:
        return self._definition.kind

    def _generic_store(self) -> GenericStore:
        if not isinstance(self._store, GenericStore):
            raise BadRequest(f"{self._plural} cannot be patched through this client")
        return self._store

    def namespace(self, namespace: str) -> ResourceClient:
        """The same resource in another namespace."""
        return ResourceClient(self._client, self._gv, self._definition, self._store, namespace)

    # -- conversion ------------------------------------------------------------------------

    def _ctx(self, namespace: str | None) -> RequestContext:
        return RequestContext(namespace=namespace or "", request_version=self._gv)

    def _object_namespace(self, obj: Mapping[str, Any]) -> str | None:
        if not self._namespaced:
            return None
        if self._namespace is not None:
            return self._namespace
        meta = obj.get("metadata")
        found = meta.get("namespace") if isinstance(meta, Mapping) else None
        return found if isinstance(found, str) and found else "default"

    def _named_namespace(self) -> str | None:
        if not self._namespaced:
            return None
        return self._namespace or "default"

    def _to_hub(self, obj: Mapping[str, Any]) -> Object:
        external = copy_value(dict(obj))
        external.setdefault("apiVersion", self._gv.api_version)
        external.setdefault("kind", self._definition.kind)
        gvk = gvk_of(external)
        if gvk.group_version != self._gv or gvk.kind != self._definition.kind:
            raise BadRequest(
                f"the object is a {gvk.kind} in {gvk.api_version}, not a "
                f"{self._definition.kind} in {self._gv.api_version}"
            )
        scheme = self._client.scheme
        scheme.default(external)
        return scheme.to_hub(external)

    def _from_hub_many(self, objs: Sequence[Object]) -> list[Object]:
        """:meth:`_from_hub` of a list's items, converted in one call where the kind converts
        in batches (a conversion webhook's one review)."""
        hub_version = self._definition.hub_api_version
        if any(o.get("apiVersion") != hub_version for o in objs):
            return [self._from_hub(o) for o in objs]
        return [copy_value(o) for o in self._client.scheme.from_hub_many(objs, self._gv.version)]

    def _from_hub(self, obj: Object) -> Object:
        if obj.get("apiVersion") == self._definition.hub_api_version:
            out = self._client.scheme.from_hub(obj, self._gv.version)
        else:
            out = dict(obj)
            out["apiVersion"] = self._gv.api_version
            out["kind"] = self._definition.kind
        return copy_value(out)

    def _warn(self, warnings: tuple[str, ...]) -> None:
        if self._client.on_warning is not None:
            for warning in warnings:
                self._client.on_warning(warning)

    # -- verbs -----------------------------------------------------------------------------

    def create(
        self, obj: Mapping[str, Any], *, dry_run: bool = False, field_manager: str = ""
    ) -> Object:
        """Create ``obj``; returns the stored object (201 in HTTP terms)."""
        result = self._store.create(
            self._ctx(self._object_namespace(obj)),
            self._to_hub(obj),
            CreateOptions(dry_run=dry_run, field_manager=field_manager),
        )
        self._warn(result.warnings)
        return self._from_hub(result.object)

    def get(self, name: str, *, resource_version: str = "") -> Object:
        obj = self._store.get(
            self._ctx(self._named_namespace()), name, resource_version=resource_version
        )
        return self._from_hub(obj)

    def list(
        self,
        *,
        label_selector: str = "",
        field_selector: str = "",
        limit: int = 0,
        continue_token: str = "",
        resource_version: str = "",
        resource_version_match: str = "",
    ) -> Object:
        """A ``<Kind>List`` with ``metadata.resourceVersion`` (and ``continue`` when paged)."""
        result = self._store.list(
            self._ctx(self._namespace),
            ListOptions(
                label_selector=LabelSelector.parse(label_selector),
                field_selector=FieldSelector.parse(field_selector),
                limit=limit,
                continue_token=continue_token,
                resource_version=resource_version,
                resource_version_match=ResourceVersionMatch(resource_version_match),
            ),
        )
        metadata: dict[str, Any] = {"resourceVersion": str(result.resource_version)}
        if result.continue_token:
            metadata["continue"] = result.continue_token
        if result.remaining_item_count is not None:
            metadata["remainingItemCount"] = result.remaining_item_count
        return {
            "apiVersion": self._gv.api_version,
            "kind": self._definition.list_kind or f"{self._definition.kind}List",
            "metadata": metadata,
            "items": self._from_hub_many(result.items),
        }

    def _update(
        self, obj: Mapping[str, Any], subresource: str, dry_run: bool, field_manager: str
    ) -> Object:
        hub = self._to_hub(obj)
        meta = hub.get("metadata")
        name = meta.get("name") if isinstance(meta, dict) else None
        if not isinstance(name, str) or not name:
            raise BadRequest("metadata.name is required for an update")
        uid = meta.get("uid") if isinstance(meta, dict) else None
        result = self._store.update(
            self._ctx(self._object_namespace(obj)),
            name,
            lambda current: hub,
            UpdateOptions(
                dry_run=dry_run,
                field_manager=field_manager,
                subresource=subresource,
                preconditions=Preconditions(uid=uid) if isinstance(uid, str) and uid else None,
            ),
        )
        self._warn(result.warnings)
        return self._from_hub(result.object)

    def update(
        self, obj: Mapping[str, Any], *, dry_run: bool = False, field_manager: str = ""
    ) -> Object:
        """Replace the object (PUT). Its ``metadata.resourceVersion`` must be the stored one
        (409 otherwise); without one, kinds that allow it are overwritten."""
        return self._update(obj, "", dry_run, field_manager)

    def update_status(
        self, obj: Mapping[str, Any], *, dry_run: bool = False, field_manager: str = ""
    ) -> Object:
        """Replace the ``status`` of the object (the ``status`` subresource)."""
        return self._update(obj, "status", dry_run, field_manager)

    def patch(
        self,
        name: str,
        patch: Any,
        *,
        patch_type: str = "merge",
        subresource: str = "",
        dry_run: bool = False,
        field_manager: str = "",
        force: bool | None = None,
    ) -> Object:
        """Patch the object, as a PATCH request does (:mod:`kstore.registry.patch`).

        ``patch`` is the body as a JSON value (or ``bytes`` as sent over HTTP); ``patch_type``
        is ``merge`` (RFC 7386 JSON merge patch, the default), ``json`` (RFC 6902),
        ``strategic`` (strategic merge patch, built-in kinds) or ``apply`` (server-side apply:
        ``field_manager`` required, creates a missing object, ``force`` takes conflicting
        fields), or a Content-Type. The patch applies to the current object in this client's
        version and is applied again to fresh state after a conflict."""
        body = patch if isinstance(patch, bytes) else json_dumps(patch)
        kind = PatchType(_PATCH_TYPES.get(patch_type, patch_type))
        store = self._generic_store()
        namespace = self._named_namespace()
        options = PatchOptions(
            gvk=self._gv.with_kind(self._definition.kind),
            name=name,
            namespace=namespace or "",
            resource=store.qualified_resource,
            field_manager=field_manager,
            force=force,
            subresource=subresource,
            default=self._client.scheme.default,
            reset_fields=sorted(store.strategy.reset_fields(subresource)),
        )
        warnings: builtins.list[str] = []

        def updated(current: Object) -> Object:
            external = self._from_hub(current) if current else {}
            result = apply_patch(external, body, kind, options)
            warnings[:] = result.warnings
            return self._client.scheme.to_hub(result.object)

        result = store.update(
            self._ctx(namespace),
            name,
            updated,
            UpdateOptions(
                dry_run=dry_run,
                field_manager=field_manager,
                subresource=subresource,
                force=bool(force),
                apply=kind is PatchType.APPLY,
            ),
        )
        self._warn((*warnings, *result.warnings))
        return self._from_hub(result.object)

    def delete(
        self,
        name: str,
        *,
        grace_period_seconds: int | None = None,
        propagation_policy: str | None = None,
        uid: str | None = None,
        resource_version: str | None = None,
        dry_run: bool = False,
    ) -> Object:
        """Delete the object; returns its last state (with ``deletionTimestamp`` when
        finalizers or a grace period keep it)."""
        preconditions = None
        if uid is not None or resource_version is not None:
            preconditions = Preconditions(uid=uid, resource_version=resource_version)
        result = self._store.delete(
            self._ctx(self._named_namespace()),
            name,
            DeleteOptions(
                dry_run=dry_run,
                grace_period_seconds=grace_period_seconds,
                propagation_policy=propagation_policy,
                preconditions=preconditions,
            ),
        )
        self._warn(result.warnings)
        return self._from_hub(result.object)

    def delete_collection(
        self, *, label_selector: str = "", field_selector: str = "", dry_run: bool = False
    ) -> builtins.list[Object]:
        """Delete every object the selectors match; returns them."""
        deleted = self._store.delete_collection(
            self._ctx(self._namespace),
            ListOptions(
                label_selector=LabelSelector.parse(label_selector),
                field_selector=FieldSelector.parse(field_selector),
            ),
            DeleteOptions(dry_run=dry_run),
        )
        return [self._from_hub(obj) for obj in deleted]

    def watch(
        self,
        *,
        resource_version: str = "",
        label_selector: str = "",
        field_selector: str = "",
        send_initial_events: bool | None = None,
        allow_bookmarks: bool = False,
    ) -> Watch:
        """Watch changes after ``resource_version`` ("" or "0": the current objects first, as
        ADDED events, then every change)."""
        watcher = self._store.watch(
            self._ctx(self._namespace),
            ListOptions(
                resource_version=resource_version,
                label_selector=LabelSelector.parse(label_selector),
                field_selector=FieldSelector.parse(field_selector),
                send_initial_events=send_initial_events,
                allow_bookmarks=allow_bookmarks,
            ),
        )
        return Watch(watcher, self._from_hub)


class Client:
    """An open store: resource clients, admission hooks, and :meth:`close`."""

    def __init__(
        self,
        registry: StoreRegistry,
        *,
        on_warning: Callable[[str], None] | None = None,
        owns_backend: bool = False,
        conversions: CustomConversions | None = None,
        controllers: ControllerSettings | None = None,
    ) -> None:
        self._registry = registry
        self._owns_backend = owns_backend
        self.on_warning = on_warning
        self._closed = False
        # CustomResourceDefinitions stored (or created through this client) are served here too.
        self._controllers = start_controllers(
            registry, conversions=conversions, settings=controllers
        )

    @property
    def registry(self) -> StoreRegistry:
        """The registry underneath (what ``kstore serve`` serves)."""
        return self._registry

    @property
    def scheme(self) -> Scheme:
        return self._registry.scheme

    def resource(
        self, api_version: str, resource: str, *, namespace: str | None = None
    ) -> ResourceClient:
        """The client of ``resource`` (plural) in ``api_version`` (``v1``, ``apps/v1``).

        ``namespace`` None means all namespaces for list and watch, and the object's own
        namespace (else ``default``) for single objects."""
        gv = GroupVersion.parse(api_version)
        registered = self.scheme.resource(gv, resource)
        store = self._registry.store(gv.group, resource)
        return ResourceClient(self, gv, registered.definition, store, namespace)

    def add_admission(
        self,
        *,
        mutating: Callable[[Any], None] | None = None,
        validating: Callable[[Any], None] | None = None,
        blocking: bool = True,
        reads_only: bool = False,
    ) -> None:
        """Register admission hooks (see :mod:`kstore.registry.admission`); ``blocking=False``
        promises that they never block (no I/O, no waiting), ``reads_only=True`` that the
        validating hook never changes the object (it is then not given a copy)."""
        self._registry.add_admission(
            mutating=mutating, validating=validating, blocking=blocking, reads_only=reads_only
        )

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._controllers.stop()
        self._registry.close()
        if self._owns_backend:
            self._registry.backend.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
