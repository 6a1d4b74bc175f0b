"""The ``scale`` subresource of the kinds that have one (Deployment, ReplicaSet).

The REST layer turns a ``Scale`` into an update of the object with the ``scale`` subresource;
such a write may change ``spec.replicas`` only (and its own ``managedFields`` entry), as
Kubernetes' ``ScaleREST`` copies the replicas onto the stored object. The rest of the update
(generation, validation) is the main resource's.
"""

from __future__ import annotations

from typing import Final

from kstore.api.gvk import Object
from kstore.registry.strategies.base import copy_value, meta, read_meta

__all__ = ["SCALE", "keep_all_but_replicas"]

SCALE: Final = "scale"


def keep_all_but_replicas(obj: Object, old: Object) -> None:
    """Make ``obj`` a copy of ``old`` with ``obj``'s ``spec.replicas`` and ``managedFields``."""
    spec = obj.get("spec")
    replicas = spec.get("replicas") if isinstance(spec, dict) else None
    managed = read_meta(obj).get("managedFields")
    obj.clear()
    obj.update(copy_value(old))
    if managed is None:
        meta(obj).pop("managedFields", None)
    else:
        meta(obj)["managedFields"] = managed
    if replicas is not None:
        obj.setdefault("spec", {})["replicas"] = replicas
