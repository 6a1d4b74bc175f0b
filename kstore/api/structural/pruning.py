"""Pruning: removing every field the structural schema does not declare.

Kubernetes' ``pruning.PruneWithOptions`` (pruning/algorithm.go), followed, as the custom
resource handler does it, by the ObjectMeta pruning of :mod:`.object_meta`:

- a key of an object is kept when the schema declares it in ``properties`` (and is pruned
  inside with that property's schema) or when ``additionalProperties`` is present at all, even
  ``false`` (pruned inside with its schema, or with none when it is a boolean, which empties
  nested objects);
- below ``x-kubernetes-preserve-unknown-fields: true`` unknown keys are kept, but declared
  properties and ``additionalProperties`` are still pruned with their schemas;
- at a resource's root (``is_resource_root``) and in every ``x-kubernetes-embedded-resource``
  object, ``apiVersion``, ``kind`` and ``metadata`` are always kept: ``metadata`` is pruned to
  ObjectMeta's fields instead (``object_meta=True``), as Kubernetes' decoding into ObjectMeta
  does;
- with no schema at all, every key of an object is pruned, and list items are pruned with no
  schema.

Each pruned field's path is returned, as ``fieldValidation=Strict``/``Warn`` report them
(``unknown field "spec.foo"``): keys joined with ``.`` and list indexes as ``[i]``, the pruned
schema fields sorted, after the root's unknown ``metadata`` fields and before the embedded
resources' ones, the order Kubernetes collects them in. An ``apiVersion``/``kind``/``metadata``
key dropped at the very top of a non-resource object is pruned without being reported, as in
Kubernetes.
"""

from __future__ import annotations

from typing import Any, Final

from kstore.api.structural.model import EMPTY, Structural
from kstore.api.structural.object_meta import prune_object_meta

__all__ = ["embedded_object_meta", "prune"]

_META_FIELDS: Final = frozenset({"apiVersion", "kind", "metadata"})


def prune(
    obj: Any,
    schema: Structural | None,
    is_resource_root: bool = True,
    *,
    object_meta: bool = True,
) -> list[str]:
    """Remove undeclared fields from ``obj`` in place; return the pruned fields' paths."""
    if is_resource_root:
        schema = (schema or EMPTY).with_embedded_resource()
    pruner = _Pruner()
    if object_meta and is_resource_root and isinstance(obj, dict) and "metadata" in obj:
        root_meta = prune_object_meta(obj["metadata"], "metadata")
    else:
        root_meta = []
    pruner.prune(obj, schema, "")
    pruner.pruned.sort()
    if object_meta:
        embedded: list[str] = []
        _embedded_meta(obj, schema, "", is_resource_root, embedded)
        embedded.sort()
        return root_meta + pruner.pruned + embedded
    return root_meta + pruner.pruned


def _join(parent: str, key: str) -> str:
    return f"{parent}.{key}" if parent else key


class _Pruner:
    __slots__ = ("pruned",)

    def __init__(self) -> None:
        self.pruned: list[str] = []

    def prune(self, x: Any, s: Structural | None, path: str) -> None:
        if s is not None and s.preserve_unknown_fields:
            self.skip(x, s, path)
            return
        if isinstance(x, dict):
            if s is None:
                self.pruned.extend(_join(path, k) for k in x)
                x.clear()
                return
            props = s.properties
            additional = s.additional_properties
            embedded = s.embedded_resource
            for k in list(x):
                if embedded and k in _META_FIELDS:
                    continue
                prop = props.get(k)
                if prop is not None:
                    v = x[k]
                    if isinstance(v, dict | list):
                        self.prune(v, prop, _join(path, k))
                elif additional is not None:
                    v = x[k]
                    if isinstance(v, dict | list):
                        sub = additional if isinstance(additional, Structural) else None
                        self.prune(v, sub, _join(path, k))
                else:
                    if k not in _META_FIELDS or path:
                        self.pruned.append(_join(path, k))
                    del x[k]
        elif isinstance(x, list):
            items = s.items if s is not None else None
            for i, v in enumerate(x):
                if isinstance(v, dict | list):
                    self.prune(v, items, f"{path}[{i}]")

    def skip(self, x: Any, s: Structural | None, path: str) -> None:
        """Below preserve-unknown-fields: keep unknown keys, prune the declared ones."""
        if s is None:
            return
        if isinstance(x, dict):
            props = s.properties
            additional = s.additional_properties
            for k, v in x.items():
                if s.embedded_resource and k in _META_FIELDS:
                    continue
                if not isinstance(v, dict | list):
                    continue
                prop = props.get(k)
                if prop is not None:
                    self.prune(v, prop, _join(path, k))
                elif additional is not None:
                    sub = additional if isinstance(additional, Structural) else None
                    self.prune(v, sub, _join(path, k))
        elif isinstance(x, list):
            for i, v in enumerate(x):
                self.skip(v, s.items, f"{path}[{i}]")


def embedded_object_meta(obj: Any, root: Structural) -> None:
    """The ObjectMeta pruning of every embedded resource below a resource's root (whose own
    metadata is left alone), without reporting."""
    _embedded_meta(obj, root, "", True, [])


def _embedded_meta(
    x: Any, s: Structural | None, path: str, skip_root: bool, out: list[str]
) -> None:
    """ObjectMeta pruning of every embedded resource, as Kubernetes' coercion walks them.

    Paths here are ``field.Path`` renderings (a map key is ``[key]``), as Kubernetes reports
    these; ``skip_root`` leaves the root's own metadata, already handled, alone.
    """
    if s is None or not s.has_embedded_resources:
        return
    if isinstance(x, dict):
        if s.embedded_resource and not skip_root and "metadata" in x:
            prefix = f"{path}.metadata" if path else "metadata"
            out.extend(prune_object_meta(x["metadata"], prefix))
        additional = s.additional_properties_schema
        for k, v in x.items():
            if not isinstance(v, dict | list):
                continue
            prop = s.properties.get(k)
            if prop is not None:
                _embedded_meta(v, prop, _join(path, k), False, out)
            elif s.additional_properties is not None:
                _embedded_meta(v, additional, f"{path}[{k}]", False, out)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            _embedded_meta(v, s.items, f"{path}[{i}]", False, out)
