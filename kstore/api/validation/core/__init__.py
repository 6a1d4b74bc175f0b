"""Validators of the core/v1 kinds: Namespace, ConfigMap, Secret, Event, Pod, Service,
ServiceAccount.

Each ``validate_<kind>(obj)`` checks a create and each ``validate_<kind>_update(new, old)`` an
update, on the hub form (the v1 shape), and returns one cause per problem in Kubernetes' order.
Pod and Service validators expect defaulted objects, as Kubernetes validates after defaulting.
"""

from __future__ import annotations

from kstore.api.validation.core.config import (
    MAX_SECRET_SIZE,
    secret_data,
    validate_config_map,
    validate_config_map_update,
    validate_secret,
    validate_secret_update,
)
from kstore.api.validation.core.container import validate_container_ports
from kstore.api.validation.core.event import validate_event, validate_event_update
from kstore.api.validation.core.namespace import validate_namespace, validate_namespace_update
from kstore.api.validation.core.pod import validate_pod, validate_pod_update
from kstore.api.validation.core.podspec import (
    validate_pod_spec,
    validate_pod_template_spec,
    validate_tolerations,
)
from kstore.api.validation.core.service import (
    validate_port_num_or_name,
    validate_service,
    validate_service_update,
)
from kstore.api.validation.core.service_account import (
    validate_service_account,
    validate_service_account_update,
)

__all__ = [
    "MAX_SECRET_SIZE",
    "secret_data",
    "validate_config_map",
    "validate_config_map_update",
    "validate_container_ports",
    "validate_event",
    "validate_event_update",
    "validate_namespace",
    "validate_namespace_update",
    "validate_pod",
    "validate_pod_spec",
    "validate_pod_template_spec",
    "validate_pod_update",
    "validate_port_num_or_name",
    "validate_secret",
    "validate_secret_update",
    "validate_service",
    "validate_service_account",
    "validate_service_account_update",
    "validate_service_update",
    "validate_tolerations",
]
