"""Conformance: paged lists stay at one revision, across filters, writes and compaction.

Ports of Kubernetes' ``RunTestListContinuation``, ``RunTestListPaginationRareObject``,
``RunTestListContinuationWithFilter``, ``RunTestListInconsistentContinuation``,
``RunTestListPaging`` and ``RunTestListResourceVersionMatch``. The rules: ``limit`` counts
matching items; every page of a list is read at the first page's revision; a continue token
whose revision was compacted is 410 Expired carrying a fresh token (rv -1) that resumes the
list, inconsistently, at the latest revision.
"""

from __future__ import annotations

import itertools
from concurrent.futures import ThreadPoolExecutor

import pytest

from kstore.api.gvk import Object
from kstore.api.selectors import FieldSelector, LabelSelector
from kstore.errors import Expired
from kstore.storage.interface import ListOptions, ListResult, ResourceVersionMatch
from kstore.testing.continue_tokens import decode_continue
from kstore.testing.env import ConformanceEnv
from kstore.testing.objects import pod, pod_key, rv_of
from kstore.testing.transformers import ReproducingTransformer
from kstore.testing.watching import run_bounded

__all__ = ["TestListPaging", "TestListResourceVersionMatch"]


def _create_all(env: ConformanceEnv, objs: list[Object]) -> list[Object]:
    pods = env.pods()
    return [pods.create(pod_key(obj), obj) for obj in objs]


class TestListPaging:
    def test_list_continuation(self, conformance_env: ConformanceEnv) -> None:
        first_bar, second_bar, second_foo = _create_all(
            conformance_env,
            [pod("bar", "first"), pod("bar", "second"), pod("foo", "second")],
        )
        current = rv_of(second_foo)
        pods = conformance_env.pods()

        page = pods.list("/pods/", ListOptions(limit=1))
        assert page.items == [first_bar]
        assert page.continue_token
        assert page.resource_version == current
        from_second = page.continue_token

        rest = pods.list("/pods/", ListOptions(continue_token=from_second))
        assert rest.items == [second_bar, second_foo]
        assert not rest.continue_token
        assert rest.resource_version == current

        page = pods.list("/pods/", ListOptions(limit=1, continue_token=from_second))
        assert page.items == [second_bar]
        assert page.continue_token
        assert page.resource_version == current

        last = pods.list("/pods/", ListOptions(limit=1, continue_token=page.continue_token))
        assert last.items == [second_foo]
        assert not last.continue_token
        assert last.resource_version == current

    def test_limit_counts_matching_items_only(self, conformance_env: ConformanceEnv) -> None:
        # 1000 Pods, one matching, and it is the last key: one page, no continue token.
        names = [f"pod-{i}" for i in range(1000)]
        pods = conformance_env.pods()
        with ThreadPoolExecutor(max_workers=8) as pool:
            stored = list(pool.map(lambda n: pods.create(f"/pods/rare/{n}", pod(n, "rare")), names))
        opts = ListOptions(limit=1, field_selector=FieldSelector.parse("metadata.name=pod-999"))
        result = pods.list("/pods/", opts)
        assert result.items == [stored[999]]
        assert not result.continue_token

    def test_list_continuation_with_filter(self, conformance_env: ConformanceEnv) -> None:
        foo1, _, foo3, foo4 = _create_all(
            conformance_env,
            [pod("foo", "1"), pod("bar", "2"), pod("foo", "3"), pod("foo", "4")],
        )
        pods = conformance_env.pods()
        not_bar = FieldSelector.parse("metadata.name!=bar")

        page = pods.list("/pods/", ListOptions(limit=2, field_selector=not_bar))
        assert page.items == [foo1, foo3]
        assert page.continue_token
        assert page.resource_version == rv_of(foo4)
        assert page.remaining_item_count is None, "no remaining count with a selector"

        opts = ListOptions(limit=2, field_selector=not_bar, continue_token=page.continue_token)
        rest = pods.list("/pods/", opts)
        assert rest.items == [foo4]
        assert not rest.continue_token
        assert rest.resource_version == rv_of(foo4)

    def test_compacted_continue_is_expired_with_an_inconsistent_token(
        self, conformance_env: ConformanceEnv
    ) -> None:
        env = conformance_env
        first_bar, second_bar, _ = _create_all(
            env, [pod("bar", "first"), pod("bar", "second"), pod("foo", "second")]
        )
        pods = env.pods()
        # Kubernetes pages from RV "0"; a watch cache ignores limit there (Kubernetes #108003),
        # so it starts with a consistent first page instead. Either way the token is pinned.
        first_rv = "" if env.capabilities.watch_cache else "0"
        page = pods.list("/pods/", ListOptions(resource_version=first_rv, limit=1))
        assert page.items == [first_bar]
        assert page.continue_token

        new_foo = pods.guaranteed_update(
            "/pods/second/foo", lambda cur: pod("foo", "second", labels={"state": "new"})
        )
        env.compact_and_bump(rv_of(new_foo))

        stale = ListOptions(resource_version="0", continue_token=page.continue_token)
        with pytest.raises(Expired, match="The provided continue parameter is too old ") as raised:
            pods.list("/pods/", stale)
        fresh = raised.value.continue_token
        assert fresh, "the 410 must carry a token to continue inconsistently"
        start, rv = decode_continue(fresh)
        assert (start, rv) == (decode_continue(page.continue_token)[0], -1)

        second = pods.list(
            "/pods/", ListOptions(resource_version="0", limit=1, continue_token=fresh)
        )
        assert second.items == [second_bar]
        assert second.continue_token
        assert second.resource_version >= rv_of(new_foo)

        opts = ListOptions(resource_version="0", limit=1, continue_token=second.continue_token)
        third = pods.list("/pods/", opts)
        assert third.items == [new_foo]
        assert not third.continue_token
        assert third.resource_version == second.resource_version

    def test_pages_do_not_see_objects_created_after_the_first(
        self, conformance_env: ConformanceEnv
    ) -> None:
        pods = conformance_env.pods()
        _create_all(conformance_env, [pod(f"test-{i}", "paging") for i in range(4)])
        names: list[str] = []
        token = ""
        for calls in itertools.count(1):
            page = pods.list("/pods/", ListOptions(limit=1, continue_token=token))
            names.extend(o["metadata"]["name"] for o in page.items)
            if not page.continue_token:
                break
            if calls == 2:
                pods.create("/pods/paging/test-5", pod("test-5", "paging"))
            token = page.continue_token
            assert calls < 10, "paging does not end"
        assert calls == 4
        assert names == ["test-0", "test-1", "test-2", "test-3"]


