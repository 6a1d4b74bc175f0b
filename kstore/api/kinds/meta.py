"""The meta kinds: Status, WatchEvent, the option kinds, discovery documents, Table.

They are not resources; they are registered so that decoding, encoding and strict field checks
treat them like any other kind. Kubernetes registers them in several places, and so does kstore:

- **Unversioned** kinds (``Status``, ``APIVersions``, ``APIGroupList``, ``APIGroup``,
  ``APIResourceList``) are always written with ``apiVersion: v1`` (Kubernetes'
  ``metav1.Unversioned``, the core group). Kubernetes reads them back by kind alone; kstore
  recognises them as ``v1`` and as ``meta.k8s.io/v1``.
- ``WatchEvent`` and the option kinds (``ListOptions``, ``GetOptions``, ``DeleteOptions``,
  ``CreateOptions``, ``UpdateOptions``, ``PatchOptions``) exist in every group version, as
  ``metav1.AddToGroupVersion`` registers them (``apps/v1`` ``DeleteOptions`` is a valid body), and
  in ``meta.k8s.io/v1``. :func:`group_version_kinds` builds them for one group; the built-in
  groups get theirs here, an embedder's group by calling it.
- ``Table``, ``TableOptions``, ``PartialObjectMetadata`` and ``PartialObjectMetadataList`` are
  ``meta.k8s.io/v1`` and ``meta.k8s.io/v1beta1`` (the v1beta1 types are aliases of v1's).

The List kinds (``PodList``, ``DeploymentList``...) are registered beside their item kinds, by
:func:`kstore.api.kinds._lists.list_definition`: a list converts and defaults item by item.

Every meta kind here has the hub shape in each of its versions (no converters, no defaults: the meta
API registers no defaulting functions), and no validation of its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kstore.api.kinds import (
    admissionregistration,
    apiextensions,
    apiregistration,
    apps,
    batch,
    certificates,
    coordination,
    core,
    endpointslice,
    horizontalpodautoscaler,
    networking,
    networkpolicy,
    poddisruptionbudget,
    priorityclass,
    runtimeclass,
    servicecidr,
    storage,
)
from kstore.api.scheme import KindDefinition, KindVersion

__all__ = [
    "DEFINITIONS",
    "META_GROUP",
    "OPTION_KINDS",
    "UNVERSIONED_KINDS",
    "group_version_kinds",
]

META_GROUP = "meta.k8s.io"

#: Written as ``v1`` whatever group they concern (Kubernetes' ``metav1.Unversioned``).
UNVERSIONED_KINDS = ("Status", "APIVersions", "APIGroupList", "APIGroup", "APIResourceList")

#: Request options, accepted in every group version and in ``meta.k8s.io/v1``.
OPTION_KINDS = (
    "ListOptions",
    "GetOptions",
    "DeleteOptions",
    "CreateOptions",
    "UpdateOptions",
    "PatchOptions",
)

#: ``meta.k8s.io`` only, in v1 and v1beta1.
_META_ONLY_KINDS = ("Table", "TableOptions", "PartialObjectMetadata", "PartialObjectMetadataList")


def _kind(group: str, kind: str, versions: Iterable[str]) -> KindDefinition:
    return KindDefinition(
        group=group, kind=kind, versions=tuple(KindVersion(version=v) for v in versions)
    )


def group_version_kinds(group: str, versions: Sequence[str]) -> tuple[KindDefinition, ...]:
    """``WatchEvent`` and the option kinds in every version of ``group``.

    Call it for a group of your own to accept, e.g., ``example.com/v1`` ``DeleteOptions`` bodies,
    as Kubernetes does for every group version it serves.
    """
    return tuple(_kind(group, kind, versions) for kind in ("WatchEvent", *OPTION_KINDS))


def _builtin_group_versions() -> dict[str, list[str]]:
    """The built-in resource groups and their versions, in registration order."""
    groups: dict[str, list[str]] = {}
    for definition in (
        *core.DEFINITIONS,
        *apps.DEFINITIONS,
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
    ):
        known = groups.setdefault(definition.group, [])
        for v in definition.versions:
            if v.version not in known:
                known.append(v.version)
    groups.setdefault("", [])
    if "v1" not in groups[""]:
        groups[""].append("v1")
    return groups


def _definitions() -> tuple[KindDefinition, ...]:
    out: list[KindDefinition] = []
    for group, versions in _builtin_group_versions().items():
        out.extend(group_version_kinds(group, versions))
    out.extend(group_version_kinds(META_GROUP, ["v1"]))
    for kind in UNVERSIONED_KINDS:
        out.append(_kind("", kind, ["v1"]))
        out.append(_kind(META_GROUP, kind, ["v1"]))
    out.extend(_kind(META_GROUP, kind, ["v1", "v1beta1"]) for kind in _META_ONLY_KINDS)
    return tuple(out)


DEFINITIONS: tuple[KindDefinition, ...] = _definitions()
