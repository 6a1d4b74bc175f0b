"""ObjectMeta validation on create and on update, as Kubernetes v1.36 does it.

The entry points take the whole object (its ``metadata`` map is read; a missing or malformed one
counts as empty) and return one :class:`~kstore.errors.Cause` per problem, in Kubernetes' order:

- :func:`validate_object_meta` ``(obj, namespaced, name_fn)`` on create: ``generateName`` (checked
  with ``name_fn(prefix=True)``), ``name`` (required, then ``name_fn``), namespace required or
  forbidden by scope, ``generation`` >= 0, labels, annotations (keys and 256 KiB total),
  ownerReferences, finalizers, managedFields;
- :func:`validate_object_meta_update` ``(new, old)``: no new finalizers while deleting,
  ``resourceVersion`` present, ``generation`` not decremented, ``name``/``namespace``/``uid``/
  ``creationTimestamp``/``deletionTimestamp``/``deletionGracePeriodSeconds`` unchanged, then
  labels, annotations, ownerReferences and managedFields of the new object.

``kube_finalizers=True`` (the default) adds the rule every built-in kind has (Kubernetes' core
``ValidateObjectMeta``): a finalizer without a ``/`` must be one of ``kubernetes``, ``orphan``,
``foregroundDeletion``. Custom resources are validated without it.

Field paths follow Kubernetes, including its quirks: label, annotation, ownerReference and
finalizer-name problems point at the map or list itself (``metadata.labels``), not at an entry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final

from kstore.api.validation._access import get_int, get_list, get_map, get_str
from kstore.api.validation._render import go_quote
from kstore.api.validation.field import (
    GoStruct,
    JSONValue,
    Path,
    forbidden,
    invalid,
    required,
    too_long,
)
from kstore.api.validation.names import (
    NameValidator,
    byte_len,
    is_label_value,
    is_qualified_name,
    validate_namespace_name,
)
from kstore.errors import Cause

__all__ = [
    "FIELD_IMMUTABLE",
    "METADATA",
    "STANDARD_FINALIZERS",
    "TOTAL_ANNOTATION_SIZE_LIMIT",
    "metadata_of",
    "validate_annotations",
    "validate_finalizers",
    "validate_immutable_field",
    "validate_kube_finalizer_name",
    "validate_labels",
    "validate_managed_fields",
    "validate_nonnegative_field",
    "validate_object_meta",
    "validate_object_meta_update",
    "validate_owner_references",
]

METADATA: Final = Path("metadata")
FIELD_IMMUTABLE: Final = "field is immutable"
TOTAL_ANNOTATION_SIZE_LIMIT: Final = 256 * 1024
STANDARD_FINALIZERS: Final = frozenset({"kubernetes", "orphan", "foregroundDeletion"})
_FIELD_MANAGER_MAX_LENGTH: Final = 128
_MAX_SUBRESOURCE_NAME_LENGTH: Final = 256
_NEGATIVE: Final = "must be greater than or equal to 0"


def metadata_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """The object's ``metadata`` map; an empty one when absent or not a map."""
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


# ---------------------------------------------------------------------------- pieces


def validate_nonnegative_field(value: int, path: Path) -> list[Cause]:
    return [invalid(path, value, _NEGATIVE)] if value < 0 else []


def validate_labels(labels: Mapping[str, Any], path: Path) -> list[Cause]:
    """Keys are qualified names, values label values; every problem points at ``path``."""
    causes: list[Cause] = []
    for key, value in labels.items():
        causes.extend(invalid(path, key, msg) for msg in is_qualified_name(key))
        text = value if isinstance(value, str) else ""
        causes.extend(invalid(path, text, msg) for msg in is_label_value(text))
    return causes


def validate_annotations(annotations: Mapping[str, Any], path: Path) -> list[Cause]:
    """Keys are qualified names (case-insensitive); keys plus values total at most 256 KiB."""
    causes: list[Cause] = []
    total = 0
    for key, value in annotations.items():
        causes.extend(invalid(path, key, msg) for msg in is_qualified_name(key.lower()))
        total += byte_len(key) + (byte_len(value) if isinstance(value, str) else 0)
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        causes.append(too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT))
    return causes


