"""CRD conversion through a webhook, in process: the ConversionReview sent, the checks of the
answer (with Kubernetes' messages), the kind definition built from a ``Webhook`` CRD, and a
registry storing and reading objects across versions. The webhook here is a Python function
standing where the HTTPS call is made, but for ``kstore.open``'s test, which calls a real HTTPS
webhook (the served API: tests/clients/test_crd_conversion_webhook.py)."""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

import kstore
from kstore.api.custom_kinds import kind_definition_for
from kstore.api.gvk import Object
from kstore.api.kinds import builtin_scheme
from kstore.api.scheme import KindDefinition, Scheme
from kstore.errors import InternalError, Invalid, NotFound
from kstore.registry.conversion_webhook import crd_kind_definitions, review_post_for
from kstore.registry.interface import CreateOptions
from kstore.storage.lmdb import LmdbBackend
from tests.crd_conversion import GROUP, KIND, PLURAL, backend_crd, convert_review
from tests.registry.conftest import make_registry
from tests.registry.objects import ctx
from tests.registry.test_storage_layout import _raw
from tests.webhook_server import WebhookServer

Answer = Callable[[dict[str, Any]], dict[str, Any]]


class Hook:
    """A conversion webhook as a function: records the reviews, answers with ``answer``."""

    def __init__(self, answer: Answer = convert_review) -> None:
        self.reviews: list[dict[str, Any]] = []
        self.answer = answer

    def __call__(self, review: Object) -> Object:
        self.reviews.append(copy.deepcopy(review))
        return self.answer(copy.deepcopy(review))


def _crd(**kwargs: Any) -> dict[str, Any]:
    crd = backend_crd({"url": "https://127.0.0.1:1/convert"}, **kwargs)
    crd["status"] = {
        "acceptedNames": {
            "plural": PLURAL,
            "singular": "backend",
            "kind": KIND,
            "listKind": f"{KIND}List",
        }
    }
    return crd


def _definition(hook: Hook, crd: dict[str, Any] | None = None) -> KindDefinition:
    definition = kind_definition_for(crd or _crd(), review_post=hook)
    assert definition is not None
    return definition


def _scheme(hook: Hook) -> Scheme:
    return builtin_scheme().with_definitions(add=[_definition(hook)])


def _backend(version: str, spec: dict[str, Any], name: str = "a") -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{version}",
        "kind": KIND,
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": spec,
    }


def test_objects_convert_across_three_versions_through_the_storage_version() -> None:
    hook = Hook()
    scheme = _scheme(hook)
    hub = scheme.to_hub(_backend("v1alpha1", {"hostPort": "db:5432"}))
    assert hub["spec"] == {"hostname": "db", "port": 5432}  # the storage version's shape
    assert scheme.from_hub(hub, "v1beta1")["spec"] == {"host": "db", "port": 5432}
    back = scheme.convert(_backend("v1beta1", {"host": "db", "port": 5432}), f"{GROUP}/v1alpha1")
    assert back["spec"] == {"hostPort": "db:5432"}
    assert back["apiVersion"] == f"{GROUP}/v1alpha1"
    first = hook.reviews[0]
    assert first["apiVersion"] == "apiextensions.k8s.io/v1"
    assert first["kind"] == "ConversionReview"
    assert first["request"]["desiredAPIVersion"] == f"{GROUP}/v1"
    assert first["request"]["objects"] == [_backend("v1alpha1", {"hostPort": "db:5432"})]
    assert len({r["request"]["uid"] for r in hook.reviews}) == len(hook.reviews)


def test_the_storage_version_is_never_sent_to_the_webhook() -> None:
    hook = Hook()
    scheme = _scheme(hook)
    hub = scheme.to_hub(_backend("v1", {"hostname": "db", "port": 1}))
    assert scheme.from_hub(hub, "v1")["spec"] == {"hostname": "db", "port": 1}
    assert hook.reviews == []
    definition = scheme.definition(GROUP, KIND)
    assert definition.conversion_blocks


def test_a_page_of_objects_is_converted_in_one_review() -> None:
    hook = Hook()
    scheme = _scheme(hook)
    hubs = [
        scheme.to_hub(_backend("v1", {"hostname": f"h{i}", "port": i}, name=f"e{i}"))
        for i in range(3)
    ]
    out = scheme.from_hub_many(hubs, "v1alpha1")
    assert [o["spec"] for o in out] == [{"hostPort": f"h{i}:{i}"} for i in range(3)]
    assert [o["apiVersion"] for o in out] == [f"{GROUP}/v1alpha1"] * 3
    assert len(hook.reviews) == 1
    assert [o["metadata"]["name"] for o in hook.reviews[0]["request"]["objects"]] == [
        "e0",
        "e1",
        "e2",
    ]


