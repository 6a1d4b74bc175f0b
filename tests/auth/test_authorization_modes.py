"""``--authorization-mode`` lists: parsing, the union's order, and reasons in the 403."""

from __future__ import annotations

import pytest

from kstore.errors import BadRequest
from kstore.registry.interface import UserInfo
from kstore.server.filters.authorization import (
    AlwaysAllow,
    AlwaysDeny,
    Attributes,
    Union,
    forbidden,
    parse_authorization_modes,
)

ALICE = UserInfo(name="alice", groups=("system:authenticated",))
LIST_PODS = Attributes(
    user=ALICE,
    verb="list",
    resource_request=True,
    namespace="ns",
    api_version="v1",
    resource="pods",
)


def test_modes_parse_in_order() -> None:
    assert parse_authorization_modes("RBAC, AlwaysAllow") == ("RBAC", "AlwaysAllow")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "at least one authorization mode must be passed"),
        ("Node", 'authorization-mode "Node" is not a valid mode'),
        ("RBAC,RBAC", "has mode specified more than once"),
    ],
)
def test_bad_modes_are_refused(text: str, message: str) -> None:
    with pytest.raises(BadRequest, match=message):
        parse_authorization_modes(text)


def test_always_deny_has_no_opinion_so_a_later_mode_decides() -> None:
    assert Union([AlwaysDeny(), AlwaysAllow()]).authorize(LIST_PODS).allowed
    decision = Union([AlwaysDeny()]).authorize(LIST_PODS)
    assert not decision.allowed
    assert forbidden(LIST_PODS, decision.reason).message == (
        'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the'
        ' namespace "ns": Everything is forbidden.'
    )
