"""The review resources: questions a client asks the server about itself, answered, never stored.

- ``authorization.k8s.io/v1`` ``SelfSubjectAccessReview`` (``kubectl auth can-i``): may I do
  this? ``SubjectAccessReview`` (cluster-scoped) and ``LocalSubjectAccessReview`` (namespaced):
  may this other user do it?
- ``authorization.k8s.io/v1`` ``SelfSubjectRulesReview`` (``kubectl auth can-i --list``):
  what may I do in this namespace? The authorizers' rules (``RulesFor``): RBAC's bound
  rules, everything for ``AlwaysAllow``, nothing for ``AlwaysDeny``.
- ``authentication.k8s.io/v1`` ``SelfSubjectReview`` (``kubectl auth whoami``): who am I?
- ``authentication.k8s.io/v1`` ``TokenReview``: who is this bearer token? The authenticator the
  request met (the authentication filter leaves it in the ASGI scope) decides, as for a
  request carrying it: the token file's user, ``invalid bearer token`` for a token it does not
  list, ``system:anonymous`` when nothing checks tokens and anonymous requests are allowed.

Each is create-only, as in the API server's registry for them: the body (JSON, YAML, or
protobuf read by :mod:`kstore.server._review_wire`) is decoded, checked (Kubernetes'
validation messages, 422 ``Invalid``; a body of the wrong type or shape is 400), and answered
with 201: the object with its ``status`` filled (a rules review, as in Kubernetes, comes back
as a new object without the spec); nothing is written.

An access review asks the authorizer the request itself was asked by (the authorization
filter leaves it in the ASGI scope; without that filter the mode is ``AlwaysAllow`` and every
answer is yes), after the privileged group ``system:masters``, which the API server's
authorizer chain allows first. ``status.allowed`` is an allow, ``status.denied`` an explicit
deny (no kstore authorizer gives one: RBAC and ``AlwaysDeny`` have "no opinion", as in
Kubernetes), ``status.reason`` the authorizers' reason.

Invariant: these resources live outside the Scheme and the registry (no storage, no watch), so
the server routes them here by (group, version, resource) before any resource scope is looked
up, and discovery lists them from :data:`REVIEW_RESOURCES`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from kstore.api.gvk import GroupVersionKind, Object
from kstore.api.validation.field import GoStruct, Path, invalid
from kstore.errors import BadRequest, Cause, Invalid
from kstore.registry.interface import UserInfo
from kstore.server.decoding import check_endpoint_type
from kstore.server.filters.authentication import Authenticator, user_info_fields
from kstore.server.filters.authorization import (
    SYSTEM_PRIVILEGED_GROUP,
    AlwaysAllow,
    Attributes,
    Authorizer,
    Decision,
)

__all__ = [
    "AUTHENTICATION_GROUP",
    "AUTHORIZATION_GROUP",
    "REVIEW_RESOURCES",
    "ReviewResource",
    "answer_review",
    "review_resource",
]

AUTHORIZATION_GROUP: Final = "authorization.k8s.io"
AUTHENTICATION_GROUP: Final = "authentication.k8s.io"


@dataclass(frozen=True, slots=True)
class ReviewResource:
    """One create-only review resource, as discovery lists it."""

    group: str
    version: str
    plural: str
    singular: str
    kind: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"


SELF_SUBJECT_ACCESS_REVIEW: Final = ReviewResource(
    AUTHORIZATION_GROUP,
    "v1",
    "selfsubjectaccessreviews",
    "selfsubjectaccessreview",
    "SelfSubjectAccessReview",
    False,
)
SUBJECT_ACCESS_REVIEW: Final = ReviewResource(
    AUTHORIZATION_GROUP,
    "v1",
    "subjectaccessreviews",
    "subjectaccessreview",
    "SubjectAccessReview",
    False,
)
LOCAL_SUBJECT_ACCESS_REVIEW: Final = ReviewResource(
    AUTHORIZATION_GROUP,
    "v1",
    "localsubjectaccessreviews",
    "localsubjectaccessreview",
    "LocalSubjectAccessReview",
    True,
)
SELF_SUBJECT_RULES_REVIEW: Final = ReviewResource(
    AUTHORIZATION_GROUP,
    "v1",
    "selfsubjectrulesreviews",
    "selfsubjectrulesreview",
    "SelfSubjectRulesReview",
    False,
)
SELF_SUBJECT_REVIEW: Final = ReviewResource(
    AUTHENTICATION_GROUP,
    "v1",
    "selfsubjectreviews",
    "selfsubjectreview",
    "SelfSubjectReview",
    False,
)
TOKEN_REVIEW: Final = ReviewResource(
    AUTHENTICATION_GROUP,
    "v1",
    "tokenreviews",
    "tokenreview",
    "TokenReview",
    False,
)

#: Every review resource served, in discovery's order within a group.
REVIEW_RESOURCES: Final = (
    LOCAL_SUBJECT_ACCESS_REVIEW,
    SELF_SUBJECT_ACCESS_REVIEW,
    SELF_SUBJECT_RULES_REVIEW,
    SUBJECT_ACCESS_REVIEW,
    SELF_SUBJECT_REVIEW,
    TOKEN_REVIEW,
)
_BY_PATH: Final = {(r.group, r.version, r.plural): r for r in REVIEW_RESOURCES}

# The string fields of ResourceAttributes and NonResourceAttributes (Go's struct names are in
# the decoder's type errors).
_RESOURCE_FIELDS: Final = (
    "namespace",
    "verb",
    "group",
    "version",
    "resource",
    "subresource",
    "name",
)
_NON_RESOURCE_FIELDS: Final = ("path", "verb")
_SPEC: Final = Path("spec")


def review_resource(group: str, version: str, resource: str) -> ReviewResource | None:
    """The review resource a path names (None for every other resource)."""
    return _BY_PATH.get((group, version, resource))


# --------------------------------------------------------------------------- decoding


def _cannot_handle(review: ReviewResource, detail: str) -> BadRequest:
    return BadRequest(
        f'{review.kind} in version "{review.version}" cannot be handled as a {review.kind}: '
        f"{detail}"
    )


def _go_type(value: Any) -> str:
    # The JSON type words of Go's UnmarshalTypeError.
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _type_error(review: ReviewResource, value: Any, struct: str, field: str, go: str) -> BadRequest:
    return _cannot_handle(
        review,
        f"json: cannot unmarshal {_go_type(value)} into Go struct field {struct}.{field} "
        f"of type {go}",
    )


def _object_field(
    review: ReviewResource, parent: Mapping[str, Any], key: str, struct: str, field: str
) -> dict[str, Any] | None:
    value = parent.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        go = f"v1.{key[0].upper()}{key[1:]}"
        raise _type_error(review, value, struct, field, go)
    return value


def _strings(
    review: ReviewResource, attrs: Mapping[str, Any], names: tuple[str, ...], struct: str, at: str
) -> dict[str, str]:
    """The known string fields of ``attrs`` (unknown ones are dropped, as the typed decode
    drops them); a value of another type is Go's unmarshal error."""
    out: dict[str, str] = {}
    for name in names:
        value = attrs.get(name)
        if value is None:
            continue
        if not isinstance(value, str):
            raise _type_error(review, value, struct, f"{at}.{name}", "string")
        if value:
            out[name] = value
    return out


