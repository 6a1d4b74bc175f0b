"""A LIST page by label answers the same whether the cache walks its keys or reads its label
groups (kstore.cache.label_groups), through adds, label changes and deletes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kstore.api.selectors import FieldSelector, LabelSelector
from kstore.cache import label_groups
from kstore.cache.label_groups import LabelGroups
from kstore.cache.watch_cache import WatchCache
from kstore.storage.interface import EventType
from kstore.testing.objects import pod, pod_attrs, with_rv

_LABELS = [{}, {"app": "a"}, {"app": "b"}, {"app": "a", "tier": "web"}, {"tier": "web"}]
_SELECTORS = ["app=a", "app!=a", "tier", "!tier", "app in (a,b)", "app=a,tier=web", "app=zz"]
_NAMES = [f"p{i:02d}" for i in range(40)]
_NAMESPACES = ["ns1", "ns2"]

_step = st.tuples(
    st.sampled_from(["put", "delete"]),
    st.sampled_from(_NAMES),
    st.sampled_from(_NAMESPACES),
    st.integers(0, len(_LABELS) - 1),
)


def _expected(
    state: dict[tuple[str, str], int], selector: LabelSelector, namespace: str | None, limit: int
) -> tuple[list[str], bool]:
    keys = sorted(
        f"/pods/{ns}/{name}" for (ns, name) in state if namespace is None or ns == namespace
    )
    page: list[str] = []
    has_more = False
    for position, key in enumerate(keys):
        ns, name = key.split("/")[2:]
        if selector.matches(_LABELS[state[(ns, name)]]):
            page.append(key)
            if limit and len(page) >= limit:
                has_more = position < len(keys) - 1
                break
    return page, has_more


@settings(max_examples=150, deadline=None)
@given(
    steps=st.lists(_step, min_size=1, max_size=120),
    selector=st.sampled_from(_SELECTORS),
    namespace=st.sampled_from([None, *_NAMESPACES]),
    limit=st.sampled_from([0, 1, 3, 10]),
    grouped=st.booleans(),
)
def test_pages_by_label_match_a_walk_of_every_key(
    steps: list[tuple[str, str, str, int]],
    selector: str,
    namespace: str | None,
    limit: int,
    grouped: bool,
) -> None:
    # Either way for every example: the groups always, or the walk always.
    walk_per_group = label_groups._WALK_PER_GROUP
    label_groups._WALK_PER_GROUP = 0 if grouped else 10**9
    try:
        _check_pages(steps, selector, namespace, limit)
    finally:
        label_groups._WALK_PER_GROUP = walk_per_group


def _check_pages(
    steps: list[tuple[str, str, str, int]], selector: str, namespace: str | None, limit: int
) -> None:
    cache = WatchCache(resource_prefix="/pods/", get_attrs=pod_attrs)
    cache.replace([], revision=1)
    state: dict[tuple[str, str], int] = {}
    revision = 1
    for op, name, ns, labels in steps:
        revision += 1
        if op == "put":
            kind = EventType.MODIFIED if (ns, name) in state else EventType.ADDED
            obj = with_rv(pod(name, ns, labels=dict(_LABELS[labels])), revision)
            cache.apply(kind, obj, revision)
            state[(ns, name)] = labels
        elif (ns, name) in state:
            cache.apply(EventType.DELETED, with_rv(pod(name, ns), revision), revision)
            del state[(ns, name)]
    parsed = LabelSelector.parse(selector)
    found = cache.list(
        "/pods/" if namespace is None else f"/pods/{namespace}/",
        recursive=True,
        label_selector=parsed,
        field_selector=FieldSelector(),
        limit=limit,
    )
    page, has_more = _expected(state, parsed, namespace, limit)
    assert [
        f"/pods/{o['metadata']['namespace']}/{o['metadata']['name']}" for o in found.objects
    ] == page
    assert found.has_more == has_more


def test_groups_decline_when_labels_are_nearly_unique_per_key() -> None:
    groups = LabelGroups()
    sets = [{"pod": str(i)} for i in range(10)]
    for i, labels in enumerate(sets):
        groups.add(labels, f"k{i}")
    assert groups.select(lambda labels: True, "k", "l", span=10) is None
    assert list(groups.select(lambda labels: labels["pod"] in "37", "k", "l", span=100) or []) == [
        "k3",
        "k7",
    ]
    for i, labels in enumerate(sets):
        groups.discard(labels, f"k{i}")
    assert len(groups) == 0
