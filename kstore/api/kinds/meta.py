"""The meta kinds: Status, WatchEvent, the option kinds and discovery documents.

They are not resources; they are registered so that decoding, encoding and strict field checks
treat them like any other kind.
"""

from __future__ import annotations

from kstore.api.scheme import KindDefinition, KindVersion

__all__ = ["DEFINITIONS"]

_META_V1_KINDS = (
    "Status",
    "WatchEvent",
    "DeleteOptions",
    "CreateOptions",
    "UpdateOptions",
    "PatchOptions",
    "ListOptions",
    "GetOptions",
    "APIResourceList",
    "APIGroupList",
    "APIGroup",
    "APIVersions",
    "Table",
    "PartialObjectMetadata",
    "PartialObjectMetadataList",
)

DEFINITIONS: tuple[KindDefinition, ...] = tuple(
    KindDefinition(group="meta.k8s.io", kind=kind, versions=(KindVersion(version="v1"),))
    for kind in _META_V1_KINDS
)