def _decode(review: ReviewResource, body: Any) -> dict[str, Any]:
    """The body as an object of ``review``'s kind, apiVersion and kind filled when absent."""
    if not isinstance(body, dict):
        raise _cannot_handle(
            review, f"json: cannot unmarshal {_go_type(body)} into Go value of type struct"
        )
    api_version = body.get("apiVersion") or review.api_version
    kind = body.get("kind") or review.kind
    check_endpoint_type(
        api_version, kind, GroupVersionKind(review.group, review.version, review.kind)
    )
    metadata = body.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise _type_error(review, metadata, review.kind, "metadata", "v1.ObjectMeta")
    spec = body.get("spec")
    if spec is not None and not isinstance(spec, dict):
        raise _type_error(review, spec, review.kind, "spec", f"v1.{review.kind}Spec")
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": metadata or {},
        "spec": spec or {},
    }


def _metadata_is_empty(metadata: Mapping[str, Any], *, except_namespace: bool = False) -> bool:
    # ObjectMeta compared with its zero value: null and empty fields are zero.
    return not any(
        value not in (None, "", {}, [], 0)
        for key, value in metadata.items()
        if not (except_namespace and key == "namespace")
    )


# --------------------------------------------------------------------------- access reviews


@dataclass(frozen=True, slots=True)
class _AccessSpec:
    """A decoded access review spec: the echo to send back and the attributes asked about."""

    echo: dict[str, Any]
    resource: dict[str, str] | None
    non_resource: dict[str, str] | None


