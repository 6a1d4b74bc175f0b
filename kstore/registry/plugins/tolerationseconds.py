"""DefaultTolerationSeconds: pods tolerate a not-ready or unreachable node for five minutes.

On pod create and update (kube-apiserver's ``DefaultTolerationSeconds`` plugin), a pod with no
toleration of the ``NoExecute`` taint ``node.kubernetes.io/not-ready`` gets ``{key:
node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 300}``,
and the same for ``node.kubernetes.io/unreachable``. A toleration with an empty key or an empty
effect covers the taint already.
"""

from __future__ import annotations

from typing import Any, Final

from kstore.registry.interface import AdmissionAttributes, AdmissionHook, Operation, Registry
from kstore.registry.plugins._common import is_resource

__all__ = ["DEFAULT_TOLERATION_SECONDS", "hooks"]

DEFAULT_TOLERATION_SECONDS: Final = 300
_TAINTS: Final = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")


def _tolerates(tolerations: list[Any], key: str) -> bool:
    return any(
        isinstance(t, dict)
        and (not t.get("key") or t.get("key") == key)
        and (not t.get("effect") or t.get("effect") == "NoExecute")
        for t in tolerations
    )


def hooks(registry: Registry) -> tuple[AdmissionHook | None, AdmissionHook | None]:
    del registry

    def admit(attributes: AdmissionAttributes) -> None:
        if not is_resource(attributes, "", "Pod", Operation.CREATE, Operation.UPDATE):
            return
        pod = attributes.object
        assert isinstance(pod, dict)
        spec = pod.get("spec")
        if not isinstance(spec, dict):
            return
        tolerations = spec.get("tolerations")
        tolerations = list(tolerations) if isinstance(tolerations, list) else []
        added = False
        for key in _TAINTS:
            if not _tolerates(tolerations, key):
                tolerations.append(
                    {
                        "key": key,
                        "operator": "Exists",
                        "effect": "NoExecute",
                        "tolerationSeconds": DEFAULT_TOLERATION_SECONDS,
                    }
                )
                added = True
        if added:
            spec["tolerations"] = tolerations

    return admit, None
