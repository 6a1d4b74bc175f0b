"""The objects a registry makes when it starts, retried while storage times out.

A registry makes sure its system priority classes, system namespaces and default ServiceCIDR
exist. Each of those steps creates only what is missing and completes what an earlier start
left half-done, so running it again is safe. A :class:`~kstore.errors.Timeout` from storage means
a write may or may not have been applied (an etcd leader change, a member too loaded to answer
within its deadline): kube-apiserver's bootstrap hooks keep trying then instead of failing the
start, and so does :func:`run_bootstrap_step`, for up to ``deadline_seconds``. Any other error
fails the start at once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Final

from kstore.errors import Timeout

__all__ = ["BOOTSTRAP_DEADLINE_SECONDS", "run_bootstrap_step"]

_log = logging.getLogger("kstore.registry")

#: How long a start keeps retrying a step that times out (kube-apiserver's priority class
#: hook polls for 30 s too).
BOOTSTRAP_DEADLINE_SECONDS: Final = 30.0
_FIRST_PAUSE: Final = 0.2
_LONGEST_PAUSE: Final = 2.0


def run_bootstrap_step(
    what: str,
    step: Callable[[], None],
    *,
    deadline_seconds: float = BOOTSTRAP_DEADLINE_SECONDS,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Run ``step`` (idempotent) until it returns, retrying after a Timeout with pauses that
    double up to 2 s; the last Timeout is raised once the next pause would pass the deadline.
    ``what`` names the step in the warning each retry logs."""
    give_up_at = clock() + deadline_seconds
    pause = _FIRST_PAUSE
    while True:
        try:
            step()
            return
        except Timeout as exc:
            if clock() + pause > give_up_at:
                raise
            _log.warning("%s timed out; retrying in %.1f s: %s", what, pause, exc.message)
        sleep(pause)
        pause = min(2 * pause, _LONGEST_PAUSE)
