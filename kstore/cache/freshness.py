"""Confirming that the watch cache is fresh by one quorum read of its prefix, not by progress.

A consistent read (resourceVersion unset) may be served from the cache only once the cache has
reached the backend's current revision R. Kubernetes asks the backend watch for a progress
notification; on etcd before 3.4.31 that answer can overtake queued events (etcd #15220), so it
proves nothing there. A backend that implements :class:`UnchangedProbe` lets the cache prove it
another way: one linearizable read of the resource's whole prefix gives R, whether any key
under the prefix was written after the cache's revision L, and how many keys the prefix holds.

**Why it cannot serve stale data.** Let the cache hold the state of the prefix at L, with N
keys (both read together under the cache's lock; the cache's state is exactly the backend's
state at L because it applied every event up to L in order). Suppose the read at R reports no
key with ``mod_revision > L`` and exactly N keys. Every key alive at R then was last written at
or before L, so it was alive at L with the same value: the keys at R are a subset of the keys at
L. Both sets have N elements, so they are equal: no put and no delete hit the prefix in
(L, R], and the state at R is the state at L. The cache may then claim revision R (as a
progress bookmark at R would), provided it still holds the state of some revision M in [L, R]
(the same argument covers (M, R]); a re-list in between (a new epoch) voids the claim. No watch
event for the prefix can have a revision in (L, R], so the cache never drops one by being ahead
of it. If the probe sees a change, the events are in flight on the backend watch: the reader
waits for them and probes again from the cache's newer revision, up to the fresh timeout.

The same argument holds for any key range, not only the whole prefix: a consistent LIST of one
namespace of a large resource probes that namespace's range only (an etcd range with a revision
filter reads every value in its range, so probing the whole resource for a small list could
cost more than the list). The range's state at the cache's revision M >= L is then its state
at R, so the list is served from memory with resourceVersion max(R, M); only a probe of the
whole prefix moves the cache's own revision (later "0" reads may lag behind such a list).

A count that differs for another reason (keys under the prefix the cache does not hold) only
ever makes the probe fail: reads then fall back to the backend after the timeout, never stale.

Assumption: the cache keys each object as the backend does (``<prefix><namespace>/<name>`` from
its metadata is its storage key), so the cache's count of a range is the backend's count at L.
Every writer through kstore or Kubernetes stores objects so; an object written by hand under a
key that does not match its metadata could make a delete in the same range go unnoticed until
its event arrives.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["LocalChangeClock", "UnchangedProbe"]


@runtime_checkable
class UnchangedProbe(Protocol):
    """A storage that can tell, in one linearizable read, whether a prefix is unchanged."""

    def confirm_unchanged(self, key: str, revision: int, count: int) -> tuple[int, bool]:
        """Read every key under ``key`` (a prefix ending in ``/``, or one exact key) at the
        latest revision R, linearizably. Return R and whether no key there has a modification
        revision above ``revision`` and the range holds exactly ``count`` keys. When the
        range held ``count`` keys at ``revision``, True proves it is identical at R."""
        ...


@runtime_checkable
class LocalChangeClock(Protocol):
    """A storage that knows, with at most one local read, when its keys last changed: every
    write is published to its watchers before its writer is answered, and the writes of other
    processes sharing the store (LMDB workers) are brought in from the store's change log up to
    its current revision before answering (:mod:`kstore.storage._lmdb_feed`).

    A consistent read of a resource may then be served by a cache that holds the resource's
    state at a revision L (having applied every event up to L in order) whenever L is at or
    past the revision this returns: no change of the resource with a revision above L has
    been acknowledged, so the state at L is the state any reader that began after a write's
    answer must see. A write still in flight (committed, not yet answered) may or may not be
    seen, as with any read concurrent with it. Unlike a comparison with the backend's current
    revision, writes to other resources do not make the cache look stale: under a stream of
    pod creates, the LimitRanges an admission plugin reads are still served from memory."""

    def last_change_revision(self, key: str) -> int:
        """A revision at or after the last acknowledged change of any key under the prefix
        ``key`` (a larger one is allowed: it only sends readers to the backend)."""
        ...