def _owner_struct(ref: Mapping[str, Any]) -> GoStruct:
    """An OwnerReference as Go's json.Marshal writes it (field order, optional bools omitted)."""
    out = GoStruct(
        apiVersion=get_str(ref, "apiVersion"),
        kind=get_str(ref, "kind"),
        name=get_str(ref, "name"),
        uid=get_str(ref, "uid"),
    )
    for flag in ("controller", "blockOwnerDeletion"):
        if isinstance(ref.get(flag), bool):
            out[flag] = ref[flag]
    return out


def _parse_group_version(api_version: str) -> tuple[str, str] | None:
    if api_version in ("", "/"):
        return "", ""
    slashes = api_version.count("/")
    if slashes == 0:
        return "", api_version
    if slashes == 1:
        group, _, version = api_version.partition("/")
        return group, version
    return None


def validate_owner_references(refs: Sequence[Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    first_controller = ""
    for item in refs:
        ref = item if isinstance(item, Mapping) else {}
        api_version, kind = get_str(ref, "apiVersion"), get_str(ref, "kind")
        parsed = _parse_group_version(api_version)
        group, version = parsed if parsed is not None else ("", "")
        if not version:
            causes.append(
                invalid(path.child("apiVersion"), api_version, "version must not be empty")
            )
        if not kind:
            causes.append(invalid(path.child("kind"), kind, "must not be empty"))
        if not get_str(ref, "name"):
            causes.append(invalid(path.child("name"), "", "must not be empty"))
        if not get_str(ref, "uid"):
            causes.append(invalid(path.child("uid"), JSONValue(""), "must not be empty"))
        if (group, version, kind) == ("", "v1", "Event"):
            causes.append(
                invalid(
                    path,
                    _owner_struct(ref),
                    f"{group}/{version}, Kind={kind} is disallowed from being an owner",
                )
            )
        if ref.get("controller") is True:
            current = f"{kind}/{get_str(ref, 'name')}"
            if first_controller:
                all_refs = [_owner_struct(r if isinstance(r, Mapping) else {}) for r in refs]
                causes.append(
                    invalid(
                        path,
                        all_refs,
                        'Only one reference can have Controller set to true. Found "true" in '
                        f"references for {first_controller} and {current}",
                    )
                )
            else:
                first_controller = current
    return causes


def validate_finalizers(finalizers: Sequence[Any], path: Path) -> list[Cause]:
    """Each finalizer a qualified name; ``orphan`` and ``foregroundDeletion`` not both."""
    causes: list[Cause] = []
    names = [f if isinstance(f, str) else "" for f in finalizers]
    for name in names:
        causes.extend(invalid(path, name, msg) for msg in is_qualified_name(name))
    if "orphan" in names and "foregroundDeletion" in names:
        causes.append(
            invalid(path, names, "finalizer orphan and foregroundDeletion cannot be both set")
        )
    return causes


def validate_kube_finalizer_name(name: str, path: Path) -> list[Cause]:
    """Built-in kinds: an unqualified finalizer must be a standard one."""
    if "/" not in name and name not in STANDARD_FINALIZERS:
        return [
            invalid(
                path, name, "name is neither a standard finalizer name nor is it fully qualified"
            )
        ]
    return []


def validate_managed_fields(entries: Sequence[Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    for i, item in enumerate(entries):
        entry = item if isinstance(item, Mapping) else {}
        operation = get_str(entry, "operation")
        fields_type = get_str(entry, "fieldsType")
        manager = get_str(entry, "manager")
        subresource = get_str(entry, "subresource")
        if (
            (operation == "Apply" or operation == "Update")
            and (not fields_type or fields_type == "FieldsV1")
            and manager.isprintable()
            and byte_len(manager) <= _FIELD_MANAGER_MAX_LENGTH
            and byte_len(subresource) <= _MAX_SUBRESOURCE_NAME_LENGTH
        ):
            continue  # the usual entry: no paths to build
        causes.extend(_managed_fields_entry(path.index(i), operation, fields_type, manager))
        if byte_len(subresource) > _MAX_SUBRESOURCE_NAME_LENGTH:
            causes.append(
                too_long(path.index(i).child("subresource"), _MAX_SUBRESOURCE_NAME_LENGTH)
            )
    return causes


def _managed_fields_entry(
    entry_path: Path, operation: str, fields_type: str, manager: str
) -> list[Cause]:
    causes: list[Cause] = []
    if operation not in ("Apply", "Update"):
        causes.append(
            invalid(
                entry_path.child("operation"),
                JSONValue(operation),
                "must be `Apply` or `Update`",
            )
        )
    if fields_type and fields_type != "FieldsV1":
        causes.append(invalid(entry_path.child("fieldsType"), fields_type, "must be `FieldsV1`"))
    manager_path = entry_path.child("manager")
    if byte_len(manager) > _FIELD_MANAGER_MAX_LENGTH:
        causes.append(too_long(manager_path, _FIELD_MANAGER_MAX_LENGTH))
    if not manager.isprintable():
        position = 0
        for ch in manager:
            if not ch.isprintable():
                causes.append(
                    invalid(
                        manager_path,
                        manager,
                        f"invalid character U+{ord(ch):04X} (at position {position})",
                    )
                )
            position += byte_len(ch)
    return causes


def validate_immutable_field(new: Any, old: Any, path: Path) -> list[Cause]:
    """``Invalid value: <new>: field is immutable`` when the values differ."""
    return [] if new == old else [invalid(path, new, FIELD_IMMUTABLE)]


# ---------------------------------------------------------------------------- create


def validate_object_meta(
    obj: Mapping[str, Any],
    namespaced: bool,
    name_fn: NameValidator,
    *,
    path: Path = METADATA,
    kube_finalizers: bool = True,
) -> list[Cause]:
    """Validate ``obj["metadata"]`` for a create. ``name_fn`` is the kind's name rule."""
    meta = metadata_of(obj)
    causes: list[Cause] = []
    generate_name = get_str(meta, "generateName")
    if generate_name:
        causes.extend(
            invalid(path.child("generateName"), generate_name, msg)
            for msg in name_fn(generate_name, True)
        )
    name = get_str(meta, "name")
    if not name:
        causes.append(required(path.child("name"), "name or generateName is required"))
    else:
        causes.extend(invalid(path.child("name"), name, msg) for msg in name_fn(name, False))
    namespace = get_str(meta, "namespace")
    if namespaced:
        if not namespace:
            causes.append(required(path.child("namespace")))
        else:
            causes.extend(
                invalid(path.child("namespace"), namespace, msg)
                for msg in validate_namespace_name(namespace, False)
            )
    elif namespace:
        causes.append(forbidden(path.child("namespace"), "not allowed on this type"))
    # Each check below finds nothing in an absent or empty field: skipped then (with the
    # path it would build), as most creates carry few of these fields.
    generation = get_int(meta, "generation")
    if generation:
        causes.extend(validate_nonnegative_field(generation, path.child("generation")))
    labels = get_map(meta, "labels")
    if labels:
        causes.extend(validate_labels(labels, path.child("labels")))
    annotations = get_map(meta, "annotations")
    if annotations:
        causes.extend(validate_annotations(annotations, path.child("annotations")))
    owners = get_list(meta, "ownerReferences")
    if owners:
        causes.extend(validate_owner_references(owners, path.child("ownerReferences")))
    finalizers = get_list(meta, "finalizers")
    if finalizers:
        causes.extend(validate_finalizers(finalizers, path.child("finalizers")))
    managed = get_list(meta, "managedFields")
    if managed:
        causes.extend(validate_managed_fields(managed, path.child("managedFields")))
    if finalizers and kube_finalizers:
        causes.extend(_kube_finalizers(finalizers, path))
    return causes


def _kube_finalizers(finalizers: Sequence[Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    for i, name in enumerate(finalizers):
        text = name if isinstance(name, str) else ""
        causes.extend(validate_kube_finalizer_name(text, path.child("finalizers").index(i)))
    return causes


# ---------------------------------------------------------------------------- update


def _instant(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _time_value(value: Any) -> JSONValue:
    """A metav1.Time as Go's json.Marshal writes it: RFC 3339 in UTC, or null when unset."""
    instant = _instant(value)
    if instant is None:
        return JSONValue(value if isinstance(value, str) and value else None)
    return JSONValue(instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))


def _same_time(a: Any, b: Any) -> bool:
    ia, ib = _instant(a), _instant(b)
    if ia is None or ib is None:
        return (a or None) == (b or None)
    return ia == ib


def _immutable_time(new: Any, old: Any, path: Path) -> list[Cause]:
    return [] if _same_time(new, old) else [invalid(path, _time_value(new), FIELD_IMMUTABLE)]


def validate_object_meta_update(
    new: Mapping[str, Any],
    old: Mapping[str, Any],
    *,
    path: Path = METADATA,
    kube_finalizers: bool = True,
) -> list[Cause]:
    """Validate the metadata of ``new`` as an update of ``old``."""
    meta, old_meta = metadata_of(new), metadata_of(old)
    causes: list[Cause] = []
    finalizers = get_list(meta, "finalizers")
    if old_meta.get("deletionTimestamp"):
        added = sorted(
            {f for f in finalizers if isinstance(f, str)}
            - {f for f in get_list(old_meta, "finalizers") if isinstance(f, str)}
        )
        if added:
            # %#v of a []string: Go syntax, each element strconv-quoted.
            shown = ", ".join(go_quote(f) for f in added)
            causes.append(
                forbidden(
                    path.child("finalizers"),
                    "no new finalizers can be added if the object is being deleted, "
                    f"found new finalizers []string{{{shown}}}",
                )
            )
    if not get_str(meta, "resourceVersion"):
        causes.append(invalid(path.child("resourceVersion"), "", "must be specified for an update"))
    generation = get_int(meta, "generation")
    if generation < get_int(old_meta, "generation"):
        causes.append(invalid(path.child("generation"), generation, "must not be decremented"))
    causes.extend(
        validate_immutable_field(
            get_str(meta, "name"), get_str(old_meta, "name"), path.child("name")
        )
    )
    causes.extend(
        validate_immutable_field(
            get_str(meta, "namespace"), get_str(old_meta, "namespace"), path.child("namespace")
        )
    )
    if get_str(meta, "uid") != get_str(old_meta, "uid"):
        causes.append(invalid(path.child("uid"), JSONValue(get_str(meta, "uid")), FIELD_IMMUTABLE))
    for key in ("creationTimestamp", "deletionTimestamp"):
        causes.extend(_immutable_time(meta.get(key), old_meta.get(key), path.child(key)))
    grace, old_grace = (
        meta.get("deletionGracePeriodSeconds"),
        old_meta.get("deletionGracePeriodSeconds"),
    )
    if grace != old_grace:
        causes.append(
            invalid(path.child("deletionGracePeriodSeconds"), JSONValue(grace), FIELD_IMMUTABLE)
        )
    causes.extend(validate_labels(get_map(meta, "labels"), path.child("labels")))
    causes.extend(validate_annotations(get_map(meta, "annotations"), path.child("annotations")))
    causes.extend(
        validate_owner_references(get_list(meta, "ownerReferences"), path.child("ownerReferences"))
    )
    causes.extend(
        validate_managed_fields(get_list(meta, "managedFields"), path.child("managedFields"))
    )
    if kube_finalizers:
        causes.extend(_kube_finalizers(finalizers, path))
    return causes
