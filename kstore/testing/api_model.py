"""An in-memory model of one namespace's ConfigMaps, as the Kubernetes API answers for them.

:class:`ConfigMapModel` says what a create, update or delete must answer given the state so
far (201/200, 404 NotFound, 409 AlreadyExists or Conflict) and, once the server answered,
takes the write into its state and its history. The server chooses revisions; the model
takes them from the answers and checks that they strictly increase.

A delete answers with a ``Status`` that carries no revision, so the model records a delete's
revision as unknown (None) until a watch delivers its DELETED event
(:meth:`ConfigMapModel.learn_delete_revision`). :func:`match_events` compares a watch's events
with the model's history on everything known: type, name, value and, where known, revision.

The model is plain data (no I/O); the state-machine test drives it and the server side by side.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

from kstore.testing.watch_history import Change

__all__ = ["ConfigMapModel", "match_events"]


@dataclass(slots=True)
class ConfigMapModel:
    """Objects by name as (revision, value), and every write so far in order."""

    objects: dict[str, tuple[int, str]] = field(default_factory=dict)
    history: list[Change] = field(default_factory=list)
    #: Revisions of creates and updates in the order they were answered.
    revisions: list[int] = field(default_factory=list)

    @property
    def last_revision(self) -> int:
        return self.revisions[-1] if self.revisions else 0

    # -- what the server must answer --------------------------------------------------------

    def expect_create(self, name: str) -> int:
        return 409 if name in self.objects else 201

    def expect_update(self, name: str, revision: int | None) -> int:
        """None: an unconditional update, which succeeds whenever the object exists."""
        if name not in self.objects:
            return 404
        return 200 if revision is None or self.objects[name][0] == revision else 409

    def expect_delete(self, name: str, revision: int | None) -> int:
        if name not in self.objects:
            return 404
        if revision is not None and self.objects[name][0] != revision:
            return 409
        return 200

    # -- taking answered writes in ------------------------------------------------------------

    def _take(self, change: Change) -> list[str]:
        problems = []
        if change.revision <= self.last_revision:
            problems.append(
                f"{change.type} {change.name} got revision {change.revision}, "
                f"not above {self.last_revision}"
            )
        self.revisions.append(change.revision)
        self.history.append(change)
        return problems

    def created(self, name: str, value: str, revision: int) -> list[str]:
        self.objects[name] = (revision, value)
        return self._take(Change(revision, "ADDED", name, value))

    def updated(self, name: str, value: str, revision: int) -> list[str]:
        self.objects[name] = (revision, value)
        return self._take(Change(revision, "MODIFIED", name, value))

    def deleted(self, name: str) -> None:
        _, value = self.objects.pop(name)
        # Revision 0 stands for "not known yet"; see learn_delete_revision.
        self.history.append(Change(0, "DELETED", name, value))

    def learn_delete_revision(self, index: int, revision: int) -> None:
        """A watch delivered the delete at ``history[index]`` with ``revision``."""
        change = self.history[index]
        self.history[index] = Change(revision, change.type, change.name, change.value)

    def revision_after(self, index: int) -> int | None:
        """The revision of ``history[index]``, if known."""
        revision = self.history[index].revision
        return revision or None


def match_events(got: Sequence[Change], expected: Sequence[Change]) -> list[str]:
    """Problems with ``got`` as the watch delivery of ``expected`` (revision 0 in ``expected``:
    any revision, as long as the order is strictly increasing)."""
    problems = []
    if len(got) != len(expected):
        problems.append(f"{len(got)} events, expected {len(expected)}")
    for event, want in zip(got, expected, strict=False):
        same = (event.type, event.name, event.value) == (want.type, want.name, want.value)
        if not same or (want.revision and event.revision != want.revision):
            problems.append(f"event {event}, expected {want}")
            break
    for before, after in itertools.pairwise(got):
        if after.revision <= before.revision:
            problems.append(f"watch revision {after.revision} after {before.revision}")
    return problems
