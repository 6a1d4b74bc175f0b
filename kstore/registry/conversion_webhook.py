"""The calls to CRD conversion webhooks: a CRD with ``conversion.strategy: Webhook`` gets a
:data:`~kstore.api.conversion_review.ReviewPost` that sends its ConversionReviews to
``spec.conversion.webhook.clientConfig`` over HTTPS.

The review itself (what is sent, what an answer must hold, the errors' words) is
:mod:`kstore.api.conversion_review`; this module only makes the call, through the webhook
client the admission webhooks use (``url`` or ``service``, ``caBundle``, one kept connection
per target). kube-apiserver gives a conversion call 30 seconds (the ``?timeout=30s`` its
requests carry); a webhook that hangs fails the request that converts after that long. The
call blocks its thread: the kinds converted this way are marked so (``conversion_blocks``)
and the server never converts them on its event loop.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, Final, Protocol

from kstore.api.conversion_review import ReviewPost
from kstore.api.custom_kinds import CustomConversions, conversion_strategy, kind_definition_for
from kstore.api.gvk import Object
from kstore.api.scheme import KindDefinition

__all__ = [
    "CONVERSION_TIMEOUT",
    "JsonPoster",
    "crd_kind_definitions",
    "review_post_for",
]

#: How long kube-apiserver waits on a conversion webhook, in seconds.
CONVERSION_TIMEOUT: Final = 30.0


class JsonPoster(Protocol):
    """What calls a webhook (:class:`kstore.registry.admission.webhook_client.
    WebhookClient`): POSTs ``body`` as JSON to a ``clientConfig`` and returns the decoded
    answer, raising an exception worded as Go's client words the failure."""

    def post(
        self, config: Mapping[str, Any], body: Any, *, timeout: float, timeout_query: bool = True
    ) -> Any: ...


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def review_post_for(
    crd: Object, client: JsonPoster, timeout: float = CONVERSION_TIMEOUT
) -> ReviewPost | None:
    """The function that sends ``crd``'s ConversionReviews (None unless its strategy is
    ``Webhook``). The ``clientConfig`` is read now: a changed one comes with a new CRD
    generation, hence a new kind definition and a new function."""
    if conversion_strategy(crd) != "Webhook":
        return None
    conversion = _map(_map(crd.get("spec")).get("conversion"))
    config = dict(_map(_map(conversion.get("webhook")).get("clientConfig")))

    def post(review: Object) -> Object:
        answer: Object = client.post(config, review, timeout=timeout)
        return answer

    return post


def crd_kind_definitions(
    client: JsonPoster | None,
    conversions: CustomConversions | None = None,
    timeout: float = CONVERSION_TIMEOUT,
) -> Callable[[Object], KindDefinition | None]:
    """What the CRD controller turns each CRD into: :func:`~kstore.api.custom_kinds.
    kind_definition_for` with the embedder's ``conversions`` and, when a webhook ``client``
    is given, the CRD's conversion webhook."""
    if client is None:
        return partial(kind_definition_for, conversions=conversions)

    def definition_for(crd: Object) -> KindDefinition | None:
        post = review_post_for(crd, client, timeout)
        return kind_definition_for(crd, conversions, review_post=post)

    return definition_for
