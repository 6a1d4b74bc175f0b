"""OpenAPI v3 documents, as far as kubectl uses them.

kubectl's default ``--validate=strict`` fetches ``/openapi/v3``, then the document of the group
version it writes to, and only checks that the PATCH operation of the object's
group/version/kind declares the ``fieldValidation`` query parameter; it then sends
``fieldValidation=Strict`` and leaves validation to the server. So each document lists every
path of its group version with its operations tagged ``x-kubernetes-action`` and
``x-kubernetes-group-version-kind``, and the write operations with their query parameters.
``components.schemas`` holds the structural schema of each kind of the group version and of
the types it contains (:mod:`kstore.server.openapi_schemas`), for ``kubectl explain``.

The review resources of :mod:`kstore.server.reviews` get a document per group version too,
with the one ``post`` operation each has (as the API server publishes them).

The index names each document with ``?hash=<hash of its bytes>``; a request carrying the
current hash is answered ``Cache-Control: public, immutable`` so kubectl's HTTP cache keeps it,
any other with ``no-cache`` and the ``ETag``.

``/openapi/v2`` (Swagger 2.0, JSON or gnostic's protobuf ``openapi.v2.Document``) is where
kubectl turns when a kind has no PATCH operation in v3, as the create-only reviews have: it
looks there for the kind's PATCH and, failing that, for the Namespace PATCH's
``fieldValidation`` (only then would it list CustomResourceDefinitions, which kstore does not
serve); without either it validates client-side against v2's definitions and skips kinds they
do not define. So the v2 document has no paths and no definitions, which lets such a create go
through with validation on (the server validates it).
"""

from __future__ import annotations

import hashlib

import orjson

from kstore.api.gvk import GroupVersion, Object
from kstore.api.scheme import RegisteredResource, Scheme
from kstore.codec._pb_values import length_prefixed
from kstore.registry.patch import supported_patch_types
from kstore.server.discovery import SERVED_SUBRESOURCES, subresource_gvk
from kstore.server.openapi_custom import custom_component_schemas, has_own_schema
from kstore.server.openapi_schemas import component_schemas
from kstore.server.reviews import REVIEW_RESOURCES, ReviewResource

__all__ = ["OPENAPI_V2_PROTOBUF", "OpenAPIDocument", "OpenAPIV2", "OpenAPIV3"]


class OpenAPIDocument:
    __slots__ = ("body", "hash")

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.hash = hashlib.sha512(body).hexdigest().upper()[:64]


def _param(name: str, description: str, kind: str = "string") -> Object:
    return {
        "name": name,
        "in": "query",
        "description": description,
        "schema": {"type": kind, "uniqueItems": True},
    }


_DRY_RUN = _param("dryRun", "When present, modifications are not persisted. Valid value: All.")
_FIELD_MANAGER = _param("fieldManager", "The name of the actor making the change.")
_FIELD_VALIDATION = _param(
    "fieldValidation",
    "How to handle unknown or duplicate fields: Ignore, Warn (the default) or Strict.",
)
_FORCE = _param("force", "Force an apply request past conflicts.", "boolean")
_OK = {"200": {"description": "OK"}, "401": {"description": "Unauthorized"}}


def _path_params(namespaced: bool, named: bool) -> list[Object]:
    params: list[Object] = []
    if named:
        params.append(
            {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}
        )
    if namespaced:
        params.append(
            {"name": "namespace", "in": "path", "required": True, "schema": {"type": "string"}}
        )
    return params


def _operation(
    action: str, r: RegisteredResource, op_id: str, tag: str, subresource: str = ""
) -> Object:
    gvk = subresource_gvk(r, subresource)
    op: Object = {
        "tags": [tag],
        "operationId": op_id,
        "responses": dict(_OK),
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {
            "group": gvk.group,
            "version": gvk.version,
            "kind": gvk.kind,
        },
    }
    if action in ("post", "put"):
        op["parameters"] = [_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION]
        op["requestBody"] = {"content": {"*/*": {"schema": {"type": "object"}}}, "required": True}
    elif action == "patch":
        op["parameters"] = [_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION, _FORCE]
        # kubectl applies with a strategic merge patch only to kinds whose PATCH lists it,
        # so a kind without patch metadata (a custom resource) lists only the others.
        op["requestBody"] = {
            "content": {
                media_type: {"schema": {"type": "object"}}
                for media_type in sorted(t.value for t in supported_patch_types(gvk))
            },
            "required": True,
        }
    elif action in ("delete", "deletecollection"):
        op["parameters"] = [_DRY_RUN]
    return op


