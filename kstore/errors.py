"""The typed errors of kstore, and their one mapping to Kubernetes ``Status`` objects.

Every error kstore raises on purpose is a :class:`KStoreError`. Each class knows the HTTP code
and the ``Status.reason`` Kubernetes uses for it, so the REST facade, the CLI and embedders all
render the same thing::

    KStoreError                      (500 InternalError)
    ├── BadRequest                   (400 BadRequest)
    │   └── UnsupportedMediaType     (415 UnsupportedMediaType)
    ├── Unauthorized                 (401 Unauthorized)
    ├── Forbidden                    (403 Forbidden)
    ├── NotFound                     (404 NotFound)
    ├── MethodNotAllowed             (405 MethodNotAllowed)
    ├── NotAcceptable                (406 NotAcceptable)
    ├── AlreadyExists                (409 AlreadyExists)
    ├── Conflict                     (409 Conflict)
    ├── Expired                      (410 Expired)
    ├── RequestEntityTooLarge        (413 RequestEntityTooLarge)
    ├── Invalid                      (422 Invalid, one cause per field problem)
    ├── TooManyRequests              (429 TooManyRequests)
    ├── InternalError                (500 InternalError)
    │   └── CorruptObject            (500 InternalError, stored bytes that cannot be read)
    ├── Unavailable                  (503 ServiceUnavailable)
    └── Timeout                      (504 Timeout)
        └── TooLargeResourceVersion  (504 Timeout, cause ResourceVersionTooLarge)

:func:`to_status` is the only place that turns an error into a ``Status`` dict, with its
fields in the order Go's ``metav1.Status`` declares them (``kind``, ``apiVersion``,
``metadata``, ``status``, ``message``, ``reason``, ``details``, ``code``), so any encoder
that keeps a dict's order writes them as kube-apiserver does.

``details`` is a pointer in Go: it is written whenever the constructor of the error sets it,
as ``{}`` when every field of it is empty (a go-restful 404 or 405), and left out when the
constructor does not set it (``NewBadRequest``, ``NewResourceExpired``,
``NewServiceUnavailable``...). Each class says which by :attr:`KStoreError.details_default`;
an instance may override it (``details=``), and an error that carries a detail field always
has ``details``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

__all__ = [
    "AlreadyExists",
    "BadRequest",
    "Cause",
    "Conflict",
    "CorruptObject",
    "Expired",
    "Forbidden",
    "InternalError",
    "Invalid",
    "KStoreError",
    "MethodNotAllowed",
    "NotAcceptable",
    "NotFound",
    "RequestEntityTooLarge",
    "Timeout",
    "TooLargeResourceVersion",
    "TooManyRequests",
    "Unauthorized",
    "Unavailable",
    "UnsupportedMediaType",
    "to_status",
]


@dataclass(frozen=True, slots=True)
class Cause:
    """One problem with one field, as in ``Status.details.causes``.

    ``type`` is Kubernetes' ``metav1.CauseType`` (``FieldValueInvalid``, ``FieldValueRequired``,
    ``FieldValueDuplicate``, ``FieldValueNotSupported``, ``FieldValueForbidden``,
    ``FieldValueTooLong``, ``FieldValueTooMany``, ``FieldValueTypeInvalid``, ...).
    ``message`` is the full rendered message, e.g. ``Required value``; ``field`` the JSON path
    such as ``metadata.name`` or ``spec.containers[0].image``.
    """

    type: str
    message: str
    field: str = ""

    def render(self) -> str:
        """The cause as Kubernetes prints it inside an aggregate message."""
        return f"{self.field}: {self.message}" if self.field else self.message

    def to_dict(self) -> dict[str, str]:
        """The cause as JSON, in Go's field order, empty fields left out as Go does."""
        out = {}
        if self.type:
            out["reason"] = self.type
        if self.message:
            out["message"] = self.message
        if self.field:
            out["field"] = self.field
        return out


