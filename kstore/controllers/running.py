"""Starting and stopping the controllers a registry needs, as ``kstore serve`` and
``kstore.open`` do."""

from __future__ import annotations

from functools import partial

from kstore.api.custom_kinds import CRD_GROUP, CRD_RESOURCE, CustomConversions, kind_definition_for
from kstore.api.gvk import GroupVersion
from kstore.api.kinds.apiregistration import GROUP as APIREGISTRATION_GROUP
from kstore.controllers.apiservice_controller import APIServiceAvailabilityController
from kstore.controllers.crd_controller import CustomResourceDefinitionController
from kstore.errors import NotFound
from kstore.registry.interface import Registry

__all__ = ["RunningControllers", "start_controllers"]


class RunningControllers:
    """The controllers started for one registry; :meth:`stop` before closing the registry."""

    def __init__(
        self,
        crds: CustomResourceDefinitionController | None,
        api_services: APIServiceAvailabilityController | None = None,
    ) -> None:
        self._crds = crds
        self._api_services = api_services

    def stop(self) -> None:
        if self._api_services is not None:
            self._api_services.stop()
            self._api_services = None
        if self._crds is not None:
            self._crds.stop()
            self._crds = None


def _serves(registry: Registry, group: str, resource: str) -> bool:
    try:
        registry.scheme.resource(GroupVersion(group, "v1"), resource)
    except NotFound:
        return False
    return True


def start_controllers(
    registry: Registry, *, conversions: CustomConversions | None = None
) -> RunningControllers:
    """Start what the registry's Scheme asks for: the CustomResourceDefinition controller when
    CRDs are served (it serves the stored CRDs' kinds before this returns, converting the
    versions named in ``conversions`` with the functions given there), and the APIService
    availability controller when APIServices are."""
    crds = None
    if _serves(registry, CRD_GROUP, CRD_RESOURCE):
        crds = CustomResourceDefinitionController(
            registry, definition_for=partial(kind_definition_for, conversions=conversions)
        )
        crds.start()
    api_services = None
    if _serves(registry, APIREGISTRATION_GROUP, "apiservices"):
        api_services = APIServiceAvailabilityController(registry)
        api_services.start()
    return RunningControllers(crds, api_services)
