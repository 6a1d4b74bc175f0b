"""List on LMDB: one revision across pages, limit and continue, selectors, every
resourceVersion/resourceVersionMatch case."""

from __future__ import annotations

import pytest

from kstore.api.selectors import FieldSelector, LabelSelector
from kstore.errors import BadRequest, Expired, TooLargeResourceVersion
from kstore.storage import _lmdb_list
from kstore.storage.continue_token import decode_continue, encode_continue
from kstore.storage.interface import ListOptions, ResourceVersionMatch, Storage
from kstore.storage.lmdb import LmdbBackend

from .conftest import pod, rv

EXACT = ResourceVersionMatch.EXACT
NOT_OLDER = ResourceVersionMatch.NOT_OLDER_THAN


def names(items: list[dict[str, object]]) -> list[str]:
    return [f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in items]  # type: ignore[index]


@pytest.fixture
def seeded(pods: Storage) -> dict[str, int]:
    """Kubernetes' seedMultiLevelData, revisions by name."""
    revs: dict[str, int] = {}
    for ns, name in [
        ("first", "bar"),
        ("second", "bar"),
        ("second", "foo"),
        ("third", "barfoo"),
        ("third", "foo"),
        ("second", "baz"),
    ]:
        revs[f"{ns}/{name}"] = rv(pods.create(f"/pods/{ns}/{name}", pod(ns, name)))
    revs["updated"] = rv(
        pods.guaranteed_update("/pods/first/bar", lambda o: {**o, "spec": {"nodeName": "fakeNode"}})
    )
    revs["deleted"] = rv(pods.delete("/pods/second/baz"))
    return revs


def test_latest_list_is_sorted_by_key_at_the_current_revision(
    backend: LmdbBackend, pods: Storage, seeded: dict[str, int]
) -> None:
    result = pods.list("/pods")
    assert names(result.items) == [
        "first/bar",
        "second/bar",
        "second/foo",
        "third/barfoo",
        "third/foo",
    ]
    assert result.resource_version == backend.current_revision()
    assert result.continue_token == "" and result.remaining_item_count is None


def test_first_page_token_and_remaining_count_match_kubernetes(
    backend: LmdbBackend, pods: Storage, seeded: dict[str, int]
) -> None:
    current = backend.current_revision()
    page = pods.list("/pods/second", ListOptions(limit=1))
    assert names(page.items) == ["second/bar"]
    assert page.resource_version == current
    assert page.continue_token == encode_continue("/pods/second/bar\x00", "/pods/second/", current)
    assert page.remaining_item_count == 1


def test_exact_revision_reads_history_and_echoes_the_revision(
    pods: Storage, seeded: dict[str, int]
) -> None:
    at_second = pods.list(
        "/pods",
        ListOptions(resource_version=str(seeded["second/bar"]), resource_version_match=EXACT),
    )
    assert names(at_second.items) == ["first/bar", "second/bar"]
    assert at_second.resource_version == seeded["second/bar"]
    at_update = pods.list(
        "/pods",
        ListOptions(resource_version=str(seeded["updated"]), resource_version_match=EXACT, limit=4),
    )
    assert names(at_update.items) == ["first/bar", "second/bar", "second/baz", "second/foo"]
    assert at_update.items[0]["spec"] == {"nodeName": "fakeNode"}
    assert at_update.remaining_item_count == 2
    before_update = pods.list(
        "/pods",
        ListOptions(resource_version=str(seeded["second/baz"]), resource_version_match=EXACT),
    )
    assert "spec" not in before_update.items[0]


def test_legacy_match_with_limit_reads_at_the_exact_revision(
    pods: Storage, seeded: dict[str, int]
) -> None:
    page = pods.list("/pods", ListOptions(resource_version=str(seeded["second/bar"]), limit=1))
    assert names(page.items) == ["first/bar"]
    assert page.resource_version == seeded["second/bar"]
    assert page.remaining_item_count == 1
    token = decode_continue(page.continue_token, "/pods/")
    assert token.resource_version == seeded["second/bar"]
    assert token.start_key == "/pods/first/bar\x00"


