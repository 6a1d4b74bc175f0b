"""Authentication: who a request comes from, as kube-apiserver's ``WithAuthentication``.

Three authenticators, tried as the API server tries them:

- ``--token-auth-file``: a CSV file of ``token,user,uid[,"group1,group2"]`` lines (Kubernetes'
  static token file, read once at start; a malformed file stops the server with the reason).
  A request presenting ``Authorization: Bearer <token>`` with a listed token is that user, in
  the groups of its line plus ``system:authenticated``. A Bearer token that is not listed is
  401 ``Unauthorized``, even when anonymous requests are allowed (the bearer authenticator
  fails the request rather than passing it on). Without a token file a Bearer header is
  ignored, as no authenticator claims it.
- service-account tokens (:mod:`kstore.server.service_accounts`): a JWT whose issuer is one
  of ``--service-account-issuer`` is judged by that authenticator alone; a refusal is 401,
  and TokenReview reports ``[invalid bearer token, <why>]``, the API server's union of token
  authenticators' words. Checking one reads the registry (the ServiceAccount must still
  exist), so the filter does it on a worker thread.
- ``--anonymous-auth`` (true by default): a request no authenticator claims is
  ``system:anonymous`` in ``system:unauthenticated``; when false it is 401.

Tokens are compared in constant time: the table is keyed by a SHA-256 digest of each token
(so the lookup's timing depends only on a hash the caller cannot steer byte by byte) and the
token found is then confirmed with :func:`hmac.compare_digest`.

The user is left in the ASGI scope under :data:`USER_KEY` for audit, authorization and the
handlers, and in a context variable (:func:`current_user`) for admission, which sees no scope.
Invariant: every request that passes this filter has a user in both.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import hmac
import logging
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

import anyio.to_thread

from kstore.errors import BadRequest, Unauthorized
from kstore.registry.interface import UserInfo
from kstore.server.filters._asgi import ASGIApp, Receive, Scope, Send, send_status

__all__ = [
    "ALL_AUTHENTICATED",
    "ALL_UNAUTHENTICATED",
    "ANONYMOUS",
    "ANONYMOUS_USER",
    "AUTHENTICATOR_KEY",
    "REQUESTER_KEY",
    "USER_KEY",
    "Authentication",
    "Authenticator",
    "TokenAuthenticator",
    "TokenFile",
    "acting_as",
    "current_user",
    "load_token_file",
    "request_authenticator",
    "request_user",
    "user_info_fields",
]

_log = logging.getLogger(__name__)

#: Where the authenticated :class:`UserInfo` lives in the ASGI scope.
USER_KEY: Final = "kstore.user"
#: Where the authentication filter leaves its :class:`Authenticator` (for TokenReview).
AUTHENTICATOR_KEY: Final = "kstore.authenticator"
#: Where the authenticated user is kept when the request acts as another one
#: (:mod:`kstore.server.filters.impersonation`); :data:`USER_KEY` then holds the other one.
REQUESTER_KEY: Final = "kstore.requester"

ANONYMOUS_USER: Final = "system:anonymous"
ALL_UNAUTHENTICATED: Final = "system:unauthenticated"
ALL_AUTHENTICATED: Final = "system:authenticated"
ANONYMOUS: Final = UserInfo(name=ANONYMOUS_USER, groups=(ALL_UNAUTHENTICATED,))

#: ``apierrors.NewUnauthorized("Unauthorized")``: the message of every 401.
UNAUTHORIZED_MESSAGE: Final = "Unauthorized"
#: The bearer-token authenticator's error for a token no token authenticator accepts.
INVALID_BEARER_TOKEN: Final = "invalid bearer token"


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest()


@dataclass(frozen=True, slots=True)
class _Entry:
    token: bytes
    user: UserInfo


class TokenFile:
    """The users of a static token file, looked up by token in constant time."""

    def __init__(self, entries: dict[str, UserInfo]) -> None:
        self._by_digest = {
            _digest(token): _Entry(token.encode("utf-8", "surrogateescape"), user)
            for token, user in entries.items()
        }

    def __len__(self) -> int:
        return len(self._by_digest)

    def authenticate(self, token: str) -> UserInfo | None:
        """The user of ``token``, or None when the file does not list it."""
        raw = token.encode("utf-8", "surrogateescape")
        entry = self._by_digest.get(hashlib.sha256(raw).digest())
        if entry is None or not hmac.compare_digest(entry.token, raw):
            return None
        return entry.user


def load_token_file(path: Path) -> TokenFile:
    """Read a token file as Kubernetes' ``tokenfile.NewCSV`` does: records of at least three
    fields (token, user name, uid), an optional fourth of comma-separated groups; blank lines
    are skipped, a record with an empty token is skipped with a warning, a later duplicate
    token wins (also with a warning). BadRequest names the file and what is wrong with it."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadRequest(f"--token-auth-file: cannot read token file '{path}': {exc}") from exc
    entries: dict[str, UserInfo] = {}
    record_number = 0
    try:
        for record in csv.reader(text.splitlines(), strict=True):
            if not record:
                continue
            if len(record) < 3:
                raise BadRequest(
                    f"--token-auth-file: token file '{path}' must have at least 3 columns "
                    f"(token, user name, user uid), found {len(record)}"
                )
            record_number += 1
            token, name, uid = record[0], record[1], record[2]
            if not token:
                _log.warning(
                    "empty token has been found in token file '%s', record number '%d'",
                    path,
                    record_number,
                )
                continue
            if token in entries:
                _log.warning(
                    "duplicate token has been found in token file '%s', record number '%d'",
                    path,
                    record_number,
                )
            groups = tuple(record[3].split(",")) if len(record) >= 4 else ()
            entries[token] = UserInfo(name=name, uid=uid, groups=groups)
    except csv.Error as exc:
        raise BadRequest(f"--token-auth-file: token file '{path}' is not valid CSV: {exc}") from exc
    return TokenFile(entries)


