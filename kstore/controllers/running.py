"""Starting and stopping the controllers a registry needs, as ``kstore serve`` and
``kstore.open`` do.

Two kinds of controllers run:

* the CustomResourceDefinition controller runs on every server: it builds the serving state
  (the Scheme) of the server it runs in;
* the API-only controllers of kube-controller-manager (:data:`CONTROLLERS`) run only on the
  leader: every server takes part in the election on the Lease
  ``kube-system/kube-controller-manager`` (:mod:`kstore.controllers.leader`), so several
  servers on one etcd do the work once.

Which API-only controllers run is said as kube-controller-manager's ``--controllers`` says it
(:func:`enabled_controllers`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from functools import partial
from typing import Final

from kstore.api.custom_kinds import CRD_GROUP, CRD_RESOURCE, CustomConversions
from kstore.api.gvk import GroupVersion
from kstore.api.kinds.apiregistration import GROUP as APIREGISTRATION_GROUP
from kstore.controllers.apiservice_controller import APIServiceAvailabilityController
from kstore.controllers.base import Controller, ControllerTimings
from kstore.controllers.clusterrole_aggregation import ClusterRoleAggregationController
from kstore.controllers.crd_controller import CustomResourceDefinitionController
from kstore.controllers.garbage_collector import GarbageCollector
from kstore.controllers.kubernetes_service import KubernetesServiceController
from kstore.controllers.leader import LeaderElection, LeaderElectionConfig
from kstore.controllers.resource_quota import ResourceQuotaController
from kstore.controllers.root_ca import RootCAPublisher
from kstore.controllers.serviceaccounts import ServiceAccountsController
from kstore.controllers.ttl_after_finished import TTLAfterFinishedController
from kstore.controllers.volume_protection import PVCProtectionController, PVProtectionController
from kstore.errors import BadRequest, NotFound
from kstore.registry.conversion_webhook import (
    CONVERSION_TIMEOUT,
    JsonPoster,
    crd_kind_definitions,
)
from kstore.registry.interface import Registry
from kstore.registry.registry import StoreRegistry

__all__ = [
    "CONTROLLERS",
    "ControllerSettings",
    "RunningControllers",
    "enabled_controllers",
    "start_controllers",
]

_log = logging.getLogger("kstore.controllers")

#: The API-only controllers kstore runs, by kube-controller-manager's names; all are on by
#: default.
CONTROLLERS: Final = (
    "clusterrole-aggregation",
    "garbagecollector",
    "pv-protection",
    "pvc-protection",
    "resourcequota",
    "root-ca-cert-publisher",
    "serviceaccount",
    "ttl-after-finished",
)


def enabled_controllers(spec: Sequence[str] | str) -> frozenset[str]:
    """The controllers ``spec`` enables, in kube-controller-manager's ``--controllers`` syntax:
    ``*`` turns on every controller that is on by default, ``name`` turns ``name`` on,
    ``-name`` turns it off (a comma-separated string or a sequence of items). Unknown names are
    refused."""
    items = [i.strip() for i in (spec.split(",") if isinstance(spec, str) else spec)]
    items = [i for i in items if i]
    unknown = sorted({i.removeprefix("-") for i in items} - {"*", *CONTROLLERS})
    if unknown:
        raise BadRequest(
            f"--controllers: unknown controller(s) {', '.join(repr(u) for u in unknown)}"
            f" (known: {', '.join(CONTROLLERS)}; '*' for all, '-name' to turn one off)"
        )
    enabled: set[str] = set(CONTROLLERS) if "*" in items else set()
    enabled |= {i for i in items if i != "*" and not i.startswith("-")}
    enabled -= {i[1:] for i in items if i.startswith("-")}
    return frozenset(enabled)


class ControllerSettings:
    """What the API-only controllers are given: which run, the CA to publish, timings."""

    def __init__(
        self,
        *,
        controllers: Sequence[str] | str = ("*",),
        root_ca: str | None = None,
        leader_election: LeaderElectionConfig | None = None,
        timings: ControllerTimings | None = None,
        kubernetes_service: Callable[[Registry], KubernetesServiceController] | None = None,
    ) -> None:
        self.enabled = enabled_controllers(controllers)
        #: Builds the ``kubernetes`` Service loop of a server that has an address (every
        #: server runs it, as every kube-apiserver does; None: no Service is kept).
        self.kubernetes_service = kubernetes_service
        self.root_ca = root_ca
        self.leader_election = leader_election or LeaderElectionConfig()
        self.timings = timings or ControllerTimings()

    def factories(self) -> list[Callable[[Registry], Controller]]:
        out: list[Callable[[Registry], Controller]] = []
        timings = self.timings
        if "clusterrole-aggregation" in self.enabled:
            out.append(partial(ClusterRoleAggregationController, timings=timings))
        if "garbagecollector" in self.enabled:
            out.append(partial(GarbageCollector, timings=timings))
        if "pvc-protection" in self.enabled:
            out.append(partial(PVCProtectionController, timings=timings))
        if "pv-protection" in self.enabled:
            out.append(partial(PVProtectionController, timings=timings))
        if "resourcequota" in self.enabled:
            out.append(partial(ResourceQuotaController, timings=timings))
        if "serviceaccount" in self.enabled:
            out.append(partial(ServiceAccountsController, timings=timings))
        if "ttl-after-finished" in self.enabled:
            out.append(partial(TTLAfterFinishedController, timings=timings))
        if "root-ca-cert-publisher" in self.enabled:
            if self.root_ca is None:
                _log.info("no root CA: the kube-root-ca.crt ConfigMaps are not published")
            else:
                out.append(partial(RootCAPublisher, root_ca=self.root_ca, timings=timings))
        return out


class _LeaderOnly:
    """The API-only controllers, started when this server becomes the leader and stopped
    when it stops being it."""

    def __init__(self, registry: Registry, settings: ControllerSettings) -> None:
        self._registry = registry
        self._factories = settings.factories()
        self._lock = threading.Lock()
        self.running: list[Controller] = []
        self.election = LeaderElection(
            registry,
            config=settings.leader_election,
            on_started=self._start,
            on_stopped=self._stop,
        )

    def _start(self) -> None:
        with self._lock:
            for factory in self._factories:
                controller = factory(self._registry)
                try:
                    controller.start()
                except NotFound:
                    _log.info("%s controller: its resources are not served", controller.name)
                    controller.stop()
                    continue
                self.running.append(controller)

    def _stop(self) -> None:
        with self._lock:
            for controller in self.running:
                controller.stop()
            self.running = []


class RunningControllers:
    """The controllers started for one registry; :meth:`stop` before closing the registry."""

    def __init__(
        self,
        crds: CustomResourceDefinitionController | None,
        leader_only: _LeaderOnly | None,
        api_services: APIServiceAvailabilityController | None = None,
        kubernetes_service: KubernetesServiceController | None = None,
    ) -> None:
        self._crds = crds
        self._leader_only = leader_only
        self._api_services = api_services
        self._kubernetes_service = kubernetes_service

    @property
    def election(self) -> LeaderElection | None:
        return None if self._leader_only is None else self._leader_only.election

    @property
    def running(self) -> list[Controller]:
        """The API-only controllers running here now (none unless this server leads)."""
        return [] if self._leader_only is None else list(self._leader_only.running)

    def stop(self) -> None:
        if self._kubernetes_service is not None:
            self._kubernetes_service.stop()
            self._kubernetes_service = None
        if self._leader_only is not None:
            self._leader_only.election.stop()
            self._leader_only = None
        if self._api_services is not None:
            self._api_services.stop()
            self._api_services = None
        if self._crds is not None:
            self._crds.stop()
            self._crds = None


def start_controllers(
    registry: Registry,
    *,
    conversions: CustomConversions | None = None,
    settings: ControllerSettings | None = None,
    webhook_client: JsonPoster | None = None,
    conversion_timeout: float = CONVERSION_TIMEOUT,
) -> RunningControllers:
    """Start what the registry's Scheme asks for: the CustomResourceDefinition controller when
    CRDs are served (it serves the stored CRDs' kinds before this returns, converting the
    versions named in ``conversions`` with the functions given there, and those of CRDs with
    a conversion webhook through ``webhook_client`` (the registry's own by default), giving
    each call
    ``conversion_timeout`` seconds), the APIService
    availability controller when APIServices are, and the election that runs the API-only
    controllers ``settings`` enables (all by default) on the leader."""
    settings = settings or ControllerSettings()
    leader_only: _LeaderOnly | None = None
    crds: CustomResourceDefinitionController | None = None
    try:
        registry.scheme.resource(GroupVersion(CRD_GROUP, "v1"), CRD_RESOURCE)
    except NotFound:
        pass
    else:
        if webhook_client is None and isinstance(registry, StoreRegistry):
            webhook_client = registry.webhook_client
        crds = CustomResourceDefinitionController(
            registry,
            definition_for=crd_kind_definitions(webhook_client, conversions, conversion_timeout),
        )
        crds.start()
    api_services = None
    try:
        registry.scheme.resource(GroupVersion(APIREGISTRATION_GROUP, "v1"), "apiservices")
    except NotFound:
        pass
    else:
        api_services = APIServiceAvailabilityController(registry)
        api_services.start()
    kubernetes_service = None
    if settings.kubernetes_service is not None:
        try:
            kubernetes_service = settings.kubernetes_service(registry)
            kubernetes_service.start()
        except NotFound:
            _log.info(
                "Services, Endpoints, EndpointSlices or Leases are not served:"
                " no kubernetes Service"
            )
            if kubernetes_service is not None:
                kubernetes_service.stop()
            kubernetes_service = None
    if settings.enabled:
        try:
            registry.scheme.resource(GroupVersion("coordination.k8s.io", "v1"), "leases")
        except NotFound:
            _log.info("no Leases served: the API-only controllers do not run")
        else:
            leader_only = _LeaderOnly(registry, settings)
            leader_only.election.start()
    return RunningControllers(crds, leader_only, api_services, kubernetes_service)
