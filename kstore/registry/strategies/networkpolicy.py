"""networking.k8s.io NetworkPolicy: Kubernetes' ``pkg/registry/networking/networkpolicy``
strategy. Namespaced, no status (v1 has none); ``generation`` starts at 1 and is bumped when
``spec`` changes."""

from __future__ import annotations

from kstore.registry.strategies.base import BuiltinStrategy

__all__ = ["NetworkPolicyStrategy"]


class NetworkPolicyStrategy(BuiltinStrategy):
    tracks_generation = True
