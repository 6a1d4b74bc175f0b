"""The ``pods/binding`` subresource (``v1`` Binding): what a scheduler posts to put a pod on
a node, as kube-apiserver's ``BindingREST``.

- The Binding's name must be the pod's (400 ``name in URL does not match name in Binding
  object``); ``target.kind`` must be ``Node`` or empty and ``target.name`` set (else a 500
  with the validation's words, as the API server returns that aggregate unconverted).
- The Binding's ``uid`` and ``resourceVersion``, when set, are preconditions on the pod.
- A pod that is being deleted, already on a node, or still gated from scheduling is a 409 on
  ``pods/binding`` with the reason; else ``spec.nodeName`` becomes the target, the Binding's
  annotations are merged into the pod's, and the pod gets ``PodScheduled=True``. The write is
  compare-and-swap (retried with fresh state), so two schedulers binding one pod at once
  cannot both succeed.
- The answer is a ``Status`` of success, code 201.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.validation.field import Path, not_supported, required
from kstore.errors import BadRequest, Conflict, KStoreError
from kstore.registry.interface import Registry, RequestContext, UpdateOptions
from kstore.registry.strategies.pod import BINDING
from kstore.storage.interface import Preconditions

__all__ = ["bind"]

_API_VERSION: Final = "v1"


class _Unconverted(KStoreError):
    """An error kube-apiserver returns as a plain Go error: 500, no reason."""

    code = 500
    reason = ""


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _decoded(body: Any, name: str) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise BadRequest("the body of the request must be a Binding object")
    kind, api_version = body.get("kind"), body.get("apiVersion")
    if kind and kind != "Binding":
        raise BadRequest(f"not a Binding object: {kind}")
    if api_version and api_version != _API_VERSION:
        raise BadRequest(
            f"the API version in the data ({api_version}) does not match the expected API "
            f"version ({_API_VERSION})"
        )
    if (body.get("metadata") or {}).get("name") != name:
        raise BadRequest("name in URL does not match name in Binding object")
    target = body.get("target")
    target = target if isinstance(target, dict) else {}
    causes = []
    if target.get("kind") not in (None, "", "Node"):
        causes.append(
            not_supported(Path("target", "kind"), target.get("kind"), ["Node", "<empty>"])
        )
    if not target.get("name"):
        causes.append(required(Path("target", "name")))
    if causes:
        texts = [c.render() for c in causes]
        raise _Unconverted(texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]")
    return body


def _conflict(name: str, why: str) -> Conflict:
    return Conflict(
        f'Operation cannot be fulfilled on pods/binding "{name}": {why}',
        kind="pods/binding",
        name=name,
    )


def bind(
    registry: Registry, namespace: str, name: str, body: Any, dry_run: bool
) -> tuple[int, Object]:
    """Bind pod ``name`` to the Binding's node: (the HTTP code, the Status to answer with)."""
    binding = _decoded(body, name)
    meta = binding.get("metadata") or {}
    node = str(binding["target"]["name"])
    annotations = meta.get("annotations") if isinstance(meta.get("annotations"), dict) else {}
    uid, version = str(meta.get("uid") or ""), str(meta.get("resourceVersion") or "")
    preconditions = Preconditions(uid=uid or None, resource_version=version or None)

    def bound(current: Object) -> Object:
        pod_meta = dict(current.get("metadata") or {})
        spec = dict(current.get("spec") or {})
        if pod_meta.get("deletionTimestamp"):
            raise _conflict(name, f"pod {name} is being deleted, cannot be assigned to a host")
        if spec.get("nodeName"):
            raise _conflict(name, f'pod {name} is already assigned to node "{spec["nodeName"]}"')
        if spec.get("schedulingGates"):
            raise _conflict(name, f"pod {name} has non-empty .spec.schedulingGates")
        spec["nodeName"] = node
        if annotations:
            pod_meta["annotations"] = {**(pod_meta.get("annotations") or {}), **annotations}
        status = dict(current.get("status") or {})
        conditions = [dict(c) for c in status.get("conditions") or () if isinstance(c, dict)]
        scheduled = {"type": "PodScheduled", "status": "True", "lastProbeTime": None}
        for condition in conditions:
            if condition.get("type") == "PodScheduled":
                if condition.get("status") != "True":
                    condition["lastTransitionTime"] = _now()
                condition.update(scheduled)
                for stale in ("reason", "message"):
                    condition.pop(stale, None)
                break
        else:
            conditions.append({**scheduled, "lastTransitionTime": _now()})
        status["conditions"] = conditions
        return {**current, "metadata": pod_meta, "spec": spec, "status": status}

    options = UpdateOptions(
        dry_run=dry_run,
        subresource=BINDING,
        preconditions=preconditions if uid or version else None,
    )
    registry.store("", "pods").update(RequestContext(namespace=namespace), name, bound, options)
    return 201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}
