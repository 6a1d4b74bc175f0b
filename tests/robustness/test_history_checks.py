"""The robustness checkers reject each kind of bad recording (and accept good ones), so a
passing robustness run means what it says."""

from __future__ import annotations

from kstore.testing.api_model import ConfigMapModel, match_events
from kstore.testing.watch_history import (
    Acknowledged,
    Change,
    WatchRecord,
    WatchSegment,
    check_acknowledged,
    check_compare_and_swap,
    check_history,
    check_real_time,
    check_watch,
    final_state,
)

HISTORY = [
    Change(10, "ADDED", "a", "1"),
    Change(11, "ADDED", "b", "2"),
    Change(12, "MODIFIED", "a", "3"),
    Change(13, "DELETED", "b", "2"),
    Change(15, "MODIFIED", "a", "4"),
]


def _record(*segments: WatchSegment) -> WatchRecord:
    return WatchRecord("w", list(segments))


def test_a_complete_watch_across_resumed_connections_passes() -> None:
    record = _record(WatchSegment(9, HISTORY[:2]), WatchSegment(11, HISTORY[2:]))
    assert check_watch(record, HISTORY, until=15) == []


def test_a_gap_inside_a_connection_is_reported() -> None:
    record = _record(WatchSegment(9, [HISTORY[0], HISTORY[2], HISTORY[3], HISTORY[4]]))
    problems = check_watch(record, HISTORY)
    assert len(problems) == 1 and "missing (gap)" in problems[0]


def test_a_resume_after_the_last_delivered_revision_is_reported() -> None:
    record = _record(WatchSegment(9, HISTORY[:1]), WatchSegment(11, HISTORY[2:]))
    assert any("resumed from 11, not from 10" in p for p in check_watch(record, HISTORY))


def test_a_resume_after_410_may_start_later() -> None:
    first = WatchSegment(9, HISTORY[:1], expired=True)
    record = _record(first, WatchSegment(12, HISTORY[3:]))
    assert check_watch(record, HISTORY, until=15) == []
    assert record.expirations() == 1


def test_a_duplicate_event_is_reported() -> None:
    record = _record(WatchSegment(9, HISTORY[:2]), WatchSegment(10, HISTORY[1:]))
    problems = check_watch(record, HISTORY)
    assert any("resumed from 10" in p for p in problems)
    assert any("revision 11 after 11" in p for p in problems)


def test_a_wrong_value_or_type_is_reported() -> None:
    wrong = [HISTORY[0], Change(11, "MODIFIED", "b", "2")]
    assert check_watch(_record(WatchSegment(9, wrong)), HISTORY) != []
    wrong = [HISTORY[0], Change(11, "ADDED", "b", "x")]
    assert check_watch(_record(WatchSegment(9, wrong)), HISTORY) != []


def test_a_watcher_that_stops_short_is_reported() -> None:
    record = _record(WatchSegment(9, HISTORY[:3]))
    assert check_watch(record, HISTORY) == []
    problems = check_watch(record, HISTORY, until=15)
    assert len(problems) == 1 and "short of 15" in problems[0]


def test_lost_and_doubly_acknowledged_writes_are_reported() -> None:
    good = [Acknowledged("create", "a", "1", 10), Acknowledged("delete", "b", None, None)]
    assert check_acknowledged(good, HISTORY) == []
    assert "lost" in check_acknowledged([Acknowledged("update", "a", "9", 14)], HISTORY)[0]
    twice = [Acknowledged("update", "a", "3", 12), Acknowledged("update", "b", "7", 12)]
    assert len(check_acknowledged(twice, HISTORY)) == 2


def test_a_reused_revision_in_the_history_is_reported() -> None:
    assert check_history(HISTORY) == []
    assert check_history([*HISTORY, Change(15, "ADDED", "c", "5")]) != []


def test_final_state_replays_the_history() -> None:
    assert final_state(HISTORY) == {"a": (15, "4")}


def test_the_model_answers_like_the_api() -> None:
    model = ConfigMapModel()
    assert model.expect_create("a") == 201
    assert model.created("a", "1", 5) == []
    assert model.expect_create("a") == 409
    assert model.expect_update("a", 4) == 409
    assert model.expect_update("a", 5) == 200
    assert model.expect_update("b", 5) == 404
    assert model.expect_delete("a", 4) == 409
    assert model.expect_delete("a", None) == 200
    assert model.updated("a", "2", 5) != []  # a revision that did not increase
    model.deleted("a")
    assert model.expect_delete("a", None) == 404
    got = [
        Change(5, "ADDED", "a", "1"),
        Change(5, "MODIFIED", "a", "2"),
        Change(9, "DELETED", "a", "2"),
    ]
    assert any("after 5" in p for p in match_events(got, model.history))
    got[1] = Change(7, "MODIFIED", "a", "2")
    assert match_events(got, model.history) != []  # the model has revision 5 for it


def test_an_update_applied_to_a_state_it_did_not_expect_is_reported() -> None:
    right = Acknowledged("update", "a", "3", 12, expected=10)
    assert check_compare_and_swap([right], HISTORY) == []
    lost_update = Acknowledged("update", "a", "4", 15, expected=10)  # 12 came in between
    assert len(check_compare_and_swap([right, lost_update], HISTORY)) == 1


def test_revisions_against_real_time_order_are_reported() -> None:
    first = Acknowledged("update", "a", "3", 12, invoked=1.0, returned=2.0)
    overlapping = Acknowledged("update", "b", "9", 11, invoked=1.5, returned=2.5)
    assert check_real_time([first, overlapping]) == []
    later = Acknowledged("update", "b", "9", 11, invoked=3.0, returned=4.0)
    problems = check_real_time([first, later])
    assert len(problems) == 1 and "sent after" in problems[0]
