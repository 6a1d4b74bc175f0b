"""coordination.k8s.io Lease: created by a PUT when missing; every update must carry the
resourceVersion it read (leader election relies on it), as Kubernetes' lease strategy."""

from __future__ import annotations

from kstore.registry.strategies.base import BuiltinStrategy

__all__ = ["LeaseStrategy"]


class LeaseStrategy(BuiltinStrategy):
    allow_create_on_update = True
    allow_unconditional_update = False
