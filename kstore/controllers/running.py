"""Starting and stopping the controllers a registry needs, as ``kstore serve`` and
``kstore.open`` do."""

from __future__ import annotations

from functools import partial

from kstore.api.custom_kinds import CRD_GROUP, CRD_RESOURCE, CustomConversions, kind_definition_for
from kstore.api.gvk import GroupVersion
from kstore.controllers.crd_controller import CustomResourceDefinitionController
from kstore.errors import NotFound
from kstore.registry.interface import Registry

__all__ = ["RunningControllers", "start_controllers"]


class RunningControllers:
    """The controllers started for one registry; :meth:`stop` before closing the registry."""

    def __init__(self, crds: CustomResourceDefinitionController | None) -> None:
        self._crds = crds

    def stop(self) -> None:
        if self._crds is not None:
            self._crds.stop()
            self._crds = None


def start_controllers(
    registry: Registry, *, conversions: CustomConversions | None = None
) -> RunningControllers:
    """Start what the registry's Scheme asks for: the CustomResourceDefinition controller when
    CRDs are served (it serves the stored CRDs' kinds before this returns, converting the
    versions named in ``conversions`` with the functions given there)."""
    try:
        registry.scheme.resource(GroupVersion(CRD_GROUP, "v1"), CRD_RESOURCE)
    except NotFound:
        return RunningControllers(None)
    crds = CustomResourceDefinitionController(
        registry, definition_for=partial(kind_definition_for, conversions=conversions)
    )
    crds.start()
    return RunningControllers(crds)
