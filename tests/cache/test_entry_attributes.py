"""The selector attributes cache entries keep: equal label sets shared, a name and namespace
read from the key, and selectors (lists, watches, indexes) answering as with plain dicts."""

from __future__ import annotations

import pytest

from kstore.api.selectors import FieldSelector, LabelSelector
from kstore.cache.attributes import KeyFields, LabelSets, compact_fields
from kstore.cache.watch_cache import WatchCache
from kstore.testing.objects import with_rv

EVERYTHING = LabelSelector.everything()


def configmap(name: str, namespace: str, labels: dict[str, str]) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
    }


def name_and_namespace(obj: dict[str, object]) -> tuple[dict[str, str], dict[str, str]]:
    meta = obj["metadata"]
    assert isinstance(meta, dict)
    return dict(meta.get("labels") or {}), {
        "metadata.name": meta["name"],
        "metadata.namespace": meta["namespace"],
    }


def test_key_fields_read_name_and_namespace_from_the_key_and_equal_the_dict() -> None:
    fields = compact_fields(
        "/configmaps/", "/configmaps/ns/web", {"metadata.name": "web", "metadata.namespace": "ns"}
    )
    assert isinstance(fields, KeyFields)
    assert fields == {"metadata.name": "web", "metadata.namespace": "ns"}
    assert fields.get("metadata.name") == "web"
    assert fields.get("spec.nodeName", "") == ""
    assert fields["metadata.namespace"] == "ns"
    with pytest.raises(KeyError):
        fields["metadata.uid"]
    cluster = compact_fields("/nodes/", "/nodes/n1", {"metadata.name": "n1"})
    assert isinstance(cluster, KeyFields)
    assert dict(cluster) == {"metadata.name": "n1"}
    assert len(cluster) == 1


@pytest.mark.parametrize(
    ("key", "fields"),
    [
        # A field of the kind's own: a dict.
        (
            "/pods/ns/p",
            {"metadata.name": "p", "metadata.namespace": "ns", "spec.nodeName": "n1"},
        ),
        # A key that does not spell the fields (a custom key function): a dict.
        ("/pods/other/p", {"metadata.name": "p", "metadata.namespace": "ns"}),
        ("/pods/ns/p", {"metadata.name": "q", "metadata.namespace": "ns"}),
        ("/pods/ns/p", {"metadata.name": "p", "metadata.namespace": ""}),
    ],
)
def test_other_fields_stay_a_dict_equal_to_what_was_given(key: str, fields: dict[str, str]) -> None:
    kept = compact_fields("/pods/", key, fields)
    assert type(kept) is dict
    assert kept == fields


def test_equal_label_sets_are_one_shared_dict() -> None:
    sets = LabelSets()
    one = sets.shared({"app": "web", "tier": "front"})
    assert sets.shared({"app": "web", "tier": "front"}) is one
    assert sets.shared({"app": "db"}) is not one
    assert one == {"app": "web", "tier": "front"}
    assert len(sets) == 2
    # A value no label may have (from a store written by other means) is kept as it is.
    odd: dict[str, object] = {"app": ["a", "b"]}
    assert sets.shared(odd) == odd  # type: ignore[arg-type]


def test_a_cache_of_shared_attributes_answers_selectors_as_before() -> None:
    cache = WatchCache(
        resource_prefix="/configmaps/",
        get_attrs=name_and_namespace,
        indexed_labels=["app"],
        indexed_fields=["metadata.namespace"],
    )
    objects = [
        with_rv(configmap(f"c{i}", f"ns{i % 2}", {"app": "web" if i % 3 else "db"}), i + 2)
        for i in range(9)
    ]
    cache.replace(objects, revision=20)
    entries = [cache.get(f"/configmaps/ns{i % 2}/c{i}")[0] for i in range(9)]
    assert all(e is not None for e in entries)
    webs = [e for e in entries if e is not None and e.labels == {"app": "web"}]
    assert len(webs) == 6 and all(e.labels is webs[0].labels for e in webs)

    def names(label: str, field: str) -> list[str]:
        listed = cache.list(
            "/configmaps/",
            recursive=True,
            label_selector=LabelSelector.parse(label) if label else EVERYTHING,
            field_selector=FieldSelector.parse(field),
        )
        return [obj["metadata"]["name"] for obj in listed.objects]

    assert names("app=web", "metadata.namespace=ns1") == ["c1", "c5", "c7"]
    assert names("", "metadata.name=c4") == ["c4"]
    assert names("app=db", "metadata.name!=c0") == ["c6", "c3"]  # key order: ns0 first
    assert names("", "metadata.namespace=ns0,metadata.name=c3") == []
