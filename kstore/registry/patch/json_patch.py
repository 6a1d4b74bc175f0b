"""JSON Patch (RFC 6902) as Kubernetes applies it (``application/json-patch+json``).

Kubernetes uses gopkg.in/evanphx/json-patch.v4, whose behaviour clients depend on, so kstore
follows it where it departs from the RFC:

- ``replace`` of a missing object member adds it (only array indexes must exist);
- a path is split on ``/`` and every segment but the first is a token, so a path that does not
  start with ``/`` is read from the root; intermediate members must exist and be containers;
- array indexes may be negative (counted from the end); ``-`` appends for ``add``;
- ``test`` compares JSON values exactly (``1`` and ``1.0`` differ); a null or absent member
  passes a test whose ``value`` is null or absent;
- ``copy`` of an absent object member copies null.

Errors carry the library's messages; Kubernetes turns any failed operation into a 422 with its
generic message (:func:`apply_json_patch`), the detail kept as the error's ``__cause__``.

Invariant: the input document is never modified (the patch works on a private copy).
"""

from __future__ import annotations

import copy
from typing import Any, Final

from kstore.api.validation._gojson import json_kind
from kstore.codec.json import dumps as json_dumps
from kstore.codec.json import loads as json_loads
from kstore.errors import BadRequest, Invalid, RequestEntityTooLarge

__all__ = [
    "GENERIC_INVALID",
    "MAX_OPERATIONS",
    "JsonPatchError",
    "apply_json_patch",
    "apply_operations",
    "parse_json_patch",
]

#: Kubernetes' ``maxJSONPatchOperations``.
MAX_OPERATIONS: Final = 10000

#: The message of a 422 Kubernetes builds without detail (``NewGenericServerResponse``).
GENERIC_INVALID: Final = "the server rejected our request due to an error in our request"

_ABSENT: Final[Any] = object()


class JsonPatchError(Exception):
    """An operation did not apply; the text is json-patch's own."""


def parse_json_patch(patch: Any) -> list[dict[str, Any]]:
    """Check the decoded body is a list of operation objects, within the operation cap."""
    if not isinstance(patch, list):
        kind = "object" if isinstance(patch, dict) else json_kind(patch)
        raise BadRequest(f"json: cannot unmarshal {kind} into Go value of type jsonpatch.Patch")
    for op in patch:
        if not isinstance(op, dict):
            raise BadRequest(
                f"json: cannot unmarshal {json_kind(op)} into Go value of type jsonpatch.Operation"
            )
    if len(patch) > MAX_OPERATIONS:
        raise RequestEntityTooLarge(
            "Request entity too large: The allowed maximum operations in a JSON patch is "
            f"{MAX_OPERATIONS}, got {len(patch)}"
        )
    return patch


def apply_json_patch(doc: Any, patch: Any) -> Any:
    """Apply a decoded JSON patch to a document; BadRequest/413 for a malformed or oversized
    patch, 422 Invalid when an operation fails."""
    ops = parse_json_patch(patch)
    try:
        return apply_operations(doc, ops)
    except JsonPatchError as exc:
        raise Invalid(GENERIC_INVALID) from exc


def apply_operations(doc: Any, ops: list[dict[str, Any]]) -> Any:
    """Apply operations in order to a copy of ``doc``; JsonPatchError when one fails."""
    doc = json_loads(json_dumps(doc), max_depth=None)  # a private copy, ~10x faster than deepcopy
    for op in ops:
        kind = op.get("op")
        if not isinstance(kind, str):
            kind = "unknown"
        handler = _OPERATIONS.get(kind)
        if handler is None:
            raise JsonPatchError(f"Unexpected kind: {kind}")
        doc = handler(doc, op)
    return doc


# ---------------------------------------------------------------------------- containers


class _Fail(Exception):
    """A container-level error, wrapped by the operation with its own prefix."""


