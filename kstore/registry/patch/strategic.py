"""Strategic merge patch as Kubernetes' apimachinery ``strategicpatch`` applies it on the server
(``application/strategic-merge-patch+json``).

A patch is a partial object merged into the current one: maps are merged key by key, ``null``
deletes a key, and lists follow their field's ``patchStrategy`` (from
:mod:`kstore.api.patch_meta`): replaced by default; with ``merge``, lists of objects are merged
element by element by their ``patchMergeKey`` and lists of scalars are merged as sets. Directives:

- ``"$patch": "replace"`` in an object replaces it whole, ``"$patch": "delete"`` removes it;
  in a merged list, ``{"<key>": v, "$patch": "delete"}`` removes that element and an element
  ``{"$patch": "replace"}`` makes the patch's elements the whole list;
- ``"$setElementOrder/<list>": [...]`` gives the order of a merged list (elements the patch
  does not name keep their place relative to the others);
- ``"$deleteFromPrimitiveList/<list>": [...]`` removes scalars from a merged list of scalars;
- ``"$retainKeys": [...]`` clears every key of the object not listed.

The order of a merged list is: ``$setElementOrder`` first, then the order in the patch, then the
order in the live object, interleaved as Kubernetes' ``mergeSortedSlice`` does.

Errors map to HTTP as Kubernetes' ``interpretStrategicMergePatchError`` does: malformed
directives are 400, lists of lists 422 (generic message), anything else 500 with the library's
message. Kinds without patch metadata (custom kinds) are refused with 415 before this module
is reached (see :func:`kstore.registry.patch.apply_patch`).

Departures, all where Kubernetes relies on decoding into Go structs afterwards: directive keys
(``$patch``, ``$retainKeys``, ``$setElementOrder/...``, ``$deleteFromPrimitiveList/...``) and
null members left in values put in place whole are dropped here (the Go struct has no such
fields); a field the kind does not declare is merged as a plain map instead of failing.

Invariant: neither input is modified; untouched sub-trees of the original are shared.
"""

from __future__ import annotations

from typing import Any, Final

from kstore.api.patch_meta import DEDUCED, FieldMeta, NodeKind, TypeNode
from kstore.errors import BadRequest, InternalError, Invalid
from kstore.registry.patch._gofmt import go_v
from kstore.registry.patch.json_patch import GENERIC_INVALID

__all__ = ["strategic_merge"]

_DIRECTIVE: Final = "$patch"
_DELETE: Final = "delete"
_REPLACE: Final = "replace"
_MERGE: Final = "merge"
_RETAIN_KEYS: Final = "$retainKeys"
_DELETE_FROM_PRIMITIVE_LIST: Final = "$deleteFromPrimitiveList"
_SET_ELEMENT_ORDER: Final = "$setElementOrder"

_BAD_PRIMITIVE_LIST: Final = "invalid patch format of primitive list"
_BAD_RETAIN_KEYS: Final = "invalid patch format of retainKeys"
_BAD_SET_ELEMENT_ORDER: Final = "invalid patch format of setElementOrder list"
_NO_LIST_OF_LISTS: Final = "lists of lists are not supported"


class _Error(Exception):
    """A strategic-merge failure: ``status`` is 400, 422 or 500 as Kubernetes maps it."""

    def __init__(self, message: str, status: int = 500) -> None:
        super().__init__(message)
        self.status = status


def strategic_merge(original: dict[str, Any], patch: dict[str, Any], node: TypeNode) -> Any:
    """Merge ``patch`` into ``original`` (both in the kind's version ``node`` describes)."""
    try:
        return _merge_map(original, patch, node)
    except _Error as exc:
        if exc.status == 400:
            raise BadRequest(str(exc)) from None
        if exc.status == 422:
            raise Invalid(GENERIC_INVALID) from exc
        raise InternalError(str(exc)) from None


# ---------------------------------------------------------------------------- metadata


def _go_type(value: Any) -> str:
    """The Go type of a decoded JSON value, for messages and same-type checks."""
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    return "nil"


def _lookup(node: TypeNode, key: str) -> FieldMeta:
    meta = node.field(key)
    return meta if meta is not None else FieldMeta(DEDUCED)


def _element(meta: FieldMeta) -> TypeNode:
    """The element type of a list field (a field that is not a list stands for its elements,
    as a Go pointer to a struct does)."""
    if meta.type.kind is NodeKind.LIST and meta.type.item is not None:
        return meta.type.item
    return meta.type


