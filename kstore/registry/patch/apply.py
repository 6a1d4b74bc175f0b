"""Server-side apply (``application/apply-patch+yaml``): merge a manager's configuration into
the live object and track field ownership, as Kubernetes' field manager and
structured-merge-diff do.

An apply by manager M with configuration C:

1. the object becomes ``live`` merged with ``C`` (C wins; keyed lists and sets merged element by
   element, atomic lists and maps replaced), see :func:`kstore.registry.patch.typed.merge`;
2. M comes to own exactly the fields C sets (``Apply`` entry in managedFields);
3. fields M owned before and C no longer sets are removed, unless another manager owns them;
4. a field another manager owns and C changes is a conflict: 409 Conflict listing them all
   (``Apply failed with 2 conflicts: conflicts with "kubectl-edit" using v1: ...``), unless
   ``force``, which moves those fields to M.

Also as in Kubernetes: an object without managedFields first gets a ``before-first-apply``
Update manager owning every field it has; when the manager is ``kubectl`` (``kubectl apply
--server-side``) conflicts over fields whose live values still equal the client-side
``last-applied-configuration`` annotation are taken over silently, and that annotation, when
present, is rewritten to the new configuration.

Approximations: objects are compared in the request's version for every manager (Kubernetes
converts to each manager's version); scalar values are not checked against their declared
type; a rejected configuration's message reports the first problems found.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from kstore.api.gvk import GroupVersionKind, Object
from kstore.api.patch_meta import NodeKind, TypeNode
from kstore.errors import BadRequest, Cause, Conflict, InternalError
from kstore.registry.patch._gofmt import go_json
from kstore.registry.patch.fieldsets import FieldSet, Path, path_string
from kstore.registry.patch.managed import (
    BEFORE_FIRST_APPLY,
    Managed,
    ManagerKey,
    VersionedSet,
    decode_managed_fields,
    format_time,
    keep_old_timestamps,
    set_managed_fields,
    strip,
    update_managed,
    without_managed_fields,
)
from kstore.registry.patch.typed import (
    SchemaError,
    compare,
    ensure_named_fields_are_members,
    json_equal,
    merge,
    remove_items,
    to_field_set,
    validate,
)

__all__ = ["LAST_APPLIED_ANNOTATION", "ApplyConflicts", "server_side_apply"]

LAST_APPLIED_ANNOTATION: Final = "kubectl.kubernetes.io/last-applied-configuration"
#: Kubernetes' TotalAnnotationSizeLimitB: a last-applied annotation beyond it is dropped.
_ANNOTATIONS_LIMIT: Final = 256 * 1024
_KUBECTL: Final = "kubectl"


@dataclass(frozen=True, slots=True)
class _Conflict:
    manager: ManagerKey
    path: Path


class ApplyConflicts(Exception):
    """Fields other managers own that an apply would change (before they become a 409)."""

    def __init__(self, conflicts: list[_Conflict]) -> None:
        super().__init__(f"{len(conflicts)} conflicts")
        self.conflicts = conflicts

    def to_error(self) -> Conflict:
        """Kubernetes' 409: the message of ``NewConflictError`` and one cause per field."""
        conflicts = self.conflicts
        causes = [
            Cause(
                "FieldManagerConflict", f"conflict with {c.manager.describe()}", path_string(c.path)
            )
            for c in conflicts
        ]
        if len(conflicts) == 1:
            c = conflicts[0]
            message = (
                f"Apply failed with 1 conflict: conflict with {c.manager.describe()}: "
                f"{path_string(c.path)}"
            )
        else:
            lines: list[str] = []
            by_manager: dict[ManagerKey, list[Path]] = {}
            for c in conflicts:
                by_manager.setdefault(c.manager, []).append(c.path)
            for manager in sorted(by_manager, key=_identifier):
                lines.append(f"conflicts with {manager.describe()}:")
                lines.extend(f"- {path_string(p)}" for p in by_manager[manager])
            message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
        return Conflict(message, causes=causes)


def _identifier(key: ManagerKey) -> str:
    """The JSON manager identifier Kubernetes sorts managers by in a conflict message."""
    entry: dict[str, str] = {"manager": key.manager, "operation": key.operation}
    if key.api_version:
        entry["apiVersion"] = key.api_version
    if key.subresource:
        entry["subresource"] = key.subresource
    return json.dumps(entry, separators=(",", ":"))


def _go_gvk(api_version: Any, kind: Any) -> str:
    """A GroupVersionKind as Go prints it (``apps/v1, Kind=Deployment``, ``/v1, Kind=Pod``)."""
    group, _, version = (api_version if isinstance(api_version, str) else "").rpartition("/")
    return f"{group}/{version}, Kind={kind if isinstance(kind, str) else ''}"