def _atoi(key: str) -> int:
    """strconv.Atoi: an optional sign and decimal digits."""
    body = key[1:] if key[:1] in ("+", "-") else key
    if not body or not body.isascii() or not body.isdigit():
        raise _Fail(f'strconv.Atoi: parsing "{key}": invalid syntax')
    return int(key)


def _invalid_index(idx: int) -> _Fail:
    return _Fail(f"Unable to access invalid index: {idx}: invalid index referenced")


def _array_index(items: list[Any], key: str) -> int:
    idx = _atoi(key)
    if idx < 0:
        if idx < -len(items):
            raise _invalid_index(idx)
        idx += len(items)
    if idx >= len(items):
        raise _invalid_index(idx)
    return idx


def _get(container: Any, key: str) -> Any:
    """The member (None when an object lacks it); _Fail for a bad array index."""
    if isinstance(container, dict):
        return container.get(key)
    return container[_array_index(container, key)]


def _add_member(container: Any, key: str, value: Any) -> None:
    if isinstance(container, dict):
        container[key] = value
        return
    if key == "-":
        container.append(value)
        return
    try:
        idx = _atoi(key)
    except _Fail as exc:
        raise _Fail(f"value was not a proper array index: '{key}': {exc}") from None
    size = len(container) + 1
    if idx >= size:
        raise _invalid_index(idx)
    if idx < 0:
        if idx < -size:
            raise _invalid_index(idx)
        idx += size
    container.insert(idx, value)


def _set_member(container: Any, key: str, value: Any) -> None:
    if isinstance(container, dict):
        container[key] = value
        return
    container[_array_index(container, key)] = value


def _remove_member(container: Any, key: str) -> None:
    if isinstance(container, dict):
        if key not in container:
            raise _Fail(f"Unable to remove nonexistent key: {key}: missing value")
        del container[key]
        return
    idx = _atoi(key)
    if idx >= len(container):
        raise _invalid_index(idx)
    if idx < 0:
        if idx < -len(container):
            raise _invalid_index(idx)
        idx += len(container)
    del container[idx]


def _find(doc: Any, path: str) -> tuple[Any, str] | None:
    """The container holding the last token of ``path`` and that token, or None."""
    parts = path.split("/")
    if len(parts) < 2:
        return None
    node = doc
    for part in parts[1:-1]:
        try:
            node = _get(node, _decode(part)) if isinstance(node, dict | list) else None
        except _Fail:
            return None
        if not isinstance(node, dict | list):
            return None
    return node, _decode(parts[-1])


