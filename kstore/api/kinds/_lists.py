"""The List kind of a resource (``DeploymentList``, ``PodList``, ...), derived from its item kind.

A list object is ``{"apiVersion", "kind": "<Kind>List", "metadata": ListMeta, "items": [...]}``.
Its versions are its item kind's versions; converting or defaulting a list converts or defaults
every item with the item kind's functions, as Kubernetes' generated list conversions do.

Items usually carry no ``apiVersion``/``kind`` (Kubernetes' typed lists omit them); an item
that does carry an ``apiVersion`` gets the list's new one, as the Scheme does for top-level
objects, so ``a -> hub -> b -> hub -> a`` gives the original list back.
"""

from __future__ import annotations

from typing import Any

from kstore.api.gvk import HUB_VERSION, GroupVersion, Object
from kstore.api.scheme import Converter, Defaulter, KindDefinition, KindVersion

__all__ = ["list_definition"]


def list_definition(item: KindDefinition) -> KindDefinition:
    """The KindDefinition of ``item``'s List kind (named by ``item.list_kind``)."""
    if not item.list_kind:
        raise ValueError(f"kind {item.kind} declares no list_kind")
    hub_api_version = GroupVersion(item.group, HUB_VERSION).api_version
    versions = tuple(
        KindVersion(
            version=v.version,
            to_hub=_each_item(v.to_hub, hub_api_version),
            from_hub=_each_item(v.from_hub, GroupVersion(item.group, v.version).api_version),
            default=_default_each_item(v.default),
            enabled=v.enabled,
        )
        for v in item.versions
    )
    return KindDefinition(
        group=item.group,
        kind=item.list_kind,
        versions=versions,
        storage_version=item.storage_version,
    )


def _each_item(convert: Converter | None, api_version: str) -> Converter:
    def convert_list(obj: Object) -> Object:
        out = dict(obj)
        items = obj.get("items")
        if isinstance(items, list):
            out["items"] = [_convert_item(convert, item, api_version) for item in items]
        return out

    return convert_list


def _convert_item(convert: Converter | None, item: Any, api_version: str) -> Any:
    if not isinstance(item, dict):
        return item
    out = dict(item) if convert is None else convert(item)
    if "apiVersion" in item:
        out["apiVersion"] = api_version
    return out


def _default_each_item(default: Defaulter | None) -> Defaulter | None:
    if default is None:
        return None
    item_default: Defaulter = default

    def default_list(obj: Object) -> None:
        items = obj.get("items")
        if isinstance(items, list):
            for item in items:
                if isinstance(item, dict):
                    item_default(item)

    return default_list
