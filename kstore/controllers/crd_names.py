"""Which names a CustomResourceDefinition may serve under, and its status conditions.

The rules of apiextensions-apiserver's naming and establishing controllers, as pure functions:

- a requested name (plural, singular, each short name; kind, list kind) is granted when it is
  the one the CRD already holds or nobody else in its group holds it, where "held" means in
  some CRD's ``status.acceptedNames`` (its own included) or served by a built-in resource of
  the group; a name that is taken keeps the CRD's old accepted name, and ``NamesAccepted``
  turns False with the reason of the last conflict (``PluralConflict``, ``SingularConflict``,
  ``ShortNamesConflict``, ``KindConflict``, ``ListKindConflict``) and ``"<name>" is already in
  use``; categories are always granted;
- ``Established`` becomes True (``InitialNamesAccepted``) once names have been accepted, and
  stays True afterwards, so a CRD keeps serving under its old names while a rename conflicts;
- ``Terminating`` is True (``InstanceDeletionInProgress``) once deletion started.

Every condition carries ``lastTransitionTime``, moved only when its status changes
(:func:`kstore.api.custom_kinds.set_condition`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kstore.api.custom_kinds import NAMES_ACCEPTED

__all__ = ["NameClaims", "accepted_names"]


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _names(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


@dataclass(frozen=True, slots=True)
class NameClaims:
    """The names held in one group: resource names (plural, singular, short names) and kinds."""

    resources: frozenset[str]
    kinds: frozenset[str]

    @staticmethod
    def of(
        group: str, crds: Iterable[Mapping[str, Any]], builtin: Iterable[tuple[str, ...]]
    ) -> NameClaims:
        """``crds``: every CRD (their accepted names count in their group); ``builtin``: the
        (plural, singular, kind, list kind, *short names) of the group's built-in resources."""
        resources: set[str] = set()
        kinds: set[str] = set()
        for crd in crds:
            if _map(crd.get("spec")).get("group") != group:
                continue
            accepted = _map(_map(crd.get("status")).get("acceptedNames"))
            resources.update(
                n
                for n in (accepted.get("plural"), accepted.get("singular"))
                if isinstance(n, str) and n
            )
            resources.update(_names(accepted.get("shortNames")))
            kinds.update(
                n
                for n in (accepted.get("kind"), accepted.get("listKind"))
                if isinstance(n, str) and n
            )
        for plural, singular, kind, list_kind, *short in builtin:
            resources.update((plural, singular, *short))
            kinds.update((kind, list_kind))
        resources.discard("")
        kinds.discard("")
        return NameClaims(frozenset(resources), frozenset(kinds))


def _taken(requested: str, accepted: str, held: frozenset[str]) -> str:
    """The conflict message, or "" when ``requested`` may be granted."""
    if requested == accepted or requested not in held:
        return ""
    return f'"{requested}" is already in use'


def accepted_names(
    crd: Mapping[str, Any], claims: NameClaims
) -> tuple[dict[str, Any], dict[str, str]]:
    """The names ``crd`` may serve under and its ``NamesAccepted`` condition (without time)."""
    requested = _map(_map(crd.get("spec")).get("names"))
    accepted = _map(_map(crd.get("status")).get("acceptedNames"))
    granted: dict[str, Any] = dict(accepted)
    reason, message = "", ""
    for field, conflict_reason, held in (
        ("plural", "PluralConflict", claims.resources),
        ("singular", "SingularConflict", claims.resources),
    ):
        want, have = str(requested.get(field) or ""), str(accepted.get(field) or "")
        problem = _taken(want, have, held)
        if problem:
            reason, message = conflict_reason, problem
        elif want:
            granted[field] = want
    want_short, have_short = _names(requested.get("shortNames")), _names(accepted.get("shortNames"))
    if want_short != have_short:
        own = {str(accepted.get("plural") or ""), str(accepted.get("singular") or "")}
        problems = [
            p
            for name in want_short
            if name not in have_short and name not in own
            for p in [_taken(name, "", claims.resources)]
            if p
        ]
        if problems:
            reason = "ShortNamesConflict"
            message = problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"
        elif want_short:
            granted["shortNames"] = want_short
        else:
            granted.pop("shortNames", None)
    for field, conflict_reason in (("kind", "KindConflict"), ("listKind", "ListKindConflict")):
        want, have = str(requested.get(field) or ""), str(accepted.get(field) or "")
        problem = _taken(want, have, claims.kinds)
        if problem:
            reason, message = conflict_reason, problem
        elif want:
            granted[field] = want
    categories = _names(requested.get("categories"))
    if categories:
        granted["categories"] = categories
    else:
        granted.pop("categories", None)
    if reason:
        return granted, {
            "type": NAMES_ACCEPTED,
            "status": "False",
            "reason": reason,
            "message": message,
        }
    condition = {
        "type": NAMES_ACCEPTED,
        "status": "True",
        "reason": "NoConflicts",
        "message": "no conflicts found",
    }
    return granted, condition