def server_side_apply(
    live: Object,
    config: Object,
    node: TypeNode,
    *,
    gvk: GroupVersionKind,
    manager: str,
    force: bool,
    subresource: str = "",
    reset_fields: FieldSet | None = None,
    now: datetime | None = None,
) -> Object:
    """The object after ``manager`` applies ``config`` to ``live`` (``{}`` when creating).

    Raises BadRequest for a configuration of another kind or version or one that sets
    managedFields, InternalError (as Kubernetes, a 500) for one that does not fit the kind's
    type, and Conflict (409) for conflicts without ``force``.
    """
    if config.get("apiVersion") != gvk.api_version or config.get("kind") != gvk.kind:
        raise BadRequest(
            f"invalid object type: {_go_gvk(config.get('apiVersion'), config.get('kind'))}"
        )
    meta = config.get("metadata")
    if isinstance(meta, dict) and meta.get("managedFields") is not None:
        raise BadRequest("metadata.managedFields must be nil")
    try:
        managed = decode_managed_fields((live.get("metadata") or {}).get("managedFields"))
    except BadRequest as exc:
        raise InternalError(f"failed to decode managed fields: {exc.message}") from None
    problems = validate(config, node)
    if problems:
        raise InternalError(
            f"failed to create typed patch object ({_describe(config, gvk)}): "
            + _join_problems(problems)
        )
    stamp = format_time(now or datetime.now(UTC))
    reset = reset_fields or FieldSet()
    original, live = live, without_managed_fields(live)
    if not managed.fields:
        update_managed(
            managed,
            {},
            live,
            node,
            ManagerKey.for_update(BEFORE_FIRST_APPLY, gvk.group_version.api_version, subresource),
            reset_fields=reset,
            now=stamp,
        )
    key = ManagerKey.for_apply(manager, subresource)
    api_version = gvk.group_version.api_version
    try:
        try:
            result, managed = _apply(live, config, node, managed, key, api_version, reset, force)
        except ApplyConflicts as exc:
            if manager != _KUBECTL:
                raise
            allowed = _allowed_by_last_applied(live, node, api_version)
            rest = [c for c in exc.conflicts if allowed is None or not allowed.has(c.path)]
            if rest:
                raise ApplyConflicts(rest) from None
            result, managed = _apply(live, config, node, managed, key, api_version, reset, True)
    except ApplyConflicts as exc:
        raise exc.to_error() from None
    except SchemaError as exc:
        raise InternalError(f"failed to merge config: {exc}") from None
    strip(managed, key)
    if result is None:
        result = live
    else:
        managed.times[key] = stamp
    if manager == _KUBECTL:
        result = _update_last_applied(result, config)
    return keep_old_timestamps(original, set_managed_fields(result, managed))


def _describe(obj: Object, gvk: GroupVersionKind) -> str:
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    return (
        f"{meta.get('namespace') or ''}/{meta.get('name') or ''}; "
        f"{gvk.group}/{gvk.version}, Kind={gvk.kind}"
    )


def _join_problems(problems: list[str]) -> str:
    if len(problems) == 1:
        return problems[0]
    return "errors:\n" + "\n".join("  " + p for p in problems)


def _apply(
    live: Object,
    config: Object,
    node: TypeNode,
    managed: Managed,
    key: ManagerKey,
    api_version: str,
    reset: FieldSet,
    force: bool,
) -> tuple[Object | None, Managed]:
    """One attempt (structured-merge-diff's ``Updater.Apply``); the result is None when the
    object does not change. ``managed`` is not modified; the new ownership is returned."""
    managed = managed.copy()
    merged = merge(live, config, node)
    last = managed.fields.get(key)
    applied = to_field_set(config, node).recursive_difference(reset)
    managed.fields[key] = VersionedSet(applied, api_version, True)
    new = _prune(merged, managed, key, last, node)
    cmp = compare(live, new, node)
    changed = cmp.modified.union(cmp.added).recursive_difference(reset)
    removed = cmp.removed.recursive_difference(reset)
    conflicts: list[_Conflict] = []
    for other in sorted(managed.fields, key=_identifier):
        if other == key:
            continue
        clash = managed.fields[other].fields.intersection(changed)
        conflicts.extend(_Conflict(other, p) for p in clash.paths())
    if conflicts and not force:
        raise ApplyConflicts(conflicts)
    for other, vs in list(managed.fields.items()):
        if other == key:
            if vs.fields.empty():
                del managed.fields[other]  # an applier that sets nothing owns nothing
            continue
        rest = vs.fields.difference(changed).difference(removed)
        if rest.empty():
            del managed.fields[other]
            managed.times.pop(other, None)
        elif rest != vs.fields:
            managed.fields[other] = VersionedSet(rest, vs.api_version, vs.applied)
    if json_equal(live, new):
        return None, managed
    # Nulls the configuration set take part in the comparison above (setting a field to null
    # modifies it), then vanish, as they do when Kubernetes decodes the result into a struct.
    return _drop_struct_nulls(new, node), managed