def _access_spec(review: ReviewResource, spec: Mapping[str, Any]) -> _AccessSpec:
    struct = (
        f"{review.kind}Spec"
        if review.kind != "LocalSubjectAccessReview"
        else "SubjectAccessReviewSpec"
    )
    echo: dict[str, Any] = {}
    resource_obj = _object_field(
        review, spec, "resourceAttributes", struct, "spec.resourceAttributes"
    )
    non_resource_obj = _object_field(
        review, spec, "nonResourceAttributes", struct, "spec.nonResourceAttributes"
    )
    resource = non_resource = None
    if resource_obj is not None:
        resource = _strings(
            review,
            resource_obj,
            _RESOURCE_FIELDS,
            "ResourceAttributes",
            "spec.resourceAttributes",
        )
        # Selectors are echoed as sent; no kstore authorizer reads them.
        kept = {k: v for k, v in resource_obj.items() if k in ("fieldSelector", "labelSelector")}
        echo["resourceAttributes"] = {**resource, **kept}
    if non_resource_obj is not None:
        non_resource = _strings(
            review,
            non_resource_obj,
            _NON_RESOURCE_FIELDS,
            "NonResourceAttributes",
            "spec.nonResourceAttributes",
        )
        echo["nonResourceAttributes"] = dict(non_resource)
    return _AccessSpec(echo, resource, non_resource)


def _attribute_causes(spec: _AccessSpec) -> list[Cause]:
    """``ValidateSubjectAccessReviewSpec``'s check that exactly one kind of attributes is set."""
    if spec.resource is not None and spec.non_resource is not None:
        return [
            invalid(
                _SPEC.child("nonResourceAttributes"),
                GoStruct(spec.echo["nonResourceAttributes"]),
                "cannot be specified in combination with resourceAttributes",
            )
        ]
    if spec.resource is None and spec.non_resource is None:
        return [
            invalid(
                _SPEC.child("resourceAttributes"),
                # Go's field errors print a nil pointer as the string "null" (quoted).
                "null",
                "exactly one of nonResourceAttributes or resourceAttributes must be specified",
            )
        ]
    return []


def _attributes(spec: _AccessSpec, user: UserInfo) -> Attributes:
    if spec.resource is not None:
        r = spec.resource
        return Attributes(
            user=user,
            verb=r.get("verb", ""),
            resource_request=True,
            namespace=r.get("namespace", ""),
            api_group=r.get("group", ""),
            api_version=r.get("version", ""),
            resource=r.get("resource", ""),
            subresource=r.get("subresource", ""),
            name=r.get("name", ""),
        )
    n = spec.non_resource or {}
    return Attributes(
        user=user, verb=n.get("verb", ""), resource_request=False, path=n.get("path", "")
    )


def _decide(authorizer: Authorizer | None, attributes: Attributes) -> Decision:
    if authorizer is None or SYSTEM_PRIVILEGED_GROUP in attributes.user.groups:
        return Decision(True, True)
    return authorizer.authorize(attributes)


def _access_status(decision: Decision) -> dict[str, Any]:
    status: dict[str, Any] = {"allowed": decision.allowed}
    if decision.decided and not decision.allowed:
        status["denied"] = True
    if decision.reason:
        status["reason"] = decision.reason
    return status


def _invalid(review: ReviewResource, causes: list[Cause]) -> Invalid:
    return Invalid.for_object(review.kind, "", causes, review.group)


