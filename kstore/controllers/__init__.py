"""The API-only control loops of a cluster, as clients of the registry.

Each controller talks to the registry through the same verbs an embedder uses (list, watch,
update), never through ``kstore.server``; ``kstore serve`` and ``kstore.open`` start them.
"""

from kstore.controllers.apiservice_controller import APIServiceAvailabilityController
from kstore.controllers.crd_controller import CustomResourceDefinitionController
from kstore.controllers.running import (
    CONTROLLERS,
    ControllerSettings,
    RunningControllers,
    enabled_controllers,
    start_controllers,
)

__all__ = [
    "CONTROLLERS",
    "APIServiceAvailabilityController",
    "ControllerSettings",
    "CustomResourceDefinitionController",
    "RunningControllers",
    "enabled_controllers",
    "start_controllers",
]