def _tag(gv: GroupVersion) -> str:
    group = gv.group.split(".")[0] if gv.group else "core"
    return f"{group}_{gv.version}"


def _paths(gv: GroupVersion, resources: list[RegisteredResource]) -> Object:
    root = f"/api/{gv.version}" if not gv.group else f"/apis/{gv.group}/{gv.version}"
    tag = _tag(gv)
    paths: Object = {}
    for r in resources:
        kind, plural = r.definition.kind, r.info.plural
        verbs = set(r.info.verbs)
        ns = r.info.namespaced
        collection = f"{root}/namespaces/{{namespace}}/{plural}" if ns else f"{root}/{plural}"
        item = f"{collection}/{{name}}"
        suffix = "Namespaced" if ns else ""
        ops: Object = {"parameters": _path_params(ns, False)}
        if "list" in verbs:
            ops["get"] = _operation("list", r, f"list{suffix}{kind}", tag)
        if "create" in verbs:
            ops["post"] = _operation("post", r, f"create{suffix}{kind}", tag)
        if "deletecollection" in verbs:
            ops["delete"] = _operation(
                "deletecollection", r, f"deleteCollection{suffix}{kind}", tag
            )
        paths[collection] = ops
        ops = {"parameters": _path_params(ns, True)}
        for verb, method, action, prefix in (
            ("get", "get", "get", "read"),
            ("update", "put", "put", "replace"),
            ("patch", "patch", "patch", "patch"),
            ("delete", "delete", "delete", "delete"),
        ):
            if verb in verbs:
                ops[method] = _operation(action, r, f"{prefix}{suffix}{kind}", tag)
        paths[item] = ops
        if ns and "list" in verbs:
            paths[f"{root}/{plural}"] = {
                "get": _operation("list", r, f"list{kind}ForAllNamespaces", tag)
            }
        for sub in r.info.subresources:
            if sub not in SERVED_SUBRESOURCES:
                continue
            title = sub.capitalize()
            ops = {"parameters": _path_params(ns, True)}
            for verb, method, action, prefix in (
                ("get", "get", "get", "read"),
                ("create", "post", "post", "create"),
                ("update", "put", "put", "replace"),
                ("patch", "patch", "patch", "patch"),
            ):
                if verb in SERVED_SUBRESOURCES[sub]:
                    op_id = f"{prefix}{suffix}{kind}{title}"
                    ops[method] = _operation(action, r, op_id, tag, sub)
            paths[f"{item}/{sub}"] = ops
    return paths


def _review_paths(gv: GroupVersion, reviews: list[ReviewResource]) -> Object:
    root = f"/apis/{gv.group}/{gv.version}"
    tag = _tag(gv)
    paths: Object = {}
    for r in reviews:
        ns = r.namespaced
        collection = f"{root}/namespaces/{{namespace}}/{r.plural}" if ns else f"{root}/{r.plural}"
        post: Object = {
            "tags": [tag],
            "operationId": f"create{'Namespaced' if ns else ''}{r.kind}",
            "parameters": [_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION],
            "requestBody": {"content": {"*/*": {"schema": {"type": "object"}}}, "required": True},
            "responses": dict(_OK),
            "x-kubernetes-action": "post",
            "x-kubernetes-group-version-kind": {
                "group": r.group,
                "version": r.version,
                "kind": r.kind,
            },
        }
        paths[collection] = {"parameters": _path_params(ns, False), "post": post}
    return paths


def _same(
    before: tuple[RegisteredResource, ...] | None, now: tuple[RegisteredResource, ...]
) -> bool:
    """Whether a group version serves the very same resources (kinds compared by identity:
    a changed CRD makes a new definition)."""
    return (
        before is not None
        and len(before) == len(now)
        and all(
            a.group_version == b.group_version and a.definition is b.definition
            for a, b in zip(before, now, strict=True)
        )
    )


