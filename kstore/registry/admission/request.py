"""The AdmissionRequest a webhook is sent and a policy's ``request`` variable holds.

kube-apiserver builds both from one request: the resource and kind the webhook or policy
matched (the request's own, or an equivalent one under ``matchPolicy: Equivalent``), the
resource and kind the client asked for, who asked, and the write's options. The objects are
added by the caller, converted to the matched version.
"""

from __future__ import annotations

from typing import Any, Final

from kstore.api.gvk import GroupVersionKind, GroupVersionResource, Object
from kstore.registry.admission.matching import Match, MatchRequest
from kstore.registry.interface import AdmissionAttributes, Operation

__all__ = ["admission_request", "user_info"]

_OPTIONS_KIND: Final = {
    Operation.CREATE: "CreateOptions",
    Operation.UPDATE: "UpdateOptions",
    Operation.DELETE: "DeleteOptions",
}


def _gvk(kind: GroupVersionKind) -> dict[str, str]:
    return {"group": kind.group, "version": kind.version, "kind": kind.kind}


def _gvr(resource: GroupVersionResource) -> dict[str, str]:
    return {"group": resource.group, "version": resource.version, "resource": resource.resource}


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def user_info(attributes: AdmissionAttributes) -> dict[str, Any]:
    """``userInfo``: who made the request (empty when nobody is known)."""
    user = attributes.user
    return {} if user is None else user.fields()


def admission_request(
    found: Match,
    request: MatchRequest,
    attributes: AdmissionAttributes,
    uid: str = "",
    objects: tuple[Object | None, Object | None] | None = None,
) -> dict[str, Any]:
    """The request's fields in Kubernetes' order, with ``objects`` (the object and the old
    object in the matched version) as ``object`` and ``oldObject`` when given. ``name`` is the
    object's (a create has no name in its path; a generateName create has none at all); a
    Namespace's own namespace is its name."""
    body: dict[str, Any] = {
        "uid": uid,
        "kind": _gvk(found.kind),
        "resource": _gvr(found.resource),
    }
    if request.subresource:
        body["subResource"] = request.subresource
    body["requestKind"] = _gvk(request.kind)
    body["requestResource"] = _gvr(request.resource)
    if request.subresource:
        body["requestSubResource"] = request.subresource
    obj = attributes.object
    name = str(_map(_map(obj).get("metadata")).get("name") or "") if obj else request.name
    if name:
        body["name"] = name
    namespace = request.namespace
    if request.resource.group == "" and request.resource.resource == "namespaces":
        namespace = request.name
    if namespace:
        body["namespace"] = namespace
    body["operation"] = request.operation
    body["userInfo"] = user_info(attributes)
    if objects is not None:
        body["object"], body["oldObject"] = objects
    body["dryRun"] = attributes.dry_run
    options: dict[str, Any] = {
        "kind": _OPTIONS_KIND.get(attributes.operation, "DeleteOptions"),
        "apiVersion": "meta.k8s.io/v1",
    }
    if attributes.dry_run:
        options["dryRun"] = ["All"]
    body["options"] = options
    return body
