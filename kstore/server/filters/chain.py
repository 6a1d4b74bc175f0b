"""The filter chain's settings and its order, as kube-apiserver's ``DefaultBuildHandlerChain``.

Outermost first, as the API server runs them: panic recovery (so even a failing filter
answers), pretty printing (kube-apiserver's serializer choice for ``?pretty=true`` and curl,
done here over every JSON answer, the filters' own included), the request log (``--v``),
audit (installed only with an audit log; here rather than after authentication, as in the API
server, so that it records the 504s and 429s of the filters below it), the request timeout (it
times everything below it, a wait for nothing included: no filter queues), CORS (installed
only with allowed origins; a preflight is answered before any limit counts it),
authentication, impersonation (always installed: under ``AlwaysAllow`` anybody may act as
anybody), the in-flight limits, authorization, then the request body limit.

Audit sits outside authentication yet records the authenticated user: it reads the user from
the request's scope when the request ends, after authentication has run (a request that
authentication refused is recorded with an empty user, as the API server's failed-authentication
audit does). Authentication is installed only when it can change anything (a token file,
anonymous requests refused, or an authorizer that asks who the user is); without it every
request is ``system:anonymous``. Authorization
is installed only when some mode is not ``AlwaysAllow``; it runs inside the in-flight limits,
as in the API server, so its registry reads count against them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from starlette.middleware import Middleware

from kstore.server.filters.audit import Audit, AuditLog
from kstore.server.filters.authentication import Authentication, Authenticator
from kstore.server.filters.authorization import Authorization, Authorizer
from kstore.server.filters.body_limit import DEFAULT_MAX_REQUEST_BODY_BYTES, BodyLimit
from kstore.server.filters.cors import Cors, compile_origins
from kstore.server.filters.httplog import HttpLog
from kstore.server.filters.impersonation import Impersonation
from kstore.server.filters.max_inflight import MaxInFlight
from kstore.server.filters.pretty import PrettyPrint
from kstore.server.filters.recovery import PanicRecovery
from kstore.server.filters.timeout import RequestTimeout

__all__ = ["FilterConfig", "filter_middleware"]


@dataclass(frozen=True, kw_only=True)
class FilterConfig:
    """kube-apiserver's flags and defaults for the generic filters (0 turns a limit off)."""

    max_requests_inflight: int = 400
    max_mutating_requests_inflight: int = 200
    request_timeout_seconds: float = 60.0
    #: The API server's ``MaxRequestBodyBytes`` (not a flag there either).
    max_request_body_bytes: int = DEFAULT_MAX_REQUEST_BODY_BYTES
    #: ``--cors-allowed-origins``: regular expressions; empty turns CORS off.
    cors_allowed_origins: tuple[str, ...] = field(default=())
    #: ``--token-auth-file``: Kubernetes' static token CSV; None: no bearer tokens.
    token_auth_file: Path | None = None
    #: ``--anonymous-auth``: requests without credentials are ``system:anonymous`` (else 401).
    anonymous_auth: bool = True
    #: ``--service-account-signing-key-file``: the PEM private key (RSA or P-256) that signs
    #: service-account tokens; None: a key generated in memory (``kstore serve`` passes one
    #: it keeps in its data directory).
    service_account_signing_key_file: Path | None = None
    #: ``--service-account-key-file`` (may repeat): the keys tokens are verified with; empty:
    #: the signing key's own.
    service_account_key_files: tuple[Path, ...] = ()
    #: ``--service-account-issuer`` (may repeat): the first is written in new tokens, every
    #: one is accepted; empty: ``https://kubernetes.default.svc.cluster.local``.
    service_account_issuers: tuple[str, ...] = ()
    #: ``--api-audiences``: the audiences tokens must name; empty: the first issuer.
    api_audiences: tuple[str, ...] = ()
    #: ``--service-account-max-token-expiration`` in seconds (0: no cap).
    service_account_max_token_expiration_seconds: int = 0
    #: ``--authorization-mode``: the authorizers in order (``AlwaysAllow``, ``AlwaysDeny``,
    #: ``RBAC``).
    authorization_modes: tuple[str, ...] = ("AlwaysAllow",)
    #: ``--v``: the request log's verbosity (2 and above: every request, see ``httplog``).
    verbosity: int = 0

    @property
    def authenticates(self) -> bool:
        """Whether the authentication filter is needed: it can tell users apart or refuse,
        or an authorizer needs to know the user (anonymous, then)."""
        return self.token_auth_file is not None or not self.anonymous_auth or self.authorizes

    @property
    def authorizes(self) -> bool:
        """Whether the authorization filter is needed (some mode can refuse)."""
        return any(mode != "AlwaysAllow" for mode in self.authorization_modes)


def filter_middleware(
    config: FilterConfig,
    audit_log: AuditLog | None = None,
    *,
    authenticator: Authenticator | None = None,
    authorizer: Authorizer | None = None,
) -> list[Middleware]:
    """The filters as Starlette middleware, outermost first (BadRequest for a CORS pattern
    that does not compile). ``audit_log`` is where audit events go (None: no auditing); the
    caller opens and closes it. ``authenticator`` and ``authorizer`` are installed when given
    (the caller builds them from ``config``, see :mod:`kstore.server.app`)."""
    chain = [
        Middleware(PanicRecovery),
        Middleware(PrettyPrint),
        Middleware(HttpLog, verbosity=config.verbosity),
    ]
    if audit_log is not None:
        chain.append(Middleware(Audit, log=audit_log))
    chain += [
        Middleware(RequestTimeout, timeout_seconds=config.request_timeout_seconds),
    ]
    if config.cors_allowed_origins:
        chain.append(Middleware(Cors, allowed_origins=compile_origins(config.cors_allowed_origins)))
    if authenticator is not None:
        chain.append(Middleware(Authentication, authenticator=authenticator))
    chain.append(Middleware(Impersonation, authorizer=authorizer))
    chain.append(
        Middleware(
            MaxInFlight,
            read_only_limit=config.max_requests_inflight,
            mutating_limit=config.max_mutating_requests_inflight,
        )
    )
    if authorizer is not None:
        chain.append(Middleware(Authorization, authorizer=authorizer))
    chain.append(Middleware(BodyLimit, max_bytes=config.max_request_body_bytes))
    return chain
