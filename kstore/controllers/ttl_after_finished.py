"""The ``ttl-after-finished`` controller: a finished Job with ``spec.ttlSecondsAfterFinished``
is deleted that many seconds after it finished (its dependents in the background).

A Job has finished when its ``Complete`` or ``Failed`` condition is ``True``; it finished at
that condition's ``lastTransitionTime``. Before deleting, the Job is read again, so a Job whose
TTL was raised (or removed) meanwhile stays; the delete is conditional on its uid.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any, ClassVar, Final

from kstore.api.gvk import GroupVersion, Object
from kstore.controllers.base import Controller
from kstore.errors import NotFound
from kstore.registry.interface import DeleteOptions, RequestContext
from kstore.storage.interface import Preconditions

__all__ = ["TTLAfterFinishedController", "expires_at"]

_JOBS: Final = ("batch", "jobs")
_CONTEXT_VERSION: Final = GroupVersion("batch", "v1")


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def expires_at(job: Object) -> float | None:
    """When ``job`` is due for deletion (a Unix time), or None (no TTL, or not finished)."""
    ttl = _map(job.get("spec")).get("ttlSecondsAfterFinished")
    if not isinstance(ttl, int) or _map(job.get("metadata")).get("deletionTimestamp"):
        return None
    for condition in _map(job.get("status")).get("conditions") or []:
        if not isinstance(condition, dict):
            continue
        if condition.get("type") in ("Complete", "Failed") and condition.get("status") == "True":
            at = str(condition.get("lastTransitionTime") or "")
            try:
                finished = datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp()
            except ValueError:
                return None
            return finished + ttl
    return None


class TTLAfterFinishedController(Controller):
    name: ClassVar[str] = "ttl-after-finished"
    watches: ClassVar[tuple[tuple[str, str], ...]] = (_JOBS,)

    def reconcile(self, key: str) -> None:
        job = self.informer(*_JOBS).get(key)
        if job is None or expires_at(job) is None:
            return
        namespace, _, name = key.partition("/")
        ctx = RequestContext(namespace=namespace, request_version=_CONTEXT_VERSION)
        store = self.store(*_JOBS)
        try:
            fresh = store.get(ctx, name)
        except NotFound:
            return
        due = expires_at(fresh)
        if due is None:
            return
        wait = due - time.time()
        if wait > 0:
            self.queue.add_after(key, wait)
            return
        uid = str(_map(fresh.get("metadata")).get("uid") or "")
        opts = DeleteOptions(propagation_policy="Background", preconditions=Preconditions(uid=uid))
        try:
            store.delete(ctx, name, opts)
        except NotFound:
            return