def _strategy(meta: FieldMeta) -> str:
    """The strategy besides ``retainKeys`` (Kubernetes' extractRetainKeysPatchStrategy)."""
    rest = [s for s in meta.patch_strategies if s != "retainKeys"]
    if len(rest) > 1 or len(meta.patch_strategies) > 2:
        raise _Error(f"unexpected patch strategy: {list(meta.patch_strategies)}")
    return rest[0] if rest else ""


def _extract_key(key: str, prefix: str) -> str:
    head, sep, tail = key.partition("/")
    if not sep or head != prefix:
        if prefix == _DELETE_FROM_PRIMITIVE_LIST:
            raise _Error(_BAD_PRIMITIVE_LIST, 400)
        raise _Error(_BAD_SET_ELEMENT_ORDER, 400)
    return tail


# ---------------------------------------------------------------------------- cleanup


def _is_directive_key(key: str) -> bool:
    return key in (_DIRECTIVE, _RETAIN_KEYS) or key.startswith(
        (_SET_ELEMENT_ORDER, _DELETE_FROM_PRIMITIVE_LIST)
    )


def _remove_directives(value: Any) -> tuple[Any, bool]:
    """Kubernetes' removeDirectives: an object carrying ``$patch`` is dropped (second item
    False), at any depth. Other directive keys are dropped too (decoding would)."""
    if isinstance(value, dict):
        if _DIRECTIVE in value:
            return None, False
        out: dict[str, Any] = {}
        for k, v in value.items():
            if _is_directive_key(k):
                continue
            v2, keep = _remove_directives(v)
            if keep:
                out[k] = v2
        return out, True
    if isinstance(value, list):
        items = []
        for v in value:
            v2, keep = _remove_directives(v)
            if keep:
                items.append(v2)
        return items, True
    return value, True


def _discard_nulls(value: Any) -> Any:
    """Kubernetes' discardNullValuesFromPatch: null members go, at any depth."""
    if isinstance(value, dict):
        return {k: _discard_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_discard_nulls(v) for v in value]
    return value


def _as_new(value: Any) -> tuple[Any, bool]:
    """A patch value put in place whole: nulls discarded, directives removed."""
    return _remove_directives(_discard_nulls(value))


def _raw(value: Any) -> Any:
    """A value Kubernetes takes from the patch as is (a replace, an appended element): what
    decoding into the Go struct keeps of it, i.e. without directive keys and null members."""
    if isinstance(value, dict):
        return {k: _raw(v) for k, v in value.items() if v is not None and not _is_directive_key(k)}
    if isinstance(value, list):
        return [_raw(v) for v in value]
    return value


# ---------------------------------------------------------------------------- maps


def _merge_map(original: Any, patch: dict[str, Any], node: TypeNode) -> Any:
    if _DIRECTIVE in patch:
        directive = patch[_DIRECTIVE]
        if directive == _REPLACE:
            return _raw({k: v for k, v in patch.items() if k != _DIRECTIVE})
        if directive == _DELETE:
            return {}
        raise _Error(f"unknown patch type: {go_v(directive)} in map: {go_v(patch)}")
    out: dict[str, Any] = dict(original) if isinstance(original, dict) else {}
    patch = dict(patch)
    _apply_retain_keys(out, patch)
    _merge_ordered_lists(out, patch, node)
    for key, patch_value in patch.items():
        delete_list = False
        if key.startswith(_DELETE_FROM_PRIMITIVE_LIST):
            key = _extract_key(key, _DELETE_FROM_PRIMITIVE_LIST)
            delete_list = True
        if patch_value is None:
            out.pop(key, None)
            continue
        if key not in out:
            if not delete_list:
                value, keep = _as_new(patch_value)
                if keep:
                    out[key] = value
            continue
        current = out[key]
        if _go_type(current) != _go_type(patch_value):
            if not delete_list:
                value, keep = _as_new(patch_value)
                if keep:
                    out[key] = value
                else:
                    del out[key]
            continue
        if isinstance(current, dict):
            meta = _lookup(node, key)
            if _strategy(meta) == _REPLACE:
                out[key] = _raw(patch_value)
            else:
                out[key] = _merge_map(current, patch_value, meta.type)
        elif isinstance(current, list):
            meta = _lookup(node, key)
            out[key] = _merge_list_field(current, patch_value, meta, delete_list)
        else:
            out[key] = patch_value
    return out


