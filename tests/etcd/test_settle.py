"""Writes whose first attempt has an unknown outcome are settled, never applied twice.

The backend's verbs run against a real etcd through a driver that loses the first
transaction's answer, as a frozen or killed member does: either etcd applied it and the
answer never came back, or it never reached etcd. Between the loss and the settling, another
client may write the key behind kstore's back. Each case checks what the caller is told and,
from etcd itself, how many times the key was written.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from etcd3 import etcdrpc

from kstore.api.gvk import Object
from kstore.errors import Timeout
from kstore.storage._etcd_client import AmbiguousWrite, EtcdClient
from kstore.storage._etcd_settle import guarded_write
from kstore.storage._etcd_steps import Range, Steps, Txn
from kstore.storage._etcd_wire import put_txn
from kstore.storage.etcd import EtcdBackend, EtcdStorage
from kstore.storage.interface import IdentityTransformer
from kstore.testing.objects import pod, pod_config, rv_of
from tests.conftest_etcd import RawEtcd, etcd_backend

__all__ = ["etcd_backend"]

pytestmark = [pytest.mark.etcd]

KEY = "/pods/ns/a"


def _run_losing_first_answer(
    steps: Any,
    client: EtcdClient,
    *,
    applied: bool,
    interfere: Callable[[], None] | None = None,
) -> Any:
    """Perform ``steps`` as the backend does, except that the first transaction's answer is
    lost: etcd ``applied`` it and the answer never came, or it was never sent. ``interfere``
    runs right after the loss (another client's write)."""
    answer: Any = None
    failed = False
    lost = False
    while True:
        try:
            step = steps.throw(answer) if failed else steps.send(answer)
        except StopIteration as done:
            return done.value
        try:
            if isinstance(step, Txn) and not lost:
                lost = True
                if applied:
                    client.txn_encoded(step.request)
                if interfere is not None:
                    interfere()
                raise AmbiguousWrite("the answer was lost")
            if isinstance(step, Txn):
                answer = client.txn_encoded(step.request, deadline=step.deadline)
            elif isinstance(step, Range):
                answer = client.range(etcdrpc.RangeRequest(key=step.key), single_key=True)
            else:
                raise AssertionError(f"unexpected step {step!r}")
            failed = False
        except Exception as exc:
            answer, failed = exc, True


@pytest.fixture
def pods(etcd_backend: EtcdBackend) -> EtcdStorage:
    storage = etcd_backend.storage_for(pod_config(IdentityTransformer()))
    assert isinstance(storage, EtcdStorage)
    return storage


@pytest.fixture
def raw(etcd_backend: EtcdBackend) -> Any:
    connection = RawEtcd(etcd_backend.config.endpoints[0])
    yield connection
    connection.close()


def _etcd_key(backend: EtcdBackend, key: str = KEY) -> bytes:
    return (backend.config.prefix + "/pods" + key[len("/pods") :]).encode()


def _append_label(value: str) -> Callable[[Object], Object]:
    """A write that is not idempotent: each application adds one more character."""

    def update(obj: Object) -> Object:
        labels = obj["metadata"].setdefault("labels", {})
        labels["count"] = labels.get("count", "") + value
        return obj

    return update


def _update_steps(pods: EtcdStorage, update: Callable[[Object], Object]) -> Steps:
    return pods._update(KEY, update, False, None, None, None)


# -- update ---------------------------------------------------------------------------------


def test_update_applied_but_unanswered_is_not_applied_again(
    etcd_backend: EtcdBackend, pods: EtcdStorage, raw: Any
) -> None:
    created = pods.create(KEY, pod("a", "ns"))
    result = _run_losing_first_answer(
        _update_steps(pods, _append_label("x")), etcd_backend._client, applied=True
    )
    stored = raw.get(_etcd_key(etcd_backend))
    assert result["metadata"]["labels"]["count"] == "x"
    assert rv_of(result) == stored.mod_revision > rv_of(created)
    assert stored.version == 2, "the update was applied twice"
    assert pods.get(KEY)["metadata"]["labels"]["count"] == "x"


def test_update_never_sent_is_sent_again_on_the_same_guard(
    etcd_backend: EtcdBackend, pods: EtcdStorage, raw: Any
) -> None:
    pods.create(KEY, pod("a", "ns"))
    result = _run_losing_first_answer(
        _update_steps(pods, _append_label("x")), etcd_backend._client, applied=False
    )
    stored = raw.get(_etcd_key(etcd_backend))
    assert rv_of(result) == stored.mod_revision
    assert stored.version == 2
    assert pods.get(KEY)["metadata"]["labels"]["count"] == "x"


def test_update_applied_then_overwritten_is_a_timeout_not_a_second_application(
    etcd_backend: EtcdBackend, pods: EtcdStorage, raw: Any
) -> None:
    pods.create(KEY, pod("a", "ns"))
    other = pods.guaranteed_update  # another client's write, after ours applied

    def overwrite() -> None:
        other(KEY, _append_label("y"))

    with pytest.raises(Timeout, match="may or may not have applied"):
        _run_losing_first_answer(
            _update_steps(pods, _append_label("x")),
            etcd_backend._client,
            applied=True,
            interfere=overwrite,
        )
    stored = raw.get(_etcd_key(etcd_backend))
    assert stored.version == 3  # create, ours, theirs: ours once
    assert pods.get(KEY)["metadata"]["labels"]["count"] == "xy"


# -- delete ---------------------------------------------------------------------------------


def test_delete_never_sent_is_sent_again(
    etcd_backend: EtcdBackend, pods: EtcdStorage, raw: Any
) -> None:
    created = pods.create(KEY, pod("a", "ns"))
    result = _run_losing_first_answer(
        pods._delete(KEY, None, None, None), etcd_backend._client, applied=False
    )
    assert result["metadata"]["name"] == "a"
    assert rv_of(result) > rv_of(created)
    assert raw.get(_etcd_key(etcd_backend)) is None


def test_delete_applied_but_unanswered_and_the_key_recreated_is_a_timeout(
    etcd_backend: EtcdBackend, pods: EtcdStorage, raw: Any
) -> None:
    pods.create(KEY, pod("a", "ns"))

    def recreate() -> None:
        pods.create(KEY, pod("a", "ns"))

    with pytest.raises(Timeout, match="may or may not have applied"):
        _run_losing_first_answer(
            pods._delete(KEY, None, None, None),
            etcd_backend._client,
            applied=True,
            interfere=recreate,
        )
    # The recreated object was not deleted by a resend.
    assert raw.get(_etcd_key(etcd_backend)).version == 1


# -- create ---------------------------------------------------------------------------------


def test_create_applied_but_unanswered_is_found_by_its_bytes(
    etcd_backend: EtcdBackend, pods: EtcdStorage, raw: Any
) -> None:
    result = _run_losing_first_answer(
        pods._create(KEY, pod("a", "ns"), None), etcd_backend._client, applied=True
    )
    stored = raw.get(_etcd_key(etcd_backend))
    assert rv_of(result) == stored.mod_revision == stored.create_revision
    assert stored.version == 1


def test_create_never_sent_is_a_timeout_and_never_resent(
    etcd_backend: EtcdBackend, pods: EtcdStorage, raw: Any
) -> None:
    with pytest.raises(Timeout, match="may or may not have applied"):
        _run_losing_first_answer(
            pods._create(KEY, pod("a", "ns"), None), etcd_backend._client, applied=False
        )
    assert raw.get(_etcd_key(etcd_backend)) is None


def test_create_applied_then_deleted_is_not_created_again(
    etcd_backend: EtcdBackend, pods: EtcdStorage, raw: Any
) -> None:
    def delete() -> None:
        pods.delete(KEY)

    with pytest.raises(Timeout, match="may or may not have applied"):
        _run_losing_first_answer(
            pods._create(KEY, pod("a", "ns"), None),
            etcd_backend._client,
            applied=True,
            interfere=delete,
        )
    assert raw.get(_etcd_key(etcd_backend)) is None


def test_create_unanswered_while_another_object_took_the_name_is_a_timeout(
    etcd_backend: EtcdBackend, pods: EtcdStorage, raw: Any
) -> None:
    def take_the_name() -> None:
        pods.create(KEY, pod("a", "ns", labels={"by": "other"}))

    with pytest.raises(Timeout, match="may or may not have applied"):
        _run_losing_first_answer(
            pods._create(KEY, pod("a", "ns"), None),
            etcd_backend._client,
            applied=False,
            interfere=take_the_name,
        )
    assert pods.get(KEY)["metadata"]["labels"] == {"by": "other"}


# -- the settling itself --------------------------------------------------------------------


def test_an_unknown_outcome_past_the_deadline_is_a_timeout(
    etcd_backend: EtcdBackend, pods: EtcdStorage, raw: Any
) -> None:
    created = pods.create(KEY, pod("a", "ns"))
    key = _etcd_key(etcd_backend)
    request = put_txn(key, b"new", rv_of(created), 0, read=True)
    steps = guarded_write(
        Txn(request),
        key=key,
        expected_revision=rv_of(created),
        written=b"new",
        deadline=time.monotonic() - 1,
    )
    with pytest.raises(Timeout):
        _run_losing_first_answer(steps, etcd_backend._client, applied=False)
    assert raw.get(key).version == 1, "a resend went out after the deadline"
