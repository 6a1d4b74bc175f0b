"""Checks of recorded writes and watch streams against a ground-truth history of changes.

The history is a list of :class:`Change` in revision order: one entry per committed write of
the objects under test (ADDED, MODIFIED, DELETED, each with the unique value the object held).
Tests get it from a storage watch read after the run, or, when every write had a definite
outcome, from the acknowledged writes themselves.

What is checked (reliability.md, sections 1.3 and 6):

- :func:`check_history`: revisions strictly increase, so none is used twice;
- :func:`check_acknowledged`: every acknowledged create or update is in the history at the
  revision it returned, with its value (no acknowledged write lost), and no revision was
  acknowledged for two different writes;
- :func:`check_compare_and_swap`: every acknowledged conditional update replaced exactly the
  revision it was conditioned on; :func:`check_real_time`: a write answered before another was
  sent got the lower revision;
- :func:`check_watch`: a watcher's events, over every connection it made (a
  :class:`WatchSegment` each), are in strictly increasing revision order (ordered, unique);
  each connection delivered exactly the history's changes after the revision it started from
  up to its last event (reliable: no gap, nothing extra, right type and value); a connection
  that broke was resumed from the last revision it delivered (resumable) unless it ended with
  410 Expired, the one allowed way to lose events; and, when asked, the watcher reached a
  given revision.

Each check returns human-readable problems; an empty list is a pass.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

__all__ = [
    "Acknowledged",
    "Change",
    "WatchRecord",
    "WatchSegment",
    "check_acknowledged",
    "check_compare_and_swap",
    "check_history",
    "check_real_time",
    "check_watch",
    "final_state",
]


@dataclass(frozen=True, slots=True)
class Change:
    """One committed write: its revision, the watch event type it is delivered as, the
    object's name and the value the object held (for DELETED: the value it had last)."""

    revision: int
    type: str
    name: str
    value: str | None


@dataclass(frozen=True, slots=True)
class Acknowledged:
    """A write the server answered with 2xx: ``revision`` is the one it returned (None for a
    delete, which answers with a Status and no revision); ``expected`` the resourceVersion it
    was conditioned on (None: unconditional); ``invoked`` and ``returned`` the
    ``time.monotonic()`` when the request was sent and its answer arrived (0.0: not timed)."""

    kind: str
    name: str
    value: str | None
    revision: int | None
    expected: int | None = None
    invoked: float = 0.0
    returned: float = 0.0


@dataclass(slots=True)
class WatchSegment:
    """The events of one watch connection, opened at ``start`` (the resourceVersion asked).

    ``expired`` is set when the connection ended with a 410 (an ERROR event or the status of
    the response); ``error`` describes any other way it ended early (reset, ERROR event)."""

    start: int
    events: list[Change] = field(default_factory=list)
    expired: bool = False
    error: str | None = None

    def reached(self) -> int:
        """The revision up to which this connection has delivered everything."""
        return self.events[-1].revision if self.events else self.start


@dataclass(slots=True)
class WatchRecord:
    """Every connection one watcher made, in order."""

    name: str
    segments: list[WatchSegment] = field(default_factory=list)

    def reached(self) -> int:
        return self.segments[-1].reached() if self.segments else 0

    def event_count(self) -> int:
        return sum(len(segment.events) for segment in self.segments)

    def expirations(self) -> int:
        return sum(1 for segment in self.segments if segment.expired)


def check_history(history: Sequence[Change]) -> list[str]:
    """Revisions strictly increase through the history (one write per revision)."""
    problems = []
    for before, after in itertools.pairwise(history):
        if after.revision <= before.revision:
            problems.append(f"history revision {after.revision} follows {before.revision}")
    return problems


def check_acknowledged(acks: Iterable[Acknowledged], history: Sequence[Change]) -> list[str]:
    """Every acknowledged create and update is in ``history`` at its revision, unchanged."""
    by_revision = {change.revision: change for change in history}
    claimed: dict[int, Acknowledged] = {}
    problems = []
    for ack in acks:
        if ack.revision is None:
            continue
        other = claimed.setdefault(ack.revision, ack)
        if other is not ack:
            problems.append(f"revision {ack.revision} acknowledged twice: {other} and {ack}")
        change = by_revision.get(ack.revision)
        if change is None:
            problems.append(f"acknowledged {ack.kind} lost: {ack}")
        elif (change.name, change.value) != (ack.name, ack.value) or change.type == "DELETED":
            problems.append(f"acknowledged {ack.kind} {ack} but history has {change}")
    return problems