class TestListResourceVersionMatch:
    def test_lists_are_snapshots_despite_concurrent_writes(
        self, conformance_env: ConformanceEnv
    ) -> None:
        # Every read of a stored value writes a new Pod first: a list must still be exactly
        # the state at its own resourceVersion, as an Exact list at that RV proves.
        env = conformance_env
        pods = env.pods()
        counter = itertools.count(1)

        def create_next() -> None:
            index = next(counter)
            labels = {"even": "true" if index % 2 == 0 else "false"}
            obj = pod(f"pod-{index}", "ns", labels=labels)
            pods.create(pod_key(obj), obj)

        for _ in range(5):
            create_next()
        reading = env.pods(ReproducingTransformer(env.transformer, create_next, limit=500))
        even = LabelSelector.parse("even=true")

        def list_at(rv: str, match: ResourceVersionMatch) -> ListResult:
            opts = ListOptions(
                label_selector=even, limit=4, resource_version=rv, resource_version_match=match
            )
            return run_bounded(lambda: reading.list("/pods/", opts), "a list that writes")

        first = list_at("", ResourceVersionMatch.UNSET)
        exact = list_at(str(first.resource_version), ResourceVersionMatch.EXACT)
        assert exact == first

        newer = list_at(str(first.resource_version), ResourceVersionMatch.NOT_OLDER_THAN)
        assert list_at(str(newer.resource_version), ResourceVersionMatch.EXACT) == newer
