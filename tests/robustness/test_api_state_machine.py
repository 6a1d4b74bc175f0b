"""A hypothesis state machine over the ConfigMap API of a real ``kstore serve``, against a model.

Each example works in a fresh namespace of one server (on LMDB, then on etcd; watch cache on,
no compaction) and runs a random sequence of create, update (with the current, a stale or no
resourceVersion), delete (without, with a current, or with a stale precondition), get, list
(whole or in pages), and watches. After every step the server's answer equals the model's
(status, revision, value; a stale revision is 409, a missing object 404), revisions of writes
strictly increase, a list shows the model's objects at a revision not older than the last
write (a paged list: in name order, every page at the first page's revision), a watch opened
when the namespace was empty delivers exactly the model's history, and a watch opened at any
revision of that history delivers exactly the rest of it.

Example counts are CI-sized (well under a minute); ``KSTORE_LONG=1`` runs many more.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import ClassVar

import httpx
import orjson
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test

from kstore.testing.api_model import ConfigMapModel, match_events
from kstore.testing.http_workload import ConfigMapApi, change_of
from kstore.testing.serve_process import ServeProcess
from kstore.testing.watch_history import Change
from tests.clients.servers import BACKENDS, storage_args

LONG = os.environ.get("KSTORE_LONG") == "1"
NAMES = ("a", "b", "c")
_namespaces = itertools.count()


class _Stream:
    """One open watch whose events are read on demand (each read bounded by the client's
    read timeout, so a missing event fails the example instead of hanging it)."""

    def __init__(self, client: httpx.Client, path: str, start: int) -> None:
        self._stack = ExitStack()
        params = {"watch": "true", "resourceVersion": str(start)}
        self._response = self._stack.enter_context(client.stream("GET", path, params=params))
        assert self._response.status_code == 200, self._response.read()
        self._lines: Iterator[str] = self._response.iter_lines()

    def take(self, count: int) -> list[Change]:
        events: list[Change] = []
        while len(events) < count:
            line = next(self._lines)
            if not line:
                continue
            event = orjson.loads(line)
            assert event["type"] in ("ADDED", "MODIFIED", "DELETED"), event
            events.append(change_of(event["type"], event["object"]))
        return events

    def close(self) -> None:
        self._stack.close()


class ApiMachine(RuleBasedStateMachine):
    url: ClassVar[str] = ""

    def __init__(self) -> None:
        super().__init__()
        self.client = httpx.Client(base_url=self.url, timeout=10)
        self.api = ConfigMapApi(self.client, f"sm-{os.getpid()}-{next(_namespaces)}")
        assert self.api.create_namespace() == 201
        self.start, items = self.api.list_all()
        assert items == {}
        self.model = ConfigMapModel()
        self.values = itertools.count()
        self.watch = _Stream(self.client, self.api.path, self.start)
        self.watched = 0  # model history entries the main watch has delivered

    def _value(self) -> str:
        return f"v{next(self.values)}"

    @rule(name=st.sampled_from(NAMES))
    def create(self, name: str) -> None:
        value = self._value()
        expected = self.model.expect_create(name)
        status, revision = self.api.create(name, value)
        assert status == expected, (name, status)
        if status == 201:
            assert revision is not None
            assert self.model.created(name, value, revision) == []

    @rule(name=st.sampled_from(NAMES), precondition=st.sampled_from(["current", "stale", "none"]))
    def update(self, name: str, precondition: str) -> None:
        current = self.model.objects.get(name)
        revision: int | None = current[0] if current else max(self.model.last_revision, self.start)
        if precondition == "stale":
            revision = (revision or 1) - 1
        elif precondition == "none":
            revision = None  # an unconditional update (ConfigMaps allow it)
        value = self._value()
        expected = self.model.expect_update(name, revision)
        status, new = self.api.update(name, value, revision)
        assert status == expected, (name, revision, status)
        if status == 200:
            assert new is not None
            assert self.model.updated(name, value, new) == []

    @rule(name=st.sampled_from(NAMES), precondition=st.sampled_from(["none", "current", "stale"]))
    def delete(self, name: str, precondition: str) -> None:
        revision: int | None = None
        if precondition != "none":
            current = self.model.objects.get(name)
            revision = current[0] if current else self.start
            if precondition == "stale":
                revision -= 1
        expected = self.model.expect_delete(name, revision)
        status = self.api.delete(name, revision)
        assert status == expected, (name, precondition, status)
        if status == 200:
            self.model.deleted(name)

    @rule(name=st.sampled_from(NAMES))
    def get(self, name: str) -> None:
        status, seen = self.api.get(name)
        if name not in self.model.objects:
            assert status == 404
            return
        assert status == 200 and seen is not None
        assert (seen.revision, seen.value) == self.model.objects[name]

    @rule()
    def list_all(self) -> None:
        revision, items = self.api.list_all()
        assert {n: (c.revision, c.value) for n, c in items.items()} == self.model.objects
        assert revision >= self.model.last_revision

    @rule(limit=st.integers(min_value=1, max_value=3))
    def list_in_pages(self, limit: int) -> None:
        """Pages of ``limit`` items, following ``continue``, add up to the model's objects, in
        name order, every page at the first page's revision."""
        pages = self.api.list_pages(limit)
        items = [item for _, page in pages for item in page]
        assert [item.name for item in items] == sorted(self.model.objects)
        assert {i.name: (i.revision, i.value) for i in items} == self.model.objects
        assert all(0 < len(page) <= limit for _, page in pages[:-1])
        assert len({revision for revision, _ in pages}) == 1
        assert pages[0][0] >= self.model.last_revision

    @rule()
    def watch_catches_up(self) -> None:
        """The watch opened at the start delivers the model's history so far, exactly."""
        expected = self.model.history[self.watched :]
        got = self.watch.take(len(expected))
        assert match_events(got, expected) == []
        for offset, event in enumerate(got):
            self.model.learn_delete_revision(self.watched + offset, event.revision)
        self.watched = len(self.model.history)

    @rule(data=st.data())
    def watch_from_a_past_revision(self, data: st.DataObject) -> None:
        """A watch from any revision of the history delivers exactly what came after it."""
        known = [i for i in range(self.watched) if self.model.revision_after(i)]
        index = data.draw(st.sampled_from([-1, *known]), label="after history index")
        start = self.start if index < 0 else self.model.history[index].revision
        stream = _Stream(self.client, self.api.path, start)
        try:
            expected = self.model.history[index + 1 :]
            assert match_events(stream.take(len(expected)), expected) == []
        finally:
            stream.close()

    def teardown(self) -> None:
        try:
            # A last write: every event the main watch sends before it must be the model's,
            # so an extra event anywhere in the run shows up here.
            sentinel = self._value()
            status, revision = self.api.create("zz-end", sentinel)
            assert status == 201 and revision is not None
            assert self.model.created("zz-end", sentinel, revision) == []
            self.watch_catches_up()
        finally:
            self.watch.close()
            self.client.close()


@pytest.fixture(scope="module", params=BACKENDS)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServeProcess]:
    data = Path(tmp_path_factory.mktemp("state-machine")) / "data"
    with (
        storage_args(request.config, request.param) as args,
        ServeProcess(data, [*args, "--etcd-compaction-interval", "0"]).start() as running,
    ):
        yield running


@pytest.mark.timeout(3600 if LONG else 300)
def test_api_behaves_as_the_model(server: ServeProcess) -> None:
    ApiMachine.url = server.url
    run_state_machine_as_test(
        ApiMachine,
        settings=settings(
            max_examples=300 if LONG else 50,
            stateful_step_count=80 if LONG else 40,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )
