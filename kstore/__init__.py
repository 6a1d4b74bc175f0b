"""kstore: a versioned object store engine for control planes.

The storage half of a Kubernetes API server, usable on its own: kinds with several API versions
converted losslessly through a hub version, optimistic concurrency on ``resourceVersion``, watch
and TTL, over an embedded LMDB store or an etcd cluster. ``kstore.open(url)`` gives in-process
resource clients over the same registry the REST facade uses.
"""

from typing import TYPE_CHECKING, Any

from kstore.api.gvk import GroupVersion, GroupVersionKind, GroupVersionResource, Object
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo, Scheme, SchemeBuilder

if TYPE_CHECKING:
    from kstore.embedded import open

__all__ = [
    "GroupVersion",
    "GroupVersionKind",
    "GroupVersionResource",
    "KindDefinition",
    "KindVersion",
    "Object",
    "ResourceInfo",
    "Scheme",
    "SchemeBuilder",
    "open",
]

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # kstore.open loads the registry and the backends (~0.4 s): only on first use.
    if name == "open":
        from kstore.embedded import open

        return open
    raise AttributeError(f"module 'kstore' has no attribute {name!r}")
