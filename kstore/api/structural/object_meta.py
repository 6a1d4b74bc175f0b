"""ObjectMeta as a schema: which ``metadata`` fields exist, and dropping the others.

Kubernetes never prunes ``metadata`` with the CRD's schema: at a resource's root and in every
embedded resource (``x-kubernetes-embedded-resource``) it decodes ``metadata`` into its Go
``metav1.ObjectMeta`` type, strictly and case-sensitively, so a field ObjectMeta lacks is
dropped and reported as an unknown field (``metadata.foo``,
``spec.template.metadata.ownerReferences[0].bar``). :func:`prune_object_meta` does the dropping
and reporting over the plain mapping.

Invariant: only keys are removed; a known field keeps its value untouched (Kubernetes'
re-encoding would also drop empty values and reject wrongly typed ones; that coercion is not
done here). ``managedFields[].fieldsV1`` is raw JSON in Go and is never looked into.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = [
    "MANAGED_FIELDS_ENTRY_FIELDS",
    "OBJECT_META_FIELDS",
    "OWNER_REFERENCE_FIELDS",
    "prune_object_meta",
]

OBJECT_META_FIELDS: Final = frozenset(
    {
        "name",
        "generateName",
        "namespace",
        "selfLink",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "ownerReferences",
        "finalizers",
        "managedFields",
    }
)
OWNER_REFERENCE_FIELDS: Final = frozenset(
    {"apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"}
)
MANAGED_FIELDS_ENTRY_FIELDS: Final = frozenset(
    {"manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1", "subresource"}
)
_LISTS: Final[Mapping[str, frozenset[str]]] = {
    "ownerReferences": OWNER_REFERENCE_FIELDS,
    "managedFields": MANAGED_FIELDS_ENTRY_FIELDS,
}


def prune_object_meta(metadata: Any, prefix: str) -> list[str]:
    """Drop the fields ObjectMeta does not have from ``metadata``; their paths, sorted.

    ``prefix`` is the path of the metadata itself (``metadata``, ``spec.template.metadata``).
    A ``metadata`` that is not a mapping is left alone (Kubernetes rejects it while decoding).
    """
    if not isinstance(metadata, dict):
        return []
    unknown: list[str] = []
    for key in list(metadata):
        if key not in OBJECT_META_FIELDS:
            unknown.append(f"{prefix}.{key}")
            del metadata[key]
            continue
        allowed = _LISTS.get(key)
        entries = metadata[key]
        if allowed is None or not isinstance(entries, list):
            continue
        for i, entry in enumerate(entries):
            if not isinstance(entry, dict):
                continue
            for field in list(entry):
                if field not in allowed:
                    unknown.append(f"{prefix}.{key}[{i}].{field}")
                    del entry[field]
    unknown.sort()
    return unknown
