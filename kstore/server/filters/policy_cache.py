"""An in-memory copy of the RBAC objects, kept current by watches (the API server's informers).

The RBAC authorizer asks it first, on the event loop: an allow found here needs no registry
read and no worker-thread hop. It is indexed by subject (``User`` name, ``Group`` name, and the
user name a ``ServiceAccount`` stands for), so a decision looks only at the bindings that name
the user or one of their groups.

Consistency: like kube-apiserver's informer-fed authorizer, the copy lags the store by the
watch delivery delay, so a binding removed a moment ago may still allow a request. It never
refuses: a request it does not allow goes to the consistent path
(:class:`~kstore.server.filters.rbac.RBACAuthorizer`), so a grant made before a request is
always honoured.

Threads: one daemon thread per RBAC resource lists it, then watches from the list's revision
and applies events; when the watch ends (an ERROR such as 410 after compaction, or the store
closing) it lists again. Each change publishes a new immutable :class:`_Index`; readers take
the current one in a single attribute read, so they never see a half-applied change.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from kstore.api.kinds.rbac import GROUP
from kstore.registry.interface import Registry, RequestContext, UserInfo
from kstore.server.filters.authorization import Attributes
from kstore.server.filters.rbac import rules_allow
from kstore.storage.interface import EventType, ListOptions

__all__ = ["PolicyCache"]

_log = logging.getLogger(__name__)

_RESOURCES: Final = ("clusterroles", "clusterrolebindings", "roles", "rolebindings")
#: Seconds between attempts to list again after a watch ended or a list failed.
_RETRY_SECONDS: Final = 0.5
#: How long a watch waits for an event before it checks whether the cache was closed.
_POLL_SECONDS: Final = 1.0

_Key = tuple[str, str]  # (namespace, name); namespace "" for cluster-scoped objects


def _str(obj: Mapping[str, Any], key: str) -> str:
    value = obj.get(key)
    return value if isinstance(value, str) else ""


def _key_of(obj: Mapping[str, Any]) -> _Key:
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping):
        return "", ""
    return _str(meta, "namespace"), _str(meta, "name")


def _subject_keys(subject: Mapping[str, Any], binding_namespace: str) -> str | None:
    """The index key of a subject: ``u:<user name>`` or ``g:<group>`` (None: matches no one)."""
    kind, name = _str(subject, "kind"), _str(subject, "name")
    if kind == "User":
        return f"u:{name}"
    if kind == "Group":
        return f"g:{name}"
    if kind == "ServiceAccount":
        namespace = _str(subject, "namespace") or binding_namespace
        return f"u:system:serviceaccount:{namespace}:{name}" if namespace else None
    return None


@dataclass(frozen=True, slots=True)
class _Binding:
    namespace: str
    role_kind: str
    role_name: str


@dataclass(frozen=True)
class _Index:
    """One consistent view: rules by role, bindings by subject key (per namespace)."""

    cluster_roles: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    roles: Mapping[_Key, Sequence[Any]] = field(default_factory=dict)
    cluster_bindings: Mapping[str, Sequence[_Binding]] = field(default_factory=dict)
    namespace_bindings: Mapping[_Key, Sequence[_Binding]] = field(default_factory=dict)


def _rules(obj: Mapping[str, Any]) -> Sequence[Any]:
    rules = obj.get("rules")
    return rules if isinstance(rules, list) else ()


def _build(objects: Mapping[str, Mapping[_Key, Mapping[str, Any]]]) -> _Index:
    cluster_bindings: dict[str, list[_Binding]] = {}
    namespace_bindings: dict[_Key, list[_Binding]] = {}
    for resource, into_namespace in (("clusterrolebindings", False), ("rolebindings", True)):
        for (namespace, _), binding in objects[resource].items():
            ref = binding.get("roleRef")
            if not isinstance(ref, Mapping):
                continue
            target = _Binding(namespace, _str(ref, "kind"), _str(ref, "name"))
            subjects = binding.get("subjects")
            for subject in subjects if isinstance(subjects, list) else ():
                key = _subject_keys(subject, namespace) if isinstance(subject, Mapping) else None
                if key is None:
                    continue
                if into_namespace:
                    namespace_bindings.setdefault((namespace, key), []).append(target)
                else:
                    cluster_bindings.setdefault(key, []).append(target)
    return _Index(
        cluster_roles={name: _rules(o) for (_, name), o in objects["clusterroles"].items()},
        roles={key: _rules(o) for key, o in objects["roles"].items()},
        cluster_bindings=cluster_bindings,
        namespace_bindings=namespace_bindings,
    )


def _user_keys(user: UserInfo) -> list[str]:
    return [f"u:{user.name}", *(f"g:{g}" for g in user.groups)]


class PolicyCache:
    """Watches the RBAC resources of ``registry`` and answers "is this surely allowed?"."""

    def __init__(self, registry: Registry) -> None:
        self._registry = registry
        self._objects: dict[str, dict[_Key, Mapping[str, Any]]] = {r: {} for r in _RESOURCES}
        self._index = _Index()
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._synced = {r: threading.Event() for r in _RESOURCES}
        self._threads = [
            threading.Thread(target=self._run, args=(r,), name=f"rbac-{r}", daemon=True)
            for r in _RESOURCES
        ]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def wait_synced(self, timeout: float) -> bool:
        """Whether every resource has been listed once within ``timeout`` seconds."""
        return all(event.wait(timeout) for event in self._synced.values())

    def close(self) -> None:
        self._closed.set()

    def allows(self, attributes: Attributes) -> bool:
        """True when the cached policy allows the request (False means "ask the store")."""
        index = self._index
        keys = _user_keys(attributes.user)
        for key in keys:
            for binding in index.cluster_bindings.get(key, ()):
                if binding.role_kind == "ClusterRole" and rules_allow(
                    attributes, index.cluster_roles.get(binding.role_name, ())
                ):
                    return True
        namespace = attributes.namespace
        if not namespace:
            return False
        for key in keys:
            for binding in index.namespace_bindings.get((namespace, key), ()):
                if binding.role_kind == "ClusterRole":
                    rules = index.cluster_roles.get(binding.role_name, ())
                elif binding.role_kind == "Role":
                    rules = index.roles.get((namespace, binding.role_name), ())
                else:
                    continue
                if rules_allow(attributes, rules):
                    return True
        return False

    # -- the watch threads -----------------------------------------------------------------

    def _publish(self) -> None:
        self._index = _build(self._objects)

    def _run(self, resource: str) -> None:
        store = self._registry.store(GROUP, resource)
        ctx = RequestContext()
        while not self._closed.is_set():
            try:
                listed = store.list(ctx, ListOptions())
                with self._lock:
                    self._objects[resource] = {_key_of(o): o for o in listed.items}
                    self._publish()
                self._synced[resource].set()
                watcher = store.watch(
                    ctx, ListOptions(resource_version=str(listed.resource_version))
                )
            except Exception:  # a closed or failing store: try again later
                _log.debug("listing %s for the RBAC cache failed", resource, exc_info=True)
                self._closed.wait(_RETRY_SECONDS)
                continue
            try:
                while not self._closed.is_set():
                    event = watcher.next(_POLL_SECONDS)
                    if event is None:
                        if watcher.stopped:
                            break
                        continue
                    if event.type is EventType.ERROR:
                        break
                    if event.type is EventType.BOOKMARK:
                        continue
                    with self._lock:
                        objects = dict(self._objects[resource])
                        if event.type is EventType.DELETED:
                            objects.pop(_key_of(event.object), None)
                        else:
                            objects[_key_of(event.object)] = event.object
                        self._objects[resource] = objects
                        self._publish()
            finally:
                watcher.stop()
            self._closed.wait(_RETRY_SECONDS)
