"""JSON Merge Patch (RFC 7386) as Kubernetes applies it (``application/merge-patch+json``).

Kubernetes uses evanphx/json-patch's ``MergePatch``, which follows the RFC with one addition
kept here: when a patch value replaces something that is not an object (or nothing), null
members are pruned from the objects inside it, arrays included; a non-object value that
replaces an object is taken as sent. A patch that is not an object replaces the document only
if it is an array (then the result is not an object, which the caller rejects); JSON null or a
scalar is "Invalid JSON Patch" (400).

Invariant: neither input is modified; untouched sub-trees of the document are shared.
"""

from __future__ import annotations

from typing import Any

from kstore.errors import BadRequest

__all__ = ["apply_merge_patch"]


def apply_merge_patch(doc: dict[str, Any], patch: Any) -> Any:
    """The merged document; BadRequest("Invalid JSON Patch") for a null or scalar patch."""
    if isinstance(patch, dict):
        return _merge_docs(doc, patch)
    if isinstance(patch, list):
        return [_pruned(v) for v in patch]
    raise BadRequest("Invalid JSON Patch")


def _merge_docs(doc: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    out = dict(doc)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
            continue
        current = out.get(key)
        if not isinstance(current, dict):
            out[key] = _pruned(value)
        elif isinstance(value, dict):
            out[key] = _merge_docs(current, value)
        else:
            out[key] = value  # an object replaced by an array or scalar: taken as sent
    return out


def _pruned(value: Any) -> Any:
    """``value`` without null object members, at any depth (arrays keep null elements)."""
    if isinstance(value, dict):
        return {k: _pruned(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_pruned(v) for v in value]
    return value
