"""The ``resourcequota`` controller: every ResourceQuota's ``status`` recounted from the objects.

The ResourceQuota admission plugin charges usage as objects are created; nothing there gives it
back. This controller, as kube-controller-manager's, writes ``status.hard`` (the quota's
``spec.hard``) and ``status.used`` (every name of ``spec.hard``, counted from the namespace's
objects now, with the plugin's own rules: :func:`~kstore.registry.plugins.resourcequota.
recounted_used`):

* when a quota is created, or its ``spec.hard`` changes (its ``status.hard`` then differs), or
  its ``status.used`` lacks a name of ``spec.hard``; status writes alone (the plugin's charges)
  queue nothing, since each recount lists the namespace's objects;
* when an object quotas count is deleted, or a pod ends (``Succeeded`` or ``Failed``): the
  quotas of its namespace (replenishment);
* every ``resync_seconds`` (kube-controller-manager's ``--resource-quota-sync-period``, 5m):
  every quota, which also covers the ``count/<resource>`` of kinds not watched here.

The status is written by a compare-and-swap on the quota as it was before counting: a charge
made by admission meanwhile makes the write a conflict, and the quota is counted again.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar, Final

from kstore.api.gvk import GroupVersion, Object
from kstore.controllers.base import Controller
from kstore.errors import Conflict, NotFound
from kstore.registry.informer import InformerTransform
from kstore.registry.interface import RequestContext, UpdateOptions
from kstore.registry.plugins.resourcequota import recounted_used

__all__ = ["ResourceQuotaController", "needs_recount"]

_QUOTAS: Final = ("", "resourcequotas")
#: The kinds whose deletion gives usage back (the standard quota resources).
_COUNTED: Final = (
    ("", "pods"),
    ("", "services"),
    ("", "persistentvolumeclaims"),
    ("", "configmaps"),
    ("", "secrets"),
    ("", "replicationcontrollers"),
)
_ENDED: Final = frozenset({"Succeeded", "Failed"})
_MANAGER: Final = "kstore-resourcequota-controller"


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def needs_recount(quota: Object) -> bool:
    """Whether ``quota``'s status does not follow its spec: ``status.hard`` differs from
    ``spec.hard``, or ``status.used`` lacks one of its names."""
    if _map(quota.get("metadata")).get("deletionTimestamp"):
        return False
    hard = _map(_map(quota.get("spec")).get("hard"))
    status = _map(quota.get("status"))
    if _map(status.get("hard")) != hard:
        return True
    return not set(hard) <= set(_map(status.get("used")))


#: The view of every counted object without a phase (shared: never changed).
_NO_PHASE: Final[Object] = {}
#: One shared view per pod phase seen (a handful; bounded against odd values).
_PHASE_VIEWS: dict[str, Object] = {}
_PHASE_VIEWS_LIMIT: Final = 64


def _phase_view(obj: Object) -> Object:
    """What is kept of a counted object: a pod's phase, all this controller reads of it
    (usage is recounted from the stores; the informer's key names the object). It follows
    every pod, ConfigMap, Secret, Service, claim and replication controller, so objects with
    the same phase (or none) share one view instead of each keeping a copy of its name."""
    phase = _map(obj.get("status")).get("phase")
    if phase is None:
        return _NO_PHASE
    if not isinstance(phase, str):
        return {"status": {"phase": phase}}
    view = _PHASE_VIEWS.get(phase)
    if view is None:
        view = {"status": {"phase": phase}}
        if len(_PHASE_VIEWS) < _PHASE_VIEWS_LIMIT:
            _PHASE_VIEWS[phase] = view
    return view


class ResourceQuotaController(Controller):
    name: ClassVar[str] = "resourcequota"
    watches: ClassVar[tuple[tuple[str, str], ...]] = (_QUOTAS, *_COUNTED)

    def transform_for(self, watched: tuple[str, str]) -> InformerTransform | None:
        return None if watched == _QUOTAS else _phase_view

    def keys_for(self, watched: tuple[str, str], key: str, obj: Object | None) -> Iterable[str]:
        if watched == _QUOTAS:
            return (key,) if obj is not None and needs_recount(obj) else ()
        if obj is not None and not (
            watched == ("", "pods") and _map(obj.get("status")).get("phase") in _ENDED
        ):
            return ()
        namespace = key.partition("/")[0]
        return self._quotas_in(namespace)

    def _quotas_in(self, namespace: str) -> list[str]:
        prefix = f"{namespace}/"
        known = self.informer(*_QUOTAS).keys()
        return [k for k in known if k.startswith(prefix)]

    def reconcile(self, key: str) -> None:
        namespace, _, name = key.partition("/")
        ctx = RequestContext(namespace=namespace, request_version=GroupVersion("", "v1"))
        store = self.store(*_QUOTAS)
        try:
            quota = store.get(ctx, name)
        except NotFound:
            return
        meta = _map(quota.get("metadata"))
        if meta.get("deletionTimestamp"):
            return
        read_version = meta.get("resourceVersion")
        hard = _map(_map(quota.get("spec")).get("hard"))
        used = recounted_used(self.registry, quota, namespace)
        status = _map(quota.get("status"))
        if _map(status.get("hard")) == hard and _map(status.get("used")) == used:
            return

        def recounted(current: Object) -> Object:
            if _map(current.get("metadata")).get("resourceVersion") != read_version:
                raise Conflict("the quota changed while its usage was counted")
            return {**current, "status": {"hard": dict(hard), "used": dict(used)}}

        opts = UpdateOptions(subresource="status", field_manager=_MANAGER)
        store.update(ctx, name, recounted, opts)
