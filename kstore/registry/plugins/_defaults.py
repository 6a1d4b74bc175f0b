"""The default class of a kind (StorageClass, IngressClass): the objects annotated as the
default; when several are, the newest (then the first by name), as kube-apiserver picks."""

from __future__ import annotations

from typing import Any

from kstore.api.gvk import Object

__all__ = ["default_class"]


def default_class(classes: list[Object], *annotations: str) -> Object | None:
    chosen: Object | None = None
    chosen_key: tuple[str, str] | None = None
    for obj in classes:
        meta: Any = obj.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        found = meta.get("annotations")
        found = found if isinstance(found, dict) else {}
        if not any(found.get(a) == "true" for a in annotations):
            continue
        created = str(meta.get("creationTimestamp") or "")
        name = str(meta.get("name") or "")
        if chosen_key is None or (created, _inverse(name)) > (
            chosen_key[0],
            _inverse(chosen_key[1]),
        ):
            chosen, chosen_key = obj, (created, name)
    return chosen


def _inverse(name: str) -> tuple[int, ...]:
    """A key that orders names backwards (the first name wins a tie on time)."""
    return (*(-ord(c) for c in name), 1)
