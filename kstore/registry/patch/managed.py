"""``metadata.managedFields``: who owns which fields, and how an update moves ownership.

Each entry of ``managedFields`` is one manager: its name, the operation that made it (``Apply``
for server-side apply, ``Update`` for everything else), the ``apiVersion`` its field set is
written in, the subresource, the time of its last change and the set (``fieldsV1``). A manager
is identified by (name, operation, apiVersion for Update only, subresource), as Kubernetes'
``BuildManagerIdentifier`` does: an applier keeps one entry across versions, an updater has one
per version.

:func:`track_update` is Kubernetes' field manager for create, update and non-apply patches:
the manager comes to own every field the write added or changed, other managers lose those
fields and every removed field; server-owned metadata (name, uid, resourceVersion, ...) is
never owned; at most :data:`MAX_UPDATE_MANAGERS` Update entries are kept, older ones merged
into ``ancient-changes``. Objects that never had managedFields are only tracked from their
creation on (an update of such an object records nothing, as in Kubernetes).

Cost: every write runs this, so the common create (nobody else owns fields yet) skips the
general comparison and writes its one entry's ``fieldsV1`` in a single walk
(:func:`created_fields_v1`, property-tested against ``compare`` + ``update_managed``); stamps
come from a clock formatted once a second.

Approximation: Kubernetes converts the objects to each manager's ``apiVersion`` before
comparing; kstore compares in the request's version for every manager, which is exact while a
kind's versions name their fields alike (true of the built-in kinds' common fields).
"""

from __future__ import annotations

import dataclasses
import functools
import time as _time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.patch_meta import DEDUCED, ListType, NodeKind, TypeNode
from kstore.codec.json import dumps as json_dumps
from kstore.codec.json import loads as json_loads
from kstore.errors import BadRequest
from kstore.registry.patch.fieldsets import FieldSet, PathElement, path_element_order
from kstore.registry.patch.typed import (
    _LIST,
    _MAP,
    _TYPED_CONTAINERS,
    MISSING,
    SchemaError,
    _atom,
    _child,
    _empty,
    _is_atomic,
    compare,
    item_path_element,
    json_equal,
)

__all__ = [
    "ANCIENT_CHANGES",
    "BEFORE_FIRST_APPLY",
    "MAX_UPDATE_MANAGERS",
    "Managed",
    "ManagerKey",
    "VersionedSet",
    "decode_managed_fields",
    "encode_managed_fields",
    "format_time",
    "keep_old_timestamps",
    "manager_from_user_agent",
    "reset_field_set",
    "track_update",
    "update_managed",
]

#: Kubernetes' ``DefaultMaxUpdateManagers``.
MAX_UPDATE_MANAGERS: Final = 10
ANCIENT_CHANGES: Final = "ancient-changes"
BEFORE_FIRST_APPLY: Final = "before-first-apply"
APPLY: Final = "Apply"
UPDATE: Final = "Update"


@dataclass(frozen=True, slots=True, order=True)
class ManagerKey:
    """A manager's identity; ``api_version`` is "" for appliers."""

    manager: str
    operation: str
    api_version: str = ""
    subresource: str = ""

    @staticmethod
    def for_update(manager: str, api_version: str, subresource: str = "") -> ManagerKey:
        return ManagerKey(manager or "unknown", UPDATE, api_version, subresource)

    @staticmethod
    def for_apply(manager: str, subresource: str = "") -> ManagerKey:
        return ManagerKey(manager or "unknown", APPLY, "", subresource)

    def describe(self) -> str:
        """How Kubernetes names the manager in a conflict message."""
        text = f'"{self.manager}"'
        if self.subresource:
            text += f' with subresource "{self.subresource}"'
        if self.operation == UPDATE:
            text += f" using {self.api_version}"
        return text


@dataclass(frozen=True, slots=True)
class VersionedSet:
    fields: FieldSet
    api_version: str
    applied: bool


@dataclass(slots=True)
class Managed:
    """Decoded managedFields: a set and a time (``None`` when unknown) per manager."""

    fields: dict[ManagerKey, VersionedSet] = dataclasses.field(default_factory=dict)
    times: dict[ManagerKey, str | None] = dataclasses.field(default_factory=dict)

    def copy(self) -> Managed:
        return Managed(dict(self.fields), dict(self.times))


