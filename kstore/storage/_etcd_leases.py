"""Leases for objects with a TTL, shared between objects whose TTLs end close together.

Kubernetes' lease manager (``pkg/storage/etcd3/lease_manager.go``) grants one lease per write
only when it must: the previous lease is reused when it expires after the new object should
(``now + ttl < prev_expiry``), not much later (``now + ttl + reuse > prev_expiry``, with
``reuse = min(reuse_duration, 5 % of ttl)``), and it holds fewer than ``max_objects`` objects. A
new lease is granted for ``ttl + reuse`` seconds, so an object may outlive its TTL by up to
``reuse`` (and etcd's minimum lease TTL, about 2 s with default election timing). Without this
an Events-heavy cluster holds one lease per object (kubernetes#47532); the object limit keeps
a single lease's expiry from deleting too many keys at once (kubernetes#96836).

Thread-safe; one manager per backend (leases are shared across resources, as in Kubernetes).
"""

from __future__ import annotations

import threading
import time

from kstore.storage._etcd_client import EtcdClient

__all__ = ["LeaseManager"]

_REUSE_PERCENT = 0.05


class LeaseManager:
    """Hands out lease ids for TTLs, reusing the previous lease when the rules allow."""

    def __init__(
        self, client: EtcdClient, *, reuse_duration_seconds: int, max_object_count: int
    ) -> None:
        self._client = client
        self._reuse_duration = reuse_duration_seconds
        self._max_objects = max_object_count if max_object_count > 0 else 1000
        self._lock = threading.Lock()
        self._prev_id = 0
        self._prev_expiry = 0.0
        self._attached = 0

    def _reuse_seconds(self, ttl: int) -> int:
        return min(int(_REUSE_PERCENT * ttl), self._reuse_duration)

    def get_lease(self, ttl: int) -> int:
        """A lease id under which an object written now lives at least ``ttl`` seconds."""
        now = time.monotonic()
        with self._lock:
            reuse = self._reuse_seconds(ttl)
            valid = now + ttl < self._prev_expiry
            sufficient = now + ttl + reuse > self._prev_expiry
            self._attached += 1
            if valid and sufficient and self._attached <= self._max_objects:
                return self._prev_id
            granted_ttl = ttl + reuse
            lease_id = self._client.lease_grant(granted_ttl)
            self._prev_id = lease_id
            self._prev_expiry = now + granted_ttl
            self._attached = 1
            return lease_id

    def forget(self, lease_id: int) -> None:
        """``lease_id`` turned out not to exist (revoked, or expired early): never reuse it."""
        with self._lock:
            if self._prev_id == lease_id:
                self._prev_id = 0
                self._prev_expiry = 0.0
                self._attached = 0
