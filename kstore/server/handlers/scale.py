"""The ``scale`` subresource (GET, PUT, PATCH): a Deployment, ReplicaSet, StatefulSet or
ReplicationController seen as a ``Scale``.

Kinds defined by data (CRDs) name where their replicas and selector are
(:class:`~kstore.api.scheme.ScalePaths`): their ``Scale`` is ``autoscaling/v1`` with the values
found there, and a write sets the value at the spec replicas path.

As Kubernetes' deployment ``ScaleREST``: GET answers a ``Scale`` built from the Deployment —
``autoscaling/v1`` for ``apps/v1`` (``status.selector`` the selector as a string), the group's
own ``Scale`` for the beta versions (``status.selector`` the ``matchLabels`` map and
``status.targetSelector`` the string) — with the Deployment's name, namespace, uid,
resourceVersion and creationTimestamp. PUT takes a ``Scale``; PATCH (JSON patch, merge patch,
apply) patches the current ``Scale``. Either way only ``spec.replicas`` reaches the Deployment,
through the registry's update of the ``scale`` subresource (so generation, validation and
``managedFields`` are the main resource's, and the write is recorded for subresource
``scale``); a ``Scale`` carrying a ``resourceVersion`` makes the update conditional (409 when
stale). The answer is the ``Scale`` of the written Deployment.

Scales are written as JSON or YAML: kstore has no protobuf encoding of ``Scale``, so a client
that accepts JSON too gets JSON and one that accepts only protobuf gets 406. Strategic merge
patch needs the kind's patch metadata, which ``Scale`` lacks here: 415, listing the accepted
patch types.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kstore.api.gvk import GroupVersion, GroupVersionKind, Object
from kstore.api.scheme import ScalePaths
from kstore.api.selectors import LabelSelector
from kstore.api.validation.field import Path, invalid
from kstore.errors import BadRequest, Invalid, NotAcceptable
from kstore.registry.interface import UpdateOptions
from kstore.registry.patch import PatchOptions, apply_patch, parse_patch_type
from kstore.server.discovery import scale_gvk
from kstore.server.handlers.deadline import request_timeout
from kstore.server.handlers.scope import Call, Reply, ResourceScope
from kstore.server.negotiation import OutputFormat, body_serializer, json_format, negotiate
from kstore.server.options import field_validation, update_options
from kstore.server.request_info import query_bool

__all__ = ["HANDLERS", "get_scale", "patch_scale", "scale_of", "update_scale"]

_AUTOSCALING_V1 = scale_gvk(GroupVersion("apps", "v1"))


def _output(accept: str | None) -> OutputFormat:
    fmt = negotiate(accept)
    if not fmt.is_protobuf:
        return fmt
    # A Scale has no protobuf encoding here: JSON when the client takes it too.
    clauses = [c.strip().split(";", 1)[0].lower() for c in (accept or "").split(",")]
    if any(c in ("application/json", "*/*", "application/*") for c in clauses):
        return json_format()
    raise NotAcceptable("only the following media types are accepted: application/json")


def _selector(spec: Object) -> tuple[str, dict[str, str]]:
    """The selector as a string (requirements sorted by key, as Kubernetes' labels.Selector
    prints them) and its ``matchLabels``."""
    raw = spec.get("selector")
    selector = LabelSelector.from_dict(raw if isinstance(raw, dict) else None)
    text = ",".join(str(r) for r in sorted(selector.requirements, key=lambda r: r.key))
    labels = raw.get("matchLabels") if isinstance(raw, dict) else None
    return text, dict(labels) if isinstance(labels, dict) else {}


def _at(obj: Object, path: str) -> Any:
    node: Any = obj
    for key in path.lstrip(".").split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def _set_at(obj: Object, path: str, value: Any) -> Object:
    """``obj`` with ``value`` at ``path`` (copies along the path; the maps it needs made)."""
    first, _, rest = path.lstrip(".").partition(".")
    child = obj.get(first)
    if rest:
        value = _set_at(dict(child) if isinstance(child, dict) else {}, rest, value)
    return {**obj, first: value}


def scale_of(external: Object, gvk: GroupVersionKind, paths: ScalePaths | None = None) -> Object:
    """The ``Scale`` of an object in its external version: a Deployment, ReplicaSet or
    StatefulSet, or a kind defined by data whose ``paths`` say where its replicas are."""
    meta = external.get("metadata") or {}
    spec = external.get("spec") or {}
    status = external.get("status") or {}
    scale_meta: Object = {
        key: meta[key]
        for key in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
        if meta.get(key)
    }
    if paths is not None:
        return _custom_scale(external, gvk, paths, scale_meta)
    replicas = spec.get("replicas")
    if external.get("kind") == "ReplicationController":
        # A controller's selector is a label map: the string of the selector made from it.
        raw = spec.get("selector")
        labels = raw if isinstance(raw, dict) else {}
        text = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
        match_labels: dict[str, str] = {}
    else:
        text, match_labels = _selector(spec)
    scale_status: Object = {"replicas": int(status.get("replicas") or 0)}
    if gvk == _AUTOSCALING_V1:
        if text:
            scale_status["selector"] = text
    else:
        if match_labels:
            scale_status["selector"] = match_labels
        if text:
            scale_status["targetSelector"] = text
    return {
        "kind": "Scale",
        "apiVersion": gvk.group_version.api_version,
        "metadata": scale_meta,
        # ScaleSpec.replicas is omitempty: a Deployment scaled to 0 has an empty spec.
        "spec": {"replicas": replicas} if replicas else {},
        "status": scale_status,
    }


def _custom_scale(
    external: Object, gvk: GroupVersionKind, paths: ScalePaths, scale_meta: Object
) -> Object:
    """As apiextensions' scale of a custom resource: replicas from the spec and status paths
    (0 when absent), the selector string as found at the label selector path."""
    replicas = _at(external, paths.spec_replicas)
    current = _at(external, paths.status_replicas)
    scale_status: Object = {"replicas": current if isinstance(current, int) else 0}
    if paths.label_selector:
        selector = _at(external, paths.label_selector)
        if isinstance(selector, str) and selector:
            scale_status["selector"] = selector
    return {
        "kind": "Scale",
        "apiVersion": gvk.group_version.api_version,
        "metadata": scale_meta,
        "spec": {"replicas": replicas} if isinstance(replicas, int) and replicas else {},
        "status": scale_status,
    }


def _validated_replicas(scale: Any, gvk: GroupVersionKind, name: str) -> int:
    """Kubernetes' ValidateScale: ``spec.replicas`` a non-negative integer (0 when absent)."""
    if not isinstance(scale, dict):
        raise BadRequest("the body of the request must be a Scale object")
    spec = scale.get("spec") or {}
    replicas = spec.get("replicas", 0) if isinstance(spec, dict) else None
    if not isinstance(replicas, int) or isinstance(replicas, bool):
        raise BadRequest(f"Scale in version {gvk.version!r} cannot be handled: spec.replicas")
    if replicas < 0:
        cause = invalid(Path("spec", "replicas"), replicas, "must be greater than or equal to 0")
        raise Invalid.for_object("Scale", name, [cause], group=gvk.group)
    return replicas