def _user_fields(review: ReviewResource, spec: Mapping[str, Any], struct: str) -> dict[str, Any]:
    """``user``, ``uid``, ``groups`` and ``extra`` of a SubjectAccessReviewSpec."""
    out: dict[str, Any] = {}
    for name in ("user", "uid"):
        value = spec.get(name)
        if value is None:
            continue
        if not isinstance(value, str):
            raise _type_error(review, value, struct, f"spec.{name}", "string")
        if value:
            out[name] = value
    groups = spec.get("groups")
    if groups is not None:
        if not isinstance(groups, list):
            raise _type_error(review, groups, struct, "spec.groups", "[]string")
        for group in groups:
            if not isinstance(group, str):
                raise _type_error(review, group, struct, "spec.groups", "string")
        if groups:
            out["groups"] = list(groups)
    extra = spec.get("extra")
    if extra is not None:
        if not isinstance(extra, dict):
            raise _type_error(review, extra, struct, "spec.extra", "map[string]v1.ExtraValue")
        if extra:
            out["extra"] = extra
    return out


def _self_subject_access_review(
    review: ReviewResource,
    obj: dict[str, Any],
    user: UserInfo,
    authorizer: Authorizer | None,
    namespace: str,
) -> Object:
    spec = _access_spec(review, obj["spec"])
    causes = _attribute_causes(spec)
    if not _metadata_is_empty(obj["metadata"]):
        causes.append(invalid(Path("metadata"), GoStruct(obj["metadata"]), "must be empty"))
    if causes:
        raise _invalid(review, causes)
    decision = _decide(authorizer, _attributes(spec, user))
    return _reply(review, spec.echo, _access_status(decision))


def _subject_access_review(
    review: ReviewResource,
    obj: dict[str, Any],
    user: UserInfo,
    authorizer: Authorizer | None,
    namespace: str,
) -> Object:
    local = review is LOCAL_SUBJECT_ACCESS_REVIEW
    metadata_in = obj["metadata"]
    if local:
        # The create handler's namespace rule: the path's namespace fills an empty one and a
        # different one is refused before validation.
        sent = metadata_in.get("namespace") or ""
        if sent and sent != namespace:
            raise BadRequest(
                "the namespace of the provided object does not match the namespace sent on "
                "the request"
            )
    spec = _access_spec(review, obj["spec"])
    subject = _user_fields(review, obj["spec"], "SubjectAccessReviewSpec")
    causes = _attribute_causes(spec)
    if not subject.get("user") and not subject.get("groups"):
        causes.append(
            invalid(_SPEC.child("user"), "", "at least one of user or group must be specified")
        )
    if not _metadata_is_empty(metadata_in, except_namespace=local):
        detail = "must be empty except for namespace" if local else "must be empty"
        causes.append(invalid(Path("metadata"), GoStruct(metadata_in), detail))
    if local:
        asked = (spec.resource or {}).get("namespace", "")
        if spec.resource is not None and asked != namespace:
            causes.append(
                invalid(
                    Path("spec", "resourceAttributes", "namespace"),
                    asked,
                    "must match metadata.namespace",
                )
            )
        if spec.non_resource is not None:
            causes.append(
                invalid(
                    _SPEC.child("nonResourceAttributes"),
                    GoStruct(spec.non_resource),
                    "disallowed on this kind of request",
                )
            )
    if causes:
        raise _invalid(review, causes)
    asked_user = UserInfo(
        name=subject.get("user", ""),
        uid=subject.get("uid", ""),
        groups=tuple(subject.get("groups", ())),
    )
    decision = _decide(authorizer, _attributes(spec, asked_user))
    metadata: dict[str, Any] = {"creationTimestamp": None}
    if local:
        metadata["namespace"] = namespace
    return _reply(review, {**spec.echo, **subject}, _access_status(decision), metadata)


# --------------------------------------------------------------------------- rules review


def _rule_lists(rule: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    # verbs is always written (no omitempty in ResourceRule/NonResourceRule); the rest when set.
    out: dict[str, Any] = {"verbs": list(rule.get("verbs") or [])}
    for key in keys:
        values = rule.get(key)
        if values:
            out[key] = list(values)
    return out


def _self_subject_rules_review(
    review: ReviewResource,
    obj: dict[str, Any],
    user: UserInfo,
    authorizer: Authorizer | None,
    namespace: str,
) -> Object:
    spec_namespace = obj["spec"].get("namespace")
    if spec_namespace is not None and not isinstance(spec_namespace, str):
        raise _type_error(
            review, spec_namespace, "SelfSubjectRulesReviewSpec", "spec.namespace", "string"
        )
    if not spec_namespace:
        raise BadRequest("no namespace on request")
    rules = (authorizer or AlwaysAllow()).rules_for(user, spec_namespace)
    status: dict[str, Any] = {
        "resourceRules": [
            _rule_lists(r, ("apiGroups", "resources", "resourceNames")) for r in rules.resource
        ],
        "nonResourceRules": [_rule_lists(r, ("nonResourceURLs",)) for r in rules.non_resource],
        "incomplete": rules.incomplete,
    }
    if rules.errors:
        errors = rules.errors
        status["evaluationError"] = errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]"
    # The API server answers with a new object: the spec sent is not echoed.
    return _reply(review, {}, status)


