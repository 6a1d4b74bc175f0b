"""Leader election on a ``coordination.k8s.io/v1`` Lease, as kube-controller-manager does.

Several ``kstore serve`` on one etcd each run the election; only the holder of the Lease
``kube-system/kube-controller-manager`` runs the leader-only controllers. The Lease names its
holder (``<hostname>_<uuid>``), when the holder renewed it, and for how long that renewal
counts. The defaults are kube-controller-manager's: a lease of 15 s, a leader that gives up
when it could not renew for 10 s (the renew deadline), and an attempt every 2 s.

A candidate judges a lease expired by its own clock: the lease must have stayed unchanged for
``lease_duration`` seconds since this candidate last saw it change (the stored times are
informative only, so clocks that disagree do not matter). Every write is conditional on the
resourceVersion that was read, so two candidates cannot both take the lease. On a clean stop
the leader releases the lease (an empty holder), so another server takes over at once.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from kstore.api.gvk import GroupVersion, Object
from kstore.errors import AlreadyExists, Conflict, KStoreError, NotFound
from kstore.registry.interface import CreateOptions, Registry, RequestContext, UpdateOptions

__all__ = ["LeaderElection", "LeaderElectionConfig", "default_identity"]

_log = logging.getLogger("kstore.controllers.leader")

_GROUP: Final = "coordination.k8s.io"
_RESOURCE: Final = "leases"
_MANAGER: Final = "kube-controller-manager"


def default_identity() -> str:
    """``<hostname>_<uuid>``, kube-controller-manager's holder identity."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


@dataclass(frozen=True, kw_only=True, slots=True)
class LeaderElectionConfig:
    """Where the lease is and its timings (kube-controller-manager's defaults)."""

    namespace: str = "kube-system"
    name: str = "kube-controller-manager"
    lease_duration_seconds: float = 15.0
    renew_deadline_seconds: float = 10.0
    retry_period_seconds: float = 2.0
    identity: str = ""


def _micro_time(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


class LeaderElection:
    """Runs the election on a thread; calls ``on_started`` when this candidate becomes the
    leader and ``on_stopped`` when it stops being it (lost lease or :meth:`stop`)."""

    def __init__(
        self,
        registry: Registry,
        *,
        config: LeaderElectionConfig | None = None,
        on_started: Callable[[], None],
        on_stopped: Callable[[], None],
    ) -> None:
        self._registry = registry
        self.config = config or LeaderElectionConfig()
        self.identity = self.config.identity or default_identity()
        self._on_started = on_started
        self._on_stopped = on_stopped
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._leading = False
        self._last_renew = 0.0
        self._observed: tuple[Any, ...] | None = None
        self._observed_at = 0.0
        self._ctx = RequestContext(
            namespace=self.config.namespace, request_version=GroupVersion(_GROUP, "v1")
        )

    @property
    def is_leader(self) -> bool:
        return self._leading

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="leader-election", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(30)
            self._thread = None

    # -- the loop -----------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            while not self._stopping.is_set():
                now = time.monotonic()
                try:
                    held = self.try_acquire_or_renew()
                except KStoreError as exc:
                    _log.info("leader election: %s", exc)
                    held = False
                except Exception:
                    _log.exception("leader election step failed")
                    held = False
                if held:
                    self._last_renew = now
                    if not self._leading:
                        self._leading = True
                        _log.info("%s became the controllers' leader", self.identity)
                        self._on_started()
                elif self._leading and now - self._last_renew > self.config.renew_deadline_seconds:
                    _log.warning("%s lost the controllers' lease", self.identity)
                    self._leading = False
                    self._on_stopped()
                self._stopping.wait(self.config.retry_period_seconds)
        finally:
            if self._leading:
                self._leading = False
                self._on_stopped()
                self._release()

    def _store(self) -> Any:
        return self._registry.store(_GROUP, _RESOURCE)

    def _record(self, at: float, *, acquire: bool, transitions: int) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": round(self.config.lease_duration_seconds),
            "renewTime": _micro_time(at),
            "leaseTransitions": transitions,
        }
        if acquire:
            spec["acquireTime"] = _micro_time(at)
        return spec

    def try_acquire_or_renew(self) -> bool:
        """One attempt; whether this candidate holds the lease after it."""
        store = self._store()
        now = time.time()
        try:
            lease = store.get(self._ctx, self.config.name)
        except NotFound:
            record = self._record(now, acquire=True, transitions=0)
            body = {
                "apiVersion": f"{_GROUP}/v1",
                "kind": "Lease",
                "metadata": {"name": self.config.name, "namespace": self.config.namespace},
                "spec": record,
            }
            scheme = self._registry.scheme
            scheme.default(body)
            try:
                store.create(self._ctx, scheme.to_hub(body), CreateOptions(field_manager=_MANAGER))
            except AlreadyExists:
                return False
            self._observe(record)
            return True
        spec = _map(lease.get("spec"))
        self._observe(spec)
        holder = str(spec.get("holderIdentity") or "")
        mine = holder == self.identity
        if not mine and holder:
            duration = float(spec.get("leaseDurationSeconds") or 0)
            if time.monotonic() < self._observed_at + duration:
                return False  # held by another, and not expired
        read_version = _map(lease.get("metadata")).get("resourceVersion")
        transitions = int(spec.get("leaseTransitions") or 0) + (0 if mine else 1)
        record = self._record(now, acquire=not mine, transitions=transitions)
        if mine and spec.get("acquireTime"):
            record["acquireTime"] = spec["acquireTime"]

        def renewed(current: Object) -> Object:
            if _map(current.get("metadata")).get("resourceVersion") != read_version:
                raise Conflict("the lease changed since it was read")
            return {**current, "spec": {**_map(current.get("spec")), **record}}

        try:
            store.update(
                self._ctx, self.config.name, renewed, UpdateOptions(field_manager=_MANAGER)
            )
        except (Conflict, NotFound):
            return False
        self._observe(record)
        return True

    def _observe(self, spec: dict[str, Any]) -> None:
        seen = (spec.get("holderIdentity"), spec.get("renewTime"), spec.get("acquireTime"))
        if seen != self._observed:
            self._observed = seen
            self._observed_at = time.monotonic()

    def _release(self) -> None:
        """Give the lease up (an empty holder), so another candidate need not wait."""

        def released(current: Object) -> Object:
            spec = _map(current.get("spec"))
            if spec.get("holderIdentity") != self.identity:
                raise Conflict("the lease is not held here")
            spec = {**spec, "holderIdentity": "", "leaseDurationSeconds": 1}
            spec["renewTime"] = _micro_time(time.time())
            return {**current, "spec": spec}

        try:
            self._store().update(
                self._ctx, self.config.name, released, UpdateOptions(field_manager=_MANAGER)
            )
        except KStoreError:
            pass
        except Exception:
            _log.exception("releasing the controllers' lease failed")
