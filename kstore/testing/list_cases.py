"""The 86 cases of Kubernetes' ``RunTestList``, as data over the multi-level seed.

The seed (see :func:`kstore.testing.list_conformance.seed_multi_level_data`) writes, one
revision each: ``c0`` first/bar, ``c1`` second/bar, ``c2`` second/foo, ``c3`` third/barfoo,
``c4`` third/foo, ``c5`` second/baz; then ``u`` (first/bar with spec.nodeName=fakeNode), then
deletes second/baz at revision ``continue``; then compacts at ``c0`` and bumps the revision to
``current`` = continue + 1. Revisions are written ``@name``: ``@initial`` (before the first
Pod, compacted), ``@c0``..``@c5``, ``@u``, ``@continue``, ``@current``, ``@future``
(current + 1) and ``@max`` (2^63 - 1). Expected items name objects (``c0``.. ``c5``, ``u``) and
are compared in key order, resourceVersions included.

Names are Kubernetes' own test names, so a failure maps back to ``store_tests.go``. Two cases
pass an unknown ``resourceVersionMatch`` ("Invalid"), which kstore's enum cannot express; the
suite passes the raw string to check that a backend rejects it rather than treating it as unset.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LIST_CASES", "ListCase"]


@dataclass(frozen=True, kw_only=True)
class ListCase:
    prefix: str = "/pods/"
    rv: str = ""  # literal, or "@name" for a seed revision
    match: str = ""  # a ResourceVersionMatch value, or "Invalid"
    field: str = ""  # field selector
    limit: int = 0
    continue_at: tuple[str, str | int] | None = None  # (start, "@name" or a literal rv)
    skip_for_watch_cache: bool = False  # Kubernetes #108003: the cache ignores limit at RV 0
    items: tuple[str, ...] = ()
    alternatives: tuple[tuple[str, ...], ...] = ()  # any of these item lists is correct
    more: bool = False  # a continue token comes back
    continue_exact: tuple[str, str] | None = None  # the exact token: (start, "@name")
    remaining: int | None = None  # remainingItemCount
    rv_is: str = ""  # the list's resourceVersion, "@name"
    rv_at_least: str = ""
    error: str = ""  # "bad-request", "too-large", "too-old" or "continue-too-old"


_ALL_NOW = ("u", "c1", "c2", "c3", "c4")
_NOT_OLDER = "NotOlderThan"
_EXACT = "Exact"

LIST_CASES: dict[str, ListCase] = {
    "rejects invalid resource version": ListCase(rv="abc", error="bad-request"),
    "rejects resource version and continue token": ListCase(
        rv="1", limit=1, continue_at=("foo", "@continue"), error="bad-request"
    ),
    "rejects resource version set too high": ListCase(rv="@max", error="too-large"),
    "test List on existing key": ListCase(prefix="/pods/first/", items=("u",)),
    "test List on existing key with resource version set to 0": ListCase(
        prefix="/pods/first/", rv="0", alternatives=((), ("u",))
    ),
    "test List on existing key with resource version set before update, match=Exact": ListCase(
        prefix="/pods/first/", rv="@c0", match=_EXACT, items=("c0",), rv_is="@c0"
    ),
    "test List on existing key with resource version set before creation, match=Exact": ListCase(
        prefix="/pods/second/", rv="@c0", match=_EXACT, items=(), rv_is="@c0"
    ),
    "test List on existing key with resource version set after creation, match=Exact": ListCase(
        prefix="/pods/second/", rv="@c1", match=_EXACT, items=("c1",), rv_is="@c1"
    ),
    "test List on existing key with resource version set before first write, match=Exact": (
        ListCase(prefix="/pods/first/", rv="@initial", match=_EXACT, error="too-old")
    ),
    "test List on existing key with resource version set to 0, match=NotOlderThan": ListCase(
        prefix="/pods/first/", rv="0", match=_NOT_OLDER, alternatives=((), ("u",))
    ),
    "test List on existing key with resource version set to 0, match=Invalid": ListCase(
        prefix="/pods/first/", rv="0", match="Invalid", error="bad-request"
    ),
    "test List on existing key with resource version set before first write, "
    "match=NotOlderThan": ListCase(
        prefix="/pods/first/", rv="@initial", match=_NOT_OLDER, alternatives=((), ("u",))
    ),
    "test List on existing key with resource version set before first write, match=Invalid": (
        ListCase(prefix="/pods/first/", rv="@initial", match="Invalid", error="bad-request")
    ),
    "test List on existing key with resource version set to current resource version": ListCase(
        prefix="/pods/first/", rv="@continue", items=("u",)
    ),
    "test List on existing key with resource version set to current resource version, "
    "match=Exact": ListCase(
        prefix="/pods/first/", rv="@continue", match=_EXACT, items=("u",), rv_is="@continue"
    ),
    "test List on existing key with resource version set to current resource version, "
    "match=NotOlderThan": ListCase(
        prefix="/pods/first/", rv="@continue", match=_NOT_OLDER, items=("u",)
    ),
    "test List on non-existing key": ListCase(prefix="/pods/non-existing/", items=()),
    "test List with pod name matching": ListCase(
        prefix="/pods/first/", field="metadata.name!=bar", items=()
    ),
    "test List with pod name matching with resource version set to current resource version, "
    "match=NotOlderThan": ListCase(
        prefix="/pods/first/",
        field="metadata.name!=bar",
        rv="@continue",
        match=_NOT_OLDER,
        items=(),
    ),
    "test List with limit": ListCase(
        prefix="/pods/second/",
        limit=1,
        items=("c1",),
        more=True,
        continue_exact=("bar\x00", "@current"),
        remaining=1,
        rv_is="@current",
    ),
    "test List with limit at current resource version": ListCase(
        prefix="/pods/second/",
        limit=1,
        rv="@continue",
        items=("c1",),
        more=True,
        continue_exact=("bar\x00", "@continue"),
        remaining=1,
        rv_is="@continue",
    ),
    "test List with limit at current resource version and match=Exact": ListCase(
        prefix="/pods/second/",
        limit=1,
        rv="@continue",
        match=_EXACT,
        items=("c1",),
        more=True,
        continue_exact=("bar\x00", "@continue"),
        remaining=1,
        rv_is="@continue",
    ),
    "test List with limit at current resource version and match=NotOlderThan": ListCase(
        prefix="/pods/second/",
        limit=1,
        rv="@continue",
        match=_NOT_OLDER,
        items=("c1",),
        more=True,
        remaining=1,
        rv_at_least="@continue",
    ),
    "test List with limit at resource version 0": ListCase(
        prefix="/pods/second/",
        limit=1,
        rv="0",
        skip_for_watch_cache=True,
        items=("c1",),
        more=True,
        remaining=1,
        rv_at_least="@continue",
    ),
    "test List with limit at resource version 0 match=NotOlderThan": ListCase(
        prefix="/pods/second/",
        limit=1,
        rv="0",
        match=_NOT_OLDER,
        skip_for_watch_cache=True,
        items=("c1",),
        more=True,
        remaining=1,
        rv_at_least="@continue",
    ),
    "test List with limit at resource version before created and match=Exact": ListCase(
        prefix="/pods/second/", limit=1, rv="@c0", match=_EXACT, items=(), rv_is="@c0"
    ),
    "test List with limit at resource version after created and match=Exact": ListCase(
        prefix="/pods/second/", limit=1, rv="@c1", match=_EXACT, items=("c1",), rv_is="@c1"
    ),
    "test List with pregenerated continue token": ListCase(
        prefix="/pods/second/", limit=1, continue_at=("foo", "@continue"), items=("c2",)
    ),
    "ignores resource version 0 for List with pregenerated continue token": ListCase(
        prefix="/pods/second/", rv="0", limit=1, continue_at=("foo", "@continue"), items=("c2",)
    ),
    "test List with multiple levels of directories and expect flattened result": ListCase(
        prefix="/pods/second/", items=("c1", "c2")
    ),
    "test List with multiple levels of directories and expect flattened result with current "
    "resource version and match=NotOlderThan": ListCase(
        prefix="/pods/second/", rv="@continue", match=_NOT_OLDER, items=("c1", "c2")
    ),
    # Kubernetes returns a continue token whenever keys remain after the last item returned,
    # whether or not they match the selector.
    "test List with filter returning only one item, ensure only a single page returned": ListCase(
        field="metadata.name=barfoo", limit=1, items=("c3",), more=True
    ),
    "test List with filter returning only one item, ensure only a single page returned with "
    "current resource version and match=NotOlderThan": ListCase(
        field="metadata.name=barfoo",
        limit=1,
        rv="@continue",
        match=_NOT_OLDER,
        items=("c3",),
        more=True,
        rv_at_least="@continue",
    ),
    "test List with filter returning only one item, covers the entire list": ListCase(
        field="metadata.name=barfoo", limit=2, items=("c3",)
    ),
    "test List with filter returning only one item, covers the entire list with current "
    "resource version and match=NotOlderThan": ListCase(
        field="metadata.name=barfoo",
        limit=2,
        rv="@continue",
        match=_NOT_OLDER,
        items=("c3",),
        rv_at_least="@continue",
    ),
    "test List with filter returning only one item, covers the entire list, with resource "
    "version 0": ListCase(
        field="metadata.name=barfoo", limit=2, rv="0", alternatives=((), ("c3",))
    ),
    "test List with filter returning two items, more pages possible": ListCase(
        field="metadata.name=bar", limit=2, items=("u", "c1"), more=True
    ),
    "test List with filter returning two items, more pages possible with current resource "
    "version and match=NotOlderThan": ListCase(
        field="metadata.name=bar",
        limit=2,
        rv="@continue",
        match=_NOT_OLDER,
        items=("u", "c1"),
        more=True,
    ),
    "filter returns two items split across multiple pages": ListCase(
        field="metadata.name=foo", limit=2, items=("c2", "c4")
    ),
    "filter returns two items split across multiple pages with current resource version and "
    "match=NotOlderThan": ListCase(
        field="metadata.name=foo", limit=2, rv="@continue", match=_NOT_OLDER, items=("c2", "c4")
    ),
    # A start without "\x00" is inclusive: the list starts at third/barfoo itself.
    "filter returns one item for last page, ends on last item, not full": ListCase(
        field="metadata.name=foo",
        limit=2,
        continue_at=("third/barfoo", "@continue"),
        items=("c4",),
    ),
    "filter returns one item for last page, starts on last item, full": ListCase(
        field="metadata.name=foo",
        limit=1,
        continue_at=("third/barfoo", "@continue"),
        items=("c4",),
    ),
    "filter returns one item for last page, starts on last item, partial page": ListCase(
        field="metadata.name=foo",
        limit=2,
        continue_at=("third/barfoo", "@continue"),
        items=("c4",),
    ),
    "filter returns two items, page size equal to total list size": ListCase(
        field="metadata.name=foo", limit=5, items=("c2", "c4")
    ),
    "filter returns two items, page size equal to total list size with current resource "
    "version and match=NotOlderThan": ListCase(
        field="metadata.name=foo", limit=5, rv="@continue", match=_NOT_OLDER, items=("c2", "c4")
    ),
    "filter returns one item, page size equal to total list size": ListCase(
        field="metadata.name=barfoo", limit=5, items=("c3",)
    ),
    "filter returns one item, page size equal to total list size with current resource "
    "version and match=NotOlderThan": ListCase(
        field="metadata.name=barfoo", limit=5, rv="@continue", match=_NOT_OLDER, items=("c3",)
    ),
    "list all items": ListCase(items=_ALL_NOW),
    "list all items with current resource version and match=NotOlderThan": ListCase(
        rv="@continue", match=_NOT_OLDER, items=_ALL_NOW
    ),
    "verify list returns updated version of object; filter returns one item, page size equal "
    "to total list size with current resource version and match=NotOlderThan": ListCase(
        field="spec.nodeName=fakeNode", limit=5, rv="@continue", match=_NOT_OLDER, items=("u",)
    ),
    "verify list does not return deleted object; filter for deleted object, page size equal "
    "to total list size with current resource version and match=NotOlderThan": ListCase(
        field="metadata.name=baz", limit=5, rv="@continue", match=_NOT_OLDER, items=()
    ),
    "test consistent List": ListCase(prefix="/pods/empty", rv="", items=(), rv_is="@current"),
    "test non-consistent List": ListCase(
        prefix="/pods/empty", rv="0", items=(), rv_at_least="@initial"
    ),
    # match=Exact
    "test List with resource version set before first write, match=Exact": ListCase(
        rv="@initial", match=_EXACT, error="too-old"
    ),
    "test List with resource version of first write, match=Exact": ListCase(
        rv="@c0", match=_EXACT, items=("c0",), rv_is="@c0"
    ),
    "test List with resource version of second write, match=Exact": ListCase(
        rv="@c1", match=_EXACT, items=("c0", "c1"), rv_is="@c1"
    ),
    "test List with resource version of third write, match=Exact": ListCase(
        rv="@c2", match=_EXACT, items=("c0", "c1", "c2"), rv_is="@c2"
    ),
    "test List with resource version of fourth write, match=Exact": ListCase(
        rv="@c3", match=_EXACT, items=("c0", "c1", "c2", "c3"), rv_is="@c3"
    ),
    "test List with resource version of fifth write, match=Exact": ListCase(
        rv="@c4", match=_EXACT, items=("c0", "c1", "c2", "c3", "c4"), rv_is="@c4"
    ),
    "test List with resource version of six write, match=Exact": ListCase(
        rv="@c5", match=_EXACT, items=("c0", "c1", "c2", "c3", "c4", "c5"), rv_is="@c5"
    ),
    "test List with resource version of seventh write, match=Exact": ListCase(
        rv="@u", match=_EXACT, items=("u", "c1", "c2", "c3", "c4", "c5"), rv_is="@u"
    ),
    "test List with resource version of eight write, match=Exact": ListCase(
        rv="@continue", match=_EXACT, items=_ALL_NOW, rv_is="@continue"
    ),
    "test List with resource version after writes, match=Exact": ListCase(
        rv="@current", match=_EXACT, items=_ALL_NOW, rv_is="@current"
    ),
    "test List with future resource version, match=Exact": ListCase(
        rv="@future", match=_EXACT, error="too-large"
    ),
    # limit, match=Exact
    "test List with limit, resource version of second write, match=Exact": ListCase(
        limit=1,
        rv="@c1",
        match=_EXACT,
        items=("c0",),
        more=True,
        continue_exact=("first/bar\x00", "@c1"),
        remaining=1,
        rv_is="@c1",
    ),
    "test List with limit, resource version of third write, match=Exact": ListCase(
        limit=2,
        rv="@c2",
        match=_EXACT,
        items=("c0", "c1"),
        more=True,
        continue_exact=("second/bar\x00", "@c2"),
        remaining=1,
        rv_is="@c2",
    ),
    "test List with limit, resource version of fourth write, match=Exact": ListCase(
        limit=4, rv="@c3", match=_EXACT, items=("c0", "c1", "c2", "c3"), rv_is="@c3"
    ),
    "test List with limit, resource version of fifth write, match=Exact": ListCase(
        limit=1,
        rv="@c4",
        match=_EXACT,
        items=("c0",),
        more=True,
        continue_exact=("first/bar\x00", "@c4"),
        remaining=4,
        rv_is="@c4",
    ),
    "test List with limit, resource version of six write, match=Exact": ListCase(
        limit=2,
        rv="@c5",
        match=_EXACT,
        items=("c0", "c1"),
        more=True,
        continue_exact=("second/bar\x00", "@c5"),
        remaining=4,
        rv_is="@c5",
    ),
    "test List with limit, resource version of seventh write, match=Exact": ListCase(
        limit=4,
        rv="@u",
        match=_EXACT,
        items=("u", "c1", "c5", "c2"),
        more=True,
        continue_exact=("second/foo\x00", "@u"),
        remaining=2,
        rv_is="@u",
    ),
    "test List with limit, resource version of eight write, match=Exact": ListCase(
        limit=8, rv="@continue", match=_EXACT, items=_ALL_NOW, rv_is="@continue"
    ),
    "test List with limit, resource version after writes, match=Exact": ListCase(
        limit=1,
        rv="@current",
        match=_EXACT,
        items=("u",),
        more=True,
        continue_exact=("first/bar\x00", "@current"),
        remaining=4,
        rv_is="@current",
    ),
    # Continue
    "test List with continue, resource version before first write": ListCase(
        limit=1, continue_at=("first/bar\x00", "@initial"), error="continue-too-old"
    ),
    "test List with continue, resource version of first write": ListCase(
        limit=1, continue_at=("first/bar\x00", "@c0"), items=(), rv_is="@c0"
    ),
    "test List with continue, resource version of second write": ListCase(
        limit=1, continue_at=("first/bar\x00", "@c1"), items=("c1",), rv_is="@c1"
    ),
    "test List with continue, resource version of third write": ListCase(
        limit=2, continue_at=("second/bar\x00", "@c2"), items=("c2",), rv_is="@c2"
    ),
    "test List with continue, resource version of fifth write": ListCase(
        limit=1,
        continue_at=("first/bar\x00", "@c4"),
        items=("c1",),
        more=True,
        continue_exact=("second/bar\x00", "@c4"),
        remaining=3,
        rv_is="@c4",
    ),
    "test List with continue, resource version of six write": ListCase(
        limit=2,
        continue_at=("second/bar\x00", "@c5"),
        items=("c5", "c2"),
        more=True,
        continue_exact=("second/foo\x00", "@c5"),
        remaining=2,
        rv_is="@c5",
    ),
    "test List with continue, resource version of seventh write": ListCase(
        limit=4, continue_at=("second/foo\x00", "@u"), items=("c3", "c4"), rv_is="@u"
    ),
    "test List with continue, resource version after writes": ListCase(
        limit=1,
        continue_at=("first/bar\x00", "@current"),
        items=("c1",),
        more=True,
        continue_exact=("second/bar\x00", "@current"),
        remaining=3,
        rv_is="@current",
    ),
    "test List with continue from second pod, negative resource version gives consistent read": (
        ListCase(
            continue_at=("first/bar\x00", -1), items=("c1", "c2", "c3", "c4"), rv_is="@current"
        )
    ),
    "test List with continue from second pod and limit, negative resource version gives "
    "consistent read": ListCase(
        limit=2,
        continue_at=("first/bar\x00", -1),
        items=("c1", "c2"),
        more=True,
        continue_exact=("second/foo\x00", "@current"),
        remaining=2,
        rv_is="@current",
    ),
    "test List with continue from third pod, negative resource version gives consistent read": (
        ListCase(continue_at=("second/foo\x00", -1), items=("c3", "c4"), rv_is="@current")
    ),
    "test List with continue from empty fails": ListCase(
        continue_at=("", "@continue"), error="bad-request"
    ),
    "test List with continue from first pod, empty resource version fails": ListCase(
        continue_at=("first/bar\x00", 0), error="bad-request"
    ),
    "test List with negative rv fails": ListCase(rv="-1", error="bad-request"),
}

assert len(LIST_CASES) == 86, "every RunTestList case, no more, no less"
