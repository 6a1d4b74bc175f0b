"""Metadata rules every write applies before the kind's strategy sees the object.

As Kubernetes' create/update handlers and ``rest`` helpers do:

- :func:`wipe_system_fields`: a request cannot set ``creationTimestamp``, ``uid``,
  ``deletionTimestamp``, ``deletionGracePeriodSeconds`` or ``selfLink`` (the server fills or
  keeps them);
- :func:`ensure_namespace`: an object without a namespace gets the request's, a cluster-scoped
  object loses its namespace, and any other mismatch is a 400 with Kubernetes' wording;
- :func:`dedup_owner_references`: ownerReferences equal to an earlier one with the same uid are
  dropped, with Kubernetes' warning (worded differently after mutating admission); entries with
  the same uid that differ in any field are kept;
- :func:`keep_managed_fields_times`: when an update changes nothing but managedFields
  timestamps, the stored timestamps are kept so that a no-op stays a no-op.

Functions change the object they are given (owned by the caller) and never the stored one.
"""

from __future__ import annotations

from typing import Any, Final

from kstore.api.gvk import Object
from kstore.errors import BadRequest
from kstore.registry.strategies.base import copy_value, meta, read_meta

__all__ = [
    "SYSTEM_FIELDS",
    "dedup_owner_references",
    "ensure_namespace",
    "keep_managed_fields_times",
    "name_of",
    "wipe_system_fields",
]

SYSTEM_FIELDS: Final = (
    "creationTimestamp",
    "uid",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "selfLink",
)
_DUPLICATE_OWNERS: Final = (
    ".metadata.ownerReferences contains duplicate entries; API server dedups owner references "
    "in 1.20+, and may reject such requests as early as 1.24; please fix your requests; "
    "duplicate UID(s) observed: {}"
)
_DUPLICATE_OWNERS_AFTER_ADMISSION: Final = (
    ".metadata.ownerReferences contains duplicate entries after mutating admission happens; "
    "API server dedups owner references in 1.20+, and may reject such requests as early as "
    "1.24; please fix your requests; duplicate UID(s) observed: {}"
)
_NAMESPACE_MISMATCH: Final = (
    "the namespace of the provided object does not match the namespace sent on the request"
)


def name_of(obj: Object) -> str:
    name = read_meta(obj).get("name")
    return name if isinstance(name, str) else ""


def wipe_system_fields(obj: Object) -> None:
    m = meta(obj)
    for key in SYSTEM_FIELDS:
        m.pop(key, None)


def ensure_namespace(obj: Object, expected: str) -> None:
    """Kubernetes' EnsureObjectNamespaceMatchesRequestNamespace (``expected`` is "" for
    cluster-scoped resources)."""
    m = meta(obj)
    current = m.get("namespace") or ""
    if current == expected:
        return
    if not current:
        m["namespace"] = expected
    elif not expected:
        m.pop("namespace", None)
    else:
        raise BadRequest(_NAMESPACE_MISMATCH)


def dedup_owner_references(obj: Object, *, after_admission: bool) -> list[str]:
    """Drop ownerReferences equal to an earlier one with the same uid; return the warning."""
    refs = read_meta(obj).get("ownerReferences")
    if not isinstance(refs, list) or len(refs) < 2:
        return []
    kept: list[Any] = []
    seen: set[Any] = set()
    duplicates: list[str] = []
    for ref in refs:
        uid = ref.get("uid") if isinstance(ref, dict) else None
        if uid in seen and ref in kept:
            duplicates.append(str(uid or ""))
            continue
        seen.add(uid)
        kept.append(ref)
    if not duplicates:
        return []
    meta(obj)["ownerReferences"] = kept
    template = _DUPLICATE_OWNERS_AFTER_ADMISSION if after_admission else _DUPLICATE_OWNERS
    return [template.format(", ".join(duplicates))]


def keep_managed_fields_times(obj: Object, old: Object) -> None:
    """If only managedFields timestamps differ from the stored object, keep the stored ones
    (Kubernetes' IgnoreManagedFieldsTimestampsTransformer)."""
    new_entries = read_meta(obj).get("managedFields")
    old_entries = read_meta(old).get("managedFields")
    if not isinstance(new_entries, list) or not isinstance(old_entries, list):
        return
    if len(new_entries) != len(old_entries) or new_entries == old_entries:
        return

    def untimed(entries: list[Any]) -> list[Any]:
        return [
            {k: v for k, v in e.items() if k != "time"} if isinstance(e, dict) else e
            for e in entries
        ]

    if untimed(new_entries) != untimed(old_entries):
        return
    rest = {k: v for k, v in obj.items() if k != "metadata"}
    old_rest = {k: v for k, v in old.items() if k != "metadata"}
    new_meta = {k: v for k, v in read_meta(obj).items() if k != "managedFields"}
    old_meta = {k: v for k, v in read_meta(old).items() if k != "managedFields"}
    if rest == old_rest and new_meta == old_meta:
        meta(obj)["managedFields"] = copy_value(old_entries)