def _authorization_header(scope: Scope) -> str:
    for key, value in scope.get("headers", ()):
        if key == b"authorization":
            return bytes(value).decode("latin-1")
    return ""


def _bearer_token(header: str) -> str:
    """The token of ``Bearer <token>`` (scheme in any case), "" when there is none."""
    parts = header.strip().split(" ", 2)
    if len(parts) < 2 or parts[0].lower() != "bearer":
        return ""
    return parts[1]


def _with_authenticated_group(user: UserInfo) -> UserInfo:
    if ALL_AUTHENTICATED in user.groups:
        return user
    return UserInfo(name=user.name, uid=user.uid, groups=(*user.groups, ALL_AUTHENTICATED))


class TokenAuthenticator(Protocol):
    """A bearer-token authenticator that recognises its own tokens (service accounts)."""

    def claims(self, token: str) -> bool:
        """Whether ``token`` is one this authenticator judges (cheap: no I/O)."""
        ...

    def authenticate(
        self, token: str, audiences: tuple[str, ...] = ()
    ) -> tuple[UserInfo | None, str]:
        """(the user, "") or (None, why the token is refused); the token must be meant for
        one of ``audiences`` (none: the API server's). May block."""
        ...


class Authenticator:
    """The API server's authenticator chain: the token file, service-account tokens, then
    anonymous."""

    def __init__(
        self,
        tokens: TokenFile | None = None,
        *,
        anonymous: bool = True,
        service_accounts: TokenAuthenticator | None = None,
    ) -> None:
        self._tokens = tokens
        self._anonymous = anonymous
        self._service_accounts = service_accounts

    def blocks(self, authorization: str) -> bool:
        """Whether authenticating this header may block (it carries a service-account
        token, whose ServiceAccount is read from the registry)."""
        token = _bearer_token(authorization)
        return (
            bool(token)
            and self._service_accounts is not None
            and (self._service_accounts.claims(token))
        )

    def authenticate(self, authorization: str) -> UserInfo:
        """The user an ``Authorization`` header value stands for; Unauthorized otherwise."""
        user, _ = self.review_token(_bearer_token(authorization))
        if user is None:
            raise Unauthorized(UNAUTHORIZED_MESSAGE)
        return user

    def review_token(
        self, token: str, audiences: tuple[str, ...] = ()
    ) -> tuple[UserInfo | None, str]:
        """(the user a bearer ``token`` stands for, "") as the request authenticator decides
        (anonymous when nothing claims it and anonymous requests are allowed), or (None, the
        error the API server's TokenReview reports: ``invalid bearer token`` for a token the
        token file does not list, "" when no authenticator claims it at all)."""
        if self._tokens is not None and token:
            user = self._tokens.authenticate(token)
            if user is not None:
                return _with_authenticated_group(user), ""
        accounts = self._service_accounts
        if accounts is not None and token and accounts.claims(token):
            user, error = accounts.authenticate(token, audiences)
            if user is not None:
                return user, ""
            return None, f"[{INVALID_BEARER_TOKEN}, {error}]"
        if self._tokens is not None and token:
            return None, INVALID_BEARER_TOKEN
        if self._anonymous:
            return ANONYMOUS, ""
        return None, ""


