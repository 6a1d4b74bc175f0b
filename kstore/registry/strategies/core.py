"""core/v1 strategies other than Pod's: Namespace, Service, Secret, ConfigMap, Event,
ServiceAccount.

As Kubernetes' ``pkg/registry/core/<kind>/strategy.go`` (and the service storage's create and
update hooks):

- **Namespace**: created ``Active`` with the ``kubernetes`` finalizer in ``spec.finalizers``;
  the main resource changes neither ``status`` nor ``spec.finalizers``, ``status`` changes
  only the status (its phase must match ``deletionTimestamp``), ``finalize`` only
  ``spec.finalizers``; an update deletes it only once both finalizer lists are empty.
  Deletion itself (mark Terminating, empty, remove) is :mod:`kstore.registry.namespaces`;
- **Service**: ``status`` is a zero ``{loadBalancer: {}}`` on create; ``clusterIP`` and
  ``clusterIPs`` are kept in sync, and an update that omits them keeps the stored ones;
  create on update is allowed; a type change clears what the new type does not use;
  cluster IPs and node ports come from :mod:`kstore.registry.allocation`;
- **Secret**: ``stringData`` is merged into ``data`` (base64) and dropped, as Kubernetes'
  v1 conversion does;
- **Event**: create on update is allowed; events expire after the registry's event TTL;
- **ConfigMap**: the built-in defaults;
- **ServiceAccount**: each ``secrets`` reference is cut down to its ``name`` on create and
  update; the deprecated ``kubernetes.io/enforce-mountable-secrets`` annotation draws a warning.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.scheme import KindDefinition
from kstore.api.validation.field import Path, invalid
from kstore.api.validation.names import is_qualified_name
from kstore.api.validation.objectmeta import (
    validate_kube_finalizer_name,
    validate_object_meta_update,
)
from kstore.errors import Cause
from kstore.registry.allocation import ServiceAllocator, Transaction, current_transaction
from kstore.registry.interface import RequestContext
from kstore.registry.strategies.base import (
    STATUS,
    BuiltinStrategy,
    copy_value,
    keep,
    read_meta,
)

__all__ = [
    "ENFORCE_MOUNTABLE_SECRETS",
    "FINALIZE",
    "KUBERNETES_FINALIZER",
    "ConfigMapStrategy",
    "EventStrategy",
    "NamespaceStrategy",
    "SecretStrategy",
    "ServiceAccountStrategy",
    "ServiceStrategy",
]

FINALIZE: Final = "finalize"
KUBERNETES_FINALIZER: Final = "kubernetes"
_ACTIVE: Final = "Active"
_TERMINATING: Final = "Terminating"


def _spec(obj: Object) -> dict[str, Any]:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = {}
        obj["spec"] = spec
    return spec


def _map(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else {}


# ---------------------------------------------------------------------------- Namespace


class NamespaceStrategy(BuiltinStrategy):
    def subresources(self) -> tuple[str, ...]:
        return (STATUS, FINALIZE)

    def reset_fields(self, subresource: str) -> frozenset[tuple[str, ...]]:
        if subresource == STATUS:
            return frozenset({("spec",)})
        if subresource == FINALIZE:
            return frozenset({("status",)})
        return frozenset({("status",), ("spec", "finalizers")})

    def prepare_for_create(self, ctx: RequestContext, obj: Object) -> list[str]:
        obj[STATUS] = {"phase": _ACTIVE}
        spec = _spec(obj)
        finalizers = spec.get("finalizers")
        if not isinstance(finalizers, list):
            finalizers = []
        if KUBERNETES_FINALIZER not in finalizers:
            spec["finalizers"] = [*finalizers, KUBERNETES_FINALIZER]
        return []

    def prepare_for_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> None:
        if subresource == STATUS:
            keep(obj, old, "spec")
            return
        keep(obj, old, STATUS)
        if subresource == FINALIZE:
            return
        old_spec = _map(old, "spec")
        spec = _spec(obj)
        if "finalizers" in old_spec:
            spec["finalizers"] = copy_value(old_spec["finalizers"])
        else:
            spec.pop("finalizers", None)

    def validate_kind_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> list[Cause]:
        if subresource == STATUS:
            causes = validate_object_meta_update(obj, old)
            phase = _map(obj, STATUS).get("phase") or ""
            if not read_meta(obj).get("deletionTimestamp"):
                if phase != _ACTIVE:
                    causes.append(
                        invalid(
                            Path(STATUS, "Phase"),
                            phase,
                            "may only be 'Active' if `deletionTimestamp` is empty",
                        )
                    )
            elif phase != _TERMINATING:
                causes.append(
                    invalid(
                        Path(STATUS, "Phase"),
                        phase,
                        "may only be 'Terminating' if `deletionTimestamp` is not empty",
                    )
                )
            return causes
        if subresource == FINALIZE:
            causes = validate_object_meta_update(obj, old)
            finalizers = _map(obj, "spec").get("finalizers")
            path = Path("spec", "finalizers")
            for i, name in enumerate(finalizers if isinstance(finalizers, list) else []):
                text = name if isinstance(name, str) else ""
                causes.extend(invalid(path.index(i), text, m) for m in is_qualified_name(text))
                causes.extend(validate_kube_finalizer_name(text, path.index(i)))
            return causes
        return super().validate_kind_update(ctx, obj, old, subresource)

    def should_delete_during_update(self, obj: Object, old: Object) -> bool:
        if _map(obj, "spec").get("finalizers"):
            return False
        return super().should_delete_during_update(obj, old)


# ---------------------------------------------------------------------------- Service


def _needs_cluster_ip(svc: Mapping[str, Any]) -> bool:
    return _map(svc, "spec").get("type") != "ExternalName"


def _normalize_cluster_ips(new: Object, old: Mapping[str, Any] | None) -> None:
    """Keep ``clusterIP`` and ``clusterIPs`` consistent (Kubernetes' normalizeClusterIPs)."""
    spec = _spec(new)
    ip = spec.get("clusterIP") or ""
    ips = spec.get("clusterIPs") or []
    if old is None:
        if ip and not ips:
            spec["clusterIPs"] = [ip]
        return
    old_spec = _map(old, "spec")
    old_ip = old_spec.get("clusterIP") or ""
    old_ips = old_spec.get("clusterIPs") or []
    if old_ips and not ips and old_ip == ip:
        spec["clusterIPs"] = ips = copy_value(old_ips)
    if old_ip != ip:
        same_ips = ips == old_ips
        if old_ip and not ip:
            if same_ips:
                spec.pop("clusterIPs", None)
        elif same_ips:
            spec["clusterIPs"] = [ip]


def _patch_allocated_values(new: Object, old: Mapping[str, Any]) -> None:
    """An update that omits server-assigned values keeps them (Kubernetes'
    patchAllocatedValues; kstore assigns only what the user once gave)."""
    if not (_needs_cluster_ip(old) and _needs_cluster_ip(new)):
        return
    spec, old_spec = _spec(new), _map(old, "spec")
    if not spec.get("clusterIP") and old_spec.get("clusterIP"):
        spec["clusterIP"] = old_spec["clusterIP"]
    if not spec.get("clusterIPs") and old_spec.get("clusterIPs"):
        spec["clusterIPs"] = copy_value(old_spec["clusterIPs"])


def _patch_node_ports(new: Object, old: Mapping[str, Any]) -> None:
    """The node port half of Kubernetes' patchAllocatedValues: a port without one gets the
    node port its namesake had, unless another port of the new object uses it; a missing
    health check port is kept."""
    node_port_types = ("NodePort", "LoadBalancer")
    spec, old_spec = _spec(new), _map(old, "spec")
    if spec.get("type") in node_port_types and old_spec.get("type") in node_port_types:
        old_ports = [p for p in old_spec.get("ports") or [] if isinstance(p, Mapping)]
        new_ports = [p for p in spec.get("ports") or [] if isinstance(p, dict)]
        used = {p.get("nodePort") for p in old_ports} & {p.get("nodePort") for p in new_ports}
        by_name = {p.get("name") or "": p.get("nodePort") for p in old_ports}
        for port in new_ports:
            if not port.get("nodePort"):
                value = by_name.get(port.get("name") or "")
                if value and value not in used:
                    port["nodePort"] = value
    if (
        _needs_health_check(spec)
        and _needs_health_check(old_spec)
        and not spec.get("healthCheckNodePort")
        and old_spec.get("healthCheckNodePort")
    ):
        spec["healthCheckNodePort"] = old_spec["healthCheckNodePort"]


def _externally_accessible(spec: Mapping[str, Any]) -> bool:
    kind = spec.get("type")
    return kind in ("LoadBalancer", "NodePort") or (
        kind == "ClusterIP" and bool(spec.get("externalIPs"))
    )


def _node_port_numbers(spec: Mapping[str, Any]) -> list[Any]:
    ports = spec.get("ports")
    return (
        [p.get("nodePort") for p in ports if isinstance(p, dict)] if isinstance(ports, list) else []
    )


def _needs_health_check(spec: Mapping[str, Any]) -> bool:
    return spec.get("type") == "LoadBalancer" and spec.get("externalTrafficPolicy") == "Local"


def _drop_type_dependent_fields(new: Object, old: Mapping[str, Any]) -> None:
    """Kubernetes' dropTypeDependentFields: a type change clears what the new type does not use,
    when the user left it as it was."""
    spec, old_spec = _spec(new), _map(old, "spec")
    kind, old_kind = spec.get("type"), old_spec.get("type")
    if old_kind != "ExternalName" and kind == "ExternalName":
        if spec.get("clusterIPs") == old_spec.get("clusterIPs"):
            spec.pop("clusterIP", None)
            spec.pop("clusterIPs", None)
        for key in ("ipFamilies", "ipFamilyPolicy"):
            if spec.get(key) == old_spec.get(key):
                spec.pop(key, None)
    node_port_types = ("NodePort", "LoadBalancer")
    if (
        old_kind in node_port_types
        and kind not in node_port_types
        and _node_port_numbers(spec) == _node_port_numbers(old_spec)
    ):
        for port in spec.get("ports") or []:
            if isinstance(port, dict):
                port.pop("nodePort", None)
    if (
        _needs_health_check(old_spec)
        and not _needs_health_check(spec)
        and spec.get("healthCheckNodePort") == old_spec.get("healthCheckNodePort")
    ):
        spec.pop("healthCheckNodePort", None)
    if old_kind == "LoadBalancer" and kind != "LoadBalancer":
        for key in ("allocateLoadBalancerNodePorts", "loadBalancerClass"):
            if key in spec and spec.get(key) == old_spec.get(key):
                spec.pop(key, None)
    if not _externally_accessible(spec) and spec.get("externalTrafficPolicy") == old_spec.get(
        "externalTrafficPolicy"
    ):
        spec.pop("externalTrafficPolicy", None)


class ServiceStrategy(BuiltinStrategy):
    """``allocator``, when the registry sets one, gives Services their cluster IPs and node
    ports (:mod:`kstore.registry.allocation`) inside the transaction of the write."""

    allow_create_on_update = True
    allocator: ServiceAllocator | None = None

    @staticmethod
    def _transaction() -> Transaction:
        txn = current_transaction().get()
        return txn if txn is not None else Transaction()

    def prepare_for_create(self, ctx: RequestContext, obj: Object) -> list[str]:
        obj[STATUS] = {"loadBalancer": {}}
        _normalize_cluster_ips(obj, None)
        if self.allocator is not None:
            self.allocator.allocate_create(obj, self._transaction())
        return []

    def prepare_for_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> None:
        if subresource != STATUS:
            _patch_allocated_values(obj, old)
            _patch_node_ports(obj, old)
            _normalize_cluster_ips(obj, old)
            _drop_type_dependent_fields(obj, old)
            if self.allocator is not None:
                self.allocator.allocate_update(obj, old, self._transaction())
        super().prepare_for_update(ctx, obj, old, subresource)


# ---------------------------------------------------------------------------- Secret


def _merge_string_data(secret: Object) -> None:
    string_data = secret.pop("stringData", None)
    if not isinstance(string_data, Mapping) or not string_data:
        return
    data = secret.get("data")
    if not isinstance(data, dict):
        data = {}
        secret["data"] = data
    for key, value in string_data.items():
        text = value if isinstance(value, str) else ""
        data[key] = base64.b64encode(text.encode()).decode()


class SecretStrategy(BuiltinStrategy):
    def prepare_for_create(self, ctx: RequestContext, obj: Object) -> list[str]:
        _merge_string_data(obj)
        return super().prepare_for_create(ctx, obj)

    def prepare_for_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> None:
        _merge_string_data(obj)
        super().prepare_for_update(ctx, obj, old, subresource)


# ---------------------------------------------------------------------------- others


class ConfigMapStrategy(BuiltinStrategy):
    """The built-in defaults (a named class, so the strategy table reads per kind)."""


#: Deprecated in Kubernetes 1.32; the warning is the API server's.
ENFORCE_MOUNTABLE_SECRETS: Final = "kubernetes.io/enforce-mountable-secrets"


def _secret_names_only(obj: Object) -> None:
    secrets = obj.get("secrets")
    if isinstance(secrets, list):
        obj["secrets"] = [
            {"name": ref["name"]} if isinstance(ref, dict) and ref.get("name") else {}
            for ref in secrets
        ]


class ServiceAccountStrategy(BuiltinStrategy):
    def prepare_for_create(self, ctx: RequestContext, obj: Object) -> list[str]:
        _secret_names_only(obj)
        warnings = super().prepare_for_create(ctx, obj)
        if ENFORCE_MOUNTABLE_SECRETS in (read_meta(obj).get("annotations") or {}):
            warnings.append(
                f"metadata.annotations[{ENFORCE_MOUNTABLE_SECRETS}]: deprecated in v1.32+; "
                "prefer separate namespaces to isolate access to mounted secrets"
            )
        return warnings

    def prepare_for_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> None:
        _secret_names_only(obj)
        super().prepare_for_update(ctx, obj, old, subresource)


class EventStrategy(BuiltinStrategy):
    allow_create_on_update = True

    def __init__(self, definition: KindDefinition, *, ttl_seconds: int) -> None:
        super().__init__(definition)
        self._ttl = ttl_seconds

    @property
    def ttl_seconds(self) -> int | None:
        return self._ttl if self._ttl > 0 else None

    def kind_validates_object_meta(self) -> bool:
        # core/v1 events keep their legacy validation, which leaves ObjectMeta to the generic
        # rules (Kubernetes' ValidateEventCreate for v1 requests).
        return False