class KStoreError(Exception):
    """Base of every deliberate kstore error. Unknown exceptions are internal errors."""

    code: ClassVar[int] = 500
    reason: ClassVar[str] = "InternalError"
    #: Whether Kubernetes' constructor of this error sets ``Status.details`` (see above).
    details_default: ClassVar[bool] = False

    def __init__(
        self,
        message: str,
        *,
        group: str = "",
        kind: str = "",
        name: str = "",
        causes: Sequence[Cause] = (),
        retry_after_seconds: int = 0,
        details: bool | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.group = group
        self.kind = kind
        self.name = name
        self.causes = tuple(causes)
        self.retry_after_seconds = retry_after_seconds
        self.has_details = self.details_default if details is None else details


class BadRequest(KStoreError):
    code = 400
    reason = "BadRequest"


class UnsupportedMediaType(BadRequest):
    code = 415
    reason = "UnsupportedMediaType"


class Unauthorized(KStoreError):
    code = 401
    reason = "Unauthorized"


class Forbidden(KStoreError):
    code = 403
    reason = "Forbidden"
    details_default = True


class NotFound(KStoreError):
    code = 404
    reason = "NotFound"
    details_default = True


class MethodNotAllowed(KStoreError):
    code = 405
    reason = "MethodNotAllowed"
    details_default = True


class NotAcceptable(KStoreError):
    """No media type the client accepts can be produced."""

    code = 406
    reason = "NotAcceptable"


class AlreadyExists(KStoreError):
    code = 409
    reason = "AlreadyExists"
    details_default = True


class Conflict(KStoreError):
    code = 409
    reason = "Conflict"
    details_default = True


class Expired(KStoreError):
    """A resourceVersion or continue token older than the history still kept (410)."""

    code = 410
    reason = "Expired"

    def __init__(self, message: str, *, continue_token: str = "", **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.continue_token = continue_token


class RequestEntityTooLarge(KStoreError):
    code = 413
    reason = "RequestEntityTooLarge"


class Invalid(KStoreError):
    """Validation failed; ``causes`` holds one entry per problem (422)."""

    code = 422
    reason = "Invalid"
    details_default = True

    @classmethod
    def for_object(cls, kind: str, name: str, causes: Sequence[Cause], group: str = "") -> Invalid:
        """Build the error the way Kubernetes' ``NewInvalid`` words it: the kind qualified by
        its group (``Deployment.apps``), every cause kept, repeated texts said once."""
        rendered = list(dict.fromkeys(c.render() for c in causes))
        detail = rendered[0] if len(rendered) == 1 else "[" + ", ".join(rendered) + "]"
        qualified = f"{kind}.{group}" if group else kind
        message = f'{qualified} "{name}" is invalid: {detail}'
        return cls(message, group=group, kind=kind, name=name, causes=causes)


class TooManyRequests(KStoreError):
    code = 429
    reason = "TooManyRequests"


class InternalError(KStoreError):
    code = 500
    reason = "InternalError"


class CorruptObject(InternalError):
    """Stored bytes that cannot be transformed or decoded."""


class Unavailable(KStoreError):
    code = 503
    reason = "ServiceUnavailable"


class Timeout(KStoreError):
    code = 504
    reason = "Timeout"
    details_default = True


class TooLargeResourceVersion(Timeout):
    """A read asked for a revision newer than the store has reached."""

    def __init__(self, requested: int, current: int, *, retry_after_seconds: int = 1) -> None:
        super().__init__(
            f"Too large resource version: {requested}, current: {current}",
            causes=(Cause("ResourceVersionTooLarge", "Too large resource version"),),
            retry_after_seconds=retry_after_seconds,
        )
        self.requested = requested
        self.current = current


def to_status(error: BaseException) -> dict[str, Any]:
    """A ``meta.k8s.io/v1`` ``Status`` (failure) for any exception, its keys in Go's order.

    Exceptions that are not :class:`KStoreError` become what Kubernetes' ``NewInternalError``
    makes of an error: a 500 whose one cause is the exception's own message.
    """
    if not isinstance(error, KStoreError):
        error = InternalError(
            f"Internal error occurred: {error}", causes=(Cause("", str(error)),), details=True
        )
    message = error.message
    if isinstance(error, Timeout) and not message.startswith("Timeout: "):
        message = "Timeout: " + message
    metadata: dict[str, Any] = {}
    if isinstance(error, Expired) and error.continue_token:
        metadata["continue"] = error.continue_token
    status: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": metadata,
        "status": "Failure",
    }
    if message:
        status["message"] = message
    if error.reason:
        # Go's StatusReasonUnknown is "" and omitted (an error the API server did not convert).
        status["reason"] = error.reason
    details = _details(error)
    if details is not None:
        status["details"] = details
    status["code"] = error.code
    return status


def _details(error: KStoreError) -> dict[str, Any] | None:
    """``Status.details`` in the field order of Go's ``StatusDetails`` (None: not set)."""
    details: dict[str, Any] = {}
    if error.name:
        details["name"] = error.name
    if error.group:
        details["group"] = error.group
    if error.kind:
        details["kind"] = error.kind
    if error.causes:
        details["causes"] = [c.to_dict() for c in error.causes]
    if error.retry_after_seconds:
        details["retryAfterSeconds"] = error.retry_after_seconds
    return details if details or error.has_details else None