#: The user of the request being served, for code below the handlers that is given no scope
#: (admission): worker threads started with ``anyio.to_thread`` inherit it.
_current_user: ContextVar[UserInfo | None] = ContextVar("kstore_current_user", default=None)

#: What authenticates a request when no authentication filter is installed.
_NO_CREDENTIALS: Final = Authenticator()


def current_user() -> UserInfo | None:
    """The authenticated user of the request this code serves (None outside a request, or
    when no authentication filter is installed)."""
    return _current_user.get()


@contextlib.contextmanager
def acting_as(scope: Scope, user: UserInfo) -> Iterator[None]:
    """``user`` as the request's user, in its scope and for :func:`current_user`, until the
    block ends."""
    scope[USER_KEY] = user
    token = _current_user.set(user)
    try:
        yield
    finally:
        _current_user.reset(token)


def user_info_fields(user: UserInfo) -> dict[str, Any]:
    """``authentication.k8s.io/v1`` ``UserInfo`` of ``user`` (empty fields left out)."""
    out: dict[str, Any] = {"username": user.name}
    if user.uid:
        out["uid"] = user.uid
    if user.groups:
        out["groups"] = list(user.groups)
    if user.extra:
        out["extra"] = {key: list(values) for key, values in user.extra}
    return out


def request_authenticator(scope: Scope, default: Authenticator | None = None) -> Authenticator:
    """The authenticator the authentication filter used for this request; without the filter,
    ``default`` (the server's, which TokenReview asks even when requests are not
    authenticated), else the one every request then meets (no tokens, anonymous allowed)."""
    found = scope.get(AUTHENTICATOR_KEY)
    if isinstance(found, Authenticator):
        return found
    return default or _NO_CREDENTIALS


def request_user(scope: Scope) -> UserInfo | None:
    """The user authentication found for a request (None before or without it)."""
    user = scope.get(USER_KEY)
    return user if isinstance(user, UserInfo) else None


class Authentication:
    """Sets :data:`USER_KEY`, or answers 401 ``Unauthorized``."""

    def __init__(self, app: ASGIApp, *, authenticator: Authenticator) -> None:
        self.app = app
        self.authenticator = authenticator

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        header = _authorization_header(scope)
        try:
            if self.authenticator.blocks(header):
                user = await anyio.to_thread.run_sync(self.authenticator.authenticate, header)
            else:
                user = self.authenticator.authenticate(header)
        except Unauthorized as exc:
            # Recorded as "no user" (audit writes an empty user for a refused request).
            scope[USER_KEY] = None
            await send_status(send, exc)
            return
        scope[AUTHENTICATOR_KEY] = self.authenticator
        with acting_as(scope, user):
            await self.app(scope, receive, send)
