"""RuntimeClass: a pod's RuntimeClass brings its overhead and scheduling constraints.

On pod create (kube-apiserver's ``RuntimeClass`` plugin), for a pod naming
``runtimeClassName``:

- the class must exist (403 ``pod rejected: RuntimeClass "<name>" not found``);
- mutating: the class's ``overhead.podFixed`` becomes ``spec.overhead``;
  ``scheduling.nodeSelector`` is merged into the pod's (a key the pod gives another value is
  a conflict, 403) and ``scheduling.tolerations`` are added unless the pod has them already;
- validating: the pod's overhead must equal the class's (``pod rejected: Pod's Overhead
  doesn't match RuntimeClass's defined Overhead``), and a pod without a class or whose class
  defines none may not set one (``pod rejected: Pod Overhead set without corresponding
  RuntimeClass defined Overhead``).
"""

from __future__ import annotations

from typing import Any, Final

from kstore.api.gvk import Object
from kstore.registry.interface import AdmissionAttributes, AdmissionHook, Operation, Registry
from kstore.registry.plugins._common import dict_at, forbidden, is_resource, read_object
from kstore.registry.plugins._quantities import value

__all__ = ["hooks"]

_GROUP: Final = "node.k8s.io"


def _same(a: Any, b: Any) -> bool:
    if not isinstance(a, dict) or not isinstance(b, dict) or set(a) != set(b):
        return False
    return all(value(a[k]) == value(b[k]) for k in a)


def hooks(registry: Registry) -> tuple[AdmissionHook | None, AdmissionHook | None]:
    def runtime_class(attributes: AdmissionAttributes, spec: dict[str, Any]) -> Object | None:
        name = spec.get("runtimeClassName")
        if not name:
            return None
        found = read_object(registry, _GROUP, "runtimeclasses", "", str(name))
        if found is None:
            raise forbidden(attributes, f'pod rejected: RuntimeClass "{name}" not found')
        return found

    def admit(attributes: AdmissionAttributes) -> None:
        if not is_resource(attributes, "", "Pod", Operation.CREATE):
            return
        assert isinstance(attributes.object, dict)
        spec = dict_at(attributes.object, "spec")
        found = runtime_class(attributes, spec)
        if found is None:
            return
        overhead = found.get("overhead")
        fixed = overhead.get("podFixed") if isinstance(overhead, dict) else None
        if isinstance(fixed, dict):
            if spec.get("overhead") is not None and not _same(spec["overhead"], fixed):
                raise forbidden(
                    attributes,
                    "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead",
                )
            spec["overhead"] = dict(fixed)
        scheduling = found.get("scheduling")
        if not isinstance(scheduling, dict):
            return
        selector = scheduling.get("nodeSelector")
        if isinstance(selector, dict) and selector:
            merged = dict(spec.get("nodeSelector") or {})
            for key in sorted(selector):
                wanted = selector[key]
                if key in merged and merged[key] != wanted:
                    raise forbidden(
                        attributes,
                        f"conflict: runtimeClass.scheduling.nodeSelector[{key}] = {wanted}; "
                        f"pod.spec.nodeSelector[{key}] = {merged[key]}",
                    )
                merged[key] = wanted
            spec["nodeSelector"] = merged
        tolerations = scheduling.get("tolerations")
        if isinstance(tolerations, list) and tolerations:
            have = list(spec.get("tolerations") or [])
            for toleration in tolerations:
                if toleration not in have:
                    have.append(dict(toleration))
            spec["tolerations"] = have

    def validate(attributes: AdmissionAttributes) -> None:
        if not is_resource(attributes, "", "Pod", Operation.CREATE):
            return
        assert isinstance(attributes.object, dict)
        spec = attributes.object.get("spec")
        if not isinstance(spec, dict):
            spec = {}  # read only: the object is the one being stored
        found = runtime_class(attributes, spec)
        overhead = found.get("overhead") if found is not None else None
        fixed = overhead.get("podFixed") if isinstance(overhead, dict) else None
        if fixed is not None:
            if not _same(spec.get("overhead"), fixed):
                raise forbidden(
                    attributes,
                    "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead",
                )
        elif spec.get("overhead") is not None:
            raise forbidden(
                attributes,
                "pod rejected: Pod Overhead set without corresponding RuntimeClass defined "
                "Overhead",
            )

    return admit, validate
