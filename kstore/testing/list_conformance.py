"""Conformance: list at every resourceVersion and match, with limits, continue tokens, selectors.

Ports of Kubernetes' ``RunTestList`` (all 86 cases, see :mod:`kstore.testing.list_cases`),
``RunTestConsistentList``, ``RunTestGetListNonRecursive`` and ``RunTestGetListRecursivePrefix``.
Expected resourceVersions are exact where Kubernetes states them: an Exact list echoes its RV,
a consistent list reports the current global revision (which counts writes to other prefixes),
and a compacted revision is 410 Expired.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import pytest

from kstore.api.gvk import Object
from kstore.api.selectors import FieldSelector
from kstore.errors import BadRequest, Expired, TooLargeResourceVersion
from kstore.storage.interface import ListOptions, ListResult, ResourceVersionMatch
from kstore.testing.continue_tokens import decode_continue, encode_continue
from kstore.testing.env import ConformanceEnv
from kstore.testing.list_cases import LIST_CASES, ListCase
from kstore.testing.objects import pod, pod_key, rv_of, sorted_by_key

__all__ = [
    "ListSeed",
    "TestConsistentList",
    "TestGetListNonRecursive",
    "TestGetListRecursivePrefix",
    "TestList",
    "assert_continue_token",
    "seed_multi_level_data",
]

_MAX_RV = 2**63 - 1
_TOO_OLD = "The resourceVersion for the provided list is too old"
_CONTINUE_TOO_OLD = "The provided continue parameter is too old to display a consistent list result"


@dataclass(frozen=True)
class ListSeed:
    """The multi-level data of ``RunTestList``: objects and revisions by name."""

    objects: dict[str, Object]
    revisions: dict[str, int]


def seed_multi_level_data(env: ConformanceEnv) -> ListSeed:
    """Kubernetes' ``seedMultiLevelData`` plus its compaction (see list_cases for the names)."""
    pods = env.pods()
    # Some history before the first Pod, as in a shared store: "@initial" is then a real,
    # later compacted, revision and never 0 (which would mean "any").
    env.bump_revision()
    initial = pods.list("/pods/").resource_version
    layout = [
        ("first", "bar"),
        ("second", "bar"),
        ("second", "foo"),
        ("third", "barfoo"),
        ("third", "foo"),
        ("second", "baz"),
    ]
    objects: dict[str, Object] = {}
    for index, (namespace, name) in enumerate(layout):
        obj = pod(name, namespace)
        objects[f"c{index}"] = pods.create(pod_key(obj), obj)

    def assign(current: Object) -> Object:
        return {**current, "spec": {**current.get("spec", {}), "nodeName": "fakeNode"}}

    objects["u"] = pods.guaranteed_update("/pods/first/bar", assign, ignore_not_found=True)
    pods.delete("/pods/second/baz")
    continue_rv = pods.list("/pods/second").resource_version
    current = env.compact_and_bump(rv_of(objects["c0"]))
    revisions = {name: rv_of(obj) for name, obj in objects.items()}
    revisions.update(initial=initial, current=current, future=current + 1, max=_MAX_RV)
    revisions["continue"] = continue_rv
    assert current == continue_rv + 1, "the seed expects one revision per write"
    return ListSeed(objects, revisions)


def _revision(seed: ListSeed, ref: str | int) -> int:
    if isinstance(ref, int):
        return ref
    return seed.revisions[ref.removeprefix("@")]


def _rv_text(seed: ListSeed, value: str) -> str:
    return str(_revision(seed, value)) if value.startswith("@") else value


def assert_continue_token(got: str, start: str, rv: int) -> None:
    """``got`` is exactly Kubernetes' token for ``(start, rv)``."""
    expected = encode_continue(start, rv)
    if got != expected:
        shown = decode_continue(got) if got else "no token"
        pytest.fail(f"continue token {shown!r} != expected {(start, rv)!r}")


def _list_options(seed: ListSeed, tc: ListCase) -> ListOptions:
    token = ""
    if tc.continue_at is not None:
        start, ref = tc.continue_at
        token = encode_continue(start, _revision(seed, ref))
    return ListOptions(
        resource_version=_rv_text(seed, tc.rv),
        # An unknown match is unrepresentable in the enum: pass the raw string on purpose.
        resource_version_match=cast(ResourceVersionMatch, tc.match),
        field_selector=FieldSelector.parse(tc.field),
        limit=tc.limit,
        continue_token=token,
    )


