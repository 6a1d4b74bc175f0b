"""The resource the conformance suite stores: Pods, their keys, attributes and storage configs.

Objects are hub-form Pod dicts (``apiVersion: __internal``) with the scheme's defaults applied,
which is what a :class:`~kstore.storage.interface.StorageCodec` hands back, so a stored object
read back equals what was written plus its ``metadata.resourceVersion``. The codec is kstore's
real one: the versioning codec over the built-in scheme, writing JSON in the Pod's storage
version (v1).

Keys follow Kubernetes' layout: ``/pods/<namespace>/<name>`` for the namespaced resource and
``/pods/<name>`` for the cluster-scoped variant (the same prefix, as Kubernetes' own suite does).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

from kstore.api.gvk import HUB_VERSION, Object
from kstore.api.kinds import builtin_scheme
from kstore.codec.versioning import storage_codec
from kstore.storage.interface import ResourceStorageConfig, StorageCodec, ValueTransformer

__all__ = [
    "POD_PREFIX",
    "cluster_pod_attrs",
    "cluster_pod_config",
    "pod",
    "pod_attrs",
    "pod_codec",
    "pod_config",
    "pod_key",
    "replace_with",
    "rv_of",
    "sorted_by_key",
    "with_rv",
    "without_rv",
]

#: The resource prefix of the Pods the suite stores (both scopes).
POD_PREFIX = "/pods"


@cache
def pod_codec() -> StorageCodec:
    """The storage codec of the suite's Pods: hub <-> v1 JSON through the built-in scheme."""
    return storage_codec(builtin_scheme())


def pod(
    name: str,
    namespace: str = "",
    *,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    node_name: str = "",
    uid: str = "",
    generation: int | None = None,
    phase: str = "",
) -> Object:
    """A hub-form Pod with the fields given (empty values are left out, as JSON omits), in
    the form the store reads it back: through the codec once, so defaults are applied (as the
    registry would before storing) and a stored copy equals it but for its resourceVersion."""
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    if uid:
        meta["uid"] = uid
    if generation is not None:
        meta["generation"] = generation
    if labels:
        meta["labels"] = dict(labels)
    if annotations:
        meta["annotations"] = dict(annotations)
    obj: Object = {"apiVersion": HUB_VERSION, "kind": "Pod", "metadata": meta}
    if node_name:
        obj["spec"] = {"nodeName": node_name}
    if phase:
        obj["status"] = {"phase": phase}
    codec = pod_codec()
    return codec.decode(codec.encode(obj))


def pod_key(obj: Object) -> str:
    """Kubernetes' key of a Pod: ``/pods/<ns>/<name>``, or ``/pods/<name>`` without namespace."""
    meta = obj["metadata"]
    namespace = meta.get("namespace", "")
    if namespace:
        return f"{POD_PREFIX}/{namespace}/{meta['name']}"
    return f"{POD_PREFIX}/{meta['name']}"


def replace_with(obj: Object) -> Callable[[Object], Object]:
    """A try_update that ignores the current state and writes ``obj``."""

    def update(_current: Object) -> Object:
        return obj

    return update


def rv_of(obj: Object) -> int:
    """The object's ``metadata.resourceVersion`` as an int (it must be set)."""
    value = obj.get("metadata", {}).get("resourceVersion")
    assert isinstance(value, str) and value.isdigit(), f"bad resourceVersion in {obj!r}"
    return int(value)


def with_rv(obj: Object, rv: int) -> Object:
    """A copy of ``obj`` with ``metadata.resourceVersion`` set to ``rv``."""
    out = copy.deepcopy(obj)
    out.setdefault("metadata", {})["resourceVersion"] = str(rv)
    return out


def without_rv(obj: Object) -> Object:
    """A copy of ``obj`` without ``metadata.resourceVersion`` (what a backend persists)."""
    out = copy.deepcopy(obj)
    out.get("metadata", {}).pop("resourceVersion", None)
    return out


def sorted_by_key(objs: list[Object]) -> list[Object]:
    """Objects in storage key order, the order every list returns."""
    return sorted(objs, key=pod_key)


def pod_attrs(obj: Object) -> tuple[dict[str, str], dict[str, str]]:
    """Labels and selectable fields of a namespaced Pod (as Kubernetes' pod strategy)."""
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    fields = {
        "metadata.name": meta.get("name", ""),
        "metadata.namespace": meta.get("namespace", ""),
        "spec.nodeName": spec.get("nodeName", ""),
    }
    return dict(meta.get("labels") or {}), fields


def cluster_pod_attrs(obj: Object) -> tuple[dict[str, str], dict[str, str]]:
    """Labels and selectable fields of a cluster-scoped Pod: no ``metadata.namespace``."""
    labels, fields = pod_attrs(obj)
    del fields["metadata.namespace"]
    return labels, fields


def pod_config(transformer: ValueTransformer) -> ResourceStorageConfig:
    """The namespaced Pod resource, stored through ``transformer``."""
    return ResourceStorageConfig(
        resource_prefix=POD_PREFIX,
        codec=pod_codec(),
        get_attrs=pod_attrs,
        transformer=transformer,
        namespaced=True,
    )


def cluster_pod_config(transformer: ValueTransformer) -> ResourceStorageConfig:
    """The cluster-scoped Pod resource, stored through ``transformer``."""
    return ResourceStorageConfig(
        resource_prefix=POD_PREFIX,
        codec=pod_codec(),
        get_attrs=cluster_pod_attrs,
        transformer=transformer,
        namespaced=False,
    )