def _scaled(scope: ResourceScope, current: Object, scale: Object, replicas: int) -> Object:
    """The hub Deployment ``current`` with ``replicas``; conditional on the Scale's
    resourceVersion when it has one."""
    external = scope.scheme.from_hub(current, scope.gv.version)
    meta = dict(external.get("metadata") or {})
    scale_rv = (scale.get("metadata") or {}).get("resourceVersion")
    if scale_rv:
        meta["resourceVersion"] = str(scale_rv)
    paths = scope.resource.info.scale
    if paths is not None:
        return scope.scheme.to_hub(
            _set_at({**external, "metadata": meta}, paths.spec_replicas, replicas)
        )
    spec = dict(external.get("spec") or {})
    spec["replicas"] = replicas
    return scope.scheme.to_hub({**external, "metadata": meta, "spec": spec})


def _write(
    scope: ResourceScope,
    call: Call,
    options: UpdateOptions,
    new_scale: Callable[[Object], Object],
) -> Reply:
    """Update the Deployment with the Scale ``new_scale`` makes of the current one."""
    fmt = _output(call.accept)
    gvk = scale_gvk(scope.gv)

    def updated(current: Object) -> Object:
        scale = new_scale(current)
        replicas = _validated_replicas(scale, gvk, call.info.name)
        return _scaled(scope, current, scale, replicas)

    ctx = scope.context(call.info)
    result = scope.store.update(ctx, call.info.name, updated, options)
    scale = scale_of(
        scope.encoder.external(result.object, scope.gv), gvk, scope.resource.info.scale
    )
    return Reply(200, fmt.serializer.encode(scale), fmt.content_type, result.warnings)


