"""apps Deployment in v1, v1beta2 and v1beta1; hub: the internal version; storage: apps/v1."""

from __future__ import annotations

from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo

__all__ = ["DEFINITIONS"]

DEFINITIONS: tuple[KindDefinition, ...] = (
    KindDefinition(
        group="apps",
        kind="Deployment",
        versions=(
            KindVersion(version="v1"),
            KindVersion(version="v1beta2"),
            KindVersion(version="v1beta1"),
        ),
        storage_version="v1",
        resource=ResourceInfo(
            plural="deployments",
            singular="deployment",
            namespaced=True,
            short_names=("deploy",),
            categories=("all",),
            subresources=("status", "scale"),
        ),
    ),
)