def check_compare_and_swap(acks: Iterable[Acknowledged], history: Sequence[Change]) -> list[str]:
    """Every acknowledged conditional update was applied to the object exactly at the revision
    it expected: the object's previous change in the history has that revision (no update was
    lost under another, none was applied to a state it did not see)."""
    previous: dict[int, Change | None] = {}
    last: dict[str, Change] = {}
    for change in history:
        previous[change.revision] = last.get(change.name)
        last[change.name] = change
    problems = []
    for ack in acks:
        if ack.expected is None or ack.revision is None or ack.revision not in previous:
            continue
        before = previous[ack.revision]
        if before is None or before.type == "DELETED" or before.revision != ack.expected:
            problems.append(f"{ack} expected revision {ack.expected} but replaced {before}")
    return problems


def check_real_time(acks: Iterable[Acknowledged]) -> list[str]:
    """A write answered before another was sent has the lower revision (the order revisions
    give is consistent with real time)."""
    timed = [a for a in acks if a.revision is not None and a.returned > 0.0]
    by_return = sorted(timed, key=lambda a: a.returned)
    returns = [a.returned for a in by_return]
    highest: list[Acknowledged] = []  # highest[i]: the highest revision among by_return[: i + 1]
    for ack in by_return:
        best = highest[-1] if highest else ack
        highest.append(ack if (ack.revision or 0) >= (best.revision or 0) else best)
    problems = []
    for ack in timed:
        count = bisect.bisect_left(returns, ack.invoked)
        if count and (highest[count - 1].revision or 0) >= (ack.revision or 0):
            problems.append(f"{ack} was sent after {highest[count - 1]} returned, yet is older")
    return problems


def final_state(history: Iterable[Change]) -> dict[str, tuple[int, str | None]]:
    """Name -> (revision, value) of every object that exists after the whole history."""
    state: dict[str, tuple[int, str | None]] = {}
    for change in history:
        if change.type == "DELETED":
            state.pop(change.name, None)
        else:
            state[change.name] = (change.revision, change.value)
    return state


def check_watch(
    record: WatchRecord, history: Sequence[Change], *, until: int | None = None
) -> list[str]:
    """The watcher's connections together deliver the history exactly (see the module
    docstring); with ``until``, it also delivered every change up to that revision."""
    problems: list[str] = []
    revisions = [change.revision for change in history]
    last = 0
    previous: WatchSegment | None = None
    for number, segment in enumerate(record.segments):
        where = f"{record.name} connection {number} (from {segment.start})"
        if previous is not None and not previous.expired and segment.start != previous.reached():
            problems.append(
                f"{where}: resumed from {segment.start}, not from {previous.reached()}, "
                "the last revision delivered"
            )
        for event in segment.events:
            if event.revision <= last:
                problems.append(f"{where}: revision {event.revision} after {last} (order/dup)")
            last = max(last, event.revision)
        lo = bisect.bisect_right(revisions, segment.start)
        hi = bisect.bisect_right(revisions, segment.reached())
        expected = list(history[lo:hi])
        if segment.events != expected:
            problems.append(f"{where}: {_difference(segment.events, expected)}")
        previous = segment
    if until is not None:
        reached = record.reached()
        missing = [c for c in history if reached < c.revision <= until]
        if missing:
            problems.append(
                f"{record.name} stopped at {reached}, short of {until}: {len(missing)} "
                f"change(s) never delivered, first {missing[0]}"
            )
    return problems


def _difference(got: Sequence[Change], expected: Sequence[Change]) -> str:
    got_set, expected_set = set(got), set(expected)
    missing = [c for c in expected if c not in got_set]
    extra = [c for c in got if c not in expected_set]
    if not missing and not extra:
        return "events out of order or repeated"
    parts = []
    if missing:
        parts.append(f"{len(missing)} missing (gap), first {missing[0]}")
    if extra:
        parts.append(f"{len(extra)} not in the history, first {extra[0]}")
    return "; ".join(parts)
