"""API discovery: what groups, versions and resources this server serves.

Two forms, as the API server has them:

- **aggregated** (``apidiscovery.k8s.io/v2``): one document for ``/api`` and one for
  ``/apis``, sent when ``Accept`` asks for ``as=APIGroupDiscoveryList`` — and then, as kubectl
  1.37 requires, with exactly the Content-Type
  ``application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`` (under a plain JSON
  Content-Type kubectl reads it as the legacy form and finds no resource types);
- **legacy**: ``APIVersions`` at ``/api``, ``APIGroupList`` at ``/apis``, ``APIGroup`` at
  ``/apis/<group>`` and an ``APIResourceList`` per group version.

Everything here depends only on the Scheme, so documents are built once and served as bytes
with an ``ETag`` (a hash of the bytes) that kubectl's HTTP cache revalidates. Versions of a
group are listed by Kubernetes' priority (GA before beta before alpha, higher numbers first):
the first is the preferred version. Subresources are listed only where the server routes them
(``status``, ``scale`` of Deployments, with its own ``Scale`` kind, and ``finalize`` of
namespaces). Beside the Scheme's resources, the create-only review resources of
:mod:`kstore.server.reviews` (``authorization.k8s.io``, ``authentication.k8s.io``) are listed
with the verb ``create`` only, as the API server lists them, so that ``kubectl auth`` finds them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

import orjson

from kstore.api.gvk import GroupVersion, GroupVersionKind, Object, version_priority
from kstore.api.scheme import RegisteredResource, Scheme
from kstore.server.json_body import json_line
from kstore.server.reviews import REVIEW_RESOURCES, ReviewResource

__all__ = [
    "AGGREGATED_CONTENT_TYPE",
    "SERVED_SUBRESOURCES",
    "Discovery",
    "Document",
    "scale_gvk",
    "subresource_gvk",
    "version_priority",
    "wants_aggregated",
]

AGGREGATED_CONTENT_TYPE = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

#: Subresources the REST handlers route (to the registry's update with that subresource).
SERVED_SUBRESOURCES = {
    "status": ("get", "patch", "update"),
    "scale": ("get", "patch", "update"),
    "finalize": ("update",),
    "approval": ("get", "patch", "update"),
    "token": ("create",),
    "eviction": ("create",),
    "binding": ("create",),
    "ephemeralcontainers": ("get", "patch", "update"),
    "resize": ("get", "patch", "update"),
}
#: The kinds of the subresources that answer with a kind of another group version.
_SUBRESOURCE_KINDS = {
    "token": GroupVersionKind("authentication.k8s.io", "v1", "TokenRequest"),
    "eviction": GroupVersionKind("policy", "v1", "Eviction"),
    "binding": GroupVersionKind("", "v1", "Binding"),
}

#: The groups whose beta versions have a Scale kind of their own (apps/v1 uses autoscaling/v1).
_OWN_SCALE_GROUPS = frozenset({"apps", "extensions"})


def scale_gvk(gv: GroupVersion) -> GroupVersionKind:
    """The kind of the ``scale`` subresource of a resource served at ``gv``: the group's own
    ``Scale`` in apps and extensions beta versions, ``autoscaling/v1`` everywhere else."""
    if gv.group in _OWN_SCALE_GROUPS and gv.version != "v1":
        return GroupVersionKind(gv.group, gv.version, "Scale")
    return GroupVersionKind("autoscaling", "v1", "Scale")


def subresource_gvk(r: RegisteredResource, subresource: str) -> GroupVersionKind:
    """The kind a subresource reads and writes: ``Scale`` for ``scale``, else the resource's."""
    if subresource == "scale":
        return scale_gvk(r.group_version)
    if subresource in _SUBRESOURCE_KINDS:
        return _SUBRESOURCE_KINDS[subresource]
    return r.group_version.with_kind(r.definition.kind)


#: What discovery lists: a resource of the Scheme or a review resource.
_Listed = RegisteredResource | ReviewResource


def wants_aggregated(accept: str | None) -> bool:
    """Whether ``Accept`` asks for aggregated discovery v2 (the legacy form otherwise)."""
    if not accept or "as=APIGroupDiscoveryList" not in accept:
        return False
    for clause in accept.split(","):
        params = {p.strip() for p in clause.split(";")[1:]}
        if (
            "as=APIGroupDiscoveryList" in params
            and "g=apidiscovery.k8s.io" in params
            and "v=v2" in params
        ):
            return True
    return False


@dataclass(frozen=True, slots=True)
class Document:
    body: bytes
    etag: str
    content_type: str = "application/json"


def _document(obj: Object, content_type: str = "application/json") -> Document:
    body = orjson.dumps(obj)
    etag = '"' + hashlib.sha256(body).hexdigest()[:32].upper() + '"'
    # Ended by a newline, as Go's encoder ends every JSON answer (kstore.server.json_body).
    return Document(body + b"\n", etag, content_type)


