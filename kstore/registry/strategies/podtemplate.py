"""core PodTemplate: Kubernetes' ``pkg/registry/core/podtemplate`` strategy.

``generation`` is 1 on create and follows changes of ``template`` (the only field outside
metadata); nothing else is reset. Deletes without a propagation policy take dependents along.
"""

from __future__ import annotations

from kstore.registry.strategies.base import BuiltinStrategy

__all__ = ["PodTemplateStrategy"]


class PodTemplateStrategy(BuiltinStrategy):
    tracks_generation = True