def _apply_retain_keys(out: dict[str, Any], patch: dict[str, Any]) -> None:
    if _RETAIN_KEYS not in patch:
        return
    retain = patch.pop(_RETAIN_KEYS)
    if not isinstance(retain, list):
        raise _Error(_BAD_RETAIN_KEYS, 400)
    keep = {_hashable(v) for v in retain}
    for key, value in patch.items():
        if (
            value is None
            or key.startswith(_DELETE_FROM_PRIMITIVE_LIST)
            or key.startswith(_SET_ELEMENT_ORDER)
        ):
            continue
        if key not in keep:
            raise _Error(_BAD_RETAIN_KEYS, 400)
    for key in list(out):
        if key not in keep:
            del out[key]


def _hashable(value: Any) -> Any:
    return value if isinstance(value, str | int | float | bool) or value is None else repr(value)


def _merge_ordered_lists(out: dict[str, Any], patch: dict[str, Any], node: TypeNode) -> None:
    """Process every ``$setElementOrder/<list>`` with its list (both leave ``patch``)."""
    for key in [k for k in patch if k.startswith(_SET_ELEMENT_ORDER)]:
        order = patch.pop(key)
        if not isinstance(order, list):
            raise _Error(f"expected a []interface {{}}, but received a {_go_type(order)}")
        list_key = _extract_key(key, _SET_ELEMENT_ORDER)
        found_original = list_key in out
        found_patch = list_key in patch
        original_list = out.get(list_key)
        patch_list = patch.get(list_key)
        if found_original and not isinstance(original_list, list):
            raise _Error(f"expected a []interface {{}}, but received a {_go_type(original_list)}")
        if found_patch and not isinstance(patch_list, list):
            raise _Error(f"expected a []interface {{}}, but received a {_go_type(patch_list)}")
        meta = _lookup(node, list_key)
        strategy = _strategy(meta)
        merge_key = meta.patch_merge_key
        _validate_order(patch_list or [], order, merge_key)
        if found_original and not found_patch:
            merged = original_list
        elif found_patch and not found_original:
            merged, _ = _remove_directives(patch_list)
        elif found_original and found_patch:
            alias = list(original_list)  # type: ignore[arg-type]
            merged = _merge_list_field(
                original_list,  # type: ignore[arg-type]
                patch_list,  # type: ignore[arg-type]
                meta,
                False,
                strategy=strategy,
                alias=alias,
            )
            original_list = alias
        else:
            continue
        assert isinstance(merged, list)
        if merge_key:
            patch_items, server_only = _partition_maps(merged, order, merge_key)
        else:
            patch_items, server_only = _partition_scalars(merged, order)
        kind = _element_kind(original_list or [], patch_list or [])
        out[list_key] = _normalize_order(
            patch_items, server_only, order, original_list or [], merge_key, kind
        )
        patch.pop(list_key, None)


def _validate_order(patch_list: list[Any], order: list[Any], merge_key: str) -> None:
    """The patch's elements must appear in the ``$setElementOrder`` list, in its order."""
    if not order or not patch_list:
        return
    items = _without_deletions(patch_list) if merge_key else patch_list
    pi = oi = 0
    while pi < len(items) and oi < len(order):
        if isinstance(items[pi], dict) and _DIRECTIVE in items[pi]:
            pi += 1
            continue
        if _merge_key_equal(items[pi], order[oi], merge_key):
            pi += 1
        oi += 1
    if pi < len(items) and oi >= len(order):
        raise _Error(
            f"The order in patch list:\n{go_v(patch_list)}\n doesn't match "
            f"{_SET_ELEMENT_ORDER} list:\n{go_v(order)}\n"
        )


def _merge_key_equal(left: Any, right: Any, merge_key: str) -> bool:
    if not merge_key:
        return bool(_scalar_eq(left, right))
    for side in (left, right):
        if not isinstance(side, dict):
            raise _Error(f"expected a map[string]interface {{}}, but received a {_go_type(side)}")
        if merge_key not in side:
            raise _Error(_no_merge_key(side, merge_key))
    return bool(_scalar_eq(left[merge_key], right[merge_key]))


def _scalar_eq(a: Any, b: Any) -> bool:
    """Go's ``==`` on decoded JSON scalars: the same type and value."""
    if isinstance(a, dict | list) or isinstance(b, dict | list):
        return False
    return _go_type(a) == _go_type(b) and a == b


def _no_merge_key(item: Any, merge_key: str) -> str:
    return f"map: {go_v(item)} does not contain declared merge key: {merge_key}"


# ---------------------------------------------------------------------------- lists