class Discovery:
    """The discovery documents of one Scheme, built once."""

    def __init__(self, scheme: Scheme) -> None:
        by_group: dict[str, dict[str, list[_Listed]]] = {}
        for r in scheme.resources():
            versions = by_group.setdefault(r.group_version.group, {})
            versions.setdefault(r.group_version.version, []).append(r)
        for review in REVIEW_RESOURCES:
            versions = by_group.setdefault(review.group, {})
            versions.setdefault(review.version, []).append(review)
        self._groups: dict[str, list[tuple[str, list[_Listed]]]] = {
            group: sorted(versions.items(), key=lambda kv: version_priority(kv[0]))
            for group, versions in sorted(by_group.items())
        }
        core = self._groups.get("", [])
        self.core_versions = [v for v, _ in core]
        self.aggregated_core = _document(
            _discovery_list([("", core)] if core else []), AGGREGATED_CONTENT_TYPE
        )
        named = [(g, vs) for g, vs in self._groups.items() if g]
        self.aggregated_groups = _document(_discovery_list(named), AGGREGATED_CONTENT_TYPE)
        self.group_list = _document(
            {
                "kind": "APIGroupList",
                "apiVersion": "v1",
                "groups": [_api_group(g, vs) for g, vs in named],
            }
        )
        self._group_docs = {
            g: _document({"kind": "APIGroup", "apiVersion": "v1", **_api_group(g, vs)})
            for g, vs in named
        }
        self._resource_lists: dict[GroupVersion, Document] = {}
        for group, ordered in self._groups.items():
            for version, resources in ordered:
                gv = GroupVersion(group, version)
                self._resource_lists[gv] = _document(_resource_list(gv, resources))

    def api_versions(self, server_address: str) -> bytes:
        """The legacy ``/api`` answer (it names the address the client reached)."""
        return json_line(
            {
                "kind": "APIVersions",
                "versions": self.core_versions,
                "serverAddressByClientCIDRs": [
                    {"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}
                ],
            }
        )

    def group(self, name: str) -> Document | None:
        return self._group_docs.get(name)

    def resource_list(self, gv: GroupVersion) -> Document | None:
        return self._resource_lists.get(gv)


def _subresources(r: RegisteredResource) -> list[tuple[str, tuple[str, ...]]]:
    return [
        (sub, SERVED_SUBRESOURCES[sub]) for sub in r.info.subresources if sub in SERVED_SUBRESOURCES
    ]


def _discovery_list(
    groups: Iterable[tuple[str, list[tuple[str, list[_Listed]]]]],
) -> Object:
    items = []
    for group, versions in groups:
        items.append(
            {
                "metadata": {"name": group, "creationTimestamp": None},
                "versions": [
                    {
                        "version": version,
                        "resources": [_discovery_resource(r) for r in resources],
                        "freshness": "Current",
                    }
                    for version, resources in versions
                ],
            }
        )
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    }


def _review_kind(r: ReviewResource) -> Object:
    return {"group": r.group, "version": r.version, "kind": r.kind}


def _discovery_resource(r: _Listed) -> Object:
    if isinstance(r, ReviewResource):
        return {
            "resource": r.plural,
            "responseKind": _review_kind(r),
            "scope": "Namespaced" if r.namespaced else "Cluster",
            "singularResource": r.singular,
            "verbs": ["create"],
        }
    gv = r.group_version
    kind = {"group": gv.group, "version": gv.version, "kind": r.definition.kind}
    out: Object = {
        "resource": r.info.plural,
        "responseKind": kind,
        "scope": "Namespaced" if r.info.namespaced else "Cluster",
        "singularResource": r.info.singular,
        "verbs": sorted(r.info.verbs),
    }
    if r.info.short_names:
        out["shortNames"] = list(r.info.short_names)
    if r.info.categories:
        out["categories"] = list(r.info.categories)
    subs = _subresources(r)
    if subs:
        out["subresources"] = [
            {
                "subresource": sub,
                "responseKind": _kind_dict(subresource_gvk(r, sub)),
                "verbs": list(verbs),
            }
            for sub, verbs in subs
        ]
    return out


def _kind_dict(gvk: GroupVersionKind) -> Object:
    return {"group": gvk.group, "version": gvk.version, "kind": gvk.kind}


def _api_group(group: str, versions: list[tuple[str, list[_Listed]]]) -> Object:
    listed = [{"groupVersion": f"{group}/{v}", "version": v} for v, _ in versions]
    return {"name": group, "versions": listed, "preferredVersion": listed[0]}


def _resource_list(gv: GroupVersion, resources: list[_Listed]) -> Object:
    entries: list[Object] = []
    for r in resources:
        if isinstance(r, ReviewResource):
            entries.append(
                {
                    "name": r.plural,
                    "singularName": r.singular,
                    "namespaced": r.namespaced,
                    "kind": r.kind,
                    "verbs": ["create"],
                }
            )
            continue
        entry: Object = {
            "name": r.info.plural,
            "singularName": r.info.singular,
            "namespaced": r.info.namespaced,
            "kind": r.definition.kind,
            "verbs": sorted(r.info.verbs),
        }
        if r.info.short_names:
            entry["shortNames"] = list(r.info.short_names)
        if r.info.categories:
            entry["categories"] = list(r.info.categories)
        entries.append(entry)
        for sub, verbs in _subresources(r):
            sub_entry: Object = {
                "name": f"{r.info.plural}/{sub}",
                "singularName": "",
                "namespaced": r.info.namespaced,
            }
            sub_gvk = subresource_gvk(r, sub)
            if sub_gvk.group_version != gv:
                # A kind of another group version says which (APIResource.group/version).
                sub_entry["group"] = sub_gvk.group
                sub_entry["version"] = sub_gvk.version
            sub_entry["kind"] = sub_gvk.kind
            sub_entry["verbs"] = list(verbs)
            entries.append(sub_entry)
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": gv.api_version,
        "resources": entries,
    }
