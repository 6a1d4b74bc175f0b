"""``kstore serve``: the process that serves the REST API, from start to clean exit.

Start: open the registry on the chosen backend (LMDB in ``--data-dir`` by default, or etcd),
build the app, bind the socket (``--port 0`` picks a free port), and once uvicorn is serving
print the URL and a ready-to-paste kubectl line on stdout.

Stop (SIGTERM or SIGINT): ``/readyz`` starts failing and new watches are refused, every open
watch ends (its stream closes cleanly), the listening socket closes, requests in flight —
writes included — run to completion (up to ``shutdown_timeout_seconds``), then the registry
and its store are closed and the process exits 0. A second SIGINT forces the exit.

While serving, the survivors of every full garbage collection are frozen
(:class:`SurvivorFreezer`): the objects the store keeps in memory (the watch cache's objects
above all) are long-lived, acyclic JSON trees that reference counting alone frees, and
scanning all of them again on every full collection made pauses of 0.2-0.9 s once a few
thousand Pods were cached.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import re
import signal
import socket
import ssl
import sys
import threading
import time
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from types import FrameType
from typing import TextIO

import uvicorn

from kstore.controllers import ControllerSettings, RunningControllers, start_controllers
from kstore.controllers.kubernetes_service import (
    ENDPOINT_RECONCILER_TYPES,
    KubernetesServiceController,
    advertise_address_for,
    first_service_ip,
)
from kstore.controllers.leader import LeaderElectionConfig
from kstore.controllers.root_ca import read_root_ca
from kstore.errors import BadRequest
from kstore.registry.allocation import DEFAULT_NODE_PORT_RANGE, DEFAULT_SERVICE_CIDR
from kstore.registry.interface import Registry, RequestContext
from kstore.registry.plugins import resolve_plugins
from kstore.registry.plugins.admission_config import read_admission_config_file
from kstore.server.app import build_app, server_state
from kstore.server.filters import AuditLog, FilterConfig
from kstore.server.filters.tls import server_tls_context
from kstore.server.http_protocol import KStoreHttpProtocol
from kstore.server.metrics import Figure
from kstore.server.state import ServerState
from kstore.storage.interface import Backend, ListOptions
from kstore.tokens import ensure_key_file

__all__ = [
    "ServeConfig",
    "SurvivorFreezer",
    "parse_duration",
    "parse_runtime_config",
    "serve",
    "serve_socket",
    "storage_object_figures",
]

_log = logging.getLogger("kstore.server")

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(h|ms|m|s)")
_UNIT_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def parse_duration(text: str) -> float:
    """Seconds in a Go duration (``1h``, ``90m``, ``1h30m``, ``45s``, ``500ms``)."""
    text = text.strip()
    if text == "0":
        return 0.0
    pos, total = 0, 0.0
    for m in _DURATION_PART.finditer(text):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNIT_SECONDS[m.group(2)]
        pos = m.end()
    if pos != len(text) or not text:
        raise BadRequest(f'time: invalid duration "{text}"')
    return total


def parse_runtime_config(text: str) -> dict[str, bool]:
    """``--runtime-config``: ``apps/v1beta1=false,api/alpha=true``; a bare key means true."""
    out: dict[str, bool] = {}
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        key, eq, value = item.partition("=")
        if not eq:
            out[key] = True
            continue
        if value.lower() in ("true", "1"):
            out[key] = True
        elif value.lower() in ("false", "0"):
            out[key] = False
        else:
            raise BadRequest(
                f"invalid value of {key}: {value}, err: strconv.ParseBool: "
                f'parsing "{value}": invalid syntax'
            )
    return out


#: The signing key of a server given no ``--service-account-signing-key-file``, in its data
#: directory: tokens then survive restarts. Several servers sharing one etcd must be given
#: one key file (and the same issuer), or each refuses the others' tokens.
SERVICE_ACCOUNT_KEY_FILE = "service-account.key"


def _with_signing_key(config: ServeConfig) -> FilterConfig:
    filters = config.filters
    if filters.service_account_signing_key_file is not None:
        return filters
    path = ensure_key_file(config.data_dir / SERVICE_ACCOUNT_KEY_FILE)
    return replace(filters, service_account_signing_key_file=path)


@dataclass(frozen=True, kw_only=True)
class ServeConfig:
    """The flags of ``kstore serve`` (named as kube-apiserver's)."""

    bind_address: str = "127.0.0.1"
    port: int = 8080
    #: kube-apiserver's ``--advertise-address``: the address the ``kubernetes`` Service's
    #: Endpoints give for this server (default: the bind address; 127.0.0.1 when binding all).
    advertise_address: str | None = None
    #: kube-apiserver's ``--endpoint-reconciler-type``: ``lease`` (each server keeps its
    #: address in the ``kubernetes`` Endpoints through a Lease of its own) or ``none``.
    endpoint_reconciler_type: str = "lease"
    data_dir: Path = Path("kstore-data")
    storage_backend: str = "lmdb"
    etcd_servers: tuple[str, ...] = ()
    etcd_prefix: str = "/registry"
    storage_media_type: str = "application/json"
    watch_cache: bool = True
    event_ttl_seconds: float = 3600.0
    #: kube-apiserver's ``--service-cluster-ip-range`` (one CIDR, or two of different
    #: families) and ``--service-node-port-range``.
    service_cluster_ip_range: str = DEFAULT_SERVICE_CIDR
    service_node_port_range: str = DEFAULT_NODE_PORT_RANGE
    #: kube-apiserver's ``--etcd-compaction-interval`` (5m; 0 turns compaction off), honoured
    #: by both backends: every interval, history older than one interval is dropped, so a
    #: watch or list from a revision older than that gets 410 Expired.
    compaction_interval_seconds: float = 300.0
    runtime_config: dict[str, bool] = field(default_factory=dict)
    #: kube-apiserver's ``--encryption-provider-config``: an EncryptionConfiguration file.
    encryption_provider_config: Path | None = None
    log_level: str = "info"
    shutdown_timeout_seconds: float = 60.0
    #: ``--max-requests-inflight``, ``--max-mutating-requests-inflight`` and
    #: ``--request-timeout`` (kube-apiserver's defaults; 0 turns one off).
    filters: FilterConfig = field(default_factory=FilterConfig)
    #: kube-apiserver's ``--audit-log-path``: one audit Event per request as a JSON line in
    #: this file (``-``: stdout); None audits nothing.
    audit_log_path: str | None = None
    #: kube-apiserver's ``--tls-cert-file`` and ``--tls-private-key-file``: with both, the
    #: server speaks HTTPS only (TLS 1.2 at least) on ``secure_port`` (``--secure-port``,
    #: 6443) and ``port`` is not used; with neither, plain HTTP on ``port``.
    tls_cert_file: Path | None = None
    tls_private_key_file: Path | None = None
    secure_port: int = 6443
    #: kube-apiserver's ``--enable-admission-plugins`` / ``--disable-admission-plugins``:
    #: changes to its default-on set of admission plugins, by name.
    enable_admission_plugins: tuple[str, ...] = ()
    disable_admission_plugins: tuple[str, ...] = ()
    #: kube-apiserver's ``--admission-control-config-file``: an AdmissionConfiguration
    #: (:mod:`kstore.registry.plugins.admission_config`); None configures no plugin.
    admission_control_config_file: Path | None = None
    #: ``--webhook-service-resolver``: ``namespace/name=host:port`` rules for the services
    #: that webhook configurations name (kstore runs no service proxy).
    webhook_service_resolver: tuple[str, ...] = ()
    #: How long a CRD conversion webhook may take to answer (kube-apiserver: 30 s, fixed).
    conversion_webhook_timeout_seconds: float = 30.0
    #: kube-controller-manager's ``--controllers``: which API-only controllers run (on the
    #: leader of the servers sharing the store); ``*`` is every one.
    controllers: tuple[str, ...] = ("*",)
    #: kube-controller-manager's ``--root-ca-file``: the CA published in every namespace's
    #: ``kube-root-ca.crt`` ConfigMap (else the last certificate of ``tls_cert_file``; else
    #: none is published).
    root_ca_file: Path | None = None
    #: kube-controller-manager's ``--leader-elect-*`` timings, in seconds.
    leader_election: LeaderElectionConfig = field(default_factory=LeaderElectionConfig)
    #: ``--workers``: how many server processes share the listening socket and the store
    #: (see :mod:`kstore.server.workers`); 1 serves from this process alone.
    workers: int = 1


#: Opens the registry a config describes, with the backend under it (closed after it).
RegistryOpener = Callable[["ServeConfig"], tuple[Registry, Backend]]


def open_backend(config: ServeConfig) -> Backend:
    """The storage backend ``config`` names (LMDB in the data directory, or etcd), compacting
    its history every ``compaction_interval_seconds``."""
    interval = config.compaction_interval_seconds
    if interval < 0:
        raise BadRequest(f"invalid compaction interval {interval}: must not be negative")
    if config.storage_backend == "etcd":
        from kstore.storage.etcd import EtcdBackend, EtcdConfig

        return EtcdBackend(
            EtcdConfig(
                endpoints=config.etcd_servers,
                prefix=config.etcd_prefix,
                compaction_interval=interval,
            )
        )
    if config.storage_backend != "lmdb":
        raise BadRequest(f"unknown storage backend {config.storage_backend!r}")
    from kstore.storage.lmdb import LmdbBackend, LmdbConfig

    if interval == 0:
        return LmdbBackend(LmdbConfig(path=config.data_dir, compaction_interval_s=0))
    # As Kubernetes' compactor keeps between one and two intervals of etcd history: LMDB
    # compacts every interval to what is older than one interval.
    return LmdbBackend(
        LmdbConfig(
            path=config.data_dir,
            compaction_interval_s=interval,
            history_retention_s=interval,
        )
    )


def open_registry(config: ServeConfig) -> tuple[Registry, Backend]:
    """The registry of the built-in kinds (served per ``--runtime-config``) over the backend."""
    from kstore.api.kinds import builtin_scheme_builder
    from kstore.registry.registry import RegistryConfig, build_registry

    scheme = builtin_scheme_builder().build(config.runtime_config)
    transformer_for = None
    if config.encryption_provider_config is not None:
        from kstore.storage.encryption import load_encryption_config

        # Read before the backend opens: a bad file fails without touching the store.
        transformer_for = load_encryption_config(config.encryption_provider_config).transformer_for
    registry_config = RegistryConfig(
        watch_cache=config.watch_cache,
        # On etcd the cache confirms freshness by one quorum range over the resource's prefix
        # (kstore/cache/freshness.py), not by progress notifications.
        consistent_reads_from_cache=True,
        storage_media_type=config.storage_media_type,
        event_ttl_seconds=int(config.event_ttl_seconds),
        transformer_for=transformer_for,
        service_cluster_ip_range=config.service_cluster_ip_range,
        service_node_port_range=config.service_node_port_range,
        # An LMDB read is a local read transaction: it never waits for a writer or a peer.
        reads_are_local=config.storage_backend == "lmdb",
        admission_plugins=resolve_plugins(
            config.enable_admission_plugins, config.disable_admission_plugins
        ),
        webhook_service_resolver=config.webhook_service_resolver,
        admission_configuration=(
            {}
            if config.admission_control_config_file is None
            else read_admission_config_file(config.admission_control_config_file)
        ),
    )
    backend = open_backend(config)
    try:
        return build_registry(scheme, backend, registry_config), backend
    except BaseException:
        backend.close()
        raise


def storage_object_figures(registry: Registry) -> Callable[[], Iterable[Figure]]:
    """``apiserver_storage_objects{resource}``: the object count of every resource, read as
    a one-item page (the count comes with ``remainingItemCount``)."""

    def figures() -> Iterable[Figure]:
        out: list[Figure] = []
        for store in registry.stores():
            info = store.info
            group = store.definition.group
            name = f"{info.plural}.{group}" if group else info.plural
            try:
                page = store.list(RequestContext(), ListOptions(limit=1))
            except Exception:  # an unreadable resource is left out, not fatal to /metrics
                continue
            count = len(page.items) + (page.remaining_item_count or 0)
            out.append(
                Figure(
                    "apiserver_storage_objects",
                    "gauge",
                    "Number of stored objects at the time of last check split by kind.",
                    (("resource", name),),
                    count,
                )
            )
        return out

    return figures


class SurvivorFreezer:
    """While entered: every full (generation 2) collection's survivors move to the permanent
    generation (``gc.freeze``), so later full collections scan only what was allocated since.

    Why: CPython's full collection scans every tracked object, and a server's heap is mostly
    the objects it caches, which live long and form no cycles (JSON trees; reference counting
    frees them when they are replaced). Measured on the dev VM, 3,000 Pod creates through
    ``kstore serve`` (16 clients): full collections took 4.6 s in all with pauses up to
    0.9 s; with survivors frozen, 0.47 s in all and at most 60 ms, and the create rate rose
    from 198 to 294/s. Raising the full collection's threshold instead made pauses longer.

    The cost: a cycle among frozen objects that dies later is not found until the frozen
    objects are thawed, so every ``reclaim_interval_seconds`` the next full collection runs
    over everything (one long pause) and its survivors are frozen again. Young objects are
    never frozen early: a full collection leaves no younger generation behind. Leaving
    thaws everything, removes the hook and puts the thresholds back; the startup objects are
    frozen on entry.

    Young collections start after ``young_threshold`` new container objects instead of
    CPython's 700. A request builds and drops thousands of dicts and lists (a ~5 KiB Pod's
    decode, defaults, managed fields and validation), so at 700 a young collection ran several
    times per create, each scanning whatever the requests in flight held at that moment, and
    every tenth one the middle generation with the entries the cache had just made. Measured
    through ``kstore serve`` (1,500 Pod creates, 16 clients, 5 runs of each, timed by
    ``gc.callbacks``): at 700, 1,800-1,950 young and 165-175 middle collections took
    0.20-0.39 s in all, 130-260 us per create (5-9% of its server CPU); at 20,000, 3-5
    collections took 10-26 ms. Only cyclic garbage waits longer (reference counting frees the
    rest as before).
    """

    def __init__(
        self,
        reclaim_interval_seconds: float = 600.0,
        clock: Callable[[], float] = time.monotonic,
        young_threshold: int = 20_000,
    ) -> None:
        self.reclaim_interval_seconds = reclaim_interval_seconds
        self._clock = clock
        self._young_threshold = young_threshold
        self._thresholds = gc.get_threshold()
        self._last_reclaim = clock()
        self.freezes = 0
        self.reclaims = 0

    def __enter__(self) -> SurvivorFreezer:
        gc.collect()
        gc.freeze()
        self._thresholds = gc.get_threshold()
        gc.set_threshold(self._young_threshold, *self._thresholds[1:])
        self._last_reclaim = self._clock()
        gc.callbacks.append(self._after_collection)
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(ValueError):
            gc.callbacks.remove(self._after_collection)
        gc.set_threshold(*self._thresholds)
        gc.unfreeze()

    def _after_collection(self, phase: str, info: dict[str, int]) -> None:
        if phase != "stop" or info.get("generation") != 2:
            return
        now = self._clock()
        if now - self._last_reclaim >= self.reclaim_interval_seconds:
            # The next full collection sees everything again, then freezes what survives.
            self._last_reclaim = now
            self.reclaims += 1
            gc.unfreeze()
            return
        self.freezes += 1
        gc.freeze()


class _Server(uvicorn.Server):
    """uvicorn's server, ending watches on the first signal and exiting 0 after a clean stop
    (uvicorn itself re-raises the signal once it has shut down)."""

    def __init__(self, config: uvicorn.Config, state: ServerState, announce: Callable[[], None]):
        super().__init__(config)
        self._state = state
        self._announce = announce

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if not self.should_exit:
            _log.info("received signal %d: finishing requests in flight, ending watches", sig)
            # Not in the signal handler itself: it may have interrupted code holding the locks
            # that ending the watches takes.
            threading.Thread(target=self._state.begin_shutdown, daemon=True).start()
        super().handle_exit(sig, frame)

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        signals = (signal.SIGINT, signal.SIGTERM)
        original = {sig: signal.signal(sig, self.handle_exit) for sig in signals}
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            self._announce()


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio only turns Nagle off (TCP_NODELAY) on sockets whose
    # proto says TCP, and with Nagle on every response waits ~40 ms for a delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise BadRequest(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def _url(host: str, port: int, scheme: str = "http") -> str:
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
    if ":" in shown:
        shown = f"[{shown}]"
    return f"{scheme}://{shown}:{port}"


def serve(
    config: ServeConfig,
    *,
    out: TextIO = sys.stdout,
    opener: RegistryOpener = open_registry,
) -> int:
    """Run the server until SIGTERM/SIGINT; the exit status."""
    logging.basicConfig(
        level=config.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    advertise = advertise_address_for(config.bind_address, config.advertise_address)
    if config.endpoint_reconciler_type not in ENDPOINT_RECONCILER_TYPES:
        raise BadRequest(
            f"--endpoint-reconciler-type: unknown type {config.endpoint_reconciler_type!r}"
            f" (known: {', '.join(ENDPOINT_RECONCILER_TYPES)})"
        )
    service_ip = first_service_ip(config.service_cluster_ip_range)
    root_ca = read_root_ca(config.root_ca_file, config.tls_cert_file)
    tls: ssl.SSLContext | None = None
    if (config.tls_cert_file is None) != (config.tls_private_key_file is None):
        raise BadRequest("--tls-cert-file and --tls-private-key-file must be given together")
    if config.tls_cert_file is not None and config.tls_private_key_file is not None:
        tls = server_tls_context(config.tls_cert_file, config.tls_private_key_file)
    if config.workers < 1:
        raise BadRequest(f"--workers must be at least 1, got {config.workers}")
    sock = _bind(config.bind_address, config.port if tls is None else config.secure_port)
    url = _url(config.bind_address, sock.getsockname()[1], "http" if tls is None else "https")
    settings = ControllerSettings(
        controllers=config.controllers,
        root_ca=root_ca,
        leader_election=config.leader_election,
        kubernetes_service=partial(
            KubernetesServiceController,
            advertise_address=advertise,
            port=sock.getsockname()[1],
            service_ip=service_ip,
            endpoint_reconciler_type=config.endpoint_reconciler_type,
        ),
    )
    where = (
        f"etcd {','.join(config.etcd_servers)}{config.etcd_prefix}"
        if config.storage_backend == "etcd"
        else f"lmdb {config.data_dir}"
    )
    if config.workers > 1:
        where += f", {config.workers} workers"

    def announce() -> None:
        out.write(f"kstore serving on {url} ({where})\n")
        out.write(f"  kubectl --server {url} get namespaces\n")
        out.flush()

    if config.workers == 1:
        return serve_socket(config, sock, settings=settings, tls=tls, ready=announce, opener=opener)
    from kstore.server.workers import run_workers

    _preload_for_workers(config)
    try:
        return run_workers(
            config.workers,
            lambda ready: serve_socket(
                config, sock, settings=settings, tls=tls, ready=ready, opener=opener
            ),
            ready=announce,
            drain_timeout_seconds=config.shutdown_timeout_seconds + 15.0,
        )
    finally:
        sock.close()


def _preload_for_workers(config: ServeConfig) -> None:
    """Before forking the workers: import what each would import when it opens the store,
    build the built-in kinds' definitions (their schemas, cached), and move every object so
    far out of the collector's reach (``gc.freeze``). The workers then share those pages with
    the parent: a collection writes to the header of every object it scans, which would give
    each worker its own copy of every page it touched. Nothing here opens a file or starts a
    thread, so forking afterwards stays safe."""
    from kstore.api.kinds import builtin_scheme_builder

    if config.storage_backend == "etcd":
        import kstore.storage.etcd
    else:
        import kstore.storage.lmdb
    import kstore.registry.registry  # noqa: F401

    builtin_scheme_builder()
    gc.collect()
    gc.freeze()


def serve_socket(
    config: ServeConfig,
    sock: socket.socket,
    *,
    settings: ControllerSettings,
    tls: ssl.SSLContext | None,
    ready: Callable[[], None],
    opener: RegistryOpener = open_registry,
) -> int:
    """Serve on the listening ``sock`` until SIGTERM/SIGINT (``ready`` is called once
    serving); the exit status. Closes ``sock``."""
    try:
        registry, backend = opener(config)
    except BaseException:
        sock.close()
        raise
    audit_log: AuditLog | None = None
    controllers: RunningControllers | None = None
    try:
        controllers = start_controllers(
            registry,
            settings=settings,
            conversion_timeout=config.conversion_webhook_timeout_seconds,
        )
        if config.audit_log_path:
            audit_log = AuditLog(config.audit_log_path)
        app = build_app(
            registry,
            figure_sources=(storage_object_figures(registry),),
            filters=_with_signing_key(config),
            audit_log=audit_log,
        )
        state = server_state(app)
        uv_config = uvicorn.Config(
            app,
            lifespan="off",
            http=KStoreHttpProtocol,
            log_level=config.log_level.lower(),
            access_log=False,
            timeout_graceful_shutdown=int(config.shutdown_timeout_seconds),
            server_header=False,
            ssl_context_factory=None if tls is None else (lambda _config, _default: tls),
        )
        with SurvivorFreezer():
            _Server(uv_config, state, ready).run(sockets=[sock])
    finally:
        sock.close()
        if controllers is not None:
            controllers.stop()
        registry.close()
        backend.close()
        if audit_log is not None:
            audit_log.close()
        _log.info("store closed")
    return 0
