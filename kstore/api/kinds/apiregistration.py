"""apiregistration.k8s.io/v1 APIService: which server answers for one group version.

kube-apiserver's aggregator serves these (``k8s.io/kube-aggregator``); an install bundle brings
one for every aggregated API it adds (metrics-server's ``v1beta1.metrics.k8s.io``). kstore
stores and validates them as the aggregator does and keeps their ``Available`` condition
(:mod:`kstore.controllers.apiservice_controller`), but proxies nothing: it serves no aggregated
API, so the groups they name are not in its discovery (see that module).

Cluster-scoped, ``status`` subresource, no short names, category ``api-extensions``; stored
under ``/apiregistration.k8s.io/apiservices`` as the aggregator's own storage keeps them.

Defaulting (``apiregistration/v1/defaults.go``): ``spec.service.port`` 443 when a service is
named without one.

Validation (``apiregistration/validation``), with its paths and messages:

- the name is a path segment and must be ``<spec.version>.<spec.group>``
  (``` must be `spec.version+"."+spec.group`: "v1.example.com" ```); the generic ObjectMeta
  rules, without Kubernetes' finalizer-name rule (the aggregator uses apimachinery's);
- ``spec.group`` a DNS-1123 subdomain, empty only for version ``v1`` (the legacy group);
  ``spec.version`` a DNS-1035 label;
- ``spec.groupPriorityMinimum`` in 1..20000, ``spec.versionPriority`` in 1..1000 (the messages
  say "less than", the bounds are inclusive);
- a local APIService (no ``spec.service``) has no ``caBundle`` (reported as ``"<n> bytes"``) and
  no ``insecureSkipTLSVerify``; a service-backed one names its service's namespace and name,
  and does not combine ``insecureSkipTLSVerify`` with a ``caBundle``;
- on update ObjectMeta's update rules, then the object again; on ``status`` writes ObjectMeta's
  update rules and each condition's status ``True``, ``False`` or ``Unknown``.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.kinds._lists import list_definition
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo
from kstore.api.validation._access import get_map, get_str, maps
from kstore.api.validation.field import Path, invalid, not_supported, required
from kstore.api.validation.names import (
    NameValidator,
    is_dns1035_label,
    is_dns1123_subdomain,
    is_path_segment_name,
)
from kstore.api.validation.objectmeta import validate_object_meta, validate_object_meta_update
from kstore.errors import Cause

__all__ = [
    "API_SERVICE",
    "AVAILABLE",
    "DEFINITIONS",
    "GROUP",
    "LOCAL_AVAILABLE",
    "default_api_service",
    "validate_api_service",
    "validate_api_service_status_update",
    "validate_api_service_update",
]

GROUP: Final = "apiregistration.k8s.io"
#: The one condition type the aggregator keeps.
AVAILABLE: Final = "Available"
#: ``NewLocalAvailableAPIServiceCondition`` without its time.
LOCAL_AVAILABLE: Final = {
    "type": AVAILABLE,
    "status": "True",
    "reason": "Local",
    "message": "Local APIServices are always available",
}
_DEFAULT_PORT: Final = 443
_MAX_GROUP_PRIORITY: Final = 20000
_MAX_VERSION_PRIORITY: Final = 1000
_CONDITION_STATUSES: Final = ("True", "False", "Unknown")

_SPEC: Final = Path("spec")


def default_api_service(obj: Object) -> None:
    """``SetDefaults_ServiceReference``, in place."""
    spec = obj.get("spec")
    service = spec.get("service") if isinstance(spec, dict) else None
    if isinstance(service, dict) and service.get("port") is None:
        service["port"] = _DEFAULT_PORT


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _ca_bundle_len(spec: Mapping[str, Any]) -> int:
    """The decoded length of ``caBundle`` (base64 in JSON), as Go's ``len([]byte)``."""
    value = spec.get("caBundle")
    if isinstance(value, bytes):
        return len(value)
    if not isinstance(value, str):
        return 0
    try:
        return len(base64.b64decode(value, validate=True))
    except (binascii.Error, ValueError):
        return len(value)


