"""The registry of a Scheme over one backend: one generic store per served resource.

:func:`build_registry` is what ``kstore serve`` and the embedding API both call. Per resource it
chooses, as kube-apiserver's storage factory does:

- the **key prefix**: built-in groups use the bare plural (``/pods``, ``/deployments``,
  ``/leases``; services live under ``/services/specs`` as in Kubernetes), every other group
  ``/<group>/<plural>`` (as custom resources are stored);
- the **codec**: the kind's storage version in the configured storage media type (JSON, or
  Kubernetes protobuf for kinds that have a protobuf message; others fall back to JSON, as
  custom resources do), reading either format back;
- the **watch cache** in front of the backend when enabled, except for events (Kubernetes
  disables it for them: they are written often and read rarely);
- the **strategy** (:mod:`kstore.registry.strategies`); events expire after the event TTL.

The registry then makes sure the system namespaces exist and starts the namespace finalizer.
:meth:`StoreRegistry.close` stops the registry's threads and caches; the backend belongs to
whoever opened it and is closed by them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Final

from kstore.api.gvk import GroupVersionKind, Object
from kstore.api.proto_schema import message_for_gvk
from kstore.api.scheme import KindDefinition, Scheme
from kstore.cache.cacher import CacheConfig, Cacher
from kstore.codec.json import MEDIA_TYPE_JSON
from kstore.codec.protobuf import MEDIA_TYPE_PROTOBUF
from kstore.codec.versioning import VersioningCodec, storage_codec
from kstore.errors import AlreadyExists, BadRequest, NotFound, Unavailable
from kstore.registry.admission import AdmissionChain
from kstore.registry.admission.webhook_client import (
    WebhookClient,
    parse_service_resolver_rules,
    rule_resolver,
)
from kstore.registry.allocation import (
    DEFAULT_NODE_PORT_RANGE,
    DEFAULT_SERVICE_CIDR,
    DEFAULT_SERVICE_CIDR_NAME,
    ClusterIPAllocator,
    NodePortAllocator,
    ServiceAllocator,
    parse_node_port_range,
    parse_service_cidrs,
    ranges_prefix,
    record_attrs,
    record_codec,
)
from kstore.registry.bootstrap import run_bootstrap_step
from kstore.registry.interface import (
    AdmissionHook,
    CreateOptions,
    Registry,
    RequestContext,
    ResourceStore,
    UpdateOptions,
)
from kstore.registry.namespaces import (
    NamespaceFinalizer,
    NamespaceLifecycle,
    NamespaceStore,
    ensure_system_namespaces,
)
from kstore.registry.patch.managed import current_time
from kstore.registry.plugins import (
    ORDERED_PLUGINS,
    check_plugin_configurations,
    install_plugins,
)
from kstore.registry.priorityclasses import PriorityClassStore, ensure_system_priority_classes
from kstore.registry.services import ServiceStore
from kstore.registry.store import GenericStore
from kstore.registry.strategies import StrategyFactory, strategy_for
from kstore.registry.strategies.core import ServiceStrategy
from kstore.storage.encryption import RewriteTarget
from kstore.storage.interface import (
    Backend,
    IdentityTransformer,
    ResourceStorageConfig,
    SharedBackend,
    Storage,
    ValueTransformer,
)

__all__ = [
    "DEFAULT_EVENT_TTL_SECONDS",
    "RegistryConfig",
    "StoreRegistry",
    "build_registry",
    "resource_prefix",
]

DEFAULT_EVENT_TTL_SECONDS: Final = 3600
#: How often the namespace finalizer of a store shared by several processes looks for
#: namespaces marked for deletion in any of them (a consistent LIST of namespaces, from the
#: watch cache).
_SHARED_RESCAN_SECONDS: Final = 1.0
#: Groups whose resources Kubernetes stores under the bare plural.
_LEGACY_GROUPS: Final = frozenset({"", "apps", "batch", "autoscaling", "policy", "extensions"})
#: Kubernetes' SpecialDefaultResourcePrefixes, and the prefixes of apiextensions-apiserver's
#: CRDs and kube-aggregator's APIServices (each stores them under their group, as custom
#: resources are stored).
_SPECIAL_PREFIXES: Final = {
    ("apiextensions.k8s.io", "customresourcedefinitions"): (
        "/apiextensions.k8s.io/customresourcedefinitions"
    ),
    ("apiregistration.k8s.io", "apiservices"): "/apiregistration.k8s.io/apiservices",
    ("", "replicationcontrollers"): "/controllers",
    ("", "endpoints"): "/services/endpoints",
    ("", "nodes"): "/minions",
    ("", "services"): "/services/specs",
    ("extensions", "ingresses"): "/ingress",
    ("networking.k8s.io", "ingresses"): "/ingress",
    ("extensions", "podsecuritypolicies"): "/podsecuritypolicy",
    ("policy", "podsecuritypolicies"): "/podsecuritypolicy",
}
_UNCACHED: Final = frozenset({("", "events"), ("events.k8s.io", "events")})
#: Fields worth an index in the watch cache (Kubernetes indexes pods by node).
_INDEXED_FIELDS: Final = {("", "pods"): ("spec.nodeName",)}


def resource_prefix(group: str, plural: str) -> str:
    """The key prefix of a resource, as kube-apiserver lays out etcd."""
    special = _SPECIAL_PREFIXES.get((group, plural))
    if special is not None:
        return special
    if group in _LEGACY_GROUPS or group.endswith(".k8s.io"):
        return f"/{plural}"
    return f"/{group}/{plural}"


@dataclass(frozen=True, kw_only=True, slots=True)
class RegistryConfig:
    """How to build a registry.

    ``watch_cache``: a watch cache in front of each resource (kube-apiserver's
    ``--watch-cache``, on by default). ``storage_media_type``: ``application/json`` or
    ``application/vnd.kubernetes.protobuf`` (``--storage-media-type``). ``event_ttl_seconds``:
    how long events live (``--event-ttl``; 0 keeps them). ``transformer``: encryption at rest,
    the same for every resource; ``transformer_for``, when set, replaces it with one per
    resource, given the group and plural (``--encryption-provider-config``:
    :meth:`kstore.storage.encryption.EncryptionConfig.transformer_for`).
    ``system_namespaces``: create ``default``, ``kube-system``, ``kube-public`` and
    ``kube-node-lease`` when missing. ``system_priority_classes``: create the
    ``system-node-critical`` and ``system-cluster-critical`` PriorityClasses when missing.
    ``strategies``: strategy factories replacing the
    defaults, by (group, kind). ``namespace_retry_seconds`` / ``namespace_rescan_seconds``:
    the namespace finalizer's first retry delay and rescan period. ``reads_are_local``:
    the backend reads from local storage without waiting (LMDB; see
    :attr:`Registry.reads_are_local`).
    ``consistent_reads_from_cache``: serve consistent LISTs from the watch cache once it has
    caught up with the backend's current revision (on etcd the cache proves it is current by
    one quorum range over the resource's prefix, see :mod:`kstore.cache.freshness`), and
    consistent GETs of objects that do not expire when the cache has already reached the
    backend's current revision and reading that revision is local (LMDB); off, consistent
    LISTs and GETs go to the backend.
    ``service_cluster_ip_range`` / ``service_node_port_range``: where Services' cluster IPs
    (one CIDR, or two of different families: ``a,b``) and node ports (``low-high``) come from
    (kube-apiserver's flags of those names; :mod:`kstore.registry.allocation`).
    ``webhook_service_resolver``: ``namespace/name=host:port`` rules for the services webhooks
    name (``--webhook-service-resolver``); a service without a rule is reached at its
    clusterIP, which needs a proxy kstore does not run.
    ``admission_configuration``: admission plugin name -> its configuration object
    (``--admission-control-config-file``; :mod:`kstore.registry.plugins.admission_config`).
    """

    watch_cache: bool = True
    consistent_reads_from_cache: bool = True
    storage_media_type: str = MEDIA_TYPE_JSON
    event_ttl_seconds: int = DEFAULT_EVENT_TTL_SECONDS
    transformer: ValueTransformer = field(default_factory=IdentityTransformer)
    transformer_for: Callable[[str, str], ValueTransformer] | None = None
    system_namespaces: bool = True
    system_priority_classes: bool = True
    strategies: Mapping[tuple[str, str], StrategyFactory] = field(default_factory=dict)
    namespace_retry_seconds: float = 0.5
    namespace_rescan_seconds: float = 30.0
    reads_are_local: bool = False
    admission_plugins: tuple[str, ...] = ()
    service_cluster_ip_range: str = DEFAULT_SERVICE_CIDR
    service_node_port_range: str = DEFAULT_NODE_PORT_RANGE
    webhook_service_resolver: tuple[str, ...] = ()
    admission_configuration: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_plugin_configurations(self.admission_configuration)
        parse_service_resolver_rules(self.webhook_service_resolver)
        parse_service_cidrs(self.service_cluster_ip_range)
        parse_node_port_range(self.service_node_port_range)
        if self.storage_media_type not in (MEDIA_TYPE_JSON, MEDIA_TYPE_PROTOBUF):
            raise BadRequest(
                f"unsupported storage media type {self.storage_media_type!r} "
                f"(use {MEDIA_TYPE_JSON} or {MEDIA_TYPE_PROTOBUF})"
            )
        if self.event_ttl_seconds < 0:
            raise BadRequest("the event TTL must not be negative")
        for name in self.admission_plugins:
            if name not in ORDERED_PLUGINS:
                raise BadRequest(f'admission plugin "{name}" is unknown')


def _attrs_for(
    definition: KindDefinition, namespaced: bool
) -> Callable[[Object], tuple[dict[str, str], dict[str, str]]]:
    extra = definition.field_labels

    def attrs(obj: Object) -> tuple[dict[str, str], dict[str, str]]:
        meta = obj.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        labels = meta.get("labels")
        fields = {"metadata.name": str(meta.get("name") or "")}
        if namespaced:
            fields["metadata.namespace"] = str(meta.get("namespace") or "")
        if extra is not None:
            fields.update(extra(obj))
        return (dict(labels) if isinstance(labels, dict) else {}), fields

    return attrs


def _store_class(definition: KindDefinition) -> type[GenericStore]:
    return ServiceStore if (definition.group, definition.kind) == ("", "Service") else GenericStore


def _is_ready(obj: Object) -> bool:
    conditions = (obj.get("status") or {}).get("conditions") or ()
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def ensure_default_service_cidr(store: GenericStore, cidrs: list[str]) -> None:
    """Create the ServiceCIDR ``kubernetes`` holding the configured ranges unless it exists
    (another server or an earlier start made it), and mark it Ready unless it is (a start
    stopped between the two writes, or its condition was changed by hand)."""
    ctx = RequestContext()
    try:
        current = store.create(
            ctx,
            {
                "apiVersion": "networking.k8s.io/v1",
                "kind": "ServiceCIDR",
                "metadata": {"name": DEFAULT_SERVICE_CIDR_NAME},
                "spec": {"cidrs": cidrs},
            },
            CreateOptions(field_manager="kube-apiserver"),
        ).object
    except AlreadyExists:
        current = store.get(ctx, DEFAULT_SERVICE_CIDR_NAME)
    if _is_ready(current):
        return

    def ready(current: Object) -> Object:
        obj = dict(current)
        obj["status"] = {
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "lastTransitionTime": current_time(),
                    "reason": "",
                    "message": "Kubernetes default Service CIDR is ready",
                }
            ]
        }
        return obj

    store.update(
        ctx,
        DEFAULT_SERVICE_CIDR_NAME,
        ready,
        UpdateOptions(subresource="status", field_manager="kubernetes-service-cidr-controller"),
    )


class StoreRegistry(Registry):
    """Every served resource of a Scheme over one backend (see the module docstring)."""

    def __init__(self, scheme: Scheme, backend: Backend, config: RegistryConfig) -> None:
        self._scheme = scheme
        self._backend = backend
        self._config = config
        self._admission = AdmissionChain()
        self._stores: dict[tuple[str, str], GenericStore] = {}
        self._cachers: dict[tuple[str, str], Cacher] = {}
        self._namespace_check: Callable[[str, str, str], None] | None = None
        self._scheme_listeners: list[Callable[[Scheme], None]] = []
        self._on_close: list[Callable[[], None]] = []
        self._closed = False
        self._lock = threading.Lock()
        self.namespace_finalizer: NamespaceFinalizer | None = None
        #: What webhooks (admission, CRD conversion) are called with: services resolved by
        #: the configured rules, else to their clusterIP.
        self.webhook_client = WebhookClient(
            rule_resolver(
                parse_service_resolver_rules(config.webhook_service_resolver),
                self._service_address,
            )
        )
        try:
            self._build()
        except BaseException:
            self.close()
            raise

    # -- construction ----------------------------------------------------------------------

    def _codec_for(self, scheme: Scheme, definition: KindDefinition) -> VersioningCodec:
        media_type = MEDIA_TYPE_JSON
        if self._config.storage_media_type == MEDIA_TYPE_PROTOBUF:
            gv = definition.storage_group_version
            # Kinds without a protobuf schema (custom kinds) are stored as JSON, as CRDs are.
            if message_for_gvk(GroupVersionKind(gv.group, gv.version, definition.kind)):
                media_type = MEDIA_TYPE_PROTOBUF
        return storage_codec(scheme, media_type)

    def _storage_for(
        self, scheme: Scheme, definition: KindDefinition, prefix: str, *, expires: bool
    ) -> Storage:
        assert definition.resource is not None
        info = definition.resource
        transformer_for = self._config.transformer_for
        resource = ResourceStorageConfig(
            resource_prefix=prefix,
            codec=self._codec_for(scheme, definition),
            get_attrs=_attrs_for(definition, info.namespaced),
            transformer=(
                self._config.transformer
                if transformer_for is None
                else transformer_for(definition.group, info.plural)
            ),
            namespaced=info.namespaced,
        )
        storage = self._backend.storage_for(resource)
        key = (definition.group, info.plural)
        if not self._config.watch_cache or key in _UNCACHED:
            return storage
        cacher = Cacher(
            CacheConfig(
                storage=storage,
                resource=resource,
                indexed_fields=_INDEXED_FIELDS.get(key, ()),
                consistent_reads_from_cache=self._config.consistent_reads_from_cache,
                # A consistent GET of an object that never expires may be answered from
                # memory when the cache is provably current (LMDB: the revision is local).
                consistent_gets_from_cache=self._config.consistent_reads_from_cache and not expires,
            )
        )
        self._cachers[key] = cacher
        return cacher

    @staticmethod
    def _served(scheme: Scheme, definition: KindDefinition) -> bool:
        return definition.resource is not None and any(
            scheme.is_served(GroupVersionKind(definition.group, v.version, definition.kind))
            for v in definition.versions
        )

    def _build(self) -> None:
        scheme = self._scheme
        definitions = [d for d in scheme.definitions() if self._served(scheme, d)]
        namespaces: NamespaceStore | None = None
        lifecycle: NamespaceLifecycle | None = None
        for d in definitions:
            if (d.group, d.kind) == ("", "Namespace"):
                store = self._make_store(scheme, d, NamespaceStore, None)
                assert isinstance(store, NamespaceStore)
                namespaces = store
                lifecycle = NamespaceLifecycle(namespaces)
                namespaces.lifecycle = lifecycle
        check = lifecycle.check if lifecycle is not None else None
        self._namespace_check = check
        for d in definitions:
            if (d.group, d.kind) == ("scheduling.k8s.io", "PriorityClass"):
                classes = self._make_store(scheme, d, PriorityClassStore, check)
                if self._config.system_priority_classes:
                    run_bootstrap_step(
                        "creating the system priority classes",
                        partial(ensure_system_priority_classes, scheme, classes),
                    )
            elif (d.group, d.kind) != ("", "Namespace"):
                self._make_store(scheme, d, _store_class(d), check)
        self._wire_service_allocation()
        install_plugins(self, self._config.admission_plugins, self._config.admission_configuration)
        if namespaces is None:
            return
        if self._config.system_namespaces:
            run_bootstrap_step(
                "creating the system namespaces", partial(ensure_system_namespaces, namespaces)
            )
        backend = self._backend
        shared = isinstance(backend, SharedBackend)

        def leads() -> bool:
            return not isinstance(backend, SharedBackend) or backend.leads

        finalizer = NamespaceFinalizer(
            namespaces,
            self._namespaced_stores,
            retry_seconds=self._config.namespace_retry_seconds,
            # On a store shared by several processes, one finalizer (the leader's) works for
            # all of them, finding deletions made elsewhere by rescanning often.
            rescan_seconds=(
                min(self._config.namespace_rescan_seconds, _SHARED_RESCAN_SECONDS)
                if shared
                else self._config.namespace_rescan_seconds
            ),
            leads=leads if shared else None,
        )
        namespaces.on_marked = finalizer.enqueue
        self.namespace_finalizer = finalizer
        finalizer.start()

    def _make_store(
        self,
        scheme: Scheme,
        definition: KindDefinition,
        cls: type[GenericStore],
        check: Callable[[str, str, str], None] | None,
    ) -> GenericStore:
        assert definition.resource is not None
        info = definition.resource
        prefix = info.key_prefix or resource_prefix(definition.group, info.plural)
        strategy = strategy_for(
            definition,
            event_ttl_seconds=self._config.event_ttl_seconds,
            overrides=self._config.strategies,
        )
        store = cls(
            scheme=scheme,
            definition=definition,
            strategy=strategy,
            storage=self._storage_for(
                scheme, definition, prefix, expires=bool(strategy.ttl_seconds)
            ),
            resource_prefix=prefix,
            admission=self._admission,
            namespace_check=check,
        )
        self._stores = {**self._stores, (definition.group, info.plural): store}
        return store

    def _wire_service_allocation(self) -> None:
        """Give the Service store its allocator, over the IPAddress store and the node port
        record, and make sure the default ServiceCIDR exists (as kube-apiserver's controller
        does at start)."""
        services = self._stores.get(("", "services"))
        addresses = self._stores.get(("networking.k8s.io", "ipaddresses"))
        if not isinstance(services, ServiceStore) or addresses is None:
            return
        if services.allocator is not None:
            return
        networks = parse_service_cidrs(self._config.service_cluster_ip_range)
        ranges = self._backend.storage_for(
            ResourceStorageConfig(
                resource_prefix=ranges_prefix(),
                codec=record_codec(),
                get_attrs=record_attrs,
                transformer=self._config.transformer,
                namespaced=False,
            )
        )
        allocator = ServiceAllocator(
            [ClusterIPAllocator(n, addresses) for n in networks],
            NodePortAllocator(parse_node_port_range(self._config.service_node_port_range), ranges),
        )
        services.allocator = allocator
        strategy = services.strategy
        if isinstance(strategy, ServiceStrategy):
            strategy.allocator = allocator
        cidrs = self._stores.get(("networking.k8s.io", "servicecidrs"))
        if cidrs is not None:
            run_bootstrap_step(
                "creating the default ServiceCIDR",
                partial(ensure_default_service_cidr, cidrs, [str(n) for n in networks]),
            )

    def _namespaced_stores(self) -> Sequence[GenericStore]:
        return [s for s in self._stores.values() if s.info.namespaced]

    # -- kinds added and removed at run time ---------------------------------------------------

    def apply_scheme(self, scheme: Scheme) -> None:
        """Serve ``scheme`` from now on: a store (and watch cache) for each resource it adds or
        whose kind's definition it changes, none any more for each resource it drops; the
        stores of unchanged kinds stay as they are. Then the listeners are told, in the order
        they were added. Requests that already took a store finish on it; a replaced store's
        watches end (clients watch again, as after a kube-apiserver's CRD update)."""
        with self._lock:
            if self._closed:
                return
            old = self._stores
            wanted = {
                (d.group, d.resource.plural): d
                for d in scheme.definitions()
                if d.resource is not None and self._served(scheme, d)
            }
            stale = [key for key, store in old.items() if wanted.get(key) is not store.definition]
            for key in stale:
                self._stores = {k: v for k, v in self._stores.items() if k != key}
                cacher = self._cachers.pop(key, None)
                if cacher is not None:
                    cacher.stop()
            for key, definition in wanted.items():
                if key not in self._stores:
                    self._make_store(
                        scheme, definition, _store_class(definition), self._namespace_check
                    )
            self._wire_service_allocation()
            self._scheme = scheme
            listeners = list(self._scheme_listeners)
        for listener in listeners:
            listener(scheme)

    def add_scheme_listener(self, listener: Callable[[Scheme], None]) -> None:
        """Call ``listener(scheme)`` after every :meth:`apply_scheme` (from its thread)."""
        with self._lock:
            self._scheme_listeners.append(listener)

    # -- Registry --------------------------------------------------------------------------

    @property
    def scheme(self) -> Scheme:
        return self._scheme

    @property
    def reads_are_local(self) -> bool:
        return self._config.reads_are_local

    @property
    def writes_on_loop(self) -> bool:
        return self._config.reads_are_local and not self._admission.may_block

    @property
    def backend(self) -> Backend:
        return self._backend

    @property
    def config(self) -> RegistryConfig:
        return self._config

    def store(self, group: str, resource: str) -> GenericStore:
        try:
            return self._stores[(group, resource)]
        except KeyError:
            qualified = f"{resource}.{group}" if group else resource
            raise NotFound(
                f"the server could not find the requested resource ({qualified})"
            ) from None

    def stores(self) -> Sequence[ResourceStore]:
        return [self._stores[k] for k in sorted(self._stores)]

    def rewrite_targets(self, covers: Callable[[str, str], bool]) -> list[RewriteTarget]:
        """What re-encryption rewrites: the storage of every served resource for which
        ``covers(group, plural)`` holds (an EncryptionConfiguration names it)."""
        targets = []
        for store in self._stores.values():
            group, plural = store.definition.group, store.info.plural
            if covers(group, plural):
                targets.append(
                    RewriteTarget(
                        group=group,
                        resource=plural,
                        storage=store.storage,
                        resource_prefix=store.info.key_prefix or resource_prefix(group, plural),
                        namespaced=store.info.namespaced,
                        ttl_seconds=store.strategy.ttl_seconds,
                    )
                )
        return sorted(targets, key=lambda t: (t.group, t.resource))

    def add_admission(
        self,
        *,
        mutating: AdmissionHook | None = None,
        validating: AdmissionHook | None = None,
        blocking: bool | Callable[[], bool] = True,
        reads_only: bool = False,
    ) -> None:
        self._admission.add(
            mutating=mutating, validating=validating, blocking=blocking, reads_only=reads_only
        )

    def on_close(self, stop: Callable[[], None]) -> None:
        self._on_close.append(stop)

    def _service_address(self, namespace: str, name: str, port: int) -> tuple[str, int]:
        """A service port's clusterIP address (kube-apiserver's cluster-IP service resolver)."""
        service = self.store("", "services").get(RequestContext(namespace=namespace), name)
        spec = service.get("spec")
        spec = spec if isinstance(spec, dict) else {}
        if spec.get("type") == "ExternalName":
            return str(spec.get("externalName") or ""), port
        cluster_ip = str(spec.get("clusterIP") or "")
        if not cluster_ip or cluster_ip == "None":
            raise Unavailable(f'cannot route to service with ClusterIP "{cluster_ip}"')
        ports = spec.get("ports")
        for entry in ports if isinstance(ports, list) else []:
            if isinstance(entry, dict) and entry.get("port") == port:
                return cluster_ip, port
        raise Unavailable(f'no service port {port} found for service "{name}"')

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        for stop in self._on_close:
            stop()
        self.webhook_client.close()
        if self.namespace_finalizer is not None:
            self.namespace_finalizer.stop()
        for cacher in self._cachers.values():
            cacher.stop()


def build_registry(
    scheme: Scheme, backend: Backend, config: RegistryConfig | None = None
) -> StoreRegistry:
    """A registry serving every resource of ``scheme`` from ``backend`` (see the module
    docstring). Raises BadRequest for an invalid config."""
    return StoreRegistry(scheme, backend, config or RegistryConfig())
