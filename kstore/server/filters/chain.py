"""The filter chain's settings and its order, as kube-apiserver's ``DefaultBuildHandlerChain``.

Outermost first: panic recovery (so even a failing filter answers with a ``Status``), the
in-flight limits (a shed request costs nothing more), then the request timeout (it times the
handler, not the wait for a slot, since there is no wait).
"""

from __future__ import annotations

from dataclasses import dataclass

from starlette.middleware import Middleware

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


def filter_middleware(config: FilterConfig) -> list[Middleware]:
    """The filters as Starlette middleware, outermost first."""
    return [
        Middleware(PanicRecovery),
        Middleware(
            MaxInFlight,
            read_only_limit=config.max_requests_inflight,
            mutating_limit=config.max_mutating_requests_inflight,
        ),
        Middleware(RequestTimeout, timeout_seconds=config.request_timeout_seconds),
    ]
