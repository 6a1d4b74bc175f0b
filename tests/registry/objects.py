"""Objects and contexts the registry tests build on."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import cache
from typing import Any

from kstore.api.gvk import GroupVersion, Object
from kstore.api.kinds import builtin_scheme_builder
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo, Scheme
from kstore.registry.interface import RequestContext
from kstore.registry.strategies.base import copy_value

WIDGET = KindDefinition(
    group="example.com",
    kind="Widget",
    versions=(KindVersion(version="v1"),),
    storage_version="v1",
    resource=ResourceInfo(
        plural="widgets", singular="widget", namespaced=True, subresources=("status",)
    ),
    list_kind="WidgetList",
)


@cache
def registry_scheme() -> Scheme:
    """The built-in kinds plus ``example.com/v1`` Widget (a custom kind with a status)."""
    return builtin_scheme_builder().add(WIDGET).build()


def ctx(namespace: str = "default", api_version: str = "v1") -> RequestContext:
    return RequestContext(namespace=namespace, request_version=GroupVersion.parse(api_version))


def hub(scheme: Scheme, obj: Object) -> Object:
    """``obj`` (external, a test literal) defaulted and converted to the hub, as a request
    body is decoded."""
    external = copy_value(obj)
    scheme.default(external)
    return scheme.to_hub(external)


def config_map(name: str = "cm", **data: str) -> Object:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def pod(name: str = "p", **spec: Any) -> Object:
    body: dict[str, Any] = {"containers": [{"name": "c", "image": "nginx:1.27"}]}
    body.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": body}


def deployment(name: str = "web", replicas: int = 1, image: str = "nginx:1.27") -> Object:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "web", "image": image}]},
            },
        },
    }


def widget(name: str = "w", **spec: Any) -> Object:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name},
        "spec": dict(spec),
    }


def replace_with(obj: Object) -> Callable[[Object], Object]:
    """An UpdatedObject that ignores the current object (a PUT)."""
    return lambda current: obj


def changed(edit: Callable[[Object], None]) -> Callable[[Object], Object]:
    """An UpdatedObject that edits a copy of the current object (a read-modify-write)."""

    def apply(current: Object) -> Object:
        obj = copy_value(current)
        edit(obj)
        return obj

    return apply


def wait_for(predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
    """Poll ``predicate`` every 20 ms for at most ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()
