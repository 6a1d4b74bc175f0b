"""Conformance: guaranteed_update, the compare-and-swap loop, and a race that hammers it.

Ports of Kubernetes' ``RunTestGuaranteedUpdate``, ``...WithTTL``, ``...ChecksStoredData``,
``...WithConflict`` and ``...WithSuggestionAndConflict``, plus kstore guarantees stated in
:meth:`kstore.storage.interface.Storage.guaranteed_update`: conflicts never reach the caller, an
update whose encoding equals the stored bytes writes nothing and keeps the resourceVersion
(unless the transformer reports the bytes stale), preconditions fail with Conflict, an error
raised by ``try_update`` aborts with that very error, and ``ttl_seconds`` None drops a TTL.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import pytest

from kstore.api.gvk import Object
from kstore.errors import Conflict, NotFound
from kstore.storage.interface import EventType, ListOptions, Preconditions
from kstore.testing.env import ConformanceEnv
from kstore.testing.objects import pod, pod_key, rv_of, with_rv
from kstore.testing.transformers import LeadingSpaceTransformer, StaleTransformer
from kstore.testing.watching import (
    CALL_WAIT,
    EVENT_WAIT,
    expect_event,
    next_event,
    run_bounded,
    watching,
)

__all__ = ["TestGuaranteedUpdate", "TestGuaranteedUpdateConcurrency", "TestGuaranteedUpdateRace"]


def _with_meta(obj: Object, **changes: object) -> Object:
    """A copy of ``obj`` with metadata fields replaced (None removes the field)."""
    meta = {**obj["metadata"], **changes}
    return {**obj, "metadata": {k: v for k, v in meta.items() if v is not None}}


@dataclass(frozen=True)
class _UpdateCase:
    key: str = "/pods/test-ns/foo"
    ignore_not_found: bool = False
    preconditions: Preconditions | None = None
    annotations: bool = True  # the update adds annotations; otherwise it writes the same data
    self_link: bool = False
    stale: bool = False
    expect_not_found: bool = False
    expect_conflict: bool = False


_UPDATE_CASES: dict[str, _UpdateCase] = {
    "non-existing key, ignore_not_found=False": _UpdateCase(
        key="/pods/non-existing", expect_not_found=True
    ),
    "non-existing key, ignore_not_found=True": _UpdateCase(
        key="/pods/non-existing", ignore_not_found=True
    ),
    "existing key": _UpdateCase(),
    "same data": _UpdateCase(annotations=False),
    "same data, a selfLink": _UpdateCase(annotations=False, self_link=True),
    "same data, stale": _UpdateCase(annotations=False, stale=True),
    "UID match": _UpdateCase(annotations=False, preconditions=Preconditions(uid="A")),
    "UID mismatch": _UpdateCase(
        annotations=False, preconditions=Preconditions(uid="B"), expect_conflict=True
    ),
}


class TestGuaranteedUpdate:
    @pytest.mark.parametrize("case", list(_UPDATE_CASES))
    def test_guaranteed_update(self, conformance_env: ConformanceEnv, case: str) -> None:
        tc = _UPDATE_CASES[case]
        env = conformance_env
        stored = env.pods().create("/pods/test-ns/foo", pod("foo", "test-ns", uid="A"))
        pods = env.pods(StaleTransformer(env.transformer)) if tc.stale else env.pods()
        inputs: list[Object] = []
        annotations = {"version": case} if tc.annotations else None

        def update(current: Object) -> Object:
            inputs.append(current)
            out = _with_meta(stored, annotations=annotations)
            if tc.self_link:
                out = _with_meta(out, selfLink="testlink")
            return out

        def call() -> Object:
            return pods.guaranteed_update(
                tc.key, update, ignore_not_found=tc.ignore_not_found, preconditions=tc.preconditions
            )

        if tc.expect_not_found:
            with pytest.raises(NotFound):
                call()
            return
        if tc.expect_conflict:
            with pytest.raises(Conflict, match="Precondition failed: UID in precondition: B"):
                call()
            assert env.pods().get(tc.key) == stored
            return

        out = call()

        if tc.key != "/pods/test-ns/foo":
            assert inputs[0] == {}, "a missing key with ignore_not_found starts from {}"
        assert out["metadata"].get("annotations") == annotations
        assert "selfLink" not in out["metadata"], "selfLink is never persisted"
        assert env.pods().get(tc.key) == out
        writes = tc.annotations or tc.stale or tc.key != "/pods/test-ns/foo"
        if writes:
            assert rv_of(out) > rv_of(stored), "an update that writes takes a new revision"
        else:
            assert rv_of(out) == rv_of(stored), "an update that changes nothing must not write"
            assert out == stored

    def test_resource_version_precondition(self, conformance_env: ConformanceEnv) -> None:
        pods = conformance_env.pods()
        created = pods.create("/pods/test-ns/foo", pod("foo", "test-ns"))
        updated = pods.guaranteed_update(
            "/pods/test-ns/foo", lambda cur: _with_meta(cur, labels={"v": "2"})
        )
        with pytest.raises(Conflict, match="Precondition failed: ResourceVersion in precondition"):
            pods.guaranteed_update(
                "/pods/test-ns/foo",
                lambda cur: _with_meta(cur, labels={"v": "3"}),
                preconditions=Preconditions(resource_version=str(rv_of(created))),
            )
        out = pods.guaranteed_update(
            "/pods/test-ns/foo",
            lambda cur: _with_meta(cur, labels={"v": "3"}),
            preconditions=Preconditions(resource_version=str(rv_of(updated))),
        )
        assert out["metadata"]["labels"] == {"v": "3"}

    def test_error_from_try_update_aborts_without_writing(
        self, conformance_env: ConformanceEnv
    ) -> None:
        pods = conformance_env.pods()
        stored = pods.create("/pods/test-ns/foo", pod("foo", "test-ns"))
        before = pods.current_revision()
        refusal = ValueError("admission says no")

        def refuse(current: Object) -> Object:
            raise refusal

        with pytest.raises(ValueError) as raised:
            pods.guaranteed_update("/pods/test-ns/foo", refuse)
        assert raised.value is refusal
        assert pods.get("/pods/test-ns/foo") == stored
        assert pods.current_revision() == before

    def test_update_compares_with_the_stored_bytes(self, conformance_env: ConformanceEnv) -> None:
        # The stored bytes are valid but not what the codec writes (a leading space): an update
        # with equal content must rewrite them; the next identical update must not write; a
        # transformer that reports the bytes stale forces a write again.
        env = conformance_env
        obj = pod("foo", "test-ns")
        initial = env.pod_writer(LeadingSpaceTransformer(env.transformer)).create(pod_key(obj), obj)
        pods = env.pods()

        out = pods.guaranteed_update(pod_key(obj), lambda cur: obj, cached_existing=initial)
        assert rv_of(out) > rv_of(initial), "non-canonical stored bytes must be rewritten"

        again = pods.guaranteed_update(pod_key(obj), lambda cur: obj, cached_existing=out)
        assert again == out, "identical bytes must not be written again"

        stale = env.pods(StaleTransformer(env.transformer))
        forced = stale.guaranteed_update(pod_key(obj), lambda cur: obj, cached_existing=out)
        assert rv_of(forced) > rv_of(out), "stale bytes must be rewritten even when unchanged"

    def test_update_creating_with_ttl_expires(self, conformance_env: ConformanceEnv) -> None:
        pods = conformance_env.pods()
        obj = pod("foo", "test-ns")
        out = pods.guaranteed_update(
            pod_key(obj), lambda cur: obj, ignore_not_found=True, ttl_seconds=1
        )
        opts = ListOptions(resource_version=str(rv_of(out)), recursive=False)
        with watching(pods, pod_key(obj), opts) as watcher:
            event = next_event(watcher, timeout=1 + EVENT_WAIT)
        assert event.type is EventType.DELETED
        assert event.object == with_rv(out, event.resource_version)

    @pytest.mark.slow
    def test_update_without_ttl_removes_the_expiry(self, conformance_env: ConformanceEnv) -> None:
        pods = conformance_env.pods()
        obj = pod("foo", "test-ns")
        pods.create(pod_key(obj), obj, ttl_seconds=1)
        kept = pods.guaranteed_update(pod_key(obj), lambda cur: _with_meta(cur, labels={"a": "b"}))
        # Past the old TTL and some reaper slack, the object is still there and unchanged.
        time.sleep(2.5)
        assert pods.get(pod_key(obj)) == kept


class TestGuaranteedUpdateConcurrency:
    def test_conflicting_update_is_retried_with_fresh_state(
        self, conformance_env: ConformanceEnv
    ) -> None:
        # The second update computes its result, then the first one commits: the second write
        # must conflict and its try_update must run again, exactly twice in all.
        pods = conformance_env.pods()
        key = "/pods/test-ns/foo"
        pods.create(key, pod("foo", "test-ns"))
        second_entered = threading.Event()
        first_done = threading.Event()
        second_calls: list[Object] = []

        def first_update(current: Object) -> Object:
            if not second_entered.wait(CALL_WAIT):
                raise AssertionError("the second update never ran its try_update")
            return _with_meta(current, labels={"first": "1"})

        def second_update(current: Object) -> Object:
            second_calls.append(current)
            if len(second_calls) == 1:
                second_entered.set()
                if not first_done.wait(CALL_WAIT):
                    raise AssertionError("try_update calls are serialised: no optimistic loop")
            labels = {**(current["metadata"].get("labels") or {}), "second": "2"}
            return _with_meta(current, labels=labels)

        def run_first() -> Object:
            try:
                return pods.guaranteed_update(key, first_update)
            finally:
                first_done.set()

        first_result: list[Object] = []
        thread = threading.Thread(target=lambda: first_result.append(run_first()), daemon=True)
        thread.start()
        out = run_bounded(lambda: pods.guaranteed_update(key, second_update), "second update")
        thread.join(CALL_WAIT)

        assert first_result, "the first update did not finish"
        assert len(second_calls) == 2, f"try_update ran {len(second_calls)} times, expected 2"
        assert second_calls[1] == first_result[0], "the retry must start from the fresh state"
        assert out["metadata"]["labels"] == {"first": "1", "second": "2"}
        assert rv_of(out) > rv_of(first_result[0])

    def test_stale_suggestion_is_retried_with_a_fresh_read(
        self, conformance_env: ConformanceEnv
    ) -> None:
        pods = conformance_env.pods()
        key = "/pods/test-ns/foo"
        original = pods.create(key, pod("foo", "test-ns"))
        updated = pods.guaranteed_update(key, lambda cur: _with_meta(cur, generation=2))

        conflicts: list[Object] = []

        def bump_from_two(current: Object) -> Object:
            if current["metadata"].get("generation") != 2:
                if conflicts:
                    raise AssertionError("a second stale input after a fresh read")
                conflicts.append(current)
                raise Conflict("Operation cannot be fulfilled: stale object")
            return _with_meta(current, generation=3)

        out = pods.guaranteed_update(key, bump_from_two, cached_existing=original)
        assert out["metadata"]["generation"] == 3
        assert rv_of(out) > rv_of(updated)

        attempts: list[Object] = []
        refusal = ValueError("validation or admission error")

        def refuse(current: Object) -> Object:
            attempts.append(current)
            raise refusal

        with pytest.raises(ValueError) as raised:
            pods.guaranteed_update(key, refuse, cached_existing=out)
        assert raised.value is refusal
        # A backend may ignore the suggestion, in which case it tries twice at most.
        assert 1 <= len(attempts) <= 2


class TestGuaranteedUpdateRace:
    THREADS = 6
    UPDATES_PER_THREAD = 20

    def test_concurrent_updates_lose_nothing_and_revisions_increase(
        self, conformance_env: ConformanceEnv
    ) -> None:
        pods = conformance_env.pods()
        key = "/pods/race/counter"
        created = pods.create(key, pod("counter", "race", annotations={"count": "0"}))
        total = self.THREADS * self.UPDATES_PER_THREAD
        start = threading.Barrier(self.THREADS)
        results: list[list[Object]] = [[] for _ in range(self.THREADS)]
        failures: list[BaseException] = []

        def increment(current: Object) -> Object:
            count = int(current["metadata"]["annotations"]["count"]) + 1
            return _with_meta(current, annotations={"count": str(count)})

        def hammer(index: int) -> None:
            try:
                start.wait(CALL_WAIT)
                for _ in range(self.UPDATES_PER_THREAD):
                    results[index].append(pods.guaranteed_update(key, increment))
            except BaseException as exc:  # reported by the test thread
                failures.append(exc)

        opts = ListOptions(resource_version=str(rv_of(created)), recursive=False)
        with watching(pods, key, opts) as watcher:
            threads = [threading.Thread(target=hammer, args=(i,)) for i in range(self.THREADS)]
            for thread in threads:
                thread.start()
            deadline = time.monotonic() + 60
            for thread in threads:
                thread.join(max(0.0, deadline - time.monotonic()))
            assert not any(t.is_alive() for t in threads), "updates did not finish in 60s"
            assert not failures, f"an update failed: {failures[0]!r}"
            events = [expect_event(watcher, EventType.MODIFIED) for _ in range(total)]

        for per_thread in results:
            revisions = [rv_of(o) for o in per_thread]
            assert revisions == sorted(set(revisions)), "one caller saw revisions go back"
        outcomes = sorted(
            (rv_of(o), int(o["metadata"]["annotations"]["count"]))
            for per_thread in results
            for o in per_thread
        )
        assert [count for _, count in outcomes] == list(range(1, total + 1)), "lost update"
        assert len({rv for rv, _ in outcomes}) == total, "two updates shared a revision"
        final = pods.get(key)
        assert final["metadata"]["annotations"]["count"] == str(total)
        assert rv_of(final) == outcomes[-1][0]
        # The watch saw every update once, in order.
        assert [e.resource_version for e in events] == [rv for rv, _ in outcomes]
        counts = [int(e.object["metadata"]["annotations"]["count"]) for e in events]
        assert counts == list(range(1, total + 1))
