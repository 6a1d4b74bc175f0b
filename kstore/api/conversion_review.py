"""ConversionReview: how the objects of a CRD with ``conversion.strategy: Webhook`` are
converted by its webhook, as kube-apiserver's apiextensions webhook converter does it.

:class:`ConversionWebhook` builds the review, hands it to a ``post`` function (the HTTPS call,
made by the registry layer: nothing here does I/O), checks the answer and returns the converted
objects. The facts it follows (apiextensions-apiserver ``conversion/webhook_converter.go``):

- the review version is the first of the CRD's ``conversionReviewVersions`` this server
  speaks (``v1``, then ``v1beta1``); the request carries a fresh ``uid``, the
  ``desiredAPIVersion`` and the objects, whole, in their own version;
- objects already in the desired version are not sent, and a call with nothing to send makes
  no request; a list's objects go in one review;
- the answer must be a ``v1`` ``ConversionReview`` (``v1beta1`` answers are not checked for
  kind and uid, as Kubernetes keeps them compatible), with a ``response`` whose ``uid`` is the
  request's, ``result.status`` ``Success`` (else its ``message`` is the failure), and exactly
  one converted object per object sent, each in the desired group/version and of the same kind;
- a converted object keeps its original's name, namespace and uid (a change is refused), and
  its metadata is the original's except labels and annotations, which the webhook may change
  (then they are validated as on any write); other metadata changes are silently dropped.

Every failure is a 500 ``InternalError`` whose message is Kubernetes':
``Internal error occurred: conversion webhook for <group>/<version>, Kind=<Kind> failed: ...``
(the group/version/kind of what was converted: the object, or the list of a page), the
``returned ...`` forms for a malformed answer.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.validation.field import Path
from kstore.api.validation.objectmeta import validate_annotations, validate_labels
from kstore.errors import Cause, InternalError

__all__ = ["REVIEW_VERSIONS", "ConversionWebhook", "ReviewPost", "conversion_failed"]

#: Sends a ConversionReview (a JSON-shaped dict) and returns the answer's decoded body; raises
#: an exception whose text says why the call failed (transport, TLS, timeout, bad body).
ReviewPost = Callable[[Object], Object]

_GROUP: Final = "apiextensions.k8s.io"
#: The ConversionReview versions this server speaks, in its order of preference.
REVIEW_VERSIONS: Final = ("v1", "v1beta1")


class _Failed(Exception):
    """A check of the answer failed; the message completes Kubernetes' sentence."""


def conversion_failed(message: str) -> InternalError:
    """The error a client sees for a failed conversion, as Kubernetes' NewInternalError."""
    return InternalError(
        f"Internal error occurred: {message}", causes=(Cause("", message),), details=True
    )


def _go_type(value: Any) -> str:
    """The Go type name ``%T`` prints for a decoded JSON value."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "float64" if isinstance(value, float) else "int64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "[]interface {}"
    return "map[string]interface {}"


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _gvk_text(api_version: str, kind: str) -> str:
    """Go's ``GroupVersionKind.String()``: ``group/version, Kind=Kind``."""
    group, _, version = api_version.rpartition("/")
    return f"{group}/{version}, Kind={kind}"


def _gv_text(api_version: Any) -> str:
    """Go's ``GroupVersion.String()`` of an apiVersion as parsed (``v1`` for the core group)."""
    text = str(api_version or "")
    group, _, version = text.rpartition("/")
    return f"{group}/{version}" if group else version


def _aggregate(causes: Sequence[Cause]) -> str:
    """Go's ``field.ErrorList.ToAggregate().Error()``."""
    texts = [f"{c.field}: {c.message}" if c.field else c.message for c in causes]
    return texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"


def _check_same(original: Mapping[str, Any], converted: Mapping[str, Any]) -> None:
    if original.get("kind") != converted.get("kind"):
        raise _Failed(
            f"must have the same kind: {original.get('kind', '')} != {converted.get('kind', '')}"
        )
    before, after = _meta(original), _meta(converted)
    for key, word in (("name", "name"), ("namespace", "namespace"), ("uid", "UID")):
        if (before.get(key) or "") != (after.get(key) or ""):
            raise _Failed(
                f"must have the same {word}: {before.get(key) or ''} != {after.get(key) or ''}"
            )


def _restored_metadata(original: Mapping[str, Any], converted: Mapping[str, Any]) -> Object:
    """The original's metadata with the converted object's labels and annotations."""
    answered = converted.get("metadata")
    if "metadata" not in converted:
        raise _Failed("missing metadata in converted object")
    if not isinstance(answered, Mapping):
        raise _Failed(f"invalid metadata of type {_go_type(answered)} in converted object")
    meta = dict(_meta(original))
    for field, path in (
        ("labels", Path("metadata", "labels")),
        # Kubernetes names the annotations' path in the singular here.
        ("annotations", Path("metadata", "annotation")),
    ):
        value = answered.get(field)
        if value is None:
            meta.pop(field, None)
            continue
        if not isinstance(value, Mapping):
            raise _Failed(f"invalid metadata.{field} of type {_go_type(value)} in converted object")
        before = meta.get(field)
        if before is not None and not isinstance(before, Mapping):
            raise _Failed(f"invalid metadata.{field} of type {_go_type(before)} in original object")
        before = before or {}
        for key, item in value.items():
            if not isinstance(item, str):
                raise _Failed(
                    f"metadata.{field}[{key}] must be a string, but is {_go_type(item)} "
                    "in converted object"
                )
        if dict(value) != dict(before):
            check = validate_labels if field == "labels" else validate_annotations
            causes = check(value, path)
            if causes:
                raise _Failed(_aggregate(causes))
        meta[field] = dict(value)
    return meta


