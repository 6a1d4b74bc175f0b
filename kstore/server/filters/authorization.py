"""Authorization: may this user do this, as kube-apiserver's ``WithAuthorization``.

``--authorization-mode`` is a comma-separated list of authorizers, asked in order until one
decides (kube-apiserver's union authorizer): ``AlwaysAllow``, ``AlwaysDeny`` and ``RBAC``. The
default is ``AlwaysAllow`` (kube-apiserver without the flag), and then no filter is installed
at all. Whatever the modes, a member of ``system:masters`` is allowed first, as the API server
puts its privileged-group authorizer in front of RBAC.

What is asked is Kubernetes' ``authorizer.Attributes``: for a resource path the verb of
:mod:`kstore.server.request_info`, API group and version, namespace, resource, subresource and
name (a list or watch with ``fieldSelector=metadata.name=<n>`` is about ``<n>``, as the API
server's request info decides); for any other path the lower-case HTTP method and the path.
A refusal is 403 ``Forbidden`` with the API server's wording, e.g. ``configmaps is forbidden:
User "alice" cannot list resource "configmaps" in API group "" in the namespace "default"``;
the authorizers' reasons, when they give any, follow after ``: ``.

The filter leaves its authorizer in the ASGI scope under :data:`AUTHORIZER_KEY`
(:func:`request_authorizer`), so that the access reviews (:mod:`kstore.server.reviews`) ask
the same authorizer the request itself was asked by; no filter means ``AlwaysAllow``.

Authorizers may block (RBAC reads its objects from the registry), so the filter first asks
whether the request is allowed without blocking (RBAC: its watch-fed cache), and only
otherwise asks on a worker thread, in one hop; a privileged user is never asked about.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol, cast
from urllib.parse import parse_qsl

import anyio.to_thread

from kstore.errors import BadRequest, Forbidden, KStoreError
from kstore.registry.interface import UserInfo
from kstore.server.filters._asgi import ASGIApp, Receive, Scope, Send, send_status
from kstore.server.filters.authentication import request_user
from kstore.server.request_info import parse_scope_path, query_bool, verb_for

__all__ = [
    "AUTHORIZATION_MODES",
    "AUTHORIZER_KEY",
    "SYSTEM_PRIVILEGED_GROUP",
    "AlwaysAllow",
    "AlwaysDeny",
    "Attributes",
    "Authorization",
    "Authorizer",
    "Decision",
    "Rules",
    "Union",
    "attributes_of",
    "forbidden",
    "parse_authorization_modes",
    "request_authorizer",
]

SYSTEM_PRIVILEGED_GROUP: Final = "system:masters"
AUTHORIZATION_MODES: Final = ("AlwaysAllow", "AlwaysDeny", "RBAC")
#: Where the authorization filter leaves its :class:`Authorizer` in the ASGI scope.
AUTHORIZER_KEY: Final = "kstore.authorizer"


@dataclass(frozen=True, slots=True)
class Attributes:
    """What a request asks to do (``authorizer.AttributesRecord``)."""

    user: UserInfo
    verb: str
    resource_request: bool
    path: str = ""
    namespace: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""


@dataclass(frozen=True, slots=True)
class Decision:
    """``allowed`` True: allowed; False with ``decided`` True: denied; False and not decided:
    no opinion (the next authorizer is asked). ``reason`` explains a denial or no opinion."""

    allowed: bool
    decided: bool
    reason: str = ""


ALLOW: Final = Decision(True, True)
NO_OPINION: Final = Decision(False, False)


@dataclass(frozen=True, slots=True)
class Rules:
    """What a user may do in a namespace, as an authorizer's ``RulesFor`` lists it (for
    SelfSubjectRulesReview): RBAC policy rules (dicts in the ``PolicyRule`` shape) that name
    resources, those that name non-resource URLs, whether the list may miss something the
    authorizer would allow, and the errors met on the way."""

    resource: tuple[Mapping[str, Any], ...] = ()
    non_resource: tuple[Mapping[str, Any], ...] = ()
    incomplete: bool = False
    errors: tuple[str, ...] = ()


#: Everything, as ``AlwaysAllow`` lists it.
EVERYTHING: Final = Rules(
    resource=({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},),
    non_resource=({"verbs": ["*"], "nonResourceURLs": ["*"]},),
)


class Authorizer(Protocol):
    def authorize(self, attributes: Attributes) -> Decision:
        """The decision on one request; may block (it runs on a worker thread)."""
        ...

    def allows_without_blocking(self, attributes: Attributes) -> bool:
        """True when the request is surely allowed, found without blocking (it runs on the
        event loop); False means "ask :meth:`authorize`", never "denied"."""
        return False

    def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        """What ``user`` may do in ``namespace`` ("" for cluster-wide rules only); may block.
        An authorizer that cannot list its rules says the list is incomplete."""
        return Rules(incomplete=True)


class AlwaysAllow(Authorizer):
    def authorize(self, attributes: Attributes) -> Decision:
        return ALLOW

    def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        return EVERYTHING

    def allows_without_blocking(self, attributes: Attributes) -> bool:
        return True


class AlwaysDeny(Authorizer):
    """Has no opinion on anything, with a reason (as Kubernetes': a later mode may allow)."""

    def authorize(self, attributes: Attributes) -> Decision:
        return Decision(False, False, "Everything is forbidden.")

    def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        return Rules()


class Union(Authorizer):
    """Asks each authorizer in turn; the first decision wins, reasons of the others are kept."""

    def __init__(self, authorizers: Sequence[Authorizer]) -> None:
        self._authorizers = tuple(authorizers)

    def authorize(self, attributes: Attributes) -> Decision:
        reasons: list[str] = []
        for authorizer in self._authorizers:
            decision = authorizer.authorize(attributes)
            if decision.decided:
                return decision
            if decision.reason:
                reasons.append(decision.reason)
        return Decision(False, False, "\n".join(reasons))

    def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        """Every authorizer's rules, in order (the union's ``RulesFor``)."""
        found = [a.rules_for(user, namespace) for a in self._authorizers]
        return Rules(
            resource=tuple(r for f in found for r in f.resource),
            non_resource=tuple(r for f in found for r in f.non_resource),
            incomplete=any(f.incomplete for f in found),
            errors=tuple(e for f in found for e in f.errors),
        )


def parse_authorization_modes(text: str) -> tuple[str, ...]:
    """The modes of ``--authorization-mode`` (BadRequest for an unknown or repeated one)."""
    modes = tuple(m.strip() for m in text.split(",") if m.strip())
    if not modes:
        raise BadRequest("--authorization-mode: at least one authorization mode must be passed")
    for mode in modes:
        if mode not in AUTHORIZATION_MODES:
            raise BadRequest(
                f'--authorization-mode: authorization-mode "{mode}" is not a valid mode '
                f"(valid modes: {', '.join(AUTHORIZATION_MODES)})"
            )
    if len(set(modes)) != len(modes):
        raise BadRequest(f"--authorization-mode: {text!r} has mode specified more than once")
    return modes


def _name_from_field_selector(query: Sequence[tuple[str, str]]) -> str:
    """``fieldSelector``'s ``metadata.name`` when it requires an exact name (else "")."""
    selector = next((v for k, v in reversed(query) if k == "fieldSelector"), "")
    for term in selector.split(","):
        for operator in ("==", "="):
            key, sep, value = term.partition(operator)
            if sep and key.strip() == "metadata.name" and not value.startswith("="):
                name = value.strip()
                if name not in (".", "..") and "/" not in name and "%" not in name:
                    return name
                return ""
    return ""


def attributes_of(scope: Scope, user: UserInfo) -> Attributes:
    """The authorizer attributes of an HTTP request."""
    path = str(scope.get("path", ""))
    method = str(scope.get("method", "GET"))
    try:
        info = parse_scope_path(scope, path)
    except KStoreError:
        info = None
    if info is None:
        return Attributes(user=user, verb=method.lower(), resource_request=False, path=path)
    query = parse_qsl(bytes(scope.get("query_string", b"")).decode("latin-1"), True)
    watch = any(k == "watch" and query_bool(v) for k, v in query)
    verb = verb_for(method, info, watch)
    name = info.name
    if not name and verb in ("list", "watch"):
        name = _name_from_field_selector(query)
    return Attributes(
        user=user,
        verb=verb,
        resource_request=True,
        path=path,
        namespace=info.namespace,
        api_group=info.group,
        api_version=info.version,
        resource=info.resource,
        subresource=info.subresource,
        name=name,
    )


def forbidden(attributes: Attributes, reason: str) -> Forbidden:
    """The API server's 403 for a denied request (``responsewriters.Forbidden``)."""
    user = f'User "{attributes.user.name}"'
    if not attributes.resource_request:
        detail = f'{user} cannot {attributes.verb} path "{attributes.path}"'
        message = f"forbidden: {detail}"
        if reason:
            message = f"{message}: {reason}"
        return Forbidden(message)
    resource = attributes.resource
    if attributes.subresource:
        resource = f"{resource}/{attributes.subresource}"
    detail = (
        f'{user} cannot {attributes.verb} resource "{resource}" in API group '
        f'"{attributes.api_group}"'
    )
    if attributes.namespace:
        detail = f'{detail} in the namespace "{attributes.namespace}"'
    else:
        detail = f"{detail} at the cluster scope"
    if reason:
        detail = f"{detail}: {reason}"
    qualified = attributes.resource
    if attributes.api_group:
        qualified = f"{qualified}.{attributes.api_group}"
    subject = f'{qualified} "{attributes.name}"' if attributes.name else qualified
    return Forbidden(
        f"{subject} is forbidden: {detail}",
        group=attributes.api_group,
        kind=attributes.resource,
        name=attributes.name,
    )


def request_authorizer(scope: Scope) -> Authorizer | None:
    """The authorizer the authorization filter asked about this request (None without the
    filter, i.e. ``AlwaysAllow``)."""
    # Only this module writes the key; Authorizer is a Protocol, not checkable at run time.
    return cast("Authorizer | None", scope.get(AUTHORIZER_KEY))


class Authorization:
    """Answers 403 unless the authorizer allows the request's user (set by authentication)."""

    def __init__(self, app: ASGIApp, *, authorizer: Authorizer) -> None:
        self.app = app
        self.authorizer = authorizer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        scope[AUTHORIZER_KEY] = self.authorizer
        user = request_user(scope)
        if user is not None and SYSTEM_PRIVILEGED_GROUP in user.groups:
            await self.app(scope, receive, send)
            return
        if user is None:
            # Authentication always runs first; a missing user is a wiring mistake, refused.
            await send_status(send, Forbidden("forbidden: no user on the request"))
            return
        attributes = attributes_of(scope, user)
        if self.authorizer.allows_without_blocking(attributes):
            await self.app(scope, receive, send)
            return
        decision = await anyio.to_thread.run_sync(self.authorizer.authorize, attributes)
        if decision.allowed:
            await self.app(scope, receive, send)
            return
        await send_status(send, forbidden(attributes, decision.reason))