class OpenAPIV3:
    """The documents of one Scheme, built once: ``index`` and one per served group version."""

    def __init__(
        self, scheme: Scheme, server_version: str, previous: OpenAPIV3 | None = None
    ) -> None:
        """``previous``: the documents of the Scheme before, whose documents are kept for the
        group versions whose resources did not change (so a CRD added rebuilds its own group
        version's document only)."""
        by_gv: dict[GroupVersion, list[RegisteredResource]] = {}
        for r in scheme.resources():
            by_gv.setdefault(r.group_version, []).append(r)
        reviews: dict[GroupVersion, list[ReviewResource]] = {}
        for review in REVIEW_RESOURCES:
            reviews.setdefault(GroupVersion(review.group, review.version), []).append(review)
        self._docs: dict[str, OpenAPIDocument] = {}
        self._sources: dict[str, tuple[RegisteredResource, ...]] = {}
        for gv in sorted(by_gv.keys() | reviews.keys()):
            key = f"api/{gv.version}" if not gv.group else f"apis/{gv.group}/{gv.version}"
            resources = tuple(by_gv.get(gv, []))
            self._sources[key] = resources
            if previous is not None and _same(previous._sources.get(key), resources):
                self._docs[key] = previous._docs[key]
                continue
            paths = _paths(gv, list(resources))
            paths.update(_review_paths(gv, reviews.get(gv, [])))
            kinds = [r.gvk for r in resources if not has_own_schema(r)]
            kinds += [gvk.group_version.with_kind(f"{gvk.kind}List") for gvk in kinds]
            schemas = component_schemas(kinds)
            schemas.update(custom_component_schemas(r for r in resources if has_own_schema(r)))
            doc = {
                "openapi": "3.0.0",
                "info": {"title": "kstore", "version": server_version},
                "paths": paths,
                "components": {"schemas": dict(sorted(schemas.items()))},
            }
            self._docs[key] = OpenAPIDocument(orjson.dumps(doc))
        self.index = orjson.dumps(
            {
                "paths": {
                    key: {"serverRelativeURL": f"/openapi/v3/{key}?hash={doc.hash}"}
                    for key, doc in self._docs.items()
                }
            }
        )

    def document(self, key: str) -> OpenAPIDocument | None:
        return self._docs.get(key.strip("/"))


#: The media type of gnostic's protobuf ``openapi.v2.Document`` as answered: kubectl asks
#: with the older ``...spec.v2@v1.0+protobuf``, whose ``@`` Go's media-type parser rejects in a
#: ``Content-Type``, so the API server answers with this spelling.
OPENAPI_V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"


class OpenAPIV2:
    """The Swagger 2.0 document, in JSON and in protobuf (see the module's text for why it
    holds no paths or definitions)."""

    def __init__(self, server_version: str) -> None:
        title = "kstore"
        self.json = OpenAPIDocument(
            orjson.dumps(
                {
                    "swagger": "2.0",
                    "info": {"title": title, "version": server_version},
                    "paths": {},
                    "definitions": {},
                }
            )
        )
        # openapi.v2.Document: swagger = 1, info = 2 (Info: title = 1, version = 2),
        # paths = 8, definitions = 9; the empty messages are written so both are present.
        info = b"\x0a" + length_prefixed(title.encode()) + b"\x12"
        info += length_prefixed(server_version.encode())
        self.protobuf = OpenAPIDocument(
            b"\x0a"
            + length_prefixed(b"2.0")
            + b"\x12"
            + length_prefixed(info)
            + b"\x42\x00\x4a\x00"
        )

    def document(self, accept: str | None) -> tuple[OpenAPIDocument, str]:
        """The document and its media type for an ``Accept`` header (protobuf when it names
        gnostic's type, in either spelling; JSON otherwise)."""
        if accept and "com.github.proto-openapi.spec.v2" in accept:
            return self.protobuf, OPENAPI_V2_PROTOBUF
        return self.json, "application/json"