def test_a_crd_without_the_webhook_strategy_only_rewrites_the_api_version() -> None:
    hook = Hook()
    crd = _crd()
    crd["spec"]["conversion"] = {"strategy": "None"}
    definition = _definition(hook, crd)
    assert not definition.conversion_blocks
    scheme = builtin_scheme().with_definitions(add=[definition])
    out = scheme.convert(_backend("v1alpha1", {"hostPort": "x:1"}), f"{GROUP}/v1")
    assert out["spec"] == {"hostPort": "x:1"}
    assert hook.reviews == []


def test_review_posts_are_made_only_for_webhook_crds() -> None:
    class Client:
        def post(
            self, config: Any, body: Any, *, timeout: float, timeout_query: bool = True
        ) -> Any:
            raise AssertionError("not called")

    crd = _crd()
    assert review_post_for(crd, Client()) is not None
    crd["spec"]["conversion"] = {"strategy": "None"}
    assert review_post_for(crd, Client()) is None


def _answer_with(change: Callable[[dict[str, Any]], None]) -> Answer:
    def answer(review: dict[str, Any]) -> dict[str, Any]:
        out = convert_review(review)
        change(out)
        return out

    return answer


def _converted(change: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    def apply(out: dict[str, Any]) -> None:
        for obj in out["response"]["convertedObjects"]:
            change(obj)

    return apply


def _set(path: tuple[str, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(obj: dict[str, Any]) -> None:
        node = obj
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = value

    return change


_V1 = f"conversion webhook for {GROUP}/v1, Kind={KIND}"
_BAD_ANSWERS: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    (
        "failure-message",
        _set(("response", "result"), {"status": "Failure", "message": "custom failure"}),
        f"{_V1} failed: custom failure",
    ),
    (
        "failure-status",
        _set(("response", "result"), {"status": "Failure"}),
        f"{_V1} failed: response.result.status was 'Failure', not 'Success'",
    ),
    (
        "uid",
        _set(("response", "uid"), "someone-else"),
        f'{_V1} failed: expected response.uid="UID", got "someone-else"',
    ),
    (
        "review-version",
        _set(("apiVersion",), "apiextensions.k8s.io/v1beta1"),
        f"{_V1} failed: expected webhook response of apiextensions.k8s.io/v1, "
        "Kind=ConversionReview, got apiextensions.k8s.io/v1beta1, Kind=ConversionReview",
    ),
    ("no-response", _set(("response",), None), f"{_V1} failed: no response provided"),
    (
        "count",
        _set(("response", "convertedObjects"), []),
        f"{_V1} returned 0 objects, expected 1",
    ),
    (
        "group-version",
        _converted(_set(("apiVersion",), f"{GROUP}/v1")),
        f"{_V1} returned invalid object at index 0: invalid groupVersion "
        f"(expected {GROUP}/v1beta1, received {GROUP}/v1)",
    ),
    (
        "kind",
        _converted(_set(("kind",), "Other")),
        f"{_V1} returned invalid object at index 0: invalid kind "
        "(expected Backend, received Other)",
    ),
    (
        "name",
        _converted(_set(("metadata", "name"), "b")),
        f"{_V1} returned invalid object: must have the same name: a != b",
    ),
    (
        "uid-changed",
        _converted(_set(("metadata", "uid"), "other")),
        f"{_V1} returned invalid object: must have the same UID: uid-a != other",
    ),
    (
        "label",
        _converted(_set(("metadata", "labels"), {"bad key!": "x"})),
        f'{_V1} returned invalid metadata: metadata.labels: Invalid value: "bad key!": name '
        "part must consist of alphanumeric characters",
    ),
    (
        "label-type",
        _converted(_set(("metadata", "labels"), {"k": 1})),
        f"{_V1} returned invalid metadata: metadata.labels[k] must be a string, but is int64 "
        "in converted object",
    ),
]


@pytest.mark.parametrize(
    ("change", "message"),
    [(c, m) for _, c, m in _BAD_ANSWERS],
    ids=[i for i, _, _ in _BAD_ANSWERS],
)
def test_a_bad_answer_fails_the_conversion_with_kubernetes_message(
    change: Callable[[dict[str, Any]], None], message: str
) -> None:
    hook = Hook(_answer_with(change))
    scheme = _scheme(hook)
    hub = scheme.to_hub(_backend("v1", {"hostname": "db", "port": 1}))
    with pytest.raises(InternalError) as failed:
        scheme.from_hub(hub, "v1beta1")
    uid = hook.reviews[0]["request"]["uid"]
    expected = "Internal error occurred: " + message.replace('"UID"', f'"{uid}"')
    assert failed.value.message.startswith(expected), failed.value.message
    assert failed.value.code == 500 and failed.value.reason == "InternalError"


def test_a_failed_call_names_the_kind_converted_from() -> None:
    def unreachable(review: Object) -> Object:
        raise OSError('Post "https://127.0.0.1:1/convert?timeout=30s": context deadline exceeded')

    scheme = builtin_scheme().with_definitions(add=[_definition(Hook(unreachable))])
    with pytest.raises(InternalError) as failed:
        scheme.to_hub(_backend("v1alpha1", {"hostPort": "db:1"}))
    assert failed.value.message == (
        f"Internal error occurred: conversion webhook for {GROUP}/v1alpha1, Kind={KIND} "
        'failed: Post "https://127.0.0.1:1/convert?timeout=30s": context deadline exceeded'
    )


def test_a_bad_item_of_a_page_is_named_by_the_list_kind_and_its_index() -> None:
    def second_wrong(out: dict[str, Any]) -> None:
        out["response"]["convertedObjects"][1]["apiVersion"] = f"{GROUP}/v9"

    scheme = _scheme(Hook(_answer_with(second_wrong)))
    hubs = [
        scheme.to_hub(_backend("v1", {"hostname": "h", "port": i}, name=f"e{i}")) for i in range(2)
    ]
    with pytest.raises(InternalError) as failed:
        scheme.from_hub_many(hubs, "v1beta1")
    assert failed.value.message == (
        f"Internal error occurred: conversion webhook for {GROUP}/v1, Kind={KIND}List returned "
        "invalid converted object at index 2: invalid groupVersion "
        f"(expected {GROUP}/v1beta1, received {GROUP}/v9)"
    )


def test_only_labels_and_annotations_of_the_answer_are_kept_in_metadata() -> None:
    def mutate(obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        meta["labels"] = {"to": "v1beta1"}
        meta["annotations"] = {"converted": "yes"}
        meta["finalizers"] = ["foo"]
        meta["generation"] = 42
        meta["garbage"] = "x"

    scheme = _scheme(Hook(_answer_with(_converted(mutate))))
    stored = _backend("v1", {"hostname": "db", "port": 1})
    stored["metadata"]["labels"] = {"from": "v1"}
    stored["metadata"]["generation"] = 3
    out = scheme.from_hub(scheme.to_hub(stored), "v1beta1")
    assert out["metadata"] == {
        "name": "a",
        "namespace": "default",
        "uid": "uid-a",
        "generation": 3,
        "labels": {"to": "v1beta1"},
        "annotations": {"converted": "yes"},
    }


def test_no_supported_review_version_fails_every_conversion() -> None:
    hook = Hook()
    scheme = builtin_scheme().with_definitions(
        add=[_definition(hook, _crd(review_versions=["v2"]))]
    )
    with pytest.raises(InternalError, match="no supported conversion review versions"):
        scheme.to_hub(_backend("v1alpha1", {"hostPort": "db:1"}))
    assert hook.reviews == []


def test_the_registry_stores_the_storage_version_and_validates_by_its_schema(
    backend: LmdbBackend,
) -> None:
    hook = Hook()
    definition_for = crd_kind_definitions(None)
    assert definition_for(_crd()) is not None  # no client: no webhook, apiVersion only
    scheme = _scheme(hook)
    registry = make_registry(scheme, backend, watch_cache=True)
    try:
        store = registry.store(GROUP, PLURAL)
        alpha = _backend("v1alpha1", {"hostPort": "db:5432"})
        del alpha["metadata"]["uid"]
        created = store.create(
            ctx(api_version=f"{GROUP}/v1alpha1"), scheme.to_hub(alpha), CreateOptions()
        ).object
        assert created["spec"] == {"hostname": "db", "port": 5432}
        stored = orjson.loads(_raw(backend, f"/{GROUP}/{PLURAL}", f"/{GROUP}/{PLURAL}/default/a"))
        assert stored["apiVersion"] == f"{GROUP}/v1"
        assert stored["spec"] == {"hostname": "db", "port": 5432}
        read = scheme.from_hub(store.get(ctx(api_version=f"{GROUP}/v1beta1"), "a"), "v1beta1")
        assert read["spec"] == {"host": "db", "port": 5432}
        # The object validated is the hub (the storage version's shape), by v1's schema.
        too_far = _backend("v1alpha1", {"hostPort": "db:70000"}, name="b")
        del too_far["metadata"]["uid"]
        with pytest.raises(Invalid) as refused:
            store.create(
                ctx(api_version=f"{GROUP}/v1alpha1"), scheme.to_hub(too_far), CreateOptions()
            )
        assert [c.field for c in refused.value.causes] == ["spec.port"]
    finally:
        registry.close()


def test_kstore_open_converts_through_a_real_https_webhook(tmp_path: Path) -> None:
    with WebhookServer() as webhook, kstore.open(f"lmdb://{tmp_path / 'store'}") as client:
        webhook.route("/convert", convert_review)
        config = {"url": webhook.url("/convert"), "caBundle": webhook.ca_bundle}
        crds = client.resource("apiextensions.k8s.io/v1", "customresourcedefinitions")
        crds.create(backend_crd(config))
        deadline = time.monotonic() + 5
        while True:
            try:
                alpha = client.resource(f"{GROUP}/v1alpha1", PLURAL, namespace="default")
                break
            except NotFound:
                assert time.monotonic() < deadline, "the CRD was not served in time"
                time.sleep(0.02)
        beta = client.resource(f"{GROUP}/v1beta1", PLURAL, namespace="default")
        with beta.watch() as events:
            alpha.create({"metadata": {"name": "a"}, "spec": {"hostPort": "db:5432"}})
            alpha.create({"metadata": {"name": "b"}, "spec": {"hostPort": "mq:5672"}})
            assert beta.get("a")["spec"] == {"host": "db", "port": 5432}
            seen = [events.next(timeout=5) for _ in range(2)]
        assert [(e.type, e.object["spec"]) for e in seen if e is not None] == [
            ("ADDED", {"host": "db", "port": 5432}),
            ("ADDED", {"host": "mq", "port": 5672}),
        ]
        before = len(webhook.bodies("/convert"))
        listed = alpha.list()
        assert [i["spec"] for i in listed["items"]] == [
            {"hostPort": "db:5432"},
            {"hostPort": "mq:5672"},
        ]
        reviews = webhook.bodies("/convert")[before:]
        assert [len(r["request"]["objects"]) for r in reviews] == [2]


def test_objects_stored_in_an_older_version_are_converted_to_the_new_storage_version() -> None:
    hook = Hook()
    crd = _crd()
    for version in crd["spec"]["versions"]:
        version["storage"] = version["name"] == "v1beta1"
    definition = _definition(hook, crd)
    assert definition.storage_version == "v1beta1"
    scheme = builtin_scheme().with_definitions(add=[definition])
    # Read from storage as written before the change (v1): the hub is v1beta1's shape now.
    hub = scheme.to_hub(_backend("v1", {"hostname": "db", "port": 1}))
    assert hub["spec"] == {"host": "db", "port": 1}
    assert [r["request"]["desiredAPIVersion"] for r in hook.reviews] == [f"{GROUP}/v1beta1"]
    assert scheme.from_hub(hub, "v1beta1")["spec"] == {"host": "db", "port": 1}
    assert len(hook.reviews) == 1


def test_a_crd_preferring_v1beta1_reviews_gets_them_without_uid_checks() -> None:
    def v1beta1_answer(review: dict[str, Any]) -> dict[str, Any]:
        out = convert_review(review)
        out["apiVersion"] = "apiextensions.k8s.io/v1beta1"
        out["response"]["uid"] = ""  # v1beta1 answers are taken without their uid
        return out

    hook = Hook(v1beta1_answer)
    crd = _crd(review_versions=["v1beta1", "v1"])
    scheme = builtin_scheme().with_definitions(add=[_definition(hook, crd)])
    hub = scheme.to_hub(_backend("v1alpha1", {"hostPort": "db:1"}))
    assert hub["spec"] == {"hostname": "db", "port": 1}
    assert hook.reviews[0]["apiVersion"] == "apiextensions.k8s.io/v1beta1"