def _check_result(seed: ListSeed, tc: ListCase, result: ListResult) -> None:
    def objects(names: tuple[str, ...]) -> list[Object]:
        return sorted_by_key([seed.objects[name] for name in names])

    if tc.alternatives:
        assert result.items in [objects(a) for a in tc.alternatives], result.items
    else:
        assert result.items == objects(tc.items)
    assert bool(result.continue_token) == tc.more, f"continue token {result.continue_token!r}"
    if tc.continue_exact is not None:
        start, ref = tc.continue_exact
        assert_continue_token(result.continue_token, start, _revision(seed, ref))
    assert result.remaining_item_count == tc.remaining
    if tc.rv_is:
        assert result.resource_version == _revision(seed, tc.rv_is)
    if tc.rv_at_least:
        assert result.resource_version >= _revision(seed, tc.rv_at_least)


class TestList:
    @pytest.mark.parametrize("case", list(LIST_CASES))
    def test_list(self, conformance_env: ConformanceEnv, case: str) -> None:
        tc = LIST_CASES[case]
        if tc.skip_for_watch_cache and conformance_env.capabilities.watch_cache:
            pytest.skip("a watch cache ignores limit at resourceVersion 0 (Kubernetes #108003)")
        seed = seed_multi_level_data(conformance_env)
        pods = conformance_env.pods()
        opts = _list_options(seed, tc)

        if tc.error == "bad-request":
            with pytest.raises(BadRequest):
                pods.list(tc.prefix, opts)
        elif tc.error == "too-large":
            with pytest.raises(TooLargeResourceVersion):
                pods.list(tc.prefix, opts)
        elif tc.error == "too-old":
            with pytest.raises(Expired, match=_TOO_OLD):
                pods.list(tc.prefix, opts)
        elif tc.error == "continue-too-old":
            with pytest.raises(Expired, match=_CONTINUE_TOO_OLD):
                pods.list(tc.prefix, opts)
        else:
            assert not tc.error
            _check_result(seed, tc, pods.list(tc.prefix, opts))


class TestConsistentList:
    def test_list_resource_versions_follow_the_global_revision(
        self, conformance_env: ConformanceEnv
    ) -> None:
        env = conformance_env
        caps = env.capabilities
        pods = env.pods()
        last_write = rv_of(pods.create("/pods/default/foo", pod("foo", "default")))
        env.bump_revision()
        consistent = last_write + 1

        def listed(rv: str = "", token: str = "") -> int:
            opts = ListOptions(resource_version=rv, continue_token=token)
            return pods.list("/pods/empty", opts).resource_version

        # RV "0" before any consistent read: a cache may lag, a backend is current.
        got = listed("0")
        if caps.watch_cache:
            assert got <= last_write
        else:
            assert got == consistent
        env.bump_revision()
        consistent += 1

        # A consistent list reports the global revision, though it moved outside the prefix.
        synced = listed("")
        assert synced == consistent
        env.bump_revision()
        consistent += 1

        # A continue token with rv -1 is a consistent read too.
        assert listed(token=encode_continue("/pods/a", -1)) == consistent
        env.bump_revision()
        consistent += 1

        got = listed("0")
        if caps.watch_cache and caps.consistent_reads_from_cache:
            assert got == synced
        elif caps.watch_cache:
            assert got <= last_write
        else:
            assert got == consistent


@dataclass(frozen=True)
class _NonRecursiveCase:
    key: str = "/pods/test-ns/foo"
    rv: str = ""  # literal, or "@prev" / "@cur"
    match: ResourceVersionMatch = ResourceVersionMatch.UNSET
    field: str = ""
    expect: tuple[str, ...] = ("cur",)  # acceptable results: "none", "prev", "cur"
    too_large: bool = False


_NOT_OLDER = ResourceVersionMatch.NOT_OLDER_THAN
_EXACT = ResourceVersionMatch.EXACT
_NON_RECURSIVE_CASES: dict[str, _NonRecursiveCase] = {
    "existing key": _NonRecursiveCase(),
    "existing key, resourceVersion=0": _NonRecursiveCase(rv="0", expect=("none", "prev", "cur")),
    "existing key, resourceVersion=0, resourceVersionMatch=notOlderThan": _NonRecursiveCase(
        rv="0", match=_NOT_OLDER, expect=("none", "prev", "cur")
    ),
    "existing key, resourceVersion=current": _NonRecursiveCase(rv="@cur"),
    "existing key, resourceVersion=current, resourceVersionMatch=notOlderThan": (
        _NonRecursiveCase(rv="@cur", match=_NOT_OLDER)
    ),
    "existing key, resourceVersion=previous, resourceVersionMatch=notOlderThan": (
        _NonRecursiveCase(rv="@prev", match=_NOT_OLDER, expect=("prev", "cur"))
    ),
    "existing key, resourceVersion=current, resourceVersionMatch=exact": _NonRecursiveCase(
        rv="@cur", match=_EXACT
    ),
    "existing key, resourceVersion=previous, resourceVersionMatch=exact": _NonRecursiveCase(
        rv="@prev", match=_EXACT, expect=("prev",)
    ),
    "existing key, resourceVersion=too high": _NonRecursiveCase(rv=str(_MAX_RV), too_large=True),
    "non-existing key": _NonRecursiveCase(key="/pods/non-existing", expect=("none",)),
    "with matching pod name": _NonRecursiveCase(
        key="/pods/non-existing", field="metadata.name!=foo", expect=("none",)
    ),
    "existing key, resourceVersion=current, with not matching pod name": _NonRecursiveCase(
        rv="@cur", field="metadata.name!=foo", expect=("none",)
    ),
}


