"""``/healthz``, ``/livez`` and ``/readyz``, with kube-apiserver's check names and output.

Each endpoint runs named checks; ``/<endpoint>/<check>`` runs one. The answer is ``ok`` (200)
or, when a check fails, a 500 listing every check as ``[+]name ok`` / ``[-]name failed: reason
withheld`` and ``<endpoint> check failed``; ``?verbose`` lists them on success too.

- ``ping``: the server answers (all three endpoints);
- ``storage``: a linearizable read through the registry (the backend is reachable and the
  watch cache has caught up with it) within two seconds (``/healthz`` and ``/readyz``);
- ``shutdown``: fails once SIGTERM was received, so load balancers stop sending work while
  requests in flight finish (``/readyz`` only).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import anyio

from kstore.registry.interface import RequestContext
from kstore.server.state import ServerState
from kstore.storage.interface import ListOptions

__all__ = ["CHECKS", "HealthResult", "run_checks"]

_log = logging.getLogger("kstore.server")
_STORAGE_TIMEOUT = 2.0

Check = Callable[[ServerState], Awaitable[bool]]


async def _ping(state: ServerState) -> bool:
    return True


def _read_storage(state: ServerState) -> None:
    stores = state.registry.stores()
    preferred = [s for s in stores if s.info.plural == "namespaces"] or list(stores)
    if preferred:
        preferred[0].list(RequestContext(), ListOptions(limit=1))


async def _storage(state: ServerState) -> bool:
    try:
        with anyio.fail_after(_STORAGE_TIMEOUT):
            await anyio.to_thread.run_sync(_read_storage, state, abandon_on_cancel=True)
    except Exception as exc:
        _log.warning("storage health check failed: %s", exc)
        return False
    return True


async def _shutdown(state: ServerState) -> bool:
    return not state.shutting_down


CHECKS: dict[str, list[tuple[str, Check]]] = {
    "livez": [("ping", _ping)],
    "healthz": [("ping", _ping), ("storage", _storage)],
    "readyz": [("ping", _ping), ("storage", _storage), ("shutdown", _shutdown)],
}


class HealthResult:
    __slots__ = ("body", "status")

    def __init__(self, status: int, body: str) -> None:
        self.status = status
        self.body = body


async def run_checks(
    state: ServerState, endpoint: str, only: str | None, verbose: bool
) -> HealthResult | None:
    """Run an endpoint's checks (or just ``only``); None when ``only`` names no check."""
    checks = CHECKS[endpoint]
    if only is not None:
        checks = [(n, c) for n, c in checks if n == only]
        if not checks:
            return None
    lines: list[str] = []
    failed = False
    for name, check in checks:
        ok = await check(state)
        failed |= not ok
        lines.append(f"[+]{name} ok" if ok else f"[-]{name} failed: reason withheld")
    if not failed and not verbose:
        return HealthResult(200, "ok")
    verdict = f"{endpoint} check failed" if failed else f"{endpoint} check passed"
    return HealthResult(500 if failed else 200, "\n".join([*lines, verdict]) + "\n")
