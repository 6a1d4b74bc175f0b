"""The filter chain's settings and its order, as kube-apiserver's ``DefaultBuildHandlerChain``.

Outermost first, as the API server runs them: panic recovery (so even a failing filter
answers with a ``Status``), audit (installed only with an audit log; here rather than after
authentication, as in the API server, so that it records the 504s and 429s of the filters
below it), the request timeout (it times everything below it, a wait for
nothing included: no filter queues), CORS (installed only with allowed origins; a preflight is
answered before any limit counts it), the in-flight limits, then the request body limit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from starlette.middleware import Middleware

from kstore.server.filters.audit import Audit, AuditLog
from kstore.server.filters.body_limit import DEFAULT_MAX_REQUEST_BODY_BYTES, BodyLimit
from kstore.server.filters.cors import Cors, compile_origins
from kstore.server.filters.max_inflight import MaxInFlight
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


def filter_middleware(config: FilterConfig, audit_log: AuditLog | None = None) -> list[Middleware]:
    """The filters as Starlette middleware, outermost first (BadRequest for a CORS pattern
    that does not compile). ``audit_log`` is where audit events go (None: no auditing); the
    caller opens and closes it."""
    chain = [Middleware(PanicRecovery)]
    if audit_log is not None:
        chain.append(Middleware(Audit, log=audit_log))
    chain += [
        Middleware(RequestTimeout, timeout_seconds=config.request_timeout_seconds),
    ]
    if config.cors_allowed_origins:
        chain.append(Middleware(Cors, allowed_origins=compile_origins(config.cors_allowed_origins)))
    chain.append(
        Middleware(
            MaxInFlight,
            read_only_limit=config.max_requests_inflight,
            mutating_limit=config.max_mutating_requests_inflight,
        )
    )
    chain.append(Middleware(BodyLimit, max_bytes=config.max_request_body_bytes))
    return chain
