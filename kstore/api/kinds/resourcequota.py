"""core/v1 ResourceQuota (``quota``, ``status`` subresource): aggregate limits per namespace.

Only the object and its validation are here: charging usage at admission and keeping
``status.used`` are the ResourceQuota admission plugin's and the quota controller's work. One
external version, ``v1``, shaped as the hub; Kubernetes registers no defaults for it.

Validation runs on the hub, with Kubernetes' paths and messages (``pkg/apis/core/validation``):

- :func:`validate_resource_quota` is ``ValidateResourceQuota``: ObjectMeta (a DNS-subdomain
  name), the spec (``hard``: quota resource names, quantities not negative and whole numbers
  for object counts and extended resources; ``scopes``: standard, valid for every standard
  resource in ``hard``, not both halves of BestEffort/NotBestEffort or
  Terminating/NotTerminating; ``scopeSelector``: the same per expression, ``Exists`` for the
  pod-shape scopes, values for ``In``/``NotIn`` and none for ``Exists``/``DoesNotExist``), and
  the status (``hard`` and ``used`` as ``hard``);
- :func:`validate_resource_quota_update` is ``ValidateResourceQuotaUpdate``: ObjectMeta update
  rules, the spec, and ``spec.scopes`` unchanged (as a set);
- :func:`validate_resource_quota_status_update` is ``ValidateResourceQuotaStatusUpdate``:
  ObjectMeta update rules, a ``resourceVersion``, and the status maps.

Kubernetes walks ``hard`` in random order; kstore reports it in the order written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kstore.api.kinds._lists import list_definition
from kstore.api.kinds._resource_names import (
    is_standard_quota_resource_name,
    validate_quota_resource_name,
    validate_resource_quantity_value,
)
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo
from kstore.api.validation.field import GoStruct, JSONValue, Path, invalid, required
from kstore.api.validation.names import name_is_dns_subdomain
from kstore.api.validation.objectmeta import validate_object_meta, validate_object_meta_update
from kstore.errors import Cause

__all__ = [
    "DEFINITIONS",
    "RESOURCE_QUOTA",
    "validate_resource_quota",
    "validate_resource_quota_status_update",
    "validate_resource_quota_update",
]

_SPEC: Final = Path("spec")
_STATUS: Final = Path("status")
_SCOPES: Final = frozenset(
    (
        "Terminating",
        "NotTerminating",
        "BestEffort",
        "NotBestEffort",
        "PriorityClass",
        "CrossNamespacePodAffinity",
    )
)
_POD_SHAPE_SCOPES: Final = frozenset(
    ("Terminating", "NotTerminating", "BestEffort", "NotBestEffort", "CrossNamespacePodAffinity")
)
_POD_COUNT: Final = frozenset(("pods",))
_POD_COMPUTE: Final = frozenset(
    ("cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu", "requests.memory")
)
_CONFLICTS: Final = (
    frozenset(("BestEffort", "NotBestEffort")),
    frozenset(("Terminating", "NotTerminating")),
)
_EXISTS_ONLY: Final = (
    "must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, "
    "ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, "
    "ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"
)


def _map(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else {}


def _strings(obj: Mapping[str, Any], key: str) -> list[str] | None:
    value = obj.get(key)
    if not isinstance(value, list):
        return None
    return [v if isinstance(v, str) else "" for v in value]


def _str(obj: Mapping[str, Any], key: str) -> str:
    value = obj.get(key)
    return value if isinstance(value, str) else ""


def _scope_fits(scope: str, resource: str) -> bool:
    """``IsResourceQuotaScopeValidForResource``."""
    if scope == "BestEffort":
        return resource in _POD_COUNT
    if scope in _SCOPES:
        return resource in _POD_COUNT or resource in _POD_COMPUTE
    return True


def _resources(resources: Mapping[str, Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    for name, value in resources.items():
        at = path.key(name)
        causes.extend(validate_quota_resource_name(name, at))
        causes.extend(validate_resource_quantity_value(name, value, at))
    return causes


def _scope_list(spec: Mapping[str, Any]) -> JSONValue:
    return JSONValue(_strings(spec, "scopes"))


def _validate_scopes(spec: Mapping[str, Any]) -> list[Cause]:
    """``validateResourceQuotaScopes``."""
    scopes = _strings(spec, "scopes") or []
    if not scopes:
        return []
    path = _SPEC.child("scopes")
    hard = sorted(_map(spec, "hard"))
    causes: list[Cause] = []
    for scope in scopes:
        if scope not in _SCOPES:
            causes.append(invalid(path, _scope_list(spec), "unsupported scope"))
        for resource in hard:
            if is_standard_quota_resource_name(resource) and not _scope_fits(scope, resource):
                causes.append(
                    invalid(path, _scope_list(spec), "unsupported scope applied to resource")
                )
    causes.extend(
        invalid(path, _scope_list(spec), "conflicting scopes")
        for pair in _CONFLICTS
        if pair <= set(scopes)
    )
    return causes


def _selector_value(selector: Mapping[str, Any]) -> GoStruct:
    """The ``*ScopeSelector`` as ``json.Marshal`` prints it."""
    out = GoStruct()
    expressions = selector.get("matchExpressions")
    if isinstance(expressions, list) and expressions:
        rendered = []
        for expression in expressions:
            item = expression if isinstance(expression, Mapping) else {}
            entry = GoStruct(scopeName=_str(item, "scopeName"), operator=_str(item, "operator"))
            values = _strings(item, "values")
            if values:
                entry["values"] = values
            rendered.append(entry)
        out["matchExpressions"] = rendered
    return out


def _validate_scope_selector(spec: Mapping[str, Any]) -> list[Cause]:
    """``validateScopeSelector`` / ``validateScopedResourceSelectorRequirement``."""
    selector = spec.get("scopeSelector")
    if not isinstance(selector, Mapping):
        return []
    path = _SPEC.child("scopeSelector", "matchExpressions")
    hard = sorted(_map(spec, "hard"))
    causes: list[Cause] = []
    seen: set[str] = set()
    expressions = selector.get("matchExpressions")
    for expression in expressions if isinstance(expressions, list) else []:
        item = expression if isinstance(expression, Mapping) else {}
        scope, operator = _str(item, "scopeName"), _str(item, "operator")
        values = _strings(item, "values") or []
        if scope not in _SCOPES:
            causes.append(invalid(path.child("scopeName"), scope, "unsupported scope"))
        for resource in hard:
            if is_standard_quota_resource_name(resource) and not _scope_fits(scope, resource):
                causes.append(
                    invalid(
                        path,
                        JSONValue(_selector_value(selector)),
                        "unsupported scope applied to resource",
                    )
                )
        if scope in _POD_SHAPE_SCOPES and operator != "Exists":
            causes.append(invalid(path.child("operator"), operator, _EXISTS_ONLY))
        if operator in ("In", "NotIn"):
            if not values:
                causes.append(
                    required(
                        path.child("values"),
                        "must be at least one value when `operator` is 'In' or 'NotIn' for "
                        "scope selector",
                    )
                )
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                causes.append(
                    invalid(
                        path.child("values"),
                        JSONValue(values),
                        "must be no value when `operator` is 'Exist' or 'DoesNotExist' for "
                        "scope selector",
                    )
                )
        else:
            causes.append(
                invalid(path.child("operator"), operator, "not a valid selector operator")
            )
        seen.add(scope)
    causes.extend(
        invalid(path, _scope_list(spec), "conflicting scopes")
        for pair in _CONFLICTS
        if pair <= seen
    )
    return causes


def _validate_spec(spec: Mapping[str, Any]) -> list[Cause]:
    """``ValidateResourceQuotaSpec``."""
    causes = _resources(_map(spec, "hard"), _SPEC.child("hard"))
    causes.extend(_validate_scopes(spec))
    causes.extend(_validate_scope_selector(spec))
    return causes


def _validate_status(status: Mapping[str, Any]) -> list[Cause]:
    """``ValidateResourceQuotaStatus``."""
    causes = _resources(_map(status, "hard"), _STATUS.child("hard"))
    causes.extend(_resources(_map(status, "used"), _STATUS.child("used")))
    return causes


def validate_resource_quota(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidateResourceQuota``."""
    causes = validate_object_meta(obj, True, name_is_dns_subdomain)
    causes.extend(_validate_spec(_map(obj, "spec")))
    causes.extend(_validate_status(_map(obj, "status")))
    return causes