def _prune(
    merged: Object, managed: Managed, key: ManagerKey, last: VersionedSet | None, node: TypeNode
) -> Object:
    """Remove what the manager owned before and no longer applies, unless someone else still
    owns it (structured-merge-diff's prune, addBackOwnedItems and addBackDanglingItems)."""
    if last is None or last.fields.empty():
        return merged
    last_fields = ensure_named_fields_are_members(last.fields, node)
    pruned = remove_items(merged, last_fields, node)
    owned = FieldSet()
    for vs in managed.fields.values():
        owned = owned.union(vs.fields)
    merged_set = ensure_named_fields_are_members(to_field_set(merged, node), node)
    pruned_set = ensure_named_fields_are_members(to_field_set(pruned, node), node)
    keep = pruned_set.union(ensure_named_fields_are_members(owned, node))
    pruned = remove_items(merged, merged_set.difference(keep), node)
    pruned_set = ensure_named_fields_are_members(to_field_set(pruned, node), node)
    dangling = merged_set.difference(pruned_set).intersection(last_fields)
    out = remove_items(merged, dangling, node)
    return out if isinstance(out, dict) else {}


def _drop_struct_nulls(value: Any, node: TypeNode) -> Any:
    """Drop null members of structs (a Go struct cannot hold them: decoding makes them absent)."""
    if isinstance(value, dict) and node.kind is NodeKind.STRUCT:
        out: dict[str, Any] = {}
        for k, v in value.items():
            if v is None:
                continue
            meta = node.fields.get(k)
            out[k] = v if meta is None else _drop_struct_nulls(v, meta.type)
        return out
    if isinstance(value, dict) and node.kind is NodeKind.MAP and node.item is not None:
        item = node.item
        return {k: _drop_struct_nulls(v, item) for k, v in value.items()}
    if isinstance(value, list) and node.kind is NodeKind.LIST and node.item is not None:
        item = node.item
        return [_drop_struct_nulls(v, item) for v in value]
    return value


def _allowed_by_last_applied(live: Object, node: TypeNode, api_version: str) -> FieldSet | None:
    """Fields whose live values still equal the client-side last-applied configuration (the
    fields ``kubectl apply --server-side`` may take over from client-side apply)."""
    annotations = (live.get("metadata") or {}).get("annotations") or {}
    text = annotations.get(LAST_APPLIED_ANNOTATION) if isinstance(annotations, dict) else None
    if not isinstance(text, str) or not text:
        return None
    try:
        last = json.loads(text)
    except ValueError:
        return None
    if not isinstance(last, dict) or last.get("apiVersion") != api_version:
        return None
    if validate(last, node):
        return None
    try:
        fields = to_field_set(last, node)
        cmp = compare(last, live, node)
    except SchemaError:
        return None
    return fields.difference(cmp.modified).difference(cmp.added).difference(cmp.removed)


def _update_last_applied(obj: Object, config: Object) -> Object:
    """When the object has a last-applied annotation, make it the applied configuration."""
    meta = obj.get("metadata") or {}
    annotations = meta.get("annotations") or {}
    if not isinstance(annotations, dict) or not annotations.get(LAST_APPLIED_ANNOTATION):
        return obj
    applied = dict(config)
    applied_meta = dict(config.get("metadata") or {})
    if isinstance(applied_meta.get("annotations"), dict):
        applied_meta["annotations"] = {
            k: v for k, v in applied_meta["annotations"].items() if k != LAST_APPLIED_ANNOTATION
        }
    if "metadata" in config:
        applied["metadata"] = applied_meta
    value = go_json(applied) + "\n"
    new_annotations = dict(annotations)
    new_annotations[LAST_APPLIED_ANNOTATION] = value
    size = sum(len(k) + len(v) for k, v in new_annotations.items() if isinstance(v, str))
    if size > _ANNOTATIONS_LIMIT:
        del new_annotations[LAST_APPLIED_ANNOTATION]
    out = dict(obj)
    out["metadata"] = dict(meta)
    out["metadata"]["annotations"] = new_annotations
    return out