def test_not_older_than_reads_latest(
    backend: LmdbBackend, pods: Storage, seeded: dict[str, int]
) -> None:
    result = pods.list(
        "/pods",
        ListOptions(resource_version=str(seeded["first/bar"]), resource_version_match=NOT_OLDER),
    )
    assert result.resource_version == backend.current_revision()
    assert len(result.items) == 5


@pytest.mark.parametrize("match", [ResourceVersionMatch.UNSET, NOT_OLDER, EXACT])
def test_future_revision_is_too_large(
    backend: LmdbBackend, pods: Storage, seeded: dict[str, int], match: ResourceVersionMatch
) -> None:
    future = backend.current_revision() + 1
    with pytest.raises(TooLargeResourceVersion) as caught:
        pods.list(
            "/pods",
            ListOptions(resource_version=str(future), resource_version_match=match, limit=2),
        )
    assert caught.value.message == f"Too large resource version: {future}, current: {future - 1}"


def test_get_with_a_future_revision_is_too_large(
    backend: LmdbBackend, pods: Storage, seeded: dict[str, int]
) -> None:
    from kstore.storage.interface import GetOptions

    with pytest.raises(TooLargeResourceVersion):
        pods.get(
            "/pods/first/bar", GetOptions(resource_version=str(backend.current_revision() + 1))
        )


@pytest.mark.parametrize("bad", ["-1", "abc"])
def test_invalid_revision_is_bad_request(pods: Storage, bad: str) -> None:
    with pytest.raises(BadRequest, match="invalid resource version"):
        pods.list("/pods", ListOptions(resource_version=bad))


def test_unknown_match_is_bad_request(pods: Storage) -> None:
    with pytest.raises(BadRequest, match="unknown ResourceVersionMatch value"):
        pods.list("/pods", ListOptions(resource_version="1", resource_version_match="Sometimes"))  # type: ignore[arg-type]


def test_continue_with_a_resource_version_is_bad_request(
    pods: Storage, seeded: dict[str, int]
) -> None:
    token = pods.list("/pods", ListOptions(limit=1)).continue_token
    with pytest.raises(BadRequest, match="specifying resource version is not allowed"):
        pods.list("/pods", ListOptions(limit=1, continue_token=token, resource_version="5"))
    # "0" is ignored alongside a token.
    assert (
        len(
            pods.list(
                "/pods", ListOptions(limit=1, continue_token=token, resource_version="0")
            ).items
        )
        == 1
    )


def test_invalid_continue_token_is_bad_request(pods: Storage) -> None:
    with pytest.raises(BadRequest, match="invalid continue token: continue key is not valid"):
        pods.list("/pods", ListOptions(continue_token="garbage!"))


def test_all_pages_are_read_at_the_first_pages_revision(
    backend: LmdbBackend, pods: Storage, seeded: dict[str, int]
) -> None:
    first = pods.list("/pods", ListOptions(limit=2))
    pods.create("/pods/second/zzz", pod("second", "zzz"))
    pods.delete("/pods/third/foo")
    pods.guaranteed_update("/pods/second/foo", lambda o: {**o, "spec": {"nodeName": "late"}})
    seen = names(first.items)
    token = first.continue_token
    while token:
        page = pods.list("/pods", ListOptions(limit=2, continue_token=token))
        assert page.resource_version == first.resource_version
        seen += names(page.items)
        for item in page.items:
            assert item.get("spec", {}).get("nodeName") != "late"
        token = page.continue_token
    assert seen == ["first/bar", "second/bar", "second/foo", "third/barfoo", "third/foo"]


def test_limit_counts_matching_items_and_filtered_pages_have_no_remaining_count(
    pods: Storage,
) -> None:
    for ns, name in [("1", "foo"), ("2", "bar"), ("3", "foo"), ("4", "foo")]:
        pods.create(f"/pods/{ns}/{name}", pod(ns, name))
    selector = FieldSelector.parse("metadata.name!=bar")
    first = pods.list("/pods", ListOptions(limit=2, field_selector=selector))
    assert names(first.items) == ["1/foo", "3/foo"]
    assert first.continue_token and first.remaining_item_count is None
    second = pods.list(
        "/pods", ListOptions(limit=2, field_selector=selector, continue_token=first.continue_token)
    )
    assert names(second.items) == ["4/foo"]
    assert second.continue_token == ""
    assert second.resource_version == first.resource_version