def _decode(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _path(op: dict[str, Any], name: str = "path") -> str | None:
    value = op.get(name)
    return value if isinstance(value, str) else None


# ---------------------------------------------------------------------------- operations


def _add(doc: Any, op: dict[str, Any]) -> Any:
    path = _path(op)
    if path is None:
        raise JsonPatchError("add operation failed to decode path: missing value")
    found = _find(doc, path)
    if found is None:
        raise JsonPatchError(
            f'add operation does not apply: doc is missing path: "{path}": missing value'
        )
    try:
        _add_member(*found, op.get("value"))
    except _Fail as exc:
        raise JsonPatchError(f"error in add for path: '{path}': {exc}") from None
    return doc


def _remove(doc: Any, op: dict[str, Any]) -> Any:
    path = _path(op)
    if path is None:
        raise JsonPatchError("remove operation failed to decode path: missing value")
    found = _find(doc, path)
    if found is None:
        raise JsonPatchError(
            f'remove operation does not apply: doc is missing path: "{path}": missing value'
        )
    try:
        _remove_member(*found)
    except _Fail as exc:
        raise JsonPatchError(f"error in remove for path: '{path}': {exc}") from None
    return doc


def _replace(doc: Any, op: dict[str, Any]) -> Any:
    path = _path(op)
    if path is None:
        raise JsonPatchError(
            "replace operation failed to decode path: operation missing path field: missing value"
        )
    value = op.get("value")
    if path == "":
        if not isinstance(value, dict | list):
            raise JsonPatchError("replace operation value must be object or array: <nil>")
        return value
    found = _find(doc, path)
    if found is None:
        raise JsonPatchError(
            f"replace operation does not apply: doc is missing path: {path}: missing value"
        )
    container, key = found
    try:
        _get(container, key)
    except _Fail:
        raise JsonPatchError(
            f"replace operation does not apply: doc is missing key: {path}: missing value"
        ) from None
    _set_member(container, key, value)
    return doc


def _move(doc: Any, op: dict[str, Any]) -> Any:
    source = _path(op, "from")
    if source is None:
        raise JsonPatchError(
            "move operation failed to decode from: operation, missing from field: missing value"
        )
    found = _find(doc, source)
    if found is None:
        raise JsonPatchError(
            f"move operation does not apply: doc is missing from path: {source}: missing value"
        )
    container, key = found
    try:
        value = _get(container, key)
        _remove_member(container, key)
    except _Fail as exc:
        raise JsonPatchError(f"error in move for path: '{key}': {exc}") from None
    path = _path(op)
    if path is None:
        raise JsonPatchError(
            "move operation failed to decode path: operation missing path field: missing value"
        )
    target = _find(doc, path)
    if target is None:
        raise JsonPatchError(
            f"move operation does not apply: doc is missing destination path: {path}: missing value"
        )
    try:
        _add_member(*target, value)
    except _Fail as exc:
        raise JsonPatchError(f"error in move for path: '{path}': {exc}") from None
    return doc


def _copy(doc: Any, op: dict[str, Any]) -> Any:
    source = _path(op, "from")
    if source is None:
        raise JsonPatchError(
            "copy operation failed to decode from: operation, missing from field: missing value"
        )
    found = _find(doc, source)
    if found is None:
        raise JsonPatchError(
            f"copy operation does not apply: doc is missing from path: {source}: missing value"
        )
    try:
        value = _get(*found)
    except _Fail as exc:
        raise JsonPatchError(f"error in copy for from: '{source}': {exc}") from None
    path = _path(op)
    if path is None:
        raise JsonPatchError("copy operation failed to decode path: missing value")
    target = _find(doc, path)
    if target is None:
        raise JsonPatchError(
            f"copy operation does not apply: doc is missing destination path: {path}: missing value"
        )
    try:
        _add_member(*target, copy.deepcopy(value))
    except _Fail as exc:
        raise JsonPatchError(f"error while adding value during copy: {exc}") from None
    return doc


def _test(doc: Any, op: dict[str, Any]) -> Any:
    path = _path(op)
    if path is None:
        raise JsonPatchError(
            "test operation failed to decode path: operation missing path field: missing value"
        )
    expected = op.get("value", _ABSENT)
    if path == "":
        if expected is not _ABSENT and _exact_equal(doc, expected):
            return doc
        raise JsonPatchError(f"testing value {path} failed: test failed")
    found = _find(doc, path)
    if found is None:
        raise JsonPatchError(
            f"test operation does not apply: is missing path: {path}: missing value"
        )
    try:
        actual = _get(*found)
    except _Fail as exc:
        raise JsonPatchError(f"error in test for path: '{path}': {exc}") from None
    if actual is None:
        if expected is _ABSENT or expected is None:
            return doc
    elif expected is not _ABSENT and _exact_equal(actual, expected):
        return doc
    raise JsonPatchError(f"testing value {path} failed: test failed")


def _exact_equal(a: Any, b: Any) -> bool:
    """json-patch's equality: containers member by member, scalars by their JSON text (so
    ``1`` and ``1.0`` differ, as do ``true`` and ``1``)."""
    if isinstance(a, dict):
        return (
            isinstance(b, dict)
            and len(a) == len(b)
            and all(k in b and _exact_equal(v, b[k]) for k, v in a.items())
        )
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_exact_equal, a, b))
    if isinstance(b, dict | list):
        return False
    return type(a) is type(b) and a == b


_OPERATIONS = {
    "add": _add,
    "remove": _remove,
    "replace": _replace,
    "move": _move,
    "copy": _copy,
    "test": _test,
}