def format_time(moment: datetime) -> str:
    """RFC 3339 in UTC with second precision, as ``metav1.Time`` marshals."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class _Clock:
    """The current time as :func:`format_time` writes it, formatted once per second (every
    write stamps its managedFields entry; ``strftime`` costs more than the rest of a small
    create's bookkeeping). A race between threads at a second boundary only formats twice."""

    __slots__ = ("second", "text")

    def __init__(self) -> None:
        self.second = -1
        self.text = ""

    def now(self) -> str:
        second = int(_time.time())
        if second != self.second:
            text = _time.strftime("%Y-%m-%dT%H:%M:%SZ", _time.gmtime(second))
            self.second, self.text = second, text
            return text
        return self.text


_clock = _Clock()


def current_time() -> str:
    """Now, as :func:`format_time` writes it (formatted once per second)."""
    return _clock.now()


@functools.lru_cache(maxsize=1024)
def _seconds(time: str | None) -> int:
    # Cached: a managedFields list is sorted by time on every write, and its times repeat.
    if not time:
        return 0
    try:
        return int(datetime.fromisoformat(time.replace("Z", "+00:00")).timestamp())
    except ValueError:
        return 0


def manager_from_user_agent(user_agent: str) -> str:
    """The manager of a write without ``fieldManager``: the User-Agent up to its first ``/``
    (``kubectl/v1.37.1 (linux/amd64) ...`` -> ``kubectl``), as Kubernetes derives it."""
    return user_agent.split("/", 1)[0][:128]


# ---------------------------------------------------------------------------- wire form


def decode_managed_fields(entries: Any) -> Managed:
    """Decode ``metadata.managedFields``; BadRequest when an entry is malformed."""
    managed = Managed()
    if entries is None:
        return managed
    if not isinstance(entries, list):
        raise BadRequest("managedFields must be a list")
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise BadRequest(f"managed fields entry {i} must be an object")
        operation = entry.get("operation")
        if operation not in (APPLY, UPDATE):
            raise BadRequest("operation must be `Apply` or `Update`")
        api_version = entry.get("apiVersion")
        if not isinstance(api_version, str) or not api_version:
            raise BadRequest("apiVersion must not be empty")
        fields_type = entry.get("fieldsType") or ""
        if fields_type != "FieldsV1":
            if not fields_type:
                raise BadRequest(f"missing fieldsType in managed fields entry {i}")
            raise BadRequest(f"invalid fieldsType {fields_type!r} in managed fields entry {i}")
        manager = entry.get("manager") or ""
        subresource = entry.get("subresource") or ""
        if not isinstance(manager, str) or not isinstance(subresource, str):
            raise BadRequest(f"managed fields entry {i} has a malformed manager")
        key = ManagerKey(
            manager, operation, api_version if operation == UPDATE else "", subresource
        )
        raw = entry.get("fieldsV1")
        fields = FieldSet() if raw is None else FieldSet.from_fields_v1(raw)
        managed.fields[key] = VersionedSet(fields, api_version, operation == APPLY)
        time = entry.get("time")
        managed.times[key] = time if isinstance(time, str) else None
    return managed


def encode_managed_fields(managed: Managed) -> list[dict[str, Any]]:
    """The ``managedFields`` list, in Kubernetes' order (operation, time, manager, apiVersion,
    subresource); empty when nobody owns anything."""
    if len(managed.fields) == 1:
        # The common case (one writer so far): nothing to order.
        ((key, vs),) = managed.fields.items()
        return [_entry(key, vs, managed.times.get(key))]
    entries: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    for key, vs in managed.fields.items():
        time = managed.times.get(key)
        entry = _entry(key, vs, time)
        sort_key = (
            entry["operation"],
            _seconds(time),
            key.manager,
            vs.api_version,
            key.subresource,
        )
        entries.append((sort_key, entry))
    entries.sort(key=lambda e: e[0])
    return [e for _, e in entries]


def _entry(key: ManagerKey, vs: VersionedSet, time: str | None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "manager": key.manager,
        "operation": APPLY if vs.applied else UPDATE,
        "apiVersion": vs.api_version,
    }
    if time:
        entry["time"] = time
    entry["fieldsType"] = "FieldsV1"
    entry["fieldsV1"] = vs.fields.to_fields_v1()
    if key.subresource:
        entry["subresource"] = key.subresource
    return entry


def set_managed_fields(obj: Object, managed: Managed) -> Object:
    """A shallow copy of ``obj`` whose metadata carries ``managed`` (or no managedFields)."""
    meta = dict(obj.get("metadata") or {})
    encoded = encode_managed_fields(managed)
    if encoded:
        meta["managedFields"] = encoded
    else:
        meta.pop("managedFields", None)
    out = dict(obj)
    out["metadata"] = meta
    return out


def without_managed_fields(obj: Object) -> Object:
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or "managedFields" not in meta:
        return obj
    out = dict(obj)
    out["metadata"] = {k: v for k, v in meta.items() if k != "managedFields"}
    return out


# ---------------------------------------------------------------------------- ownership


def _field_paths(*paths: tuple[str, ...]) -> FieldSet:
    return FieldSet.of(*(tuple(PathElement.of_field(p) for p in path) for path in paths))


#: What no manager owns (Kubernetes' stripMetaManager).
_STRIPPED = _field_paths(
    ("apiVersion",),
    ("kind",),
    ("metadata",),
    ("metadata", "name"),
    ("metadata", "namespace"),
    ("metadata", "creationTimestamp"),
    ("metadata", "selfLink"),
    ("metadata", "uid"),
    ("metadata", "clusterName"),
    ("metadata", "generation"),
    ("metadata", "managedFields"),
    ("metadata", "resourceVersion"),
)


def reset_field_set(paths: Iterable[tuple[str, ...]]) -> FieldSet:
    """The field set of a strategy's reset fields, e.g. ``[("status",)]``."""
    return _field_paths(*paths)


def strip(managed: Managed, key: ManagerKey) -> None:
    vs = managed.fields.get(key)
    if vs is None:
        return
    rest = vs.fields.difference(_STRIPPED)
    if rest.empty():
        del managed.fields[key]
    else:
        managed.fields[key] = VersionedSet(rest, vs.api_version, vs.applied)


def update_managed(
    managed: Managed,
    live: Object,
    new: Object,
    node: TypeNode,
    key: ManagerKey,
    *,
    reset_fields: FieldSet,
    now: str,
) -> None:
    """Record an Update by ``key`` of ``live`` into ``new`` in ``managed`` (in place)."""
    cmp = compare(live, new, node)
    added = cmp.added.recursive_difference(reset_fields)
    modified = cmp.modified.recursive_difference(reset_fields)
    removed = cmp.removed.recursive_difference(reset_fields)
    changed = modified.union(added)
    for other, vs in list(managed.fields.items()):
        rest = vs.fields.difference(changed).difference(removed)
        if rest.empty():
            del managed.fields[other]
            managed.times.pop(other, None)
        elif rest != vs.fields:
            managed.fields[other] = VersionedSet(rest, vs.api_version, vs.applied)
    owned = changed.difference(_STRIPPED)
    if owned.empty():
        return
    previous = managed.fields.get(key)
    if previous is not None:
        owned = owned.union(previous.fields)
    managed.fields[key] = VersionedSet(owned, key.api_version, False)
    managed.times[key] = now


def cap_update_managers(managed: Managed, limit: int = MAX_UPDATE_MANAGERS) -> None:
    """Merge the oldest Update managers into ``ancient-changes`` (one per apiVersion) until at
    most ``limit`` Update entries remain."""
    updaters = [k for k, vs in managed.fields.items() if not vs.applied]
    if len(updaters) <= limit:
        return
    updaters.sort(key=lambda k: (_seconds(managed.times.get(k)), k.manager, k))
    first_of_version: dict[str, ManagerKey] = {}
    remaining = len(updaters)
    for key in updaters:
        if remaining <= limit:
            break
        vs = managed.fields[key]
        bucket = ManagerKey.for_update(ANCIENT_CHANGES, vs.api_version)
        first = first_of_version.get(vs.api_version)
        if first is None:
            first_of_version[vs.api_version] = key
            continue
        if bucket not in managed.fields:
            managed.fields[bucket] = managed.fields.pop(first)
            managed.times.pop(first, None)
        merged = vs.fields.union(managed.fields[bucket].fields)
        managed.fields[bucket] = VersionedSet(merged, vs.api_version, False)
        managed.times[bucket] = managed.times.get(key)
        del managed.fields[key]
        managed.times.pop(key, None)
        remaining -= 1


def _is_reset(entries: Any) -> bool:
    """A request that sets ``managedFields: []`` (or one empty entry) clears them."""
    if not isinstance(entries, list):
        return False
    return len(entries) == 0 or (len(entries) == 1 and entries[0] == {})


def _live_or_request(live: Object, new: Object, *, subresource: str) -> Managed:
    """The managedFields to start from: the request's when it sets valid, non-empty ones (a
    client may rewrite them), else the live object's; a subresource write always takes the
    live ones. Undecodable sets count as empty, as in Kubernetes."""
    live_entries = (live.get("metadata") or {}).get("managedFields")
    if not subresource:
        requested = (new.get("metadata") or {}).get("managedFields")
        if _is_reset(requested):
            return Managed()
        if requested is not None:
            try:
                managed = decode_managed_fields(requested)
            except BadRequest:
                managed = Managed()
            if managed.fields:
                return managed
    try:
        return decode_managed_fields(live_entries)
    except BadRequest:
        return Managed()


def track_update(
    live: Object,
    new: Object,
    node: TypeNode,
    *,
    api_version: str,
    manager: str,
    subresource: str = "",
    reset_fields: FieldSet | None = None,
    zero: Object | None = None,
    now: datetime | None = None,
) -> Object:
    """``new`` with managedFields recording this create or update by ``manager``.

    ``live`` is the current object (``{}`` on create), both in ``api_version`` (the request's
    ``group/version``). A create is compared with ``zero``, the kind's zero value (see
    :func:`kstore.api.patch_meta.zero_object`), as Kubernetes compares it with a new Go
    object. The result shares sub-trees with ``new``; neither input is modified.
    """
    managed = _live_or_request(live, new, subresource=subresource)
    out = without_managed_fields(new)
    exists = bool((live.get("metadata") or {}).get("uid"))
    if not managed.fields and exists:
        # An existing object nobody tracks stays untracked until someone applies.
        return out
    key = ManagerKey.for_update(manager, api_version, subresource)
    stamp = _clock.now() if now is None else format_time(now)
    base = without_managed_fields(live) if exists else (zero or {})
    if not managed.fields and not exists and _zero_like(base):
        # A create nobody else owns fields of (the usual case): only what the write added or
        # changed matters, and nothing needs the set but its FieldsV1, written in one walk
        # (what update_managed and encode_managed_fields would write).
        owned = created_fields_v1(base, out, node)
        if reset_fields is not None:
            _remove_v1(owned, reset_fields, recursive=True)
        _remove_v1(owned, _STRIPPED, recursive=False)
        entry = None
        if owned:
            entry = _entry_v1(key, owned, stamp)
        return _with_entry(out, entry)
    update_managed(
        managed,
        base,
        out,
        node,
        key,
        reset_fields=reset_fields or FieldSet(),
        now=stamp,
    )
    cap_update_managers(managed)
    return keep_old_timestamps(live, set_managed_fields(out, managed))


def keep_old_timestamps(live: Object, new: Object) -> Object:
    """When a write changes nothing but managedFields timestamps, keep the old timestamps, so a
    no-op stays a no-op (Kubernetes' IgnoreManagedFieldsTimestampsTransformer)."""
    old_entries = (live.get("metadata") or {}).get("managedFields")
    new_entries = (new.get("metadata") or {}).get("managedFields")
    if not isinstance(old_entries, list) or not isinstance(new_entries, list):
        return new
    if len(old_entries) != len(new_entries) or not new_entries:
        return new
    if all(a.get("time") == b.get("time") for a, b in zip(old_entries, new_entries, strict=True)):
        return new

    def untimed(entries: list[Any]) -> list[Any]:
        return [{k: v for k, v in e.items() if k != "time"} for e in entries]

    if not json_equal(untimed(old_entries), untimed(new_entries)):
        return new
    if not json_equal(without_managed_fields(live), without_managed_fields(new)):
        return new
    out = dict(new)
    out["metadata"] = dict(new["metadata"])
    # A copy: the live object may be a shared, read-only cache entry.
    out["metadata"]["managedFields"] = json_loads(json_dumps(old_entries), max_depth=None)
    return out


# ------------------------------------------------------------------- creates, in one walk


def _zero_like(value: Any) -> bool:
    """Whether ``value`` holds only objects and nulls, as a kind's zero value does (the
    creation walk below relies on it: a removed value without list elements cannot fail)."""
    if isinstance(value, dict):
        return all(v is None or _zero_like(v) for v in value.values())
    return False


def created_fields_v1(zero: Object, new: Object, node: TypeNode) -> dict[str, Any]:
    """The ``fieldsV1`` of what :func:`~kstore.registry.patch.typed.compare` reports as added
    or modified from ``zero`` (a zero value: objects and nulls only, see :func:`_zero_like`)
    to ``new``: what ``compare`` then :meth:`FieldSet.to_fields_v1` give, in one walk that
    builds no trie. Raises what ``compare`` raises (a
    :class:`~kstore.registry.patch.typed.SchemaError` for an element without its keys), on
    the same element. The result is a new object the caller owns."""
    try:
        found, _ = _created_sorted(zero, new, node)
    except SchemaError:
        # The sorted walk met a malformed element, maybe not the one compare meets first:
        # the ordered walk raises compare's error.
        found, _ = _created(zero, new, node, _added)
    return found or {}


_Added = Callable[[Any, TypeNode], "dict[str, Any] | None"]


def _created(
    lhs: Any, rhs: Any, node: TypeNode, added: _Added
) -> tuple[dict[str, Any] | None, bool]:
    """(the FieldsV1 entries under ``rhs``, whether the path of ``rhs`` itself changed) for
    ``lhs`` MISSING or part of a zero value, the entries of new values written by ``added``.
    Mirrors ``typed._compare`` case by case."""
    if lhs is MISSING:
        return added(rhs, node), True
    atom = _atom(node, rhs)
    if _atom(node, lhs) != atom:
        return None, True
    if lhs is rhs or (node.kind in _TYPED_CONTAINERS and lhs == rhs):
        return None, False
    if _is_atomic(node) or (_empty(lhs) and _empty(rhs)):
        return None, not json_equal(lhs, rhs)
    if atom == _MAP:
        lmap = lhs if isinstance(lhs, dict) else {}
        rmap = rhs if isinstance(rhs, dict) else {}
        # Walked in compare's order (the same error first), written in FieldsV1's.
        found: dict[str, tuple[dict[str, Any] | None, bool]] = {}
        for key, lv in lmap.items():
            rv = rmap.get(key, MISSING)
            if rv is not MISSING:  # else only removals, which a create does not record
                found[key] = _created(lv, rv, _child(node, key)[0], added)
        for key, rv in rmap.items():
            if key not in lmap:
                found[key] = (added(rv, _child(node, key)[0]), True)
        out: dict[str, Any] = {}
        for key in sorted(found):
            sub, member = found[key]
            if sub:
                out["f:" + key] = {".": {}, **sub} if member else sub
            elif member:
                out["f:" + key] = {}
        return out, False
    if atom == _LIST:
        # A zero value's lists are null, so every element is new.
        return added(rhs, node), False
    return None, not json_equal(lhs, rhs)


_CONTAINERS = (dict, list)


def _added(value: Any, node: TypeNode) -> dict[str, Any] | None:
    """The FieldsV1 entries under a value whose own path is new (None when there are none):
    every field of a granular object, every element of a set or keyed list, recursively;
    scalars, nulls, empty containers and atomic values are leaves.

    The hot part of a create's bookkeeping (every field of the object passes here once), so
    ``_atom``, ``_is_atomic`` and ``_child`` are inlined: a ~5 KiB Pod's walk took 230-340 us
    with the calls."""
    if not value or not isinstance(value, _CONTAINERS):
        return None
    kind = node.kind
    if kind is NodeKind.LIST:
        if node.list_type is ListType.ATOMIC or not isinstance(value, list):
            return None
        return _added_items(value, node)
    if node.atomic or not isinstance(value, dict):
        return None
    if kind is NodeKind.STRUCT:
        fields = node.fields
        # Walked in the object's order (compare's: the same error first), written in
        # FieldsV1's (field elements order by name). Undeclared fields are deduced.
        subs: dict[str, dict[str, Any] | None] = {}
        for key, child in value.items():
            if child and isinstance(child, _CONTAINERS):
                meta = fields.get(key)
                subs[key] = _added(child, DEDUCED if meta is None else meta.type)
            else:
                subs[key] = None
    elif kind is NodeKind.MAP or kind is NodeKind.DEDUCED:
        item = node.item if kind is NodeKind.MAP else DEDUCED
        assert item is not None
        subs = {
            key: _added(child, item) if child and isinstance(child, _CONTAINERS) else None
            for key, child in value.items()
        }
    else:  # scalar and untyped nodes are leaves
        return None
    out: dict[str, Any] = {}
    for key in sorted(subs):
        sub = subs[key]
        out["f:" + key] = {".": {}, **sub} if sub else {}
    return out


def _added_items(items: list[Any], node: TypeNode) -> dict[str, Any]:
    assert node.item is not None
    # Every element's path first, as compare groups them before descending (so the same
    # malformed element raises), then each distinct one in order of first appearance.
    order: list[PathElement] = []
    groups: dict[PathElement, list[Any]] = {}
    for item in items:
        pe = item_path_element(node, item)
        group = groups.get(pe)
        if group is None:
            groups[pe] = [item]
            order.append(pe)
        else:
            group.append(item)
    subs: dict[PathElement, dict[str, Any] | None] = {}
    for pe in order:
        values = groups[pe]
        # A repeated key is owned as a whole.
        subs[pe] = _added(values[0], node.item) if len(values) == 1 else None
    out: dict[str, Any] = {}
    for pe in sorted(order, key=path_element_order):
        sub = subs[pe]
        out[pe.serialize()] = {".": {}, **sub} if sub else {}
    return out


# The walk above goes in compare's order (so that an error is compare's) and sorts at each
# level; the one below writes each level straight in FieldsV1's order, "." first, with no
# intermediate dicts and no merge copies (a ~5 KiB Pod, min of 3 interleaved runs: 150 -> 120
# us). It visits the same elements, so it raises exactly when the ordered walk does;
# created_fields_v1 then re-runs the ordered walk for compare's error.

#: Marks a list key that more than one element has (the elements are owned as a whole).
_REPEATED: Final = object()


def _created_sorted(lhs: Any, rhs: Any, node: TypeNode) -> tuple[dict[str, Any] | None, bool]:
    """What :func:`_created` returns, by the sorted walk: a map level walks the keys of
    ``rhs`` once, in sorted order (the entries are keyed by them), writing each entry as it
    goes rather than collecting results to sort afterwards."""
    if lhs is MISSING:
        return _added_sorted(rhs, node), True
    atom = _atom(node, rhs)
    if _atom(node, lhs) != atom:
        return None, True
    if lhs is rhs or (node.kind in _TYPED_CONTAINERS and lhs == rhs):
        return None, False
    if _is_atomic(node) or (_empty(lhs) and _empty(rhs)):
        return None, not json_equal(lhs, rhs)
    if atom == _MAP:
        lmap = lhs if isinstance(lhs, dict) else {}
        rmap = rhs if isinstance(rhs, dict) else {}
        out: dict[str, Any] = {}
        for key in sorted(rmap):
            child = _child(node, key)[0]
            lv = lmap.get(key, MISSING)
            if lv is MISSING:
                out["f:" + key] = _new_entry(rmap[key], child)
                continue
            sub, member = _created_sorted(lv, rmap[key], child)
            if sub:
                out["f:" + key] = {".": {}, **sub} if member else sub
            elif member:
                out["f:" + key] = {}
        return out, False
    if atom == _LIST:
        return _added_sorted(rhs, node), False
    return None, not json_equal(lhs, rhs)


def _added_sorted(value: Any, node: TypeNode) -> dict[str, Any] | None:
    """What :func:`_added` returns, by the sorted walk."""
    entry = _new_entry(value, node)
    if not entry:
        return None
    del entry["."]
    return entry


def _new_entry(value: Any, node: TypeNode) -> dict[str, Any]:
    """The FieldsV1 entry of a value whose own path is new: ``{}`` for a leaf, else ``"."``
    then what :func:`_added` finds under it, in FieldsV1's order."""
    if not value or not isinstance(value, _CONTAINERS):
        return {}
    kind = node.kind
    if kind is NodeKind.LIST:
        if node.list_type is ListType.ATOMIC or not isinstance(value, list):
            return {}
        return _items_entry(value, node)
    if node.atomic or not isinstance(value, dict):
        return {}
    out: dict[str, Any] = {".": {}}
    if kind is NodeKind.STRUCT:
        fields = node.fields
        for key in sorted(value):
            child = value[key]
            if child and isinstance(child, _CONTAINERS):
                meta = fields.get(key)
                out["f:" + key] = _new_entry(child, DEDUCED if meta is None else meta.type)
            else:
                out["f:" + key] = {}
        return out
    if kind is NodeKind.MAP or kind is NodeKind.DEDUCED:
        item = node.item if kind is NodeKind.MAP else DEDUCED
        assert item is not None
        for key in sorted(value):
            child = value[key]
            out["f:" + key] = (
                _new_entry(child, item) if child and isinstance(child, _CONTAINERS) else {}
            )
        return out
    return {}  # scalar and untyped nodes are leaves


def _items_entry(items: list[Any], node: TypeNode) -> dict[str, Any]:
    item_node = node.item
    assert item_node is not None
    first: dict[PathElement, Any] = {}
    for item in items:
        pe = item_path_element(node, item)
        first[pe] = _REPEATED if pe in first else item
    out: dict[str, Any] = {".": {}}
    for pe in sorted(first, key=path_element_order):
        item = first[pe]
        out[pe.serialize()] = {} if item is _REPEATED else _new_entry(item, item_node)
    return out


def _remove_v1(entries: dict[str, Any], fields: FieldSet, *, recursive: bool) -> None:
    """Take ``fields`` out of FieldsV1 ``entries`` in place: as
    :meth:`FieldSet.recursive_difference` (a path takes everything under it) or as
    :meth:`FieldSet.difference` (only the paths themselves), keeping FieldsV1's shape (an
    entry that is neither a member nor a parent disappears)."""
    for pe in fields.members:
        text = pe.serialize()
        entry = entries.get(text)
        if entry is None:
            continue
        if recursive or not entry:
            del entries[text]
        else:
            entry.pop(".", None)  # a parent that is no longer a member
    for pe, sub in fields.children.items():
        text = pe.serialize()
        entry = entries.get(text)
        if not entry:
            continue
        member = "." in entry
        _remove_v1(entry, sub, recursive=recursive)
        if member and len(entry) == 1:
            entry.clear()  # a member with nothing left under it
        elif not member and not entry:
            del entries[text]


def _entry_v1(key: ManagerKey, fields_v1: dict[str, Any], time: str) -> dict[str, Any]:
    """An Update entry, as :func:`encode_managed_fields` writes one."""
    entry: dict[str, Any] = {
        "manager": key.manager,
        "operation": UPDATE,
        "apiVersion": key.api_version,
        "time": time,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields_v1,
    }
    if key.subresource:
        entry["subresource"] = key.subresource
    return entry


def _with_entry(obj: Object, entry: dict[str, Any] | None) -> Object:
    """A shallow copy of ``obj`` whose metadata holds just ``entry`` (or no managedFields)."""
    meta = dict(obj.get("metadata") or {})
    if entry is None:
        meta.pop("managedFields", None)
    else:
        meta["managedFields"] = [entry]
    out = dict(obj)
    out["metadata"] = meta
    return out
