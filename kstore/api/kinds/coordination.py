"""coordination.k8s.io/v1 Lease."""

from __future__ import annotations

from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo

__all__ = ["DEFINITIONS"]

DEFINITIONS: tuple[KindDefinition, ...] = (
    KindDefinition(
        group="coordination.k8s.io",
        kind="Lease",
        versions=(KindVersion(version="v1"),),
        storage_version="v1",
        resource=ResourceInfo(plural="leases", singular="lease", namespaced=True),
    ),
)
