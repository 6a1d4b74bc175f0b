"""core/v1 kinds: Namespace, ConfigMap, Secret, Event, Pod, Service."""

from __future__ import annotations

from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo

__all__ = ["DEFINITIONS"]

DEFINITIONS: tuple[KindDefinition, ...] = (
    KindDefinition(
        group="",
        kind="Namespace",
        versions=(KindVersion(version="v1"),),
        storage_version="v1",
        resource=ResourceInfo(
            plural="namespaces",
            singular="namespace",
            namespaced=False,
            short_names=("ns",),
            verbs=("create", "delete", "get", "list", "patch", "update", "watch"),
            subresources=("status", "finalize"),
        ),
    ),
    KindDefinition(
        group="",
        kind="ConfigMap",
        versions=(KindVersion(version="v1"),),
        storage_version="v1",
        resource=ResourceInfo(
            plural="configmaps", singular="configmap", namespaced=True, short_names=("cm",)
        ),
    ),
    KindDefinition(
        group="",
        kind="Secret",
        versions=(KindVersion(version="v1"),),
        storage_version="v1",
        resource=ResourceInfo(plural="secrets", singular="secret", namespaced=True),
    ),
    KindDefinition(
        group="",
        kind="Event",
        versions=(KindVersion(version="v1"),),
        storage_version="v1",
        resource=ResourceInfo(
            plural="events", singular="event", namespaced=True, short_names=("ev",)
        ),
    ),
    KindDefinition(
        group="",
        kind="Pod",
        versions=(KindVersion(version="v1"),),
        storage_version="v1",
        resource=ResourceInfo(
            plural="pods",
            singular="pod",
            namespaced=True,
            short_names=("po",),
            categories=("all",),
            subresources=("status",),
        ),
    ),
    KindDefinition(
        group="",
        kind="Service",
        versions=(KindVersion(version="v1"),),
        storage_version="v1",
        resource=ResourceInfo(
            plural="services",
            singular="service",
            namespaced=True,
            short_names=("svc",),
            categories=("all",),
            subresources=("status",),
        ),
    ),
)