def _name_rule(obj: Mapping[str, Any]) -> NameValidator:
    spec = get_map(obj, "spec")
    wanted = f"{get_str(spec, 'version')}.{get_str(spec, 'group')}"

    def rule(name: str, prefix: bool) -> list[str]:
        # The aggregator's rule ignores whether it checks a generateName.
        failures = is_path_segment_name(name)
        if failures:
            return failures
        if name != wanted:
            return [f'must be `spec.version+"."+spec.group`: "{wanted}"']
        return []

    return rule


def validate_api_service(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidateAPIService``."""
    causes = validate_object_meta(obj, False, _name_rule(obj), kube_finalizers=False)
    spec = get_map(obj, "spec")
    group, version = get_str(spec, "group"), get_str(spec, "version")
    if not group and version != "v1":
        causes.append(
            required(
                _SPEC.child("group"), "only v1 may have an empty group and it better be legacy kube"
            )
        )
    if group:
        causes.extend(invalid(_SPEC.child("group"), group, m) for m in is_dns1123_subdomain(group))
    causes.extend(invalid(_SPEC.child("version"), version, m) for m in is_dns1035_label(version))
    group_priority = _int(spec.get("groupPriorityMinimum"))
    if not 0 < group_priority <= _MAX_GROUP_PRIORITY:
        causes.append(
            invalid(
                _SPEC.child("groupPriorityMinimum"),
                group_priority,
                "must be positive and less than 20000",
            )
        )
    version_priority = _int(spec.get("versionPriority"))
    if not 0 < version_priority <= _MAX_VERSION_PRIORITY:
        causes.append(
            invalid(
                _SPEC.child("versionPriority"),
                version_priority,
                "must be positive and less than 1000",
            )
        )
    skip_verify = spec.get("insecureSkipTLSVerify") is True
    bundle = _ca_bundle_len(spec)
    service = spec.get("service")
    if not isinstance(service, Mapping):
        if bundle:
            causes.append(
                invalid(
                    _SPEC.child("caBundle"),
                    f"{bundle} bytes",
                    "local APIServices may not have a caBundle",
                )
            )
        if skip_verify:
            causes.append(
                invalid(
                    _SPEC.child("insecureSkipTLSVerify"),
                    True,
                    "local APIServices may not have insecureSkipTLSVerify",
                )
            )
        return causes
    where = _SPEC.child("service")
    if not get_str(service, "namespace"):
        causes.append(required(where.child("namespace")))
    if not get_str(service, "name"):
        causes.append(required(where.child("name")))
    if skip_verify and bundle:
        causes.append(
            invalid(
                _SPEC.child("insecureSkipTLSVerify"), True, "may not be true if caBundle is present"
            )
        )
    return causes


def validate_api_service_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """``ValidateAPIServiceUpdate``: metadata's update rules, then the new object."""
    causes = validate_object_meta_update(new, old, kube_finalizers=False)
    causes.extend(validate_api_service(new))
    return causes


def validate_api_service_status_update(
    new: Mapping[str, Any], old: Mapping[str, Any]
) -> list[Cause]:
    """``ValidateAPIServiceStatusUpdate``: metadata's update rules, the conditions' statuses."""
    causes = validate_object_meta_update(new, old, kube_finalizers=False)
    where = Path("status").child("conditions")
    for i, condition in enumerate(maps(get_map(new, "status").get("conditions") or [])):
        status = get_str(condition, "status")
        if status not in _CONDITION_STATUSES:
            causes.append(
                not_supported(where.index(i).child("status"), status, _CONDITION_STATUSES)
            )
    return causes


API_SERVICE: Final = KindDefinition(
    group=GROUP,
    kind="APIService",
    versions=(KindVersion(version="v1", default=default_api_service),),
    storage_version="v1",
    resource=ResourceInfo(
        plural="apiservices",
        singular="apiservice",
        namespaced=False,
        categories=("api-extensions",),
        subresources=("status",),
    ),
    validate=validate_api_service,
    validate_update=validate_api_service_update,
    list_kind="APIServiceList",
)

DEFINITIONS: tuple[KindDefinition, ...] = (API_SERVICE, list_definition(API_SERVICE))
