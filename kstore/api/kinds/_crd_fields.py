"""The parts of a CustomResourceDefinition that are checked field by field, as
``pkg/apis/apiextensions/validation`` (Kubernetes v1.36) words them: names (``spec.names``,
``status.acceptedNames``), printer columns, the scale subresource's paths, a version's
deprecation warning, and selectable fields.

Each function takes the path to report at; the caller picks the internal path (top level or per
version, see :mod:`kstore.api.kinds._crd_internal`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from kstore.api.validation._access import get_list, get_str, maps, opt_str
from kstore.api.validation.field import JSONValue, Path, duplicate, invalid, required, too_many
from kstore.api.validation.names import is_dns1035_label
from kstore.errors import Cause

__all__ = [
    "MAX_SELECTABLE_FIELDS",
    "deprecation_warning_errors",
    "dns1035",
    "validate_column",
    "validate_names",
    "validate_selectable_fields",
    "validate_simple_json_path",
    "validate_subresources",
]

#: ``MaxSelectableFields``.
MAX_SELECTABLE_FIELDS: Final = 8
#: ``printerColumnDatatypes`` and ``customResourceColumnDefinitionFormats``, sorted as
#: ``sets.String.List()`` prints them.
_COLUMN_TYPES: Final = ("boolean", "date", "integer", "number", "string")
_COLUMN_FORMATS: Final = (
    "byte",
    "date",
    "date-time",
    "double",
    "float",
    "int32",
    "int64",
    "password",
)


def dns1035(value: str, path: Path) -> list[Cause]:
    errs = is_dns1035_label(value)
    return [invalid(path, value, ",".join(errs))] if errs else []


def validate_names(names: Mapping[str, Any], path: Path) -> list[Cause]:
    """``ValidateCustomResourceDefinitionNames`` (spec.names and status.acceptedNames)."""
    causes: list[Cause] = []
    for key in ("plural", "singular"):
        value = get_str(names, key)
        if value:
            causes.extend(dns1035(value, path.child(key)))
    for key in ("kind", "listKind"):
        value = get_str(names, key)
        errs = is_dns1035_label(value.lower()) if value else []
        if errs:
            detail = "may have mixed case, but should otherwise match: " + ",".join(errs)
            causes.append(invalid(path.child(key), value, detail))
    for i, short in enumerate(get_list(names, "shortNames")):
        text = short if isinstance(short, str) else ""
        causes.extend(dns1035(text, path.child("shortNames").index(i)))
    kind, list_kind = get_str(names, "kind"), get_str(names, "listKind")
    if kind and kind == list_kind:
        causes.append(
            invalid(path.child("listKind"), list_kind, "kind and listKind may not be the same")
        )
    for i, category in enumerate(get_list(names, "categories")):
        text = category if isinstance(category, str) else ""
        causes.extend(dns1035(text, path.child("categories").index(i)))
    return causes


def validate_simple_json_path(value: str, path: Path) -> list[Cause]:
    if not value:
        return [invalid(path, value, "must not be empty")]
    if value[0] != ".":
        return [invalid(path, value, "must be a simple json path starting with .")]
    return []


def validate_column(column: Mapping[str, Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    if not get_str(column, "name"):
        causes.append(required(path.child("name")))
    kind = get_str(column, "type")
    types = "must be one of " + ",".join(_COLUMN_TYPES)
    if not kind:
        causes.append(required(path.child("type"), types))
    elif kind not in _COLUMN_TYPES:
        causes.append(invalid(path.child("type"), kind, types))
    fmt = get_str(column, "format")
    if fmt and fmt not in _COLUMN_FORMATS:
        causes.append(
            invalid(path.child("format"), fmt, "must be one of " + ",".join(_COLUMN_FORMATS))
        )
    json_path = get_str(column, "jsonPath")
    if not json_path:
        causes.append(required(path.child("JSONPath")))
    else:
        causes.extend(validate_simple_json_path(json_path, path.child("JSONPath")))
    return causes


def validate_subresources(sub: Mapping[str, Any] | None, path: Path) -> list[Cause]:
    if sub is None:
        return []
    scale = sub.get("scale")
    if not isinstance(scale, Mapping):
        return []
    causes: list[Cause] = []
    for key, prefix, under in (
        ("specReplicasPath", ".spec.", ".spec"),
        ("statusReplicasPath", ".status.", ".status"),
    ):
        where = path.child(f"scale.{key}")
        value = get_str(scale, key)
        if not value:
            causes.append(required(where))
            continue
        errs = validate_simple_json_path(value, where)
        if errs:
            causes.extend(errs)
        elif not value.startswith(prefix):
            causes.append(invalid(where, value, f"should be a json path under {under}"))
    selector = opt_str(scale, "labelSelectorPath")
    if selector:
        where = path.child("scale.labelSelectorPath")
        errs = validate_simple_json_path(selector, where)
        if errs:
            causes.extend(errs)
        elif not selector.startswith((".spec.", ".status.")):
            causes.append(
                invalid(
                    where,
                    JSONValue(selector),
                    "should be a json path under either .spec or .status",
                )
            )
    return causes


def deprecation_warning_errors(deprecated: bool, warning: str | None) -> list[str]:
    if not deprecated and warning is not None:
        return ["can only be set for deprecated versions"]
    if warning is None:
        return []
    errors: list[str] = []
    if len(warning.encode()) > 256:
        errors.append("must be <= 256 characters long")
    if not warning:
        errors.append("must not be an empty string")
    offset = 0
    for ch in warning:
        if not (ch.isprintable() or ch == " "):
            kind = "control" if ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0 else "non-printable"
            errors.append(
                "must only contain printable UTF-8 characters; "
                f"{kind} character found at index {offset}"
            )
            break
        offset += len(ch.encode())
    return errors


def _resolve(json_path: str, schema: Mapping[str, Any]) -> tuple[list[str], Any] | str:
    """``cel.ValidFieldPath`` without array notation: the path's names and the schema found,
    or the error text."""
    names: list[str] = []
    node: Any = schema
    tokens = [t for t in _split_path(json_path)]
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok == "[":
            return "array notation is not allowed"
        if tok != ".":
            return f"expected [ or . but got: {tok}"
        if i + 1 >= len(tokens):
            return "unexpected end of JSON path"
        name = tokens[i + 1]
        i += 2
        props = node.get("properties") if isinstance(node, Mapping) else None
        extra = node.get("additionalProperties") if isinstance(node, Mapping) else None
        if isinstance(props, Mapping):
            if name not in props:
                return "does not refer to a valid field"
            node = props[name]
        elif isinstance(extra, Mapping):
            node = extra
        else:
            return "does not refer to a valid field"
        names.append(name)
    return names, node


def _split_path(text: str) -> list[str]:
    out: list[str] = []
    current = ""
    for ch in text:
        if ch in ".[]":
            if current:
                out.append(current)
                current = ""
            out.append(ch)
        else:
            current += ch
    if current:
        out.append(current)
    return out


def validate_selectable_fields(
    fields: Sequence[Any], schema: Mapping[str, Any], path: Path, *, tolerate_too_many: bool
) -> list[Cause]:
    """``ValidateCustomResourceSelectableFields`` over the version's (structural) schema."""
    causes: list[Cause] = []
    seen: set[str] = set()
    for i, entry in enumerate(maps(fields)):
        where = path.index(i).child("jsonPath")
        json_path = get_str(entry, "jsonPath")
        if not json_path:
            causes.append(required(where))
            continue
        found = _resolve(json_path, schema)
        if isinstance(found, str):
            causes.append(invalid(where, json_path, f"is an invalid path: {found}"))
            continue
        names, node = found
        if names and names[0] == "metadata":
            causes.append(invalid(where, json_path, "must not point to fields in metadata"))
        node_type = node.get("type") if isinstance(node, Mapping) else None
        if node_type not in ("string", "boolean", "integer"):
            causes.append(
                invalid(
                    where,
                    json_path,
                    "must point to a field of type string, boolean or integer. Enum string "
                    "fields and strings with formats are allowed.",
                )
            )
        key = ".".join(names)
        if key in seen:
            causes.append(duplicate(where, json_path))
        else:
            seen.add(key)
    if len(seen) > MAX_SELECTABLE_FIELDS and not tolerate_too_many:
        causes.append(too_many(path, len(seen), MAX_SELECTABLE_FIELDS))
    return causes