def _merge_list_field(
    original: list[Any],
    patch: list[Any],
    meta: FieldMeta,
    delete_list: bool,
    *,
    strategy: str | None = None,
    alias: list[Any] | None = None,
) -> list[Any]:
    if strategy is None:
        strategy = _strategy(meta)
    if strategy == _MERGE or delete_list:
        return _merge_list(
            original, patch, _element(meta), meta.patch_merge_key, delete_list, alias
        )
    return [_raw(v) for v in patch]


def _element_kind(*lists: list[Any]) -> str:
    """The Go type every element shares; errors as Kubernetes' sliceElementType."""
    seen = ""
    for items in lists:
        for v in items:
            t = _go_type(v)
            if not seen:
                seen = t
                if t == "[]interface {}":
                    raise _Error(_NO_LIST_OF_LISTS, 422)
            elif t != seen:
                raise _Error(
                    f"list element types are not identical: {go_v([list(x) for x in lists])}"
                )
    if not seen:
        raise _Error("no elements in any of the given slices")
    return seen


def _merge_list(
    original: list[Any],
    patch: list[Any],
    item_node: TypeNode,
    merge_key: str,
    delete_list: bool,
    alias: list[Any] | None = None,
) -> list[Any]:
    """Merge two lists. ``alias``, when given, is a copy of ``original`` that is updated as
    Kubernetes' in-place slice edits update the caller's view of the original list (deletions
    shift its elements left, appends then fill the freed tail); ``$setElementOrder`` orders by
    that view, and Kubernetes' results depend on it."""
    if not original and not patch:
        return original
    kind = _element_kind(original, patch)
    if kind != "map[string]interface {}":
        if delete_list:
            drop = [v for v in patch]
            return [v for v in original if not any(_scalar_eq(v, d) for d in drop)]
        merged = _dedupe(original + patch)
        patch_items, server_only = _partition_scalars(merged, patch)
        return _normalize_order(patch_items, server_only, patch, original, "", kind)
    if not merge_key:
        raise _Error("cannot merge lists without merge key for struct")
    server, patch, replaced = _apply_special_elements(original, patch, merge_key, alias)
    merged = _merge_elements(server, patch, merge_key, item_node, None if replaced else alias)
    patch_items, server_only = _partition_maps(merged, patch, merge_key)
    return _normalize_order(patch_items, server_only, patch, server, merge_key, kind)


def _dedupe(items: list[Any]) -> list[Any]:
    out: list[Any] = []
    for v in items:
        if not any(_scalar_eq(v, o) for o in out):
            out.append(v)
    return out


def _apply_special_elements(
    original: list[Any], patch: list[Any], merge_key: str, alias: list[Any] | None
) -> tuple[list[Any], list[Any], bool]:
    """Apply ``$patch`` elements: deletions leave the original, a replace makes the patch the
    whole list. Returns (original, patch without special elements, replaced)."""
    plain: list[Any] = []
    replace = False
    for item in patch:
        if _DIRECTIVE not in item:
            plain.append(item)
            continue
        directive = item[_DIRECTIVE]
        if directive == _DELETE:
            if merge_key not in item:
                raise _Error(_no_merge_key(item, merge_key))
            target = item[merge_key]
            while (i := _find(original, merge_key, target)) >= 0:
                if alias is not None:
                    alias[i : len(original) - 1] = alias[i + 1 : len(original)]
                original = original[:i] + original[i + 1 :]
        elif directive == _REPLACE:
            replace = True
        elif directive == _MERGE:
            raise _Error("merging lists cannot yet be specified in the patch")
        else:
            raise _Error(f"unknown patch type: {go_v(directive)} in map: {go_v(item)}")
    if replace:
        return [_raw(v) for v in plain], [], True
    return original, plain, False


def _find(items: list[Any], merge_key: str, value: Any) -> int:
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise _Error(f"value for key {i} is not a map")
        if merge_key in item and _scalar_eq(item[merge_key], value):
            return i
    return -1


def _merge_elements(
    original: list[Any],
    patch: list[Any],
    merge_key: str,
    item_node: TypeNode,
    alias: list[Any] | None,
) -> list[Any]:
    out = list(original)
    for item in patch:
        if merge_key not in item:
            raise _Error(_no_merge_key(item, merge_key))
        i = _find(out, merge_key, item[merge_key])
        if i >= 0:
            out[i] = _merge_map(out[i], item, item_node)
            if alias is not None and i < len(alias):
                alias[i] = out[i]
        else:
            out.append(_raw(item))
            if alias is not None and len(out) <= len(alias):
                alias[len(out) - 1] = out[-1]
    return out


