"""The ``pvc-protection`` and ``pv-protection`` controllers: the finalizers that the
StorageObjectInUseProtection admission plugin puts on claims and volumes are taken off once
nothing uses them, as kube-controller-manager's controllers do.

* A PersistentVolumeClaim being deleted keeps ``kubernetes.io/pvc-protection`` while a pod of
  its namespace uses it: a scheduled pod (``spec.nodeName`` set: only a kubelet would mount
  it) with a volume naming the claim, or whose generic ephemeral volume the claim is (named
  ``<pod>-<volume>`` and controlled by the pod), unless that pod was deleted with no grace
  period (shut down). Pods are read live before the finalizer goes, so a pod the watch has
  not shown yet still counts. A pod deleted, ended or unscheduled looks at the claims of its
  namespace that wait.
* A PersistentVolume being deleted keeps ``kubernetes.io/pv-protection`` while it is
  ``Bound``.
* A claim or volume not being deleted that lacks its finalizer gets it (objects created while
  the plugin was off).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, ClassVar, Final

from kstore.api.gvk import GroupVersion, Object
from kstore.controllers.base import Controller
from kstore.errors import NotFound
from kstore.registry.informer import InformerTransform
from kstore.registry.interface import RequestContext, UpdateOptions
from kstore.registry.plugins.inuseprotection import PV_PROTECTION, PVC_PROTECTION
from kstore.storage.interface import ListOptions

__all__ = ["PVCProtectionController", "PVProtectionController", "pod_uses_claim"]

_CLAIMS: Final = ("", "persistentvolumeclaims")
_VOLUMES: Final = ("", "persistentvolumes")
_PODS: Final = ("", "pods")
_V1: Final = GroupVersion("", "v1")
_ENDED: Final = frozenset({"Succeeded", "Failed"})
#: The metadata of a pod this controller reads (its key, its owner check, its shutdown).
_POD_METADATA: Final = (
    "name",
    "namespace",
    "uid",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _finalizers(obj: Object) -> list[str]:
    found = _map(obj.get("metadata")).get("finalizers")
    return [str(f) for f in found] if isinstance(found, list) else []


def _deleting(obj: Object) -> bool:
    return bool(_map(obj.get("metadata")).get("deletionTimestamp"))


def _needs_finalizer(obj: Object, finalizer: str) -> bool:
    return not _deleting(obj) and finalizer not in _finalizers(obj)


def _waits(obj: Object, finalizer: str) -> bool:
    return _deleting(obj) and finalizer in _finalizers(obj)


def _shut_down(pod: Object) -> bool:
    """Deleted with no grace period left: nothing will mount its volumes any more."""
    meta = _map(pod.get("metadata"))
    return bool(meta.get("deletionTimestamp")) and meta.get("deletionGracePeriodSeconds") == 0


def _ephemeral_for(pod: Object, claim: Object) -> bool:
    """Whether ``claim`` is controlled by ``pod`` (a generic ephemeral volume's claim)."""
    uid = _map(pod.get("metadata")).get("uid")
    refs = _map(claim.get("metadata")).get("ownerReferences") or []
    return any(
        isinstance(r, dict) and r.get("controller") is True and r.get("uid") == uid for r in refs
    )


def pod_uses_claim(pod: Object, claim: Object) -> bool:
    """Whether ``pod`` holds ``claim`` (see the module docstring)."""
    spec = _map(pod.get("spec"))
    if not spec.get("nodeName"):
        return False
    name = _map(claim.get("metadata")).get("name")
    pod_name = _map(pod.get("metadata")).get("name")
    for volume in spec.get("volumes") or []:
        if not isinstance(volume, dict):
            continue
        if _map(volume.get("persistentVolumeClaim")).get("claimName") == name:
            return True
        if (
            isinstance(volume.get("ephemeral"), dict)
            and f"{pod_name}-{volume.get('name')}" == name
            and not _shut_down(pod)
            and _ephemeral_for(pod, claim)
        ):
            return True
    return False


def _claims_of(pod: Object) -> list[str]:
    pod_name = _map(pod.get("metadata")).get("name")
    out = []
    for volume in _map(pod.get("spec")).get("volumes") or []:
        if not isinstance(volume, dict):
            continue
        claim = _map(volume.get("persistentVolumeClaim")).get("claimName")
        if claim:
            out.append(str(claim))
        elif isinstance(volume.get("ephemeral"), dict):
            out.append(f"{pod_name}-{volume.get('name')}")
    return out


def _pod_view(pod: Object) -> Object:
    """What is kept of a pod: the metadata fields read here, node, the volumes that name a
    claim (a persistentVolumeClaim or a generic ephemeral volume) and phase."""
    spec = _map(pod.get("spec"))
    meta = _map(pod.get("metadata"))
    volumes = [
        v
        for v in spec.get("volumes") or []
        if isinstance(v, dict) and ("persistentVolumeClaim" in v or "ephemeral" in v)
    ]
    return {
        "metadata": {k: meta[k] for k in _POD_METADATA if k in meta},
        "spec": {"nodeName": spec.get("nodeName"), "volumes": volumes},
        "status": {"phase": _map(pod.get("status")).get("phase")},
    }


class _FinalizerController(Controller):
    """Takes its finalizer off objects being deleted that are not in use; puts it on others."""

    finalizer: ClassVar[str] = ""

    def in_use(self, obj: Object) -> bool:
        raise NotImplementedError

    def _edit(self, key: str, change: Callable[[list[str]], list[str]]) -> None:
        namespace, _, name = key.rpartition("/")
        ctx = RequestContext(namespace=namespace, request_version=_V1)

        def edited(stored: Object) -> Object:
            meta = dict(_map(stored.get("metadata")))
            meta["finalizers"] = change(_finalizers(stored))
            return {**stored, "metadata": meta}

        opts = UpdateOptions(field_manager=f"kstore-{self.name}-controller")
        try:
            self.store(*self.watches[0]).update(ctx, name, edited, opts)
        except NotFound:
            return

    def reconcile(self, key: str) -> None:
        obj = self.informer(*self.watches[0]).get(key)
        if obj is None:
            return
        finalizer = self.finalizer
        if _waits(obj, finalizer):
            if not self.in_use(obj):
                self._edit(key, lambda found: [f for f in found if f != finalizer])
        elif _needs_finalizer(obj, finalizer):
            self._edit(key, lambda found: [*found, finalizer] if finalizer not in found else found)


class PVCProtectionController(_FinalizerController):
    name: ClassVar[str] = "pvc-protection"
    watches: ClassVar[tuple[tuple[str, str], ...]] = (_CLAIMS, _PODS)
    finalizer: ClassVar[str] = PVC_PROTECTION

    def transform_for(self, watched: tuple[str, str]) -> InformerTransform | None:
        return _pod_view if watched == _PODS else None

    def keys_for(self, watched: tuple[str, str], key: str, obj: Object | None) -> Iterable[str]:
        if watched == _CLAIMS:
            wanted = obj is not None and (
                _waits(obj, PVC_PROTECTION) or _needs_finalizer(obj, PVC_PROTECTION)
            )
            return (key,) if wanted else ()
        namespace = key.partition("/")[0]
        if obj is not None:
            spec = _map(obj.get("spec"))
            phase = _map(obj.get("status")).get("phase")
            if spec.get("nodeName") and phase not in _ENDED and not _shut_down(obj):
                return ()
            names = set(_claims_of(obj))
        else:
            names = None  # a deleted pod: which claims it named is not known here
        claims = self.informer(*_CLAIMS)
        out = []
        known = claims.keys()
        for claim_key in known:
            claim_namespace, _, claim_name = claim_key.partition("/")
            if claim_namespace != namespace or (names is not None and claim_name not in names):
                continue
            claim = claims.get(claim_key)
            if claim is not None and _waits(claim, PVC_PROTECTION):
                out.append(claim_key)
        return out

    def in_use(self, obj: Object) -> bool:
        namespace = str(_map(obj.get("metadata")).get("namespace") or "")
        # Live, not from the informer: a pod created a moment ago must count.
        ctx = RequestContext(namespace=namespace, request_version=_V1)
        pods = self.store(*_PODS).list(ctx, ListOptions()).items
        return any(pod_uses_claim(pod, obj) for pod in pods)


class PVProtectionController(_FinalizerController):
    name: ClassVar[str] = "pv-protection"
    watches: ClassVar[tuple[tuple[str, str], ...]] = (_VOLUMES,)
    finalizer: ClassVar[str] = PV_PROTECTION

    def keys_for(self, watched: tuple[str, str], key: str, obj: Object | None) -> Iterable[str]:
        wanted = obj is not None and (
            _waits(obj, PV_PROTECTION) or _needs_finalizer(obj, PV_PROTECTION)
        )
        return (key,) if wanted else ()

    def in_use(self, obj: Object) -> bool:
        return _map(obj.get("status")).get("phase") == "Bound"
