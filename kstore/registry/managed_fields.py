"""``metadata.managedFields`` entries for Update operations (create, update, patch).

Kubernetes' field manager, for the ``Update`` operation, does this (``k8s.io/apimachinery``
``pkg/util/managedfields/internal``) and so does :func:`update_managed_fields`:

1. take the entries of the request object, or of the live object when the request has none,
   has invalid ones, or writes a subresource; an explicit empty list (or one empty entry)
   resets them;
2. compare the live object with the new one in the request's version (a create compares with
   the kind's zero object); fields the request's strategy resets (``status`` on the main
   resource, the rest on ``status``) are ignored;
3. every other manager loses the fields this request changed or removed (an Update always
   wins); managers left with nothing are dropped;
4. the request's manager, identified by (manager, ``Update``, apiVersion, subresource), gains
   the fields it added or changed, without the object's identity fields (apiVersion, kind,
   name, namespace, uid, resourceVersion, generation, creationTimestamp, managedFields); its
   ``time`` is set only when it gained something, so a no-op update stays a no-op;
5. with more than :data:`MAX_UPDATE_MANAGERS` Update entries, the oldest are merged, per
   apiVersion, into one ``ancient-changes`` entry;
6. entries are sorted (operation, time, manager, apiVersion, subresource).

Apply entries are kept and lose fields like any other manager; creating them is server-side
apply's job.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.registry.fieldpath import (
    FieldPath,
    FieldSet,
    FieldTypes,
    compare,
    from_fields_v1,
    recursive_difference,
    to_fields_v1,
)

__all__ = [
    "ANCIENT_CHANGES",
    "MAX_UPDATE_MANAGERS",
    "ManagedFieldsRequest",
    "update_managed_fields",
]

MAX_UPDATE_MANAGERS: Final = 10
ANCIENT_CHANGES: Final = "ancient-changes"
_APPLY: Final = "Apply"
_UPDATE: Final = "Update"
_STRIPPED: Final[frozenset[FieldPath]] = frozenset(
    {
        ("f:apiVersion",),
        ("f:kind",),
        ("f:metadata",),
        *(
            ("f:metadata", "f:" + name)
            for name in (
                "name",
                "namespace",
                "creationTimestamp",
                "selfLink",
                "uid",
                "clusterName",
                "generation",
                "managedFields",
                "resourceVersion",
            )
        ),
    }
)


@dataclass(frozen=True, slots=True, order=True)
class _Manager:
    """What identifies an entry: Apply entries of one manager share one across versions."""

    manager: str
    operation: str
    api_version: str
    subresource: str


@dataclass(slots=True)
class _Entry:
    fields: FieldSet
    api_version: str
    time: str | None


@dataclass(frozen=True, kw_only=True, slots=True)
class ManagedFieldsRequest:
    """One write as the field manager sees it.

    ``manager`` is the ``fieldManager`` ("" becomes ``unknown``), ``api_version`` the
    request's group/version, ``types`` the kind's list and atomic types, ``ignored`` the
    fields the strategy resets for this (sub)resource, ``now`` an RFC 3339 time.
    """

    manager: str
    api_version: str
    subresource: str = ""
    types: FieldTypes
    ignored: frozenset[FieldPath] = frozenset()
    now: str


def _decode(entries: Any) -> dict[_Manager, _Entry] | None:
    """Entries by manager; None when any is malformed (Kubernetes then falls back)."""
    if not isinstance(entries, list):
        return None
    out: dict[_Manager, _Entry] = {}
    for entry in entries:
        if not isinstance(entry, Mapping):
            return None
        operation = entry.get("operation")
        api_version = entry.get("apiVersion")
        if operation not in (_APPLY, _UPDATE) or not isinstance(api_version, str):
            return None
        if not api_version or entry.get("fieldsType") != "FieldsV1":
            return None
        try:
            fields = from_fields_v1(entry.get("fieldsV1") or {})
        except ValueError:
            return None
        time = entry.get("time")
        key = _Manager(
            manager=str(entry.get("manager") or ""),
            operation=operation,
            api_version="" if operation == _APPLY else api_version,
            subresource=str(entry.get("subresource") or ""),
        )
        out[key] = _Entry(fields, api_version, time if isinstance(time, str) else None)
    return out


def _is_reset(entries: Any) -> bool:
    # ``managedFields: []`` or ``[{}]`` in a request clears every entry.
    return isinstance(entries, list) and (not entries or (len(entries) == 1 and entries[0] == {}))


def _starting_entries(live: Object, new: Object, subresource: str) -> dict[_Manager, _Entry]:
    live_entries = _decode(_metadata(live).get("managedFields") or []) or {}
    if subresource:
        return live_entries
    requested = _metadata(new).get("managedFields")
    if _is_reset(requested):
        return {}
    decoded = _decode(requested)
    return decoded if decoded else live_entries


def _metadata(obj: Object) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _without_managed_fields(obj: Object) -> Object:
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or "managedFields" not in meta:
        return obj
    out = dict(obj)
    out["metadata"] = {k: v for k, v in meta.items() if k != "managedFields"}
    return out


def _time_key(entry: _Entry) -> str:
    # RFC 3339 UTC times with second precision sort as text; unset sorts first (Unix 0).
    return entry.time or ""


def _cap(entries: dict[_Manager, _Entry]) -> None:
    updaters = [m for m in entries if m.operation == _UPDATE]
    if len(updaters) <= MAX_UPDATE_MANAGERS:
        return
    updaters.sort(key=lambda m: (_time_key(entries[m]), m))
    count = len(updaters)
    first_by_version: dict[str, _Manager] = {}
    for manager in updaters:
        if count <= MAX_UPDATE_MANAGERS:
            break
        entry = entries[manager]
        bucket = _Manager(ANCIENT_CHANGES, _UPDATE, entry.api_version, "")
        first = first_by_version.get(entry.api_version)
        if first is None:
            first_by_version[entry.api_version] = manager
            continue
        if bucket not in entries:
            entries[bucket] = entries.pop(first)
        merged = entries[bucket]
        entries[bucket] = _Entry(entry.fields | merged.fields, entry.api_version, entry.time)
        del entries[manager]
        count -= 1


def _encode(entries: dict[_Manager, _Entry]) -> list[dict[str, Any]] | None:
    if not entries:
        return None

    def sort_key(item: tuple[_Manager, _Entry]) -> tuple[str, str, str, str, str]:
        manager, entry = item
        return (
            manager.operation,
            _time_key(entry),
            manager.manager,
            entry.api_version,
            manager.subresource,
        )

    out: list[dict[str, Any]] = []
    for manager, entry in sorted(entries.items(), key=sort_key):
        encoded: dict[str, Any] = {
            "manager": manager.manager,
            "operation": manager.operation,
            "apiVersion": entry.api_version,
        }
        if entry.time is not None:
            encoded["time"] = entry.time
        encoded["fieldsType"] = "FieldsV1"
        encoded["fieldsV1"] = to_fields_v1(entry.fields)
        if manager.subresource:
            encoded["subresource"] = manager.subresource
        out.append(encoded)
    return out


def update_managed_fields(
    live: Object, new: Object, request: ManagedFieldsRequest
) -> list[dict[str, Any]] | None:
    """The ``metadata.managedFields`` the new object gets (None: no entries).

    ``live`` is the current object (the kind's zero object on create) and ``new`` the object
    being written, both in ``request.api_version``. Neither is modified."""
    entries = _starting_entries(live, new, request.subresource)
    change = compare(_without_managed_fields(live), _without_managed_fields(new), request.types)
    ignored = request.ignored
    touched = recursive_difference(change.modified | change.added, ignored)
    removed = recursive_difference(change.removed, ignored)
    for manager in list(entries):
        entry = entries[manager]
        remaining = entry.fields - touched - removed
        if remaining:
            entry.fields = remaining
        else:
            del entries[manager]
    gained = (touched - removed) - _STRIPPED
    if gained:
        me = _Manager(
            request.manager or "unknown", _UPDATE, request.api_version, request.subresource
        )
        previous = entries.get(me)
        fields = gained | previous.fields if previous is not None else gained
        entries[me] = _Entry(fields, request.api_version, request.now)
    _cap(entries)
    return _encode(entries)
