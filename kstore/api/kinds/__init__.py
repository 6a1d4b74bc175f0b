"""The built-in kinds kstore serves: core/v1, admissionregistration.k8s.io,
apiextensions.k8s.io, apiregistration.k8s.io, apps, batch, certificates.k8s.io,
coordination.k8s.io, networking.k8s.io, policy, rbac.authorization.k8s.io, and the meta kinds
(one module per group, or per kind for the later ones).

Their structural schemas (which fields each version has, for ``fieldValidation``) come from the
protobuf descriptors of the same kinds, so the wire format and the field checks cannot drift.
"""

from __future__ import annotations

import dataclasses
from functools import cache

from kstore.api.gvk import GroupVersionKind
from kstore.api.kinds import (
    admissionregistration,
    apiextensions,
    apiregistration,
    apps,
    batch,
    certificates,
    controllerrevision,
    coordination,
    core,
    daemonset,
    endpoints,
    endpointslice,
    horizontalpodautoscaler,
    limitrange,
    meta,
    networking,
    networkpolicy,
    node,
    persistentvolume,
    persistentvolumeclaim,
    poddisruptionbudget,
    podtemplate,
    priorityclass,
    rbac,
    replicaset,
    replicationcontroller,
    resourcequota,
    runtimeclass,
    servicecidr,
    statefulset,
    storage,
)
from kstore.api.proto_schema import schema_for_gvk
from kstore.api.scheme import KindDefinition, Scheme, SchemeBuilder

__all__ = ["builtin_scheme", "builtin_scheme_builder"]


def _with_schemas(definition: KindDefinition) -> KindDefinition:
    versions = tuple(
        v
        if v.schema is not None
        else dataclasses.replace(
            v, schema=schema_for_gvk(GroupVersionKind(definition.group, v.version, definition.kind))
        )
        for v in definition.versions
    )
    return dataclasses.replace(definition, versions=versions)


def _rbac_meta_kinds() -> tuple[KindDefinition, ...]:
    # kinds.meta derives these from the groups it knows; until it knows RBAC's, add them here
    # (and never twice: a Scheme refuses a kind registered twice).
    known = {(d.group, d.kind) for d in meta.DEFINITIONS}
    return tuple(
        d for d in meta.group_version_kinds(rbac.GROUP, ["v1"]) if (d.group, d.kind) not in known
    )


@cache
def _builtin_definitions() -> tuple[KindDefinition, ...]:
    every = (
        *core.DEFINITIONS,
        *persistentvolumeclaim.DEFINITIONS,
        *persistentvolume.DEFINITIONS,
        *podtemplate.DEFINITIONS,
        *replicationcontroller.DEFINITIONS,
        *endpoints.DEFINITIONS,
        *limitrange.DEFINITIONS,
        *resourcequota.DEFINITIONS,
        *node.DEFINITIONS,
        *apps.DEFINITIONS,
        *daemonset.DEFINITIONS,
        *replicaset.DEFINITIONS,
        *statefulset.DEFINITIONS,
        *controllerrevision.DEFINITIONS,
        *horizontalpodautoscaler.DEFINITIONS,
        *batch.DEFINITIONS,
        *coordination.DEFINITIONS,
        *endpointslice.DEFINITIONS,
        *networking.DEFINITIONS,
        *networkpolicy.DEFINITIONS,
        *servicecidr.DEFINITIONS,
        *poddisruptionbudget.DEFINITIONS,
        *admissionregistration.DEFINITIONS,
        *certificates.DEFINITIONS,
        *storage.DEFINITIONS,
        *priorityclass.DEFINITIONS,
        *runtimeclass.DEFINITIONS,
        *apiextensions.DEFINITIONS,
        *apiregistration.DEFINITIONS,
        *rbac.DEFINITIONS,
        *meta.DEFINITIONS,
        # WatchEvent and the option kinds of the RBAC group, as for every served group.
        *_rbac_meta_kinds(),
    )
    return tuple(_with_schemas(d) for d in every)


def builtin_scheme_builder() -> SchemeBuilder:
    """A builder holding every built-in kind; add your own kinds, then ``build()``."""
    return SchemeBuilder().add(*_builtin_definitions())


@cache
def builtin_scheme() -> Scheme:
    """The built-in kinds with the default runtime config (shared, immutable)."""
    return builtin_scheme_builder().build()