# --------------------------------------------------------------------------- self review


def _self_subject_review(
    review: ReviewResource,
    obj: dict[str, Any],
    user: UserInfo,
    authorizer: Authorizer | None,
    namespace: str,
) -> Object:
    return {
        "kind": review.kind,
        "apiVersion": review.api_version,
        "metadata": {"creationTimestamp": None},
        "status": {"userInfo": user_info_fields(user)},
    }


# --------------------------------------------------------------------------- token review


def _token_review(
    review: ReviewResource, obj: dict[str, Any], authenticator: Authenticator
) -> Object:
    """Kubernetes' TokenReview: the token authenticated as a request's bearer token would be.
    A token the token file does not list is ``authenticated`` false with the authenticator's
    error; the audiences asked for are echoed on success (the token file's tokens hold for any
    audience)."""
    spec = obj["spec"]
    token = spec.get("token")
    if token is not None and not isinstance(token, str):
        raise _type_error(review, token, "TokenReviewSpec", "spec.token", "string")
    audiences = spec.get("audiences")
    if audiences is not None and (
        not isinstance(audiences, list) or not all(isinstance(a, str) for a in audiences)
    ):
        raise _type_error(review, audiences, "TokenReviewSpec", "spec.audiences", "[]string")
    if not token:
        raise BadRequest("token is required for TokenReview in authentication")
    out_spec: dict[str, Any] = {"token": token}
    if audiences:
        out_spec["audiences"] = list(audiences)
    user, error = authenticator.review_token(token, tuple(audiences or ()))
    status: dict[str, Any] = {}
    if user is not None:
        status["authenticated"] = True
        status["user"] = user_info_fields(user)
        if audiences:
            status["audiences"] = list(audiences)
    else:
        status["user"] = {}
        if error:
            status["error"] = error
    return {
        "kind": review.kind,
        "apiVersion": review.api_version,
        "metadata": {"creationTimestamp": None, **obj["metadata"]},
        "spec": out_spec,
        "status": status,
    }


def _reply(
    review: ReviewResource,
    spec: dict[str, Any],
    status: dict[str, Any],
    metadata: dict[str, Any] | None = None,
) -> Object:
    return {
        "kind": review.kind,
        "apiVersion": review.api_version,
        "metadata": metadata or {"creationTimestamp": None},
        "spec": spec,
        "status": status,
    }


_Answer = Callable[[ReviewResource, dict[str, Any], UserInfo, "Authorizer | None", str], Object]
_ANSWERS: Final[dict[str, _Answer]] = {
    SELF_SUBJECT_ACCESS_REVIEW.kind: _self_subject_access_review,
    SUBJECT_ACCESS_REVIEW.kind: _subject_access_review,
    LOCAL_SUBJECT_ACCESS_REVIEW.kind: _subject_access_review,
    SELF_SUBJECT_RULES_REVIEW.kind: _self_subject_rules_review,
    SELF_SUBJECT_REVIEW.kind: _self_subject_review,
}


def answer_review(
    review: ReviewResource,
    body: Any,
    user: UserInfo,
    authorizer: Authorizer | None,
    namespace: str = "",
    authenticator: Authenticator | None = None,
) -> Object:
    """The answered review of a decoded request ``body`` from ``user`` (in ``namespace`` for
    a namespaced review). BadRequest for a body of the wrong type or shape, Invalid for one
    that fails Kubernetes' validation. May block: it asks ``authorizer`` (None: allow all).
    A TokenReview asks ``authenticator`` (None: the one of a server without credentials)."""
    obj = _decode(review, body)
    if review is TOKEN_REVIEW:
        return _token_review(review, obj, authenticator or Authenticator())
    return _ANSWERS[review.kind](review, obj, user, authorizer, namespace)