class TestGetListNonRecursive:
    @pytest.mark.parametrize("case", list(_NON_RECURSIVE_CASES))
    def test_list_of_one_key(self, conformance_env: ConformanceEnv, case: str) -> None:
        tc = _NON_RECURSIVE_CASES[case]
        env = conformance_env
        pods = env.pods()
        prev = pods.create("/pods/test-ns/foo", pod("foo", "test-ns"))

        def annotate(current: Object) -> Object:
            meta = {**current["metadata"], "annotations": {"version": "second"}}
            return {**current, "metadata": meta}

        cur = pods.guaranteed_update("/pods/test-ns/foo", annotate)
        env.bump_revision()
        refs = {"@prev": str(rv_of(prev)), "@cur": str(rv_of(cur))}
        opts = ListOptions(
            resource_version=refs.get(tc.rv, tc.rv),
            resource_version_match=tc.match,
            field_selector=FieldSelector.parse(tc.field),
            recursive=False,
        )
        if tc.too_large:
            with pytest.raises(TooLargeResourceVersion):
                pods.list(tc.key, opts)
            return
        result = pods.list(tc.key, opts)
        states = {"none": [], "prev": [prev], "cur": [cur]}
        assert result.items in [states[name] for name in tc.expect], result.items
        assert result.resource_version > 0
        assert not result.continue_token


_RECURSIVE_PREFIX_CASES: dict[str, tuple[str, bool, tuple[str, ...]]] = {
    "NonRecursive on resource prefix doesn't return any objects": ("/pods/", False, ()),
    "Recursive on resource prefix returns all objects": ("/pods/", True, ("foo", "foobar", "baz")),
    "NonRecursive on namespace prefix doesn't return any objects": ("/pods/test-ns/", False, ()),
    "Recursive on namespace prefix returns objects in the namespace": (
        "/pods/test-ns/",
        True,
        ("foo", "foobar"),
    ),
    "NonRecursive on object key (prefix) returns object and no other objects with the same "
    "prefix": ("/pods/test-ns/foo", False, ("foo",)),
    "Recursive on object key (prefix) doesn't return anything": ("/pods/test-ns/foo", True, ()),
    "NonRecursive on object key (no-prefix) return object": (
        "/pods/test-ns/foobar",
        False,
        ("foobar",),
    ),
    "Recursive on object key (no-prefix) doesn't return anything": (
        "/pods/test-ns/foobar",
        True,
        (),
    ),
}


class TestGetListRecursivePrefix:
    @pytest.mark.parametrize("list_type", ["Exact", "Consistent", "NotOlderThan"])
    @pytest.mark.parametrize("case", list(_RECURSIVE_PREFIX_CASES))
    def test_recursive_is_a_prefix_with_slash(
        self, conformance_env: ConformanceEnv, case: str, list_type: str
    ) -> None:
        key, recursive, names = _RECURSIVE_PREFIX_CASES[case]
        pods = conformance_env.pods()
        stored = {
            "foo": pods.create("/pods/test-ns/foo", pod("foo", "test-ns")),
            "foobar": pods.create("/pods/test-ns/foobar", pod("foobar", "test-ns")),
            "baz": pods.create("/pods/test-ns2/baz", pod("baz", "test-ns2")),
        }
        last = rv_of(stored["baz"])
        # A cache serves RV "0" from whatever it has seen: a list not older than the last
        # write first makes it current (as RunWatchSemantics does), a no-op for a backend.
        synced = ListOptions(
            resource_version=str(last), resource_version_match=ResourceVersionMatch.NOT_OLDER_THAN
        )
        assert len(pods.list("/pods/", synced).items) == 3
        rv, match = {
            "Exact": (str(last), ResourceVersionMatch.EXACT),
            "Consistent": ("", ResourceVersionMatch.UNSET),
            "NotOlderThan": ("0", ResourceVersionMatch.NOT_OLDER_THAN),
        }[list_type]
        opts = ListOptions(resource_version=rv, resource_version_match=match, recursive=recursive)
        assert pods.list(key, opts).items == [stored[name] for name in names]
