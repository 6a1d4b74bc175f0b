"""Conformance: stored bytes that cannot be transformed or decoded.

Ports of Kubernetes' ``RunTestTransformationFailure``, ``RunTestGetListWithoutErrorAggregation``,
``RunTestWatchError`` and ``RunWatchErrorIsBlockingFurtherEvents``, plus the same checks for
bytes that pass the transformer but are not an object (written with
:meth:`ConformanceEnv.write_stored_bytes`). The rules: every operation that has to read such a
value fails with ``CorruptObject`` naming the key (a list aborts at the first one, in key
order); the value stays as it was; a watch that meets one delivers a single ERROR event (500)
and ends, with nothing after it.
"""

from __future__ import annotations

import threading

import pytest

from kstore.api.gvk import Object
from kstore.errors import CorruptObject, KStoreError
from kstore.storage.interface import EventType, ListOptions
from kstore.testing.env import ConformanceEnv
from kstore.testing.objects import pod, rv_of
from kstore.testing.transformers import (
    FailingTransformer,
    KeyFailingTransformer,
    PrefixTransformer,
)
from kstore.testing.watching import CALL_WAIT, EVENT_WAIT, expect_event, expect_watch_ended

__all__ = ["TestCorruptData", "TestCorruptWatch"]


def _unchanged(current: Object) -> Object:
    return current


class TestCorruptData:
    def test_value_that_fails_the_transformer_is_a_corrupt_object(
        self, conformance_env: ConformanceEnv
    ) -> None:
        env = conformance_env
        pods = env.pods()
        pods.create("/pods/first/bar", pod("bar", "first"))
        baz = pod("baz", "second")
        env.pod_writer(PrefixTransformer(b"otherprefix!")).create("/pods/second/baz", baz)

        with pytest.raises(CorruptObject, match="/pods/second/baz"):
            pods.list("/pods/")
        with pytest.raises(CorruptObject):
            pods.get("/pods/second/baz")
        with pytest.raises(CorruptObject):
            pods.guaranteed_update("/pods/second/baz", _unchanged)
        # With a suggestion and no change, the write must not silently succeed either.
        with pytest.raises(KStoreError):
            pods.guaranteed_update("/pods/second/baz", _unchanged, cached_existing=baz)
        with pytest.raises(CorruptObject):
            pods.delete("/pods/second/baz")
        with pytest.raises(CorruptObject):
            pods.get("/pods/second/baz")

    def test_list_aborts_at_the_first_corrupt_object(self, conformance_env: ConformanceEnv) -> None:
        env = conformance_env
        pods = env.pods()
        for i in range(1, 8):
            pods.create(f"/pods/ns/foo-{i:06d}", pod(f"foo-{i:06d}", "ns"))
        assert len(pods.list("/pods/ns/").items) == 7

        def even(key: str) -> bool:
            return int(key.rsplit("-", 1)[-1]) % 2 == 0

        failing = env.pods(KeyFailingTransformer(env.transformer, even))
        with pytest.raises(CorruptObject) as raised:
            failing.list("/pods/ns/")
        assert "/pods/ns/foo-000002" in raised.value.message
        assert "/pods/ns/foo-000004" not in raised.value.message

    def test_bytes_that_do_not_decode_are_a_corrupt_object(
        self, conformance_env: ConformanceEnv
    ) -> None:
        env = conformance_env
        pods = env.pods()
        good = pods.create("/pods/ns/good", pod("good", "ns"))
        garbage = env.transformer.prefix + b"\x00\xffnot an object"
        rv = env.write_stored_bytes("/pods/ns/bad", garbage)
        assert rv > rv_of(good)

        with pytest.raises(CorruptObject):
            pods.get("/pods/ns/bad")
        with pytest.raises(CorruptObject, match="/pods/ns/bad"):
            pods.list("/pods/ns")
        with pytest.raises(CorruptObject):
            pods.guaranteed_update("/pods/ns/bad", _unchanged)
        with pytest.raises(CorruptObject):
            pods.delete("/pods/ns/bad")
        assert pods.get("/pods/ns/good") == good
        assert pods.list("/pods/ns/good", ListOptions(recursive=False)).items == [good]


class TestCorruptWatch:
    def test_watch_that_cannot_read_an_event_gets_an_error(
        self, conformance_env: ConformanceEnv
    ) -> None:
        env = conformance_env
        pods = env.pods()
        start = pods.list("/pods/", ListOptions(resource_version="0")).resource_version
        pods.guaranteed_update(
            "/pods/test-ns/foo", lambda _: pod("foo", "test-ns"), ignore_not_found=True
        )
        failing = env.pods(FailingTransformer(env.transformer))
        opts = ListOptions(resource_version=str(start), recursive=False)
        watcher = failing.watch("/pods/test-ns/foo", opts)
        try:
            error = expect_event(watcher, EventType.ERROR)
            assert error.object.get("kind") == "Status"
            assert error.object.get("code") == 500, error.object
            expect_watch_ended(watcher)
        finally:
            watcher.stop()

    def test_error_blocks_further_events(self, conformance_env: ConformanceEnv) -> None:
        # bar is unreadable through the "other-prefix" view while baz, written through it, is
        # readable: a watch from foo's revision meets bar first and must end there, so no
        # concurrent watch may ever deliver baz.
        env = conformance_env
        pods = env.pods()
        foo = pods.create("/pods/test/foo", pod("foo", "test"))
        pods.create("/pods/test/bar", pod("bar", "test"))
        other = PrefixTransformer(b"other-prefix")
        env.pod_writer(other).create("/pods/test/baz", pod("baz", "test"))
        view = env.pods(other)
        opts = ListOptions(resource_version=str(rv_of(foo)))
        unexpected: list[str] = []
        errors: list[BaseException] = []

        def watch_once() -> None:
            try:
                watcher = view.watch("/pods/", opts)
                try:
                    seen_errors = 0
                    while True:
                        event = watcher.next(timeout=EVENT_WAIT)
                        if event is None:
                            break
                        if event.type is EventType.ERROR:
                            seen_errors += 1
                        else:
                            unexpected.append(f"{event.type} {event.object}")
                    if seen_errors != 1:
                        unexpected.append(f"{seen_errors} ERROR events instead of one")
                    if not watcher.stopped:
                        unexpected.append("the watch did not end after its error")
                finally:
                    watcher.stop()
            except BaseException as exc:  # reported by the test thread
                errors.append(exc)

        threads = [threading.Thread(target=watch_once, daemon=True) for _ in range(10)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(CALL_WAIT)
        assert not any(t.is_alive() for t in threads), "a watch neither delivered nor ended"
        assert not errors, f"watch failed: {errors[0]!r}"
        assert not unexpected, unexpected[:3]
