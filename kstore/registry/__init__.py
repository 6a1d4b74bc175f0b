"""kstore.registry: Kubernetes' generic registry over kstore's storage (see DESIGN.md).

- :mod:`.interface` — the contract the REST facade and the embedding API call
  (:class:`Registry`, :class:`ResourceStore`, options, results, admission);
- :mod:`.registry` — :func:`build_registry`: one store per served resource of a Scheme, key
  layout, codecs, watch cache, system namespaces;
- :mod:`.store` (with :mod:`.deletion`, :mod:`.graceful`, :mod:`.object_meta`,
  :mod:`.names`) — the generic store's create/update/delete semantics;
- :mod:`.strategies` — what differs per kind; :mod:`.namespaces` — namespace lifecycle;
- :mod:`.admission` — the hook chain; :mod:`.patch` — PATCH, server-side apply and
  ``managedFields``.

Only the contract is re-exported here, so that importing it stays cheap; import
:func:`kstore.registry.registry.build_registry` where a registry is built.
"""

from kstore.registry.interface import (
    AdmissionAttributes,
    AdmissionHook,
    CreateOptions,
    DeleteOptions,
    DeleteResult,
    Operation,
    Registry,
    RequestContext,
    ResourceStore,
    UpdatedObject,
    UpdateOptions,
    UserInfo,
    WriteResult,
)

__all__ = [
    "AdmissionAttributes",
    "AdmissionHook",
    "CreateOptions",
    "DeleteOptions",
    "DeleteResult",
    "Operation",
    "Registry",
    "RequestContext",
    "ResourceStore",
    "UpdateOptions",
    "UpdatedObject",
    "UserInfo",
    "WriteResult",
]
