"""What the plugins share: which request is about which resource, consistent reads of other
objects through the stores (served by the watch cache where there is one), and admission's
Forbidden."""

from __future__ import annotations

from typing import Any

from kstore.api.gvk import Object
from kstore.errors import Forbidden, KStoreError, NotFound
from kstore.registry.interface import AdmissionAttributes, Operation, Registry, RequestContext
from kstore.registry.store import GenericStore
from kstore.storage.interface import ListOptions

__all__ = [
    "dict_at",
    "forbidden",
    "is_resource",
    "list_objects",
    "read_object",
]

# Consistent reads that never wait for the watch cache: it answers when already current (on
# LMDB a local check: the cache has reached the resource's last acknowledged change, however
# busy other resources are; see kstore.cache.freshness.LocalChangeClock), else storage does
# (LMDB: a local read; etcd: one quorum read). So a LimitRange or class created just before a
# pod applies to it, where kube-apiserver's informers may lag, and a create never waits on
# the cache.
_CONSISTENT: Any = ListOptions()


def is_resource(
    attributes: AdmissionAttributes, group: str, kind: str, *operations: Operation
) -> bool:
    """Whether the request writes the main resource of ``group``/``kind`` (no subresource)
    with one of ``operations``, and carries an object."""
    definition = attributes.definition
    return (
        definition.kind == kind
        and definition.group == group
        and not attributes.subresource
        and attributes.operation in operations
        and isinstance(attributes.object, dict)
    )


def forbidden(attributes: AdmissionAttributes, reason: str) -> Forbidden:
    """403 as admission's: ``<resource> "<name>" is forbidden: <reason>``, the name being the
    request's, else the object's name or generateName, else ``Unknown``."""
    name = attributes.name
    if not name and isinstance(attributes.object, dict):
        meta = attributes.object.get("metadata")
        if isinstance(meta, dict):
            name = str(meta.get("name") or meta.get("generateName") or "")
    name = name or "Unknown"
    definition = attributes.definition
    resource = definition.resource.plural if definition.resource is not None else ""
    qualified = f"{resource}.{definition.group}" if definition.group else resource
    return Forbidden(
        f'{qualified} "{name}" is forbidden: {reason}',
        name=name,
        kind=resource,
        group=definition.group,
    )


def read_object(
    registry: Registry, group: str, resource: str, namespace: str, name: str
) -> Object | None:
    """The object as of now; None when it does not exist (or the resource is not served)."""
    try:
        store = registry.store(group, resource)
    except NotFound:
        return None
    try:
        return store.get(RequestContext(namespace=namespace), name)
    except NotFound:
        return None


def list_objects(registry: Registry, group: str, resource: str, namespace: str) -> list[Object]:
    """Every object of the resource (in ``namespace``) as of now; empty when the resource is
    not served."""
    try:
        store = registry.store(group, resource)
    except (NotFound, KStoreError):
        return []
    ctx = RequestContext(namespace=namespace)
    if isinstance(store, GenericStore):
        return list(store.list_now(ctx, _CONSISTENT).items)
    return list(store.list(ctx, _CONSISTENT).items)


def dict_at(obj: dict[str, Any], key: str) -> dict[str, Any]:
    """``obj[key]``, set to a new dict when missing or not a dict."""
    value = obj.get(key)
    if not isinstance(value, dict):
        value = {}
        obj[key] = value
    return value
