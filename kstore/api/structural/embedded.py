"""Embedded resources: their ``apiVersion``, ``kind`` and ``metadata`` checked as Kubernetes does.

An object under ``x-kubernetes-embedded-resource: true`` (and the resource root, with
``is_resource_root``) is a Kubernetes object in its own right. Kubernetes checks it in two
steps, both reproduced here with its messages:

- :func:`coerce_embedded` (``objectmeta.Coerce``): ``apiVersion`` and ``kind`` must be strings
  (``Invalid value: 1: must be a string``) and ``metadata`` must decode as ObjectMeta; the first
  problem found is the only one reported;
- :func:`validate_embedded_object_meta` (``objectmeta.Validate``): ``apiVersion`` and ``kind``
  are required, non-empty, a parseable group/version (``unexpected GroupVersion string: a/b/c``)
  and a kind that, lower-cased, is a DNS-1035 label (``may have mixed case, but should
  otherwise match: ...``); ``metadata`` is validated as ObjectMeta on create, with a stand-in
  name when it has none, the namespace checked only when set, path-segment name rules and no
  Kubernetes finalizer rule.

Known difference: ObjectMeta decoding errors are worded as Go's ``encoding/json`` words them
for the top-level fields (``json: cannot unmarshal number into Go struct field
ObjectMeta.name of type string``); errors deeper inside a field (a label value that is not a
string) are found by the ObjectMeta validation instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kstore.api.structural.model import EMPTY, Structural
from kstore.api.validation._gojson import json_kind
from kstore.api.validation.field import Path, invalid, required
from kstore.api.validation.names import is_dns1035_label, validate_path_segment_name
from kstore.api.validation.objectmeta import validate_object_meta
from kstore.errors import Cause

__all__ = ["coerce_embedded", "meta_field_error", "validate_embedded_object_meta"]

# ObjectMeta's fields and the Go type encoding/json names in its errors.
_META_TYPES: Final = {
    "name": "string",
    "generateName": "string",
    "namespace": "string",
    "selfLink": "string",
    "uid": "types.UID",
    "resourceVersion": "string",
    "generation": "int64",
    "creationTimestamp": "v1.Time",
    "deletionTimestamp": "v1.Time",
    "deletionGracePeriodSeconds": "int64",
    "labels": "map[string]string",
    "annotations": "map[string]string",
    "ownerReferences": "[]v1.OwnerReference",
    "finalizers": "[]string",
    "managedFields": "[]v1.ManagedFieldsEntry",
}


def _child(path: Path | None, name: str) -> Path:
    return path.child(name) if path is not None else Path(name)


def _key(path: Path | None, key: str) -> Path:
    return path.key(key) if path is not None else Path("").key(key)


def _index(path: Path | None, i: int) -> Path:
    return path.index(i) if path is not None else Path("").index(i)


def _type_error(go_type: str, value: Any) -> tuple[str, str] | None:
    """``(JSON kind, Go type)`` when ``value`` cannot decode as ``go_type``; ``null`` always can."""
    if value is None:
        return None
    if go_type in ("string", "types.UID", "v1.Time"):
        ok = isinstance(value, str)
    elif go_type == "int64":
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif go_type == "map[string]string":
        if not isinstance(value, Mapping):
            return json_kind(value), go_type
        # A value inside the map is reported with the map's field and the value's type.
        for item in value.values():
            if item is not None and not isinstance(item, str):
                return json_kind(item), "string"
        return None
    elif go_type == "[]string":
        if not isinstance(value, list):
            return json_kind(value), go_type
        for item in value:
            if item is not None and not isinstance(item, str):
                return json_kind(item), "string"
        return None
    else:
        if not isinstance(value, list):
            return json_kind(value), go_type
        for item in value:
            if item is not None and not isinstance(item, Mapping):
                return json_kind(item), go_type[2:]
        return None
    return None if ok else (json_kind(value), go_type)


def _metadata_error(metadata: Any) -> str | None:
    if metadata is None:
        return None
    if not isinstance(metadata, Mapping):
        return f"json: cannot unmarshal {json_kind(metadata)} into Go value of type v1.ObjectMeta"
    for name, value in metadata.items():
        error = meta_field_error(name, value)
        if error is not None:
            return error
    return None


def meta_field_error(name: str, value: Any) -> str | None:
    """Go's decoding error for one ObjectMeta field's value (``None``: it decodes, or unknown)."""
    go_type = _META_TYPES.get(name)
    error = _type_error(go_type, value) if go_type is not None else None
    if error is None:
        return None
    return (
        f"json: cannot unmarshal {error[0]} into Go struct field "
        f"ObjectMeta.{name} of type {error[1]}"
    )


def coerce_embedded(
    obj: Any, schema: Structural | None, path: Path | None, is_resource_root: bool
) -> Cause | None:
    """The first ``apiVersion``/``kind``/``metadata`` type problem of an embedded resource."""
    if is_resource_root:
        schema = (schema or EMPTY).with_embedded_resource()
    return _coerce(path, obj, schema)


def _coerce(path: Path | None, x: Any, s: Structural | None) -> Cause | None:
    if s is None:
        return None
    if isinstance(x, Mapping):
        for k, v in x.items():
            if s.embedded_resource:
                if k in ("apiVersion", "kind") and not isinstance(v, str):
                    return invalid(_child(path, k), v, "must be a string")
                if k == "metadata":
                    error = _metadata_error(v)
                    if error is not None:
                        return invalid(_child(path, "metadata"), v, error)
            prop = s.properties.get(k)
            found: Cause | None = None
            if prop is not None:
                found = _coerce(_child(path, k), v, prop)
            elif s.additional_properties is not None:
                found = _coerce(_key(path, k), v, s.additional_properties_schema)
            if found is not None:
                return found
    elif isinstance(x, list):
        for i, v in enumerate(x):
            found = _coerce(_index(path, i), v, s.items)
            if found is not None:
                return found
    return None


def validate_embedded_object_meta(
    obj: Any, schema: Structural | None, path: Path | None = None, is_resource_root: bool = False
) -> list[Cause]:
    """``objectmeta.Validate``: each embedded resource's type and metadata, Kubernetes' words."""
    if is_resource_root:
        schema = (schema or EMPTY).with_embedded_resource()
    out: list[Cause] = []
    _validate(path, obj, schema, out)
    return out


def _validate(path: Path | None, x: Any, s: Structural | None, out: list[Cause]) -> None:
    if s is None or not s.has_embedded_resources:
        return  # no embedded resource at or below this node: nothing to check
    if isinstance(x, Mapping):
        if s.embedded_resource:
            out.extend(_embedded_resource(path, x))
        for k, v in x.items():
            prop = s.properties.get(k)
            if prop is not None:
                _validate(_child(path, k), v, prop, out)
            elif s.additional_properties is not None:
                _validate(_key(path, k), v, s.additional_properties_schema, out)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            _validate(_index(path, i), v, s.items, out)


def _group_version_error(api_version: str) -> str | None:
    if api_version in ("", "/") or api_version.count("/") <= 1:
        return None
    return f"unexpected GroupVersion string: {api_version}"


def _embedded_resource(path: Path | None, x: Mapping[str, Any]) -> list[Cause]:
    out: list[Cause] = []
    if "apiVersion" not in x:
        out.append(required(_child(path, "apiVersion")))
    if "kind" not in x:
        out.append(required(_child(path, "kind")))
    for k, v in x.items():
        if k == "apiVersion":
            where = _child(path, "apiVersion")
            if not isinstance(v, str):
                out.append(invalid(where, v, "must be a string"))
            elif not v:
                out.append(invalid(where, v, "must not be empty"))
            elif (error := _group_version_error(v)) is not None:
                out.append(invalid(where, v, error))
        elif k == "kind":
            where = _child(path, "kind")
            if not isinstance(v, str):
                out.append(invalid(where, v, "must be a string"))
            elif not v:
                out.append(invalid(where, v, "must not be empty"))
            elif errors := is_dns1035_label(v.lower()):
                detail = "may have mixed case, but should otherwise match: " + ",".join(errors)
                out.append(invalid(where, v, detail))
        elif k == "metadata":
            where = _child(path, "metadata")
            error = _metadata_error(v)
            if error is not None:
                out.append(invalid(where, v, error))
                continue
            meta = dict(v) if isinstance(v, Mapping) else {}
            if not meta.get("name"):
                # Kubernetes validates embedded metadata with a stand-in name.
                meta["name"] = "fakename"
            namespace = meta.get("namespace")
            out.extend(
                validate_object_meta(
                    {"metadata": meta},
                    isinstance(namespace, str) and namespace != "",
                    validate_path_segment_name,
                    path=where,
                    kube_finalizers=False,
                )
            )
    return out