def get_scale(scope: ResourceScope, call: Call) -> Reply:
    request_timeout(call.query)
    fmt = _output(call.accept)
    hub = scope.store.get(
        scope.context(call.info),
        call.info.name,
        resource_version=call.query.get("resourceVersion", ""),
    )
    scale = scale_of(
        scope.encoder.external(hub, scope.gv), scale_gvk(scope.gv), scope.resource.info.scale
    )
    return Reply(200, fmt.serializer.encode(scale), fmt.content_type)


def update_scale(scope: ResourceScope, call: Call) -> Reply:
    gvk = scale_gvk(scope.gv)
    options = update_options(
        call.query, call.dry_run, subresource="scale", user_agent=call.user_agent
    )
    if not call.body.strip():
        raise BadRequest("the body of the request was empty: a Scale is required")
    body = body_serializer(call.content_type).decode(call.body)
    expected = gvk.group_version.api_version
    api_version, kind = body.get("apiVersion") or expected, body.get("kind") or "Scale"
    if api_version != expected:
        raise BadRequest(
            f"the API version in the data ({api_version}) does not match the expected API "
            f"version ({expected})"
        )
    if kind != "Scale":
        raise BadRequest(f'{kind} in version "{gvk.version}" cannot be handled as a Scale')
    name = (body.get("metadata") or {}).get("name") or ""
    if name != call.info.name:
        raise BadRequest(
            f"the name of the object ({name}) does not match the name on the URL ({call.info.name})"
        )
    return _write(scope, call, options, lambda current: body)


def patch_scale(scope: ResourceScope, call: Call) -> Reply:
    gvk = scale_gvk(scope.gv)
    patch_type = parse_patch_type(call.content_type or "", gvk)
    raw_force = call.query.get("force")
    options = update_options(
        call.query,
        call.dry_run,
        subresource="scale",
        kind="PatchOptions",
        user_agent=call.user_agent,
    )
    patch_options = PatchOptions(
        gvk=gvk,
        name=call.info.name,
        namespace=call.info.namespace,
        resource=f"{scope.plural}.{scope.gv.group}" if scope.gv.group else scope.plural,
        field_manager=call.query.get("fieldManager", ""),
        user_agent=call.user_agent,
        force=None if raw_force is None else query_bool(raw_force),
        subresource="scale",
        field_validation=field_validation(call.query),
    )

    def patched(current: Object) -> Object:
        scale = scale_of(scope.encoder.external(current, scope.gv), gvk, scope.resource.info.scale)
        result = apply_patch(scale, call.body, patch_type, patch_options)
        # Ownership is recorded on the Deployment by the registry, not on the Scale.
        result.object.get("metadata", {}).pop("managedFields", None)
        return result.object

    return _write(scope, call, options, patched)


#: The scale handlers by verb (the routes dispatch ``.../scale`` requests here).
HANDLERS: dict[str, Callable[[ResourceScope, Call], Reply]] = {
    "get": get_scale,
    "update": update_scale,
    "patch": patch_scale,
}
