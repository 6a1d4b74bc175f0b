"""Writes whose outcome is unknown: settled on another member before anyone is answered.

When an attempt of a write times out or loses its connection (a frozen or killed member), etcd
may or may not have applied it. Failing at once with 504, as the client did before, costs the
caller the whole write whenever a leader freezes; resending blindly could apply it twice.
Every write the backend sends is guarded by the key's ``mod_revision``, and that guard decides
what is safe:

- **update and delete** (``If(mod_revision == R)`` with ``R > 0``): etcd never gives a key the
  revision ``R`` again, so at most one of the first attempt and any resend can pass the guard.
  The same transaction is resent on another member (the client has already moved on). If the
  resend applies, the write is done once. If its guard fails, its ``Else(Get)`` shows the key
  now: the bytes this write put there mean the first attempt applied it (encrypted values
  carry a fresh nonce, plain ones a new object's content) and the write succeeded at that
  ``mod_revision``; anything else leaves it unknown, and the caller gets 504 Timeout;
- **create** (``If(mod_revision == 0)``): a key can be absent again after a delete, so a
  resend could create an object a second time after someone deleted the first; a create is
  never resent. A quorum read on another member settles it: the key holding this create's
  bytes (which carry a fresh uid) means it applied; otherwise the outcome stays unknown and
  the caller gets 504 Timeout, as kube-apiserver answers an ambiguous etcd write.

Reads made here are linearizable: once a new leader serves them, whatever the old one had
replicated is committed, and what it had not can no longer be.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from kstore.errors import Timeout
from kstore.storage._etcd_client import AmbiguousWrite
from kstore.storage._etcd_steps import Range, Step, Txn

__all__ = ["WriteOutcome", "guarded_write"]


class WriteOutcome:
    """What a guarded write did: ``succeeded`` at ``revision``, or not, with the key's
    current key-values (from the transaction's ``Else(Get)``; empty when it has none)."""

    __slots__ = ("current", "revision", "succeeded")

    def __init__(self, succeeded: bool, revision: int, current: Any = ()) -> None:
        self.succeeded = succeeded
        self.revision = revision
        self.current = current

    @classmethod
    def of(cls, response: Any) -> WriteOutcome:
        """From a ``TxnResponse`` whose ``Else`` branch, if any, is one Get."""
        if response.succeeded:
            return cls(True, int(response.header.revision))
        current = response.responses[0].response_range.kvs if response.responses else ()
        return cls(False, int(response.header.revision), current)


def _unknown(cause: AmbiguousWrite) -> Timeout:
    return Timeout(f"etcd may or may not have applied the write: {cause}")


def guarded_write(
    txn: Txn,
    *,
    key: bytes,
    expected_revision: int,
    written: bytes | None,
    deadline: float,
) -> Generator[Step, Any, WriteOutcome]:
    """Send ``txn`` (``If(mod_revision(key) == expected_revision) Then(...)``, with
    ``Else(Get(key))`` unless it is a create) and settle an unknown outcome as the module
    docstring says. ``written``: the stored bytes a put writes (None for a delete);
    ``deadline``: a ``time.monotonic()`` instant after which an unknown outcome is a 504."""
    try:
        return WriteOutcome.of((yield txn))
    except AmbiguousWrite as exc:
        failure = exc
    if expected_revision == 0:
        return (yield from _settle_create(key, written, deadline, failure))
    resend = Txn(txn.request, None, deadline, after_failure=True)
    while True:
        try:
            outcome = WriteOutcome.of((yield resend))
        except AmbiguousWrite as exc:
            failure = exc
            continue  # the client raises a plain Timeout once the deadline has passed
        except Exception as exc:
            # Whatever stopped the resend, the first attempt may still have applied.
            raise _unknown(failure) from exc
        if outcome.succeeded:
            return outcome
        current = outcome.current
        if written is not None and current and current[0].value == written:
            return WriteOutcome(True, int(current[0].mod_revision))
        raise _unknown(failure)


def _settle_create(
    key: bytes, written: bytes | None, deadline: float, failure: AmbiguousWrite
) -> Generator[Step, Any, WriteOutcome]:
    try:
        response = yield Range(key, deadline, after_failure=True)
    except Exception as exc:
        raise _unknown(failure) from exc
    if written is not None and response.kvs and response.kvs[0].value == written:
        return WriteOutcome(True, int(response.kvs[0].mod_revision))
    raise _unknown(failure)
