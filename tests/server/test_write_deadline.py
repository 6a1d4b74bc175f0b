"""The deadline of a write (``?timeout=`` capped at 34 s) and Go's duration syntax, in-process.

The same behaviour through a real ``kstore serve`` on a stopped etcd member is in
``test_write_deadline_etcd.py``.
"""

from __future__ import annotations

import threading
import time

import httpx
import orjson
import pytest

from kstore.errors import BadRequest, Timeout, to_status
from kstore.server.handlers.deadline import (
    REQUEST_TIMEOUT_UPPER_BOUND,
    WriteDeadline,
    parse_go_duration,
    request_timeout,
    run_before,
    write_budget_seconds,
    write_deadline,
)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("1s", 1.0),
        ("500ms", 0.5),
        ("1m30s", 90.0),
        ("1.5h", 5400.0),
        (".5s", 0.5),
        ("5.s", 5.0),
        ("-2s", -2.0),
        ("+0", 0.0),
        ("0", 0.0),
        ("1h2m3.5s", 3723.5),
        ("250us", 250e-6),
        ("3\u00b5s", 3e-6),
        ("10ns", 10e-9),
    ],
)
def test_go_durations_parse_as_go_parses_them(text: str, seconds: float) -> None:
    assert parse_go_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("abc", 'time: invalid duration "abc"'),
        ("5", 'time: missing unit in duration "5"'),
        ("5x", 'time: unknown unit "x" in duration "5x"'),
        ("1s5", 'time: missing unit in duration "1s5"'),
        (".s", 'time: invalid duration ".s"'),
        ("-", 'time: invalid duration "-"'),
    ],
)
def test_malformed_go_durations_are_reported_with_gos_wording(text: str, message: str) -> None:
    with pytest.raises(ValueError, match="^" + message.replace(".", r"\.") + "$"):
        parse_go_duration(text)


def test_a_malformed_timeout_parameter_is_a_bad_request() -> None:
    with pytest.raises(BadRequest) as caught:
        request_timeout({"timeout": "soon"})
    assert str(caught.value) == (
        'invalid timeout specified in the request URL - time: invalid duration "soon"'
    )


def test_no_zero_or_negative_timeout_means_no_timeout_of_the_clients() -> None:
    assert request_timeout({}) is None
    assert request_timeout({"timeout": "0s"}) is None
    assert request_timeout({"timeout": "-5s"}) is None
    assert request_timeout({"timeout": "2s"}) == 2.0


def test_a_write_deadline_is_the_clients_timeout_capped_at_34_seconds() -> None:
    now = time.monotonic()
    assert write_deadline({"timeout": "2s"}).at - now == pytest.approx(2.0, abs=0.5)
    assert write_deadline({"timeout": "1h"}).at - now == pytest.approx(34.0, abs=0.5)
    assert write_deadline({}).at - now == pytest.approx(REQUEST_TIMEOUT_UPPER_BOUND, abs=0.5)


def test_a_deadline_is_enforced_where_writes_may_stall_or_the_client_asked_for_one() -> None:
    assert write_deadline({}).enforced
    assert write_deadline({}, writes_may_stall=True).enforced
    assert write_deadline({"timeout": "5s"}, writes_may_stall=False).enforced
    assert not write_deadline({}, writes_may_stall=False).enforced
    assert not write_deadline({"timeout": "0s"}, writes_may_stall=False).enforced
    with pytest.raises(BadRequest):
        write_deadline({"timeout": "later"}, writes_may_stall=False)


def test_a_deadline_not_enforced_runs_the_work_on_the_callers_thread() -> None:
    caller = threading.get_ident()
    relaxed = WriteDeadline(time.monotonic() - 1, enforced=False)  # even when past
    assert run_before(relaxed, threading.get_ident) == caller
    enforced = WriteDeadline(time.monotonic() + 5)
    assert run_before(enforced, threading.get_ident) != caller


def test_a_write_budget_is_the_clients_timeout_capped_at_34_seconds() -> None:
    assert write_budget_seconds({"timeout": "1500ms"}) == 1.5
    assert write_budget_seconds({"timeout": "35s"}) == 34.0
    assert write_budget_seconds({"timeout": "0"}) == 34.0
    with pytest.raises(BadRequest):
        write_budget_seconds({"timeout": "1.5"})


def test_work_done_before_the_deadline_returns_its_result_or_its_error() -> None:
    assert run_before(WriteDeadline(time.monotonic() + 5), lambda: 42) == 42

    def fails() -> int:
        raise BadRequest("no")

    with pytest.raises(BadRequest):
        run_before(WriteDeadline(time.monotonic() + 5), fails)


def test_work_past_the_deadline_is_a_timeout_and_still_runs_to_its_end() -> None:
    release = threading.Event()
    finished = threading.Event()

    def slow() -> str:
        release.wait(10)
        finished.set()
        return "stored"

    started = time.monotonic()
    with pytest.raises(Timeout) as caught:
        run_before(WriteDeadline(started + 0.2), slow)
    assert 0.15 < time.monotonic() - started < 2
    status = to_status(caught.value)
    assert (status["code"], status["reason"]) == (504, "Timeout")
    assert status["message"] == (
        "Timeout: request did not complete within requested timeout - context deadline exceeded"
    )
    assert not finished.is_set()
    release.set()
    assert finished.wait(5), "the abandoned write did not run to its end"


def test_writes_on_lmdb_honour_a_timeout_and_reject_a_malformed_one(client: httpx.Client) -> None:
    cms = "/api/v1/namespaces/default/configmaps"
    body = orjson.dumps({"metadata": {"name": "timed"}, "data": {"k": "v"}})
    assert client.post(cms, params={"timeout": "5s"}, content=body).status_code == 201
    r = client.delete(f"{cms}/timed", params={"timeout": "10"})
    assert r.status_code == 400, r.text
    assert r.json()["message"] == (
        'invalid timeout specified in the request URL - time: missing unit in duration "10"'
    )
    assert client.delete(f"{cms}/timed").status_code == 200
    r = client.get(f"{cms}/timed", params={"timeout": "x"})
    assert (r.status_code, r.json()["reason"]) == (400, "BadRequest")