def test_rare_match_scans_through_many_chunks(
    pods: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_lmdb_list, "_MAX_FILTER_CHUNK", 16)
    for i in range(200):
        pods.create(f"/pods/ns/pod-{i:03d}", pod("ns", f"pod-{i:03d}"))
    result = pods.list(
        "/pods", ListOptions(limit=1, field_selector=FieldSelector.parse("metadata.name=pod-199"))
    )
    assert names(result.items) == ["ns/pod-199"]
    assert result.continue_token == ""


def test_unpaged_list_larger_than_a_chunk_is_complete(
    backend: LmdbBackend, pods: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_lmdb_list, "_LIST_CHUNK", 7)
    for i in range(50):
        pods.create(f"/pods/ns/p{i:02d}", pod("ns", f"p{i:02d}", nodeName="a" if i % 2 else "b"))
    everything = pods.list("/pods")
    assert [o["metadata"]["name"] for o in everything.items] == [f"p{i:02d}" for i in range(50)]
    at = backend.current_revision()
    pods.create("/pods/ns/p99", pod("ns", "p99"))
    exact = pods.list("/pods", ListOptions(resource_version=str(at), resource_version_match=EXACT))
    assert len(exact.items) == 50
    odd = pods.list("/pods", ListOptions(field_selector=FieldSelector.parse("spec.nodeName=a")))
    assert len(odd.items) == 25


def test_label_selector_filters(pods: Storage) -> None:
    pods.create(
        "/pods/ns/a",
        {**pod("ns", "a"), "metadata": {"name": "a", "namespace": "ns", "labels": {"x": "1"}}},
    )
    pods.create("/pods/ns/b", pod("ns", "b"))
    result = pods.list("/pods", ListOptions(label_selector=LabelSelector.parse("x=1")))
    assert names(result.items) == ["ns/a"]


def test_recursive_prefix_does_not_match_longer_names(pods: Storage) -> None:
    pods.create("/pods/test-ns/foo", pod("test-ns", "foo"))
    pods.create("/pods/test-ns/foobar", pod("test-ns", "foobar"))
    assert pods.list("/pods/test-ns/foo").items == []
    exact = pods.list("/pods/test-ns/foo", ListOptions(recursive=False))
    assert names(exact.items) == ["test-ns/foo"]
    assert names(pods.list("/pods/test-ns").items) == ["test-ns/foo", "test-ns/foobar"]
    assert pods.list("/pods/", ListOptions(recursive=False)).items == []


def test_non_recursive_list_at_an_exact_revision(pods: Storage) -> None:
    first = pods.create("/pods/ns/a", pod("ns", "a"))
    pods.guaranteed_update("/pods/ns/a", lambda o: {**o, "spec": {"nodeName": "x"}})
    old = pods.list(
        "/pods/ns/a",
        ListOptions(recursive=False, resource_version=str(rv(first)), resource_version_match=EXACT),
    )
    assert old.items == [first]
    assert old.resource_version == rv(first)


def test_empty_prefix_lists_nothing_at_the_current_revision(
    backend: LmdbBackend, pods: Storage, seeded: dict[str, int]
) -> None:
    result = pods.list("/pods/empty")
    assert result.items == [] and result.resource_version == backend.current_revision()


def test_exact_revision_before_compaction_is_expired(
    backend: LmdbBackend, pods: Storage, seeded: dict[str, int]
) -> None:
    backend.compact(seeded["first/bar"] + 1)
    with pytest.raises(Expired):
        pods.list(
            "/pods",
            ListOptions(resource_version=str(seeded["first/bar"]), resource_version_match=EXACT),
        )


def test_keys_with_nul_or_too_long_are_rejected(pods: Storage) -> None:
    with pytest.raises(BadRequest, match="NUL"):
        pods.create("/pods/ns/a\x00b", pod("ns", "a"))
    with pytest.raises(BadRequest, match="longer than"):
        pods.create("/pods/ns/" + "a" * 600, pod("ns", "a"))
