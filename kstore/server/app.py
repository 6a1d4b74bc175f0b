"""The Starlette application of ``kstore serve``: routes, error pages and lifecycle hooks.

:func:`build_app` wires a :class:`~kstore.registry.interface.Registry` into an ASGI app. The
app holds no global state: everything lives in its :class:`~kstore.server.state.ServerState`
(``app.state.kstore``), so tests and embedders can run several apps in one process. Unknown
paths answer with a ``Status`` like every other error; every request passes the filter
chain of :mod:`kstore.server.filters` (panic recovery, audit, request timeout, CORS,
authentication, in-flight limits, authorization, body limit).

Authentication and authorization are built here from the filter config because they need
more than flags: the token file is read (a bad file fails before the app exists) and the RBAC
authorizer reads the registry. In RBAC mode the bootstrap policy (``cluster-admin`` and the
discovery and public-info roles) is created before the app serves.
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response

from kstore.api.cel.admission import AuthorizationCheck, AuthorizationDecision, Authorize
from kstore.errors import NotFound
from kstore.registry.admission.policy import set_authorizer as set_policy_authorizer
from kstore.registry.interface import Registry, UserInfo
from kstore.server.filters import AuditLog, FilterConfig, filter_middleware
from kstore.server.filters.authentication import Authenticator, load_token_file
from kstore.server.filters.authorization import (
    SYSTEM_PRIVILEGED_GROUP,
    AlwaysAllow,
    AlwaysDeny,
    Attributes,
    Authorizer,
    Union,
    parse_authorization_modes,
)
from kstore.server.filters.bootstrap_policy import ensure_bootstrap_policy
from kstore.server.filters.policy_cache import PolicyCache
from kstore.server.filters.rbac import RBACAuthorizer
from kstore.server.filters.rbac_escalation import escalation_check
from kstore.server.handlers.scope import error_reply
from kstore.server.metrics import FigureSource, Metrics
from kstore.server.routes import build_routes
from kstore.server.service_accounts import (
    DEFAULT_ISSUER,
    ServiceAccountAuthenticator,
    ServiceAccountTokens,
)
from kstore.server.state import ServerState
from kstore.tokens import generate_signing_key, load_signing_key, load_verifying_keys

__all__ = [
    "build_app",
    "build_authenticator",
    "build_authorizer",
    "build_service_account_tokens",
    "policy_authorizer",
    "server_state",
]


def _status_response(error: Exception) -> Response:
    reply = error_reply(error)
    return Response(reply.body, status_code=reply.status, media_type=reply.content_type)


async def _not_found(request: Request, exc: Exception) -> Response:
    # A path no route takes: the final not-found handler's Status (no details).
    return _status_response(
        NotFound("the server could not find the requested resource", details=False)
    )


#: How long start-up waits for the RBAC cache's first lists.
_RBAC_SYNC_SECONDS = 10.0


def build_service_account_tokens(config: FilterConfig) -> ServiceAccountTokens:
    """The issuer and verifier of service-account tokens the flags describe: the signing key
    of ``--service-account-signing-key-file`` (else one made in memory), verified with the
    keys of ``--service-account-key-file`` (else the signing key's own), as kube-apiserver
    defaults them. BadRequest for a key file it cannot use."""
    signing = (
        load_signing_key(config.service_account_signing_key_file)
        if config.service_account_signing_key_file
        else generate_signing_key()
    )
    files = list(config.service_account_key_files)
    verifying = load_verifying_keys(files, None if files else signing)
    return ServiceAccountTokens(
        signing_key=signing,
        verifying_keys=verifying,
        issuers=config.service_account_issuers or (DEFAULT_ISSUER,),
        api_audiences=config.api_audiences,
        max_expiration_seconds=config.service_account_max_token_expiration_seconds,
    )


def build_authenticator(
    config: FilterConfig, service_accounts: ServiceAccountAuthenticator | None = None
) -> Authenticator:
    """The authenticator ``config`` asks for (the filter is installed only when
    ``config.authenticates``; TokenReview asks it either way); BadRequest for an unreadable
    or malformed token file."""
    tokens = load_token_file(config.token_auth_file) if config.token_auth_file else None
    return Authenticator(tokens, anonymous=config.anonymous_auth, service_accounts=service_accounts)


def build_authorizer(config: FilterConfig, registry: Registry) -> Authorizer | None:
    """The authorizer of ``--authorization-mode`` (None for ``AlwaysAllow`` alone). With
    ``RBAC`` the bootstrap policy is created in ``registry`` first, and RBAC's
    privilege-escalation check is added to its validating admission."""
    modes = parse_authorization_modes(",".join(config.authorization_modes))
    if not config.authorizes:
        return None
    authorizers: list[Authorizer] = []
    for mode in modes:
        if mode == "AlwaysAllow":
            authorizers.append(AlwaysAllow())
        elif mode == "AlwaysDeny":
            authorizers.append(AlwaysDeny())
        else:
            ensure_bootstrap_policy(registry)
            cache = PolicyCache(registry)
            cache.start()
            # Serving before the first lists only sends more requests the slow way.
            cache.wait_synced(_RBAC_SYNC_SECONDS)
            rbac = RBACAuthorizer(registry, cache)
            # The check reads the policy cache and, for the roles a binding names, the
            # registry itself: nothing remote where creates run on the loop (local reads).
            registry.add_admission(
                validating=escalation_check(rbac), blocking=False, reads_only=True
            )
            authorizers.append(rbac)
    return authorizers[0] if len(authorizers) == 1 else Union(authorizers)


def policy_authorizer(authorizer: Authorizer) -> Authorize:
    """What admission policies' ``authorizer`` variable asks: ``authorizer``, a member of
    ``system:masters`` allowed first, as the authorization filter does."""

    def authorize(check: AuthorizationCheck) -> AuthorizationDecision:
        user = check.user
        groups = tuple(str(g) for g in user.get("groups") or ())
        if SYSTEM_PRIVILEGED_GROUP in groups:
            return AuthorizationDecision(True)
        extra = user.get("extra") or {}
        info = UserInfo(
            name=str(user.get("username") or ""),
            uid=str(user.get("uid") or ""),
            groups=groups,
            extra=tuple((str(k), tuple(str(x) for x in v)) for k, v in extra.items()),
        )
        decision = authorizer.authorize(
            Attributes(
                user=info,
                verb=check.verb,
                resource_request=check.resource_request,
                path=check.path,
                namespace=check.namespace,
                api_group=check.api_group,
                api_version=check.api_version,
                resource=check.resource,
                subresource=check.subresource,
                name=check.name,
            )
        )
        return AuthorizationDecision(decision.allowed, decision.reason)

    return authorize


def build_app(
    registry: Registry,
    *,
    figure_sources: tuple[FigureSource, ...] = (),
    filters: FilterConfig | None = None,
    audit_log: AuditLog | None = None,
) -> Starlette:
    """An ASGI app serving ``registry``'s resources with Kubernetes' REST API, behind the
    filter chain ``filters`` configures (kube-apiserver's defaults when None), auditing every
    request to ``audit_log`` when one is given (the caller closes it). BadRequest for a bad
    token file or authorization mode."""
    config = filters or FilterConfig()
    tokens = build_service_account_tokens(config)
    authenticator = build_authenticator(config, ServiceAccountAuthenticator(tokens, registry))
    authorizer = build_authorizer(config, registry)
    if authorizer is not None:
        set_policy_authorizer(registry, policy_authorizer(authorizer))
    state = ServerState(
        registry=registry,
        metrics=Metrics(figure_sources),
        authenticator=authenticator,
        service_account_tokens=tokens,
    )
    app = Starlette(
        routes=build_routes(state),
        middleware=filter_middleware(
            config,
            audit_log,
            authenticator=authenticator if config.authenticates else None,
            authorizer=authorizer,
        ),
        exception_handlers={404: _not_found, 405: _not_found},
    )
    app.state.kstore = state
    return app


def server_state(app: Starlette) -> ServerState:
    """The state of an app made by :func:`build_app`."""
    state = app.state.kstore
    assert isinstance(state, ServerState)
    return state
