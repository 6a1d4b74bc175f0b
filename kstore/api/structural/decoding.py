"""What decoding does to a custom object, as one step: prune, drop nulls, default.

Kubernetes runs :func:`~.pruning.prune`, :func:`~.defaulting.drop_nulls` and
:func:`~.defaulting.default` one after the other on every custom object it decodes, from a
request and from storage, so a created object goes through them three times (the request, the
write's read-back, the watch cache's copy). :func:`normalize` gives the same result for less:

- pruning and null-dropping share one walk, and nothing records the pruned paths (only
  ``fieldValidation`` reports them, and it calls :func:`~.pruning.prune` itself);
- defaulting walks only the subtrees whose schema has a default somewhere
  (``Structural.has_defaults``).

Invariant: ``normalize(x, s)`` leaves ``x`` exactly as ``prune``, ``drop_nulls`` and
``default`` in that order would (a property test compares them on random schemas and values).
The two walks stay separate because the ObjectMeta pruning of embedded resources comes
between them in Kubernetes' order.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Final

from kstore.api.structural.defaulting import default
from kstore.api.structural.model import EMPTY, Structural
from kstore.api.structural.object_meta import prune_object_meta
from kstore.api.structural.pruning import embedded_object_meta

__all__ = ["normalize"]

_META_FIELDS: Final = frozenset({"apiVersion", "kind", "metadata"})


class _Mode(Enum):
    """How pruning treats a node: unknown keys dropped, kept (below
    ``x-kubernetes-preserve-unknown-fields``), or the node left alone (an embedded resource's
    ``apiVersion``, ``kind`` and ``metadata``, which pruning does not enter but null-dropping
    still does)."""

    PRUNE = 1
    SKIP = 2
    KEEP = 3


def normalize(obj: Any, schema: Structural | None) -> None:
    """Prune ``obj`` (a resource, at its root) by ``schema``, drop its disallowed nulls and
    apply the defaults, in place."""
    root = (schema or EMPTY).with_embedded_resource()
    if isinstance(obj, dict) and "metadata" in obj:
        prune_object_meta(obj["metadata"], "metadata")
    _walk(obj, root, _Mode.PRUNE)
    if root.has_embedded_resources:
        embedded_object_meta(obj, root)
    # Defaulting of the root as the schema has it (not seen as an embedded resource).
    default(obj, schema)


def _clear(x: Any) -> None:
    """Pruning with no schema: every object below loses all its keys."""
    if type(x) is dict:
        x.clear()
    elif type(x) is list:
        for v in x:
            if type(v) is dict or type(v) is list:
                _clear(v)


def _walk(x: Any, s: Structural, mode: _Mode) -> None:
    if mode is _Mode.PRUNE and s.preserve_unknown_fields:
        mode = _Mode.SKIP
    if type(x) is dict:
        props = s.properties
        additional = s.additional_properties
        additional_schema = additional if isinstance(additional, Structural) else None
        meta_kept = mode is not _Mode.KEEP and s.embedded_resource
        for k in list(x):
            prop = props.get(k)
            if meta_kept and k in _META_FIELDS:
                child_mode = _Mode.KEEP
            elif prop is not None or additional is not None:
                child_mode = _Mode.KEEP if mode is _Mode.KEEP else _Mode.PRUNE
            elif mode is _Mode.PRUNE:
                del x[k]
                continue
            else:
                continue  # kept, and nothing below it is declared
            sub = prop if prop is not None else additional_schema
            v = x[k]
            if v is None:
                if sub is not None and not sub.nullable and sub.default is None:
                    del x[k]
            elif type(v) is dict or type(v) is list:
                if sub is not None:
                    _walk(v, sub, child_mode)
                elif child_mode is _Mode.PRUNE:
                    _clear(v)
    elif type(x) is list:
        items = s.items
        for v in x:
            if type(v) is dict or type(v) is list:
                if items is not None:
                    _walk(v, items, mode)
                elif mode is _Mode.PRUNE:
                    _clear(v)
