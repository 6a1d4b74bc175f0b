"""The history checker rejects each kind of violation it exists to catch (hand-made
recordings, no etcd needed): a checker that cannot fail would make the fault tests vacuous."""

from __future__ import annotations

from tests.etcd.history import Event, Op, WatchRecord, check_operations, check_watch

PREFIX = "/r/"
KEY = "/pods/ns/a"
ETCD_KEY = "/r/pods/ns/a"


def _op(
    kind: str,
    value: str | None,
    *,
    rv: int | None,
    t: tuple[float, float],
    outcome: str = "ok",
    expected: int | None = None,
    read: str | None = None,
    error: str = "",
) -> Op:
    return Op("c", kind, KEY, value, expected, t[0], t[1], outcome, rv, read, error)


GOOD_HISTORY = [
    Event(10, ETCD_KEY, "v1", created=True),
    Event(11, ETCD_KEY, "v2", created=False),
    Event(12, ETCD_KEY, None, created=False),
]
GOOD_OPS = [
    _op("create", "v1", rv=10, t=(0, 1)),
    _op("update", "v2", rv=11, t=(2, 3), expected=10),
    _op("get", None, rv=11, t=(4, 5), read="v2"),
    _op("delete", None, rv=12, t=(6, 7), expected=11),
]


def test_a_correct_recording_passes() -> None:
    assert check_operations(GOOD_OPS, GOOD_HISTORY, key_prefix=PREFIX) == []


def test_a_lost_acknowledged_write_is_reported() -> None:
    history = GOOD_HISTORY[:1] + GOOD_HISTORY[2:]
    problems = check_operations(GOOD_OPS, history, key_prefix=PREFIX)
    assert any("lost" in p for p in problems), problems


def test_a_definitely_failed_write_that_was_applied_is_reported() -> None:
    failed = _op("update", "v2", rv=None, t=(2, 3), expected=10, outcome="fail", error="Conflict")
    ops = [GOOD_OPS[0], failed, *GOOD_OPS[2:]]
    problems = check_operations(ops, GOOD_HISTORY, key_prefix=PREFIX)
    assert any("was applied" in p for p in problems), problems


def test_an_unknown_outcome_may_or_may_not_be_applied() -> None:
    unknown = _op("update", "v2", rv=None, t=(2, 3), expected=10, outcome="unknown")
    ops = [GOOD_OPS[0], unknown, *GOOD_OPS[2:]]
    assert check_operations(ops, GOOD_HISTORY, key_prefix=PREFIX) == []


def test_real_time_order_violations_are_reported() -> None:
    # The update was invoked after the create returned, yet got an older revision.
    history = [Event(10, ETCD_KEY, "v2", created=True), Event(11, ETCD_KEY, "v1", created=False)]
    ops = [_op("create", "v1", rv=11, t=(0, 1)), _op("update", "v2", rv=10, t=(2, 3), expected=9)]
    problems = check_operations(ops, history, key_prefix=PREFIX)
    assert any("invoked after a write" in p for p in problems), problems


def test_a_stale_read_is_reported() -> None:
    ops = [*GOOD_OPS[:2], _op("get", None, rv=10, t=(4, 5), read="v1")]
    problems = check_operations(ops, GOOD_HISTORY[:2], key_prefix=PREFIX)
    assert any("older than the returned write" in p for p in problems), problems


def test_a_compare_and_swap_applied_on_the_wrong_revision_is_reported() -> None:
    ops = [GOOD_OPS[0], _op("update", "v2", rv=11, t=(2, 3), expected=9)]
    problems = check_operations(ops, GOOD_HISTORY[:2], key_prefix=PREFIX)
    assert any("expected @9" in p for p in problems), problems


def test_a_phantom_write_is_reported() -> None:
    history = [*GOOD_HISTORY, Event(13, ETCD_KEY, "nobody", created=True)]
    problems = check_operations(GOOD_OPS, history, key_prefix=PREFIX)
    assert any("nobody made" in p for p in problems), problems


def _watch(*events: tuple[str, int, str | None]) -> WatchRecord:
    record = WatchRecord("w", 9, PREFIX)
    record.events = [(kind, ETCD_KEY, rev, value) for kind, rev, value in events]
    return record


def test_a_complete_watch_passes() -> None:
    record = _watch(("ADDED", 10, "v1"), ("MODIFIED", 11, "v2"), ("DELETED", 12, "v2"))
    assert check_watch(record, GOOD_HISTORY) == []


def test_watch_gaps_duplicates_and_disorder_are_reported() -> None:
    gap = _watch(("ADDED", 10, "v1"), ("DELETED", 12, "v2"))
    duplicate = _watch(("ADDED", 10, "v1"), ("ADDED", 10, "v1"), ("MODIFIED", 11, "v2"))
    disorder = _watch(("MODIFIED", 11, "v2"), ("ADDED", 10, "v1"))
    wrong_type = _watch(("MODIFIED", 10, "v1"))
    for record in (gap, duplicate, disorder, wrong_type):
        assert check_watch(record, GOOD_HISTORY), record.events