# ---------------------------------------------------------------------------- order


def _partition_scalars(merged: list[Any], by: list[Any]) -> tuple[list[Any], list[Any]]:
    named = [v for v in merged if any(_scalar_eq(v, b) for b in by)]
    rest = [v for v in merged if not any(_scalar_eq(v, b) for b in by)]
    return named, rest


def _partition_maps(
    merged: list[Any], by: list[Any], merge_key: str
) -> tuple[list[Any], list[Any]]:
    named: list[Any] = []
    rest: list[Any] = []
    for item in merged:
        if not isinstance(item, dict):
            raise _Error(f"expected a map[string]interface {{}}, but received a {_go_type(item)}")
        if merge_key not in item:
            raise _Error(_no_merge_key(item, merge_key))
        (named if _find(by, merge_key, item[merge_key]) >= 0 else rest).append(item)
    return named, rest


def _index(items: list[Any], value: Any, merge_key: str, kind: str) -> int:
    if kind == "map[string]interface {}":
        probe = value.get(merge_key) if isinstance(value, dict) else None
        for i, item in enumerate(items):
            if _scalar_eq(item.get(merge_key) if isinstance(item, dict) else None, probe):
                return i
        return -1
    for i, item in enumerate(items):
        if _scalar_eq(item, value):
            return i
    return -1


def _without_deletions(items: list[Any]) -> list[Any]:
    for item in items:
        if not isinstance(item, dict):
            raise _Error(f"expected a map[string]interface {{}}, but received a {_go_type(item)}")
    return [i for i in items if i.get(_DIRECTIVE) != _DELETE]


def _sort_by(items: list[Any], order: list[Any], merge_key: str, kind: str) -> list[Any]:
    """Kubernetes' normalizeSliceOrder: a stable sort by position in ``order``; elements
    ``order`` lacks are placed as Go's sort.SliceStable leaves them with its comparator (which
    says "less" whenever either side is missing)."""
    deletions: list[Any] = []
    if kind == "map[string]interface {}":
        for lst in (items, order):
            for item in lst:
                if not isinstance(item, dict):
                    raise _Error(
                        f"expected a map[string]interface {{}}, but received a {_go_type(item)}"
                    )
                if merge_key not in item:
                    raise _Error(_no_merge_key(item, merge_key))
        deletions = [i for i in items if i.get(_DIRECTIVE) == _DELETE]
        items = [i for i in items if i.get(_DIRECTIVE) != _DELETE]
    positions = [_index(order, item, merge_key, kind) for item in items]
    out = _stable_insertion_sort(list(zip(positions, items, strict=True)))
    return [item for _, item in out] + deletions


def _stable_insertion_sort(pairs: list[tuple[int, Any]]) -> list[tuple[int, Any]]:
    """Go's insertion sort (what sort.SliceStable runs on short slices and in blocks) with
    Kubernetes' comparator: ``less(a, b)`` is ``a < b`` when both positions are known, else
    true."""

    def less(a: int, b: int) -> bool:
        return a < b if a >= 0 and b >= 0 else True

    if all(p >= 0 for p, _ in pairs):
        return sorted(pairs, key=lambda p: p[0])
    out = list(pairs)
    for i in range(1, len(out)):
        j = i
        while j > 0 and less(out[j][0], out[j - 1][0]):
            out[j], out[j - 1] = out[j - 1], out[j]
            j -= 1
    return out


def _normalize_order(
    patch_items: list[Any],
    server_only: list[Any],
    patch_order: list[Any],
    server_order: list[Any],
    merge_key: str,
    kind: str,
) -> list[Any]:
    patch_items = _sort_by(patch_items, patch_order, merge_key, kind)
    server_only = _sort_by(server_only, server_order, merge_key, kind)
    # Kubernetes' mergeSortedSlice: walk both, taking a server-only element first only when
    # the live order puts it before the next patch element.
    out: list[Any] = []
    i = j = 0
    while i < len(server_only) or j < len(patch_items):
        if i >= len(server_only):
            out.append(patch_items[j])
            j += 1
        elif j >= len(patch_items):
            out.append(server_only[i])
            i += 1
        else:
            li = _index(server_order, server_only[i], merge_key, kind)
            ri = _index(server_order, patch_items[j], merge_key, kind)
            if li >= 0 and ri >= 0 and li < ri:
                out.append(server_only[i])
                i += 1
            else:
                out.append(patch_items[j])
                j += 1
    return out
