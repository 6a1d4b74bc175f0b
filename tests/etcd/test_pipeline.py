"""The call pipeline of the etcd client, on stand-in gRPC methods: a lone call is made
directly, overlapping calls are sent as futures by the sender thread (their callers' other
work running meanwhile), every caller gets its own answer or error, and a closed pipeline
refuses calls."""

from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Any

import pytest

from kstore.storage._etcd_pipeline import Pipeline, PipelineClosed


class _Method:
    """A unary method answering ``request * 2`` (or raising for negatives), blocking or as a
    future; futures complete when ``release`` is set, so calls can be made to overlap."""

    def __init__(self) -> None:
        self.direct = 0
        self.futures = 0
        self.release = threading.Event()
        self.release.set()
        self.lock = threading.Lock()

    def _answer(self, request: int) -> int:
        if request < 0:
            raise ValueError(f"bad request {request}")
        return request * 2

    def __call__(self, request: int, *, timeout: float, metadata: Any) -> int:
        with self.lock:
            self.direct += 1
        self.release.wait(timeout)
        return self._answer(request)

    def future(self, request: int, *, timeout: float, metadata: Any) -> Future[int]:
        with self.lock:
            self.futures += 1
        out: Future[int] = Future()

        def complete() -> None:
            self.release.wait(timeout)
            try:
                out.set_result(self._answer(request))
            except ValueError as exc:
                out.set_exception(exc)

        threading.Thread(target=complete, daemon=True).start()
        return out


def test_a_lone_call_is_made_directly() -> None:
    pipeline, method = Pipeline("test"), _Method()
    try:
        assert pipeline.call(method, 21, timeout=5.0, metadata=()) == 42
        assert (method.direct, method.futures) == (1, 0)
    finally:
        pipeline.close()


def test_overlapping_calls_go_through_the_sender_and_each_gets_its_answer() -> None:
    pipeline, method = Pipeline("test"), _Method()
    method.release.clear()  # hold every answer until all callers are in
    results: dict[int, object] = {}
    meanwhile: list[int] = []

    def caller(value: int) -> None:
        try:
            results[value] = pipeline.call(
                method, value, timeout=10.0, metadata=(), meanwhile=lambda: meanwhile.append(1)
            )
        except ValueError as exc:
            results[value] = exc

    threads = [threading.Thread(target=caller, args=(v,)) for v in range(-3, 29)]
    try:
        for thread in threads:
            thread.start()
        while method.direct + method.futures < len(threads):
            threading.Event().wait(0.01)
        method.release.set()
        for thread in threads:
            thread.join(10.0)
    finally:
        pipeline.close()
    assert method.direct == 1 and method.futures == len(threads) - 1
    # Queued callers did their own work while their request was in flight; the lone one not.
    assert len(meanwhile) == len(threads) - 1
    for value in range(-3, 29):
        if value < 0:
            assert isinstance(results[value], ValueError)
        else:
            assert results[value] == value * 2


def test_a_closed_pipeline_refuses_new_calls() -> None:
    pipeline, method = Pipeline("test"), _Method()
    pipeline.close()
    with pytest.raises(PipelineClosed):
        pipeline.call(method, 1, timeout=1.0, metadata=())
