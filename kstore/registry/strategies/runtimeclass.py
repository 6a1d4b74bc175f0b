"""node.k8s.io RuntimeClass: Kubernetes' ``pkg/registry/node/runtimeclass`` strategy.
Cluster-scoped; no generation; a PUT of a missing class creates it; an update must name the
resourceVersion it replaces."""

from __future__ import annotations

from kstore.registry.strategies.base import BuiltinStrategy

__all__ = ["RuntimeClassStrategy"]


class RuntimeClassStrategy(BuiltinStrategy):
    allow_create_on_update = True
    allow_unconditional_update = False
