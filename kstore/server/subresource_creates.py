"""The subresources that are created rather than read and written (POST to an object's
subresource path): ``serviceaccounts/token``, ``pods/eviction`` and ``pods/binding``; each
answers with a kind of its own and stores nothing of that kind.

Each handler takes a :class:`SubresourceCall` (the registry, the object's namespace and name,
the decoded body, dry run) and returns the HTTP code and the object to answer with. Handlers
block (they read and write the registry): the route runs them on a worker thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.errors import NotFound
from kstore.registry.interface import Registry
from kstore.server.eviction import evict
from kstore.server.pod_binding import bind
from kstore.server.service_accounts import ServiceAccountTokens

__all__ = ["HANDLERS", "KINDS", "SubresourceCall"]

_NOT_FOUND = "the server could not find the requested resource"


@dataclass(frozen=True, kw_only=True, slots=True)
class SubresourceCall:
    registry: Registry
    namespace: str
    name: str
    body: Any
    dry_run: bool
    tokens: ServiceAccountTokens | None


def _token(call: SubresourceCall) -> tuple[int, Object]:
    if call.tokens is None:
        raise NotFound(_NOT_FOUND)
    answer = call.tokens.token_request(
        call.registry, call.namespace, call.name, call.body, dry_run=call.dry_run
    )
    return 201, answer


def _eviction(call: SubresourceCall) -> tuple[int, Object]:
    return evict(call.registry, call.namespace, call.name, call.body, call.dry_run)


def _binding(call: SubresourceCall) -> tuple[int, Object]:
    return bind(call.registry, call.namespace, call.name, call.body, call.dry_run)


#: The handler of each (group, resource, subresource).
HANDLERS: Final[dict[tuple[str, str, str], Callable[[SubresourceCall], tuple[int, Object]]]] = {
    ("", "pods", "binding"): _binding,
    ("", "pods", "eviction"): _eviction,
    ("", "serviceaccounts", "token"): _token,
}
#: The kind each subresource's body is (for a protobuf body's envelope).
KINDS: Final[dict[str, str]] = {
    "binding": "Binding",
    "eviction": "Eviction",
    "token": "TokenRequest",
}
