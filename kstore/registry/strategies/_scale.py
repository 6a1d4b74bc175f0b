"""The ``scale`` subresource of the kinds that have one (Deployment, ReplicaSet, StatefulSet,
custom kinds with scale paths).

The REST layer turns a ``Scale`` into an update of the object with the ``scale`` subresource;
such a write may change ``spec.replicas`` only (and its own ``managedFields`` entry), as
Kubernetes' ``ScaleREST`` copies the replicas onto the stored object. The rest of the update
(generation, validation) is the main resource's.
"""

from __future__ import annotations

from typing import Final

from kstore.api.gvk import Object
from kstore.registry.strategies._objects import copy_value, meta, read_meta

__all__ = ["SCALE", "keep_all_but_replicas"]

SCALE: Final = "scale"


def keep_all_but_replicas(
    obj: Object, old: Object, path: tuple[str, ...] = ("spec", "replicas")
) -> None:
    """Make ``obj`` a copy of ``old`` with ``obj``'s replicas (at ``path``: ``spec.replicas``
    by default, a CRD's ``specReplicasPath`` for custom kinds) and ``managedFields``."""
    node: object = obj
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    replicas = node
    managed = read_meta(obj).get("managedFields")
    obj.clear()
    obj.update(copy_value(old))
    if managed is None:
        meta(obj).pop("managedFields", None)
    else:
        meta(obj)["managedFields"] = managed
    if replicas is not None:
        parent = obj
        for key in path[:-1]:
            child = parent.get(key)
            if not isinstance(child, dict):
                child = {}
                parent[key] = child
            parent = child
        parent[path[-1]] = replicas
