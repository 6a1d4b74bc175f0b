"""kstore: a versioned object store engine for control planes.

The storage half of a Kubernetes API server, usable on its own: kinds with several API versions
converted losslessly through a hub version, optimistic concurrency on ``resourceVersion``, watch
and TTL, over an embedded LMDB store or an etcd cluster.
"""

from kstore.api.gvk import GroupVersion, GroupVersionKind, GroupVersionResource, Object
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo, Scheme, SchemeBuilder

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
]

__version__ = "0.1.0"
