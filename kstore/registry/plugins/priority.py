"""Priority: a pod's priority comes from its PriorityClass.

On pod create (kube-apiserver's ``Priority`` plugin): a pod without ``priorityClassName``
takes the global default class (the one with ``globalDefault`` true; the lowest value when
several are), or priority 0 and ``PreemptLowerPriority`` when there is none; a named class
must exist (403 ``no PriorityClass with name <name> was found``). ``spec.priority`` becomes the
class's value and ``spec.preemptionPolicy`` its policy; a pod that already gives different
ones is refused (403, kube-apiserver's messages). On update a pod that leaves out its priority
or preemption policy keeps the stored one.
"""

from __future__ import annotations

from typing import Any

from kstore.registry.interface import AdmissionAttributes, AdmissionHook, Operation, Registry
from kstore.registry.plugins._common import forbidden, is_resource, list_objects, read_object

__all__ = ["hooks"]

_GROUP = "scheduling.k8s.io"


def _default_class(registry: Registry) -> tuple[str, int, str]:
    defaults = [
        c
        for c in list_objects(registry, _GROUP, "priorityclasses", "")
        if c.get("globalDefault") is True
    ]
    if not defaults:
        return "", 0, "PreemptLowerPriority"
    chosen = min(defaults, key=lambda c: int(c.get("value") or 0))
    return (
        str(chosen["metadata"]["name"]),
        int(chosen.get("value") or 0),
        str(chosen.get("preemptionPolicy") or "PreemptLowerPriority"),
    )


def _keep_stored(spec: dict[str, Any], old: Any) -> None:
    old_spec = old.get("spec") if isinstance(old, dict) else None
    if not isinstance(old_spec, dict):
        return
    for field in ("priority", "preemptionPolicy"):
        if spec.get(field) is None and old_spec.get(field) is not None:
            spec[field] = old_spec[field]


def hooks(registry: Registry) -> tuple[AdmissionHook | None, AdmissionHook | None]:
    def admit(attributes: AdmissionAttributes) -> None:
        if not is_resource(attributes, "", "Pod", Operation.CREATE, Operation.UPDATE):
            return
        pod = attributes.object
        assert isinstance(pod, dict)
        spec = pod.get("spec")
        if not isinstance(spec, dict):
            return
        if attributes.operation is Operation.UPDATE:
            _keep_stored(spec, attributes.old_object)
            return
        class_name = spec.get("priorityClassName")
        if not class_name:
            name, value, policy = _default_class(registry)
            if name:
                spec["priorityClassName"] = name
        else:
            found = read_object(registry, _GROUP, "priorityclasses", "", str(class_name))
            if found is None:
                raise forbidden(attributes, f"no PriorityClass with name {class_name} was found")
            value = int(found.get("value") or 0)
            policy = str(found.get("preemptionPolicy") or "PreemptLowerPriority")
        given = spec.get("priority")
        if given is not None and given != value:
            raise forbidden(
                attributes,
                f"the integer value of priority ({given}) must not be provided in pod spec; "
                f"priority admission controller computed {value} from the given PriorityClass "
                "name",
            )
        spec["priority"] = value
        given_policy = spec.get("preemptionPolicy")
        if given_policy is not None and given_policy != policy:
            raise forbidden(
                attributes,
                f"the string value of PreemptionPolicy ({given_policy}) must not be provided "
                f"in pod spec; priority admission controller computed {policy} from the given "
                "PriorityClass name",
            )
        spec["preemptionPolicy"] = policy

    return admit, None