class ConversionWebhook:
    """Converts the objects of one CRD kind through its conversion webhook (see the module
    docstring). Thread-safe: it keeps no state between calls."""

    def __init__(self, post: ReviewPost, *, review_versions: Sequence[str], list_kind: str) -> None:
        self._post = post
        self._review_version = next((v for v in review_versions if v in REVIEW_VERSIONS), "")
        self._list_kind = list_kind

    def convert(
        self, objects: Sequence[Object], api_version: str, *, as_list: bool = False
    ) -> list[Object]:
        """``objects`` (of one kind) in ``api_version``, in their order; ``as_list``: they
        are a list's items, converted (and named in errors) as that list."""
        send = [obj for obj in objects if obj.get("apiVersion") != api_version]
        if not send:
            return list(objects)
        first = send[0]
        source_version = str(first.get("apiVersion") or "")
        what = _gvk_text(
            source_version, self._list_kind if as_list else str(first.get("kind") or "")
        )
        if not self._review_version:
            raise conversion_failed("no supported conversion review versions")
        uid = str(uuid.uuid4())
        review = {
            "kind": "ConversionReview",
            "apiVersion": f"{_GROUP}/{self._review_version}",
            "request": {"uid": uid, "desiredAPIVersion": api_version, "objects": list(send)},
        }
        try:
            answer = self._post(review)
        except Exception as exc:
            raise conversion_failed(f"conversion webhook for {what} failed: {exc}") from exc
        try:
            converted = self._converted_objects(answer, uid)
        except _Failed as exc:
            raise conversion_failed(f"conversion webhook for {what} failed: {exc}") from None
        if len(converted) != len(send):
            raise conversion_failed(
                f"conversion webhook for {what} returned {len(converted)} objects, "
                f"expected {len(send)}"
            )
        out: list[Object] = []
        answers = iter(converted)
        index = 0
        for original in objects:
            if original.get("apiVersion") == api_version:
                out.append(original)
                continue
            result = next(answers)
            out.append(self._checked(what, original, result, api_version, index, as_list))
            index += 1
        return out

    def _converted_objects(self, answer: Any, uid: str) -> list[Any]:
        if not isinstance(answer, Mapping):
            raise _Failed(f"unrecognized response type: {_go_type(answer)}")
        if self._review_version == "v1":
            got = _gvk_text(str(answer.get("apiVersion") or ""), str(answer.get("kind") or ""))
            if got != f"{_GROUP}/v1, Kind=ConversionReview":
                raise _Failed(
                    f"expected webhook response of {_GROUP}/v1, Kind=ConversionReview, got {got}"
                )
        response = answer.get("response")
        if not isinstance(response, Mapping):
            raise _Failed("no response provided")
        if self._review_version == "v1" and response.get("uid", "") != uid:
            raise _Failed(f'expected response.uid="{uid}", got "{response.get("uid", "")}"')
        result = response.get("result")
        result = result if isinstance(result, Mapping) else {}
        if result.get("status") != "Success":
            if result.get("message"):
                raise _Failed(str(result["message"]))
            raise _Failed(
                f"response.result.status was '{result.get('status') or ''}', not 'Success'"
            )
        objects = response.get("convertedObjects")
        return list(objects) if isinstance(objects, list) else []

    def _checked(
        self,
        what: str,
        original: Object,
        result: Any,
        api_version: str,
        index: int,
        as_list: bool,
    ) -> Object:
        # Kubernetes counts a list's items from 1 in these messages, a single object as 0.
        at = f"converted object at index {index + 1}" if as_list else "object at index 0"
        prefix = f"conversion webhook for {what} returned invalid {at}"
        if not isinstance(result, dict):
            raise conversion_failed(f"{prefix}: invalid type {_go_type(result)}")
        got = _gv_text(result.get("apiVersion"))
        if got != _gv_text(api_version):
            raise conversion_failed(
                f"{prefix}: invalid groupVersion (expected {_gv_text(api_version)}, received {got})"
            )
        if result.get("kind") != original.get("kind"):
            raise conversion_failed(
                f"{prefix}: invalid kind (expected {original.get('kind', '')}, "
                f"received {result.get('kind', '')})"
            )
        try:
            _check_same(original, result)
        except _Failed as exc:
            where = prefix if as_list else f"conversion webhook for {what} returned invalid object"
            raise conversion_failed(f"{where}: {exc}") from None
        try:
            meta = _restored_metadata(original, result)
        except _Failed as exc:
            where = (
                f"conversion webhook for {what} returned invalid metadata in object at index "
                f"{index + 1}"
                if as_list
                else f"conversion webhook for {what} returned invalid metadata"
            )
            raise conversion_failed(f"{where}: {exc}") from None
        return {**result, "metadata": meta}
