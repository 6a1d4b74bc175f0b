"""coordination.k8s.io/v1 Lease: the hub has v1's shape; no defaults (Kubernetes registers none).

Validation is ``pkg/apis/coordination/validation`` ``ValidateLease``/``ValidateLeaseUpdate``:
metadata (namespaced, DNS-1123 subdomain name), ``leaseDurationSeconds`` > 0,
``leaseTransitions`` >= 0, a ``strategy`` that is either a Kubernetes-defined name
(``OldestEmulationVersion``) or a qualified ``domain/name``, and ``preferredHolder`` only with a
strategy. ``holderIdentity``, ``acquireTime`` and ``renewTime`` have no rules. Kubernetes reports
strategy problems at ``spec.strategy.strategy`` (the path gains ``strategy`` twice); so does
kstore.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kstore.api.kinds._lists import list_definition
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo
from kstore.api.validation.field import JSONValue, Path, forbidden, invalid, not_supported
from kstore.api.validation.names import is_qualified_name, name_is_dns_subdomain
from kstore.api.validation.objectmeta import validate_object_meta, validate_object_meta_update
from kstore.errors import Cause

__all__ = ["DEFINITIONS", "LEASE", "validate_lease", "validate_lease_update"]

GROUP = "coordination.k8s.io"

#: Kubernetes' ``validLeaseStrategies``: the strategy names without a domain it defines.
LEASE_STRATEGIES: Final = ("OldestEmulationVersion",)

_SPEC: Final = Path("spec")


def _opt_int(obj: Mapping[str, Any], key: str) -> int | None:
    value = obj.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _opt_str(obj: Mapping[str, Any], key: str) -> str | None:
    value = obj.get(key)
    return value if isinstance(value, str) else None


def validate_coordinated_lease_strategy(strategy: str, path: Path) -> list[Cause]:
    """``ValidateCoordinatedLeaseStrategy``; ``path`` is the strategy field's own path."""
    where = path.child("strategy")
    if "/" not in strategy:
        if strategy in LEASE_STRATEGIES:
            return []
        return [not_supported(where, JSONValue(strategy), LEASE_STRATEGIES)]
    return [invalid(where, JSONValue(strategy), msg) for msg in is_qualified_name(strategy)]


def _validate_spec(spec: Mapping[str, Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    duration = _opt_int(spec, "leaseDurationSeconds")
    if duration is not None and duration <= 0:
        causes.append(
            invalid(path.child("leaseDurationSeconds"), duration, "must be greater than 0")
        )
    transitions = _opt_int(spec, "leaseTransitions")
    if transitions is not None and transitions < 0:
        causes.append(
            invalid(
                path.child("leaseTransitions"), transitions, "must be greater than or equal to 0"
            )
        )
    strategy = _opt_str(spec, "strategy")
    if strategy is not None:
        causes.extend(validate_coordinated_lease_strategy(strategy, path.child("strategy")))
    if _opt_str(spec, "preferredHolder") and not strategy:
        causes.append(
            forbidden(
                path.child("preferredHolder"), "may only be specified if `strategy` is defined"
            )
        )
    return causes


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def validate_lease(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidateLease``: a Lease on create."""
    causes = validate_object_meta(obj, True, name_is_dns_subdomain)
    causes.extend(_validate_spec(_spec(obj), _SPEC))
    return causes


def validate_lease_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """``ValidateLeaseUpdate``: metadata rules of an update, then the new spec."""
    causes = validate_object_meta_update(new, old)
    causes.extend(_validate_spec(_spec(new), _SPEC))
    return causes


LEASE = KindDefinition(
    group=GROUP,
    kind="Lease",
    versions=(KindVersion(version="v1"),),
    storage_version="v1",
    validate=validate_lease,
    validate_update=validate_lease_update,
    resource=ResourceInfo(plural="leases", singular="lease", namespaced=True),
    list_kind="LeaseList",
)

DEFINITIONS: tuple[KindDefinition, ...] = (LEASE, list_definition(LEASE))
