"""Impersonation: acting as another user, as kube-apiserver's ``WithImpersonation``.

``kubectl --as alice --as-group dev`` sends ``Impersonate-User``, ``Impersonate-Group``
(repeated), ``Impersonate-Uid`` and ``Impersonate-Extra-<key>`` (repeated; the key is
lower-cased and percent-decoded). The authenticated user must be allowed the verb
``impersonate`` on each thing asked for, checked one by one in that order:

- a user: resource ``users`` (API group ""), named by the user name; a service account's user
  name (``system:serviceaccount:<namespace>:<name>``) is resource ``serviceaccounts`` in that
  namespace instead, and without ``Impersonate-Group`` its groups are
  ``system:serviceaccounts`` and ``system:serviceaccounts:<namespace>``;
- each group: resource ``groups``;
- each extra value: resource ``userextras`` with the key as subresource, in API group
  ``authentication.k8s.io``;
- the uid: resource ``uids`` in ``authentication.k8s.io``.

The first refusal is the API server's 403 (``users "alice" is forbidden: User "bob" cannot
impersonate resource "users" in API group "" at the cluster scope``). Groups, extra or a uid
without a user is 400. Once allowed, the request continues as the new user: with the groups
asked for, plus ``system:authenticated`` unless those name it or ``system:unauthenticated``
(``system:unauthenticated`` for ``system:anonymous``); the headers are removed, and audit
records the new user as ``impersonatedUser`` beside the one who asked.

The filter is always installed, inside authentication (without it the requester is
``system:anonymous``): under ``AlwaysAllow`` anybody may act as anybody, as in the API server.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final
from urllib.parse import unquote

import anyio.to_thread

from kstore.errors import BadRequest
from kstore.registry.interface import UserInfo
from kstore.server.filters._asgi import ASGIApp, Receive, Scope, Send, send_status
from kstore.server.filters.authentication import (
    ALL_AUTHENTICATED,
    ALL_UNAUTHENTICATED,
    ANONYMOUS,
    ANONYMOUS_USER,
    REQUESTER_KEY,
    acting_as,
    request_user,
)
from kstore.server.filters.authorization import (
    SYSTEM_PRIVILEGED_GROUP,
    AlwaysAllow,
    Attributes,
    Authorizer,
    forbidden,
)

__all__ = ["Impersonation"]

_USER: Final = b"impersonate-user"
_UID: Final = b"impersonate-uid"
_GROUP: Final = b"impersonate-group"
_EXTRA_PREFIX: Final = b"impersonate-extra-"
_PREFIX: Final = b"impersonate-"
_SERVICE_ACCOUNT_PREFIX: Final = "system:serviceaccount:"
_AUTHENTICATION_GROUP: Final = "authentication.k8s.io"


@dataclass(frozen=True, slots=True)
class _Asked:
    """What the impersonation headers ask for, in header order where it matters."""

    user: str
    uid: str
    groups: tuple[str, ...]
    extra: tuple[tuple[str, tuple[str, ...]], ...]

    def checks(self, requester: UserInfo) -> list[Attributes]:
        """The ``impersonate`` requests to authorize, in the API server's order."""

        def ask(resource: str, name: str, **more: str) -> Attributes:
            return Attributes(
                user=requester,
                verb="impersonate",
                resource_request=True,
                resource=resource,
                name=name,
                **more,
            )

        out: list[Attributes] = []
        if self.user:
            account = _service_account(self.user)
            if account is None:
                out.append(ask("users", self.user))
            else:
                out.append(ask("serviceaccounts", account[1], namespace=account[0]))
        out += [ask("groups", group) for group in self.groups]
        for key, values in self.extra:
            out += [
                ask("userextras", v, subresource=key, api_group=_AUTHENTICATION_GROUP)
                for v in values
            ]
        if self.uid:
            out.append(ask("uids", self.uid, api_group=_AUTHENTICATION_GROUP))
        return out

    def user_info(self) -> UserInfo:
        """The user the request goes on as once every check passed."""
        groups = list(self.groups)
        account = _service_account(self.user)
        if account is not None and not groups:
            groups = ["system:serviceaccounts", f"system:serviceaccounts:{account[0]}"]
        if self.user != ANONYMOUS_USER:
            if ALL_AUTHENTICATED not in groups and ALL_UNAUTHENTICATED not in groups:
                groups.append(ALL_AUTHENTICATED)
        elif ALL_UNAUTHENTICATED not in groups:
            groups.append(ALL_UNAUTHENTICATED)
        return UserInfo(name=self.user, uid=self.uid, groups=tuple(groups), extra=self.extra)


def _service_account(user: str) -> tuple[str, str] | None:
    """(namespace, name) of a service account's user name, None for any other name."""
    if not user.startswith(_SERVICE_ACCOUNT_PREFIX):
        return None
    namespace, sep, name = user[len(_SERVICE_ACCOUNT_PREFIX) :].partition(":")
    if not sep or not namespace or not name or ":" in name:
        return None
    return namespace, name


def _asked(scope: Scope) -> _Asked | None:
    """What the request's headers ask for (None: no impersonation); BadRequest for groups,
    extra or a uid without a user."""
    user = uid = ""
    groups: list[str] = []
    extra: dict[str, list[str]] = {}
    seen = False
    for key, raw in scope.get("headers", ()):
        if not key.startswith(_PREFIX):
            continue
        value = bytes(raw).decode("latin-1")
        if key == _USER:
            user, seen = user or value, True
        elif key == _UID:
            uid, seen = uid or value, True
        elif key == _GROUP:
            groups.append(value)
            seen = True
        elif key.startswith(_EXTRA_PREFIX):
            name = unquote(key[len(_EXTRA_PREFIX) :].decode("latin-1").lower())
            extra.setdefault(name, []).append(value)
            seen = True
    if not seen:
        return None
    asked = _Asked(user, uid, tuple(groups), tuple((k, tuple(v)) for k, v in extra.items()))
    if not user and (groups or extra or uid):
        what = ", ".join(
            [*(f"group {g!r}" for g in groups), *(f"extra {k!r}" for k in extra)]
            + ([f"uid {uid!r}"] if uid else [])
        )
        raise BadRequest(f"requested {what} without impersonating a user")
    return asked


class Impersonation:
    """Switches the request's user to the one its impersonation headers name, when the
    authenticated user may impersonate it; 403 or 400 otherwise."""

    def __init__(self, app: ASGIApp, *, authorizer: Authorizer | None = None) -> None:
        self.app = app
        self.authorizer = authorizer if authorizer is not None else AlwaysAllow()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            asked = _asked(scope)
        except BadRequest as exc:
            await send_status(send, exc)
            return
        if asked is None:
            await self.app(scope, receive, send)
            return
        requester = request_user(scope) or ANONYMOUS
        if SYSTEM_PRIVILEGED_GROUP not in requester.groups:
            for attributes in asked.checks(requester):
                if self.authorizer.allows_without_blocking(attributes):
                    continue
                decision = await anyio.to_thread.run_sync(self.authorizer.authorize, attributes)
                if not decision.allowed:
                    await send_status(send, forbidden(attributes, decision.reason))
                    return
        user = asked.user_info()
        headers = scope.get("headers", ())
        scope["headers"] = [(k, v) for k, v in headers if not k.startswith(_PREFIX)]
        scope[REQUESTER_KEY] = requester
        with acting_as(scope, user):
            await self.app(scope, receive, send)