def validate_resource_quota_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """``ValidateResourceQuotaUpdate``."""
    causes = validate_object_meta_update(new, old)
    new_spec = _map(new, "spec")
    causes.extend(_validate_spec(new_spec))
    new_scopes = _strings(new_spec, "scopes") or []
    old_scopes = _strings(_map(old, "spec"), "scopes") or []
    if set(new_scopes) != set(old_scopes):
        causes.append(invalid(_SPEC.child("scopes"), _scope_list(new_spec), "field is immutable"))
    return causes


def validate_resource_quota_status_update(
    new: Mapping[str, Any], old: Mapping[str, Any]
) -> list[Cause]:
    """``ValidateResourceQuotaStatusUpdate``."""
    causes = validate_object_meta_update(new, old)
    if not _str(_map(new, "metadata"), "resourceVersion"):
        causes.append(required(Path("resourceVersion")))
    causes.extend(_validate_status(_map(new, "status")))
    return causes


RESOURCE_QUOTA = KindDefinition(
    group="",
    kind="ResourceQuota",
    versions=(KindVersion(version="v1"),),
    storage_version="v1",
    validate=validate_resource_quota,
    validate_update=validate_resource_quota_update,
    resource=ResourceInfo(
        plural="resourcequotas",
        singular="resourcequota",
        namespaced=True,
        short_names=("quota",),
        subresources=("status",),
    ),
    list_kind="ResourceQuotaList",
)

DEFINITIONS: tuple[KindDefinition, ...] = (RESOURCE_QUOTA, list_definition(RESOURCE_QUOTA))
