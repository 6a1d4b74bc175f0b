"""Keeping a field that an API version cannot express in an annotation, losslessly.

Kubernetes keeps the hub Deployment's ``spec.rollbackTo`` in the annotation
``deprecated.deployment.rollback.to`` when it writes apps/v1 or apps/v1beta2, and reads it back
from there. Its converters lose data in corner cases: values the annotation text cannot tell
apart (``rollbackTo: {}`` and ``{"revision": 0}`` are both ``"0"``), an annotation the user set
under the same key (dropped), an ``annotations`` map that was present but empty.

:class:`StashedField` writes exactly what Kubernetes writes whenever that text reads back to the
same object. Otherwise it writes an *envelope*: a JSON object (sorted keys, no spaces) in the same
annotation holding the field's value, the user's own annotation value, and which empty maps
existed. Reading accepts an envelope only if writing the object it describes gives the very same
text; any other text is either Kubernetes' canonical form or the user's own annotation.

Invariants, for every object whose container (e.g. ``spec``) is a mapping:

- ``restore(stash(hub)) == hub``;
- ``stash(restore(ext)) == ext`` when ``ext`` does not carry the field itself (an external
  version cannot; a stray one is dropped, as Kubernetes' decoder drops unknown fields);
- neither function mutates its argument; untouched sub-trees are shared with it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.errors import BadRequest

__all__ = ["MISSING", "StashedField", "int64_text", "int64_value"]


class _Missing:
    """The absence of a key (distinct from a JSON ``null``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()

# Envelope keys besides the field itself: the user's own annotation under the same key, and the
# exact empty value (``{}`` or ``null``) of ``metadata.annotations`` / ``metadata`` when the
# external form has to create them to hold the annotation.
_ANNOTATION = "annotation"
_ANNOTATIONS = "annotations"
_METADATA = "metadata"


_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1
# What Go's strconv.FormatInt prints: no sign on positives, no leading zeros.
_CANONICAL_INT: Final = re.compile(r"0|-?[1-9][0-9]*")


def int64_text(value: Any) -> str | None:
    """``strconv.FormatInt`` of an int64 value; None for anything else (bools included)."""
    if type(value) is not int or not _INT64_MIN <= value <= _INT64_MAX:
        return None
    return str(value)


def int64_value(text: str) -> Any:
    """The int64 that :func:`int64_text` prints as ``text``; :data:`MISSING` for any other text.

    Kubernetes' ``strconv.ParseInt`` also reads ``+5`` or ``007`` (and fails on other text);
    kstore keeps those as the user's own annotation, because turning them into ``5``/``7``
    could not be undone.
    """
    if _CANONICAL_INT.fullmatch(text) is None:
        return MISSING
    value = int(text)
    return value if _INT64_MIN <= value <= _INT64_MAX else MISSING


@dataclass(frozen=True, slots=True)
class StashedField:
    """One hub field kept in an annotation by versions that lack it.

    ``to_text`` gives Kubernetes' annotation text for a value, or ``None`` when Kubernetes'
    text would not read back to exactly that value. ``from_text`` is its inverse: the value for a
    canonical text, :data:`MISSING` for any other text (so ``from_text(to_text(v)) == v``
    whenever ``to_text(v)`` is not None). ``order`` lists the container's fields in
    declaration order, so a restored field lands where Kubernetes would print it.
    """

    annotation: str
    container: str
    field: str
    order: tuple[str, ...]
    to_text: Callable[[Any], str | None]
    from_text: Callable[[str], Any]

    # ----------------------------------------------------------------- hub -> external

    def stash(self, hub: Object) -> Object:
        """The hub object without the field, the field kept in the annotation."""
        out = dict(hub)
        container = hub.get(self.container)
        if not isinstance(container, Mapping):
            return out
        value = container.get(self.field, MISSING)
        meta = hub.get("metadata", MISSING)
        literal = _annotation_of(meta, self.annotation)
        if value is MISSING and literal is MISSING:
            return out
        if value is not MISSING:
            out[self.container] = _without(container, self.field)

        candidate: Object | None = None
        trusted = False
        if literal is MISSING:
            text = self.to_text(value)
            if text is not None:
                candidate = dict(out)
                _put_metadata(candidate, _with_annotation(meta, self.annotation, text))
                # The common case needs no check: restore() reads a canonical text back, and
                # the maps it then drops as empty were absent. Text that could be mistaken
                # for an envelope is checked the long way.
                trusted = _drops_cleanly(meta) and not text.startswith("{")
        elif value is MISSING:
            candidate = out
        if candidate is not None and (
            trusted or _same_parts(self.restore(candidate), hub, self.container)
        ):
            return candidate
        return self._envelope(out, meta, value, literal)

    def _envelope(self, out: Object, meta: Any, value: Any, literal: Any) -> Object:
        state: dict[str, Any] = {}
        if value is not MISSING:
            state[self.field] = value
        if literal is not MISSING:
            state[_ANNOTATION] = literal
        if meta is None or meta == {}:
            state[_METADATA] = meta
        elif isinstance(meta, Mapping) and _is_empty_value(meta.get("annotations", MISSING)):
            state[_ANNOTATIONS] = meta["annotations"]
        text = json.dumps(state, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        result = dict(out)
        _put_metadata(result, _with_annotation(meta, self.annotation, text))
        return result

    # ----------------------------------------------------------------- external -> hub

    def restore(self, ext: Object) -> Object:
        """The external object with the field read back from the annotation."""
        out = dict(ext)
        container = ext.get(self.container)
        if not isinstance(container, Mapping):
            return out
        if self.field in container:
            container = _without(container, self.field)
            out[self.container] = container
        meta = ext.get("metadata", MISSING)
        text = _annotation_of(meta, self.annotation)
        if not isinstance(text, str):
            return out
        opened = self._open(out, meta, container, text)
        if opened is not None:
            return opened
        value = self.from_text(text)
        if value is MISSING:
            return out
        _put_metadata(out, _without_annotation(meta, self.annotation, MISSING, MISSING))
        out[self.container] = _insert(container, self.field, value, self.order)
        return out

    def _open(
        self, out: Object, meta: Any, container: Mapping[str, Any], text: str
    ) -> Object | None:
        """The hub object an envelope describes, or None when ``text`` is not one."""
        if not text.startswith("{"):
            return None
        try:
            state = json.loads(text)
        except ValueError:
            return None
        allowed = {self.field, _ANNOTATION, _ANNOTATIONS, _METADATA}
        if not isinstance(state, dict) or not state.keys() <= allowed:
            return None
        if self.field not in state and _ANNOTATION not in state:
            return None
        empty_annotations = state.get(_ANNOTATIONS, MISSING)
        empty_metadata = state.get(_METADATA, MISSING)
        if not all(v is MISSING or _is_empty_value(v) for v in (empty_annotations, empty_metadata)):
            return None
        hub = dict(out)
        if _ANNOTATION in state:
            hub_meta = _with_annotation(meta, self.annotation, state[_ANNOTATION])
        else:
            hub_meta = _without_annotation(meta, self.annotation, empty_annotations, empty_metadata)
        _put_metadata(hub, hub_meta)
        if self.field in state:
            hub[self.container] = _insert(container, self.field, state[self.field], self.order)
        # Only the text that stash() itself would write is an envelope; anything else is the
        # user's own annotation and stays one.
        if not _same_parts(self.stash(hub), out, self.container):
            return None
        return hub


# --------------------------------------------------------------------------- helpers


def _annotation_of(meta: Any, key: str) -> Any:
    if not isinstance(meta, Mapping):
        return MISSING
    annotations = meta.get("annotations")
    if not isinstance(annotations, Mapping):
        return MISSING
    return annotations.get(key, MISSING)


def _is_empty_value(value: Any) -> bool:
    return value is None or value == {}


def _drops_cleanly(meta: Any) -> bool:
    """Whether removing the one annotation stash() adds to ``meta`` gives ``meta`` back.

    restore() drops ``annotations`` and ``metadata`` when they end up empty, so they must have
    been absent, not present and empty (or null).
    """
    if meta is MISSING:
        return True
    if not isinstance(meta, Mapping) or not meta:
        return False
    annotations = meta.get("annotations", MISSING)
    return annotations is MISSING or (isinstance(annotations, Mapping) and bool(annotations))


def _with_annotation(meta: Any, key: str, text: Any) -> dict[str, Any]:
    if meta is MISSING or meta is None:
        meta = {}
    if not isinstance(meta, Mapping):
        raise BadRequest("metadata must be an object to hold annotations")
    annotations = meta.get("annotations", MISSING)
    if annotations is MISSING or annotations is None:
        annotations = {}
    if not isinstance(annotations, Mapping):
        raise BadRequest("metadata.annotations must be an object")
    new_meta = dict(meta)
    new_annotations = dict(annotations)
    new_annotations[key] = text
    new_meta["annotations"] = new_annotations
    return new_meta


def _without_annotation(meta: Any, key: str, empty_annotations: Any, empty_metadata: Any) -> Any:
    """``meta`` without ``key``. A map left empty disappears, or becomes the given empty value."""
    assert isinstance(meta, Mapping)
    annotations = meta["annotations"]
    new_meta = dict(meta)
    new_annotations = _without(annotations, key)
    if new_annotations:
        new_meta["annotations"] = new_annotations
    elif empty_annotations is not MISSING:
        new_meta["annotations"] = empty_annotations
    else:
        del new_meta["annotations"]
    if not new_meta:
        return empty_metadata
    return new_meta


def _put_metadata(obj: Object, meta: Any) -> None:
    if meta is MISSING:
        obj.pop("metadata", None)
    else:
        obj["metadata"] = meta


def _without(mapping: Mapping[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in mapping.items() if k != key}


def _insert(
    mapping: Mapping[str, Any], key: str, value: Any, order: tuple[str, ...]
) -> dict[str, Any]:
    """A copy of ``mapping`` with ``key`` placed before the first field declared after it."""
    rank = {name: i for i, name in enumerate(order)}
    mine = rank.get(key, len(order))
    out: dict[str, Any] = {}
    placed = False
    for k, v in mapping.items():
        if k == key:
            continue
        if not placed and rank.get(k, -1) > mine:
            out[key] = value
            placed = True
        out[k] = v
    if not placed:
        out[key] = value
    return out


def _same_parts(a: Object, b: Object, container: str) -> bool:
    """Whether the two parts a stash or restore may change are equal."""
    same_meta: bool = a.get("metadata", MISSING) == b.get("metadata", MISSING)
    return same_meta and bool(a.get(container, MISSING) == b.get(container, MISSING))
