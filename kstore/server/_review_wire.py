"""Review and subresource request bodies on Kubernetes' protobuf wire, read into their JSON shape.

kubectl (``auth can-i``, ``auth whoami``) sends its reviews as
``application/vnd.kubernetes.protobuf``: the ``k8s\\x00`` magic, then a ``runtime.Unknown``
(1: typeMeta {1: apiVersion, 2: kind}, 2: raw) whose ``raw`` is the review message. The
review kinds are not in kstore's Scheme nor in its generated protobuf modules (they are never
stored), so this module reads the few messages they use directly, by the field numbers of
``k8s.io/api`` ``authorization/v1`` and ``authentication/v1``. Go writes every non-pointer
field, so empty strings and zero numbers arrive on the wire; they are dropped here, as they are
"unset" in the JSON form the review code reads. Status fields a client sends are ignored (the
server fills the status).

Invariant: the result has the shape :func:`kstore.server.reviews.answer_review` reads from a
JSON body; malformed bytes are BadRequest, never an exception of another kind.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any, Final

from kstore.errors import BadRequest

__all__ = ["decode_review_protobuf"]

_MAGIC: Final = b"k8s\x00"
_VARINT: Final = 0
_FIXED64: Final = 1
_BYTES: Final = 2
_FIXED32: Final = 5

Field = tuple[int, int, int | bytes]


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise BadRequest("malformed protobuf body: truncated varint")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def _fields(data: bytes) -> Iterator[Field]:
    """(number, wire type, value) of every field of one message, in wire order."""
    at = 0
    while at < len(data):
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if wire == _VARINT:
            value, at = _varint(data, at)
        elif wire == _BYTES:
            size, at = _varint(data, at)
            if at + size > len(data):
                raise BadRequest("malformed protobuf body: truncated field")
            value, at = data[at : at + size], at + size
        elif wire == _FIXED64:
            value, at = data[at : at + 8], at + 8
        elif wire == _FIXED32:
            value, at = data[at : at + 4], at + 4
        else:
            raise BadRequest(f"malformed protobuf body: wire type {wire}")
        if at > len(data):
            raise BadRequest("malformed protobuf body: truncated field")
        yield number, wire, value


def _text(value: int | bytes) -> str:
    if not isinstance(value, bytes):
        raise BadRequest("malformed protobuf body: a string field is not length-delimited")
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadRequest("malformed protobuf body: a string is not UTF-8") from exc


def _message(value: int | bytes) -> bytes:
    if not isinstance(value, bytes):
        raise BadRequest("malformed protobuf body: a message field is not length-delimited")
    return value


def _strings(data: bytes, names: dict[int, str]) -> dict[str, str]:
    """The string fields ``names`` of a message, empty ones left out."""
    out: dict[str, str] = {}
    for number, _, value in _fields(data):
        name = names.get(number)
        if name is not None:
            text = _text(value)
            if text:
                out[name] = text
    return out


def _requirements(data: bytes) -> dict[str, Any]:
    # Field and label selector requirements: 1 key, 2 operator, 3 values.
    out: dict[str, Any] = {}
    for number, _, value in _fields(data):
        if number == 1:
            out["key"] = _text(value)
        elif number == 2:
            out["operator"] = _text(value)
        elif number == 3:
            out.setdefault("values", []).append(_text(value))
    return out


def _selector(data: bytes) -> dict[str, Any]:
    # FieldSelectorAttributes and LabelSelectorAttributes: 1 rawSelector, 2 requirements.
    out: dict[str, Any] = {}
    for number, _, value in _fields(data):
        if number == 1 and _text(value):
            out["rawSelector"] = _text(value)
        elif number == 2:
            out.setdefault("requirements", []).append(_requirements(_message(value)))
    return out


_RESOURCE_ATTRIBUTES: Final = {
    1: "namespace",
    2: "verb",
    3: "group",
    4: "version",
    5: "resource",
    6: "subresource",
    7: "name",
}


def _resource_attributes(data: bytes) -> dict[str, Any]:
    out: dict[str, Any] = dict(_strings(data, _RESOURCE_ATTRIBUTES))
    for number, _, value in _fields(data):
        if number == 8:
            out["fieldSelector"] = _selector(_message(value))
        elif number == 9:
            out["labelSelector"] = _selector(_message(value))
    return out


def _extra(data: bytes) -> tuple[str, list[str]]:
    # A map entry: 1 key, 2 ExtraValue {1: items}.
    key, items = "", []
    for number, _, value in _fields(data):
        if number == 1:
            key = _text(value)
        elif number == 2:
            items = [_text(v) for n, _, v in _fields(_message(value)) if n == 1]
    return key, items


def _access_spec(data: bytes) -> dict[str, Any]:
    """SelfSubjectAccessReviewSpec (1, 2) and SubjectAccessReviewSpec (1, 2, 3 user,
    4 groups, 5 extra, 6 uid)."""
    out: dict[str, Any] = {}
    for number, _, value in _fields(data):
        if number == 1:
            out["resourceAttributes"] = _resource_attributes(_message(value))
        elif number == 2:
            out["nonResourceAttributes"] = _strings(_message(value), {1: "path", 2: "verb"})
        elif number in (3, 6) and _text(value):
            out["user" if number == 3 else "uid"] = _text(value)
        elif number == 4:
            out.setdefault("groups", []).append(_text(value))
        elif number == 5:
            key, items = _extra(_message(value))
            out.setdefault("extra", {})[key] = items
    return out


def _time(data: bytes) -> str | None:
    seconds = next((v for n, w, v in _fields(data) if n == 1 and w == _VARINT), 0)
    if not isinstance(seconds, int) or not seconds:
        return None
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


_META_STRINGS: Final = {
    1: "name",
    2: "generateName",
    3: "namespace",
    4: "selfLink",
    5: "uid",
    6: "resourceVersion",
}


def _pair(data: bytes) -> tuple[str, str]:
    entry = {n: _text(v) for n, _, v in _fields(data) if n in (1, 2)}
    return entry.get(1, ""), entry.get(2, "")


def _metadata(data: bytes) -> dict[str, Any]:
    """The ObjectMeta fields a review's validation looks at (it must be empty but for a
    LocalSubjectAccessReview's namespace); other fields are kept only as "set"."""
    out: dict[str, Any] = dict(_strings(data, _META_STRINGS))
    for number, wire, value in _fields(data):
        if number in (7, 10) and wire == _VARINT and value:
            out["generation" if number == 7 else "deletionGracePeriodSeconds"] = value
        elif number in (8, 9):
            stamp = _time(_message(value))
            if stamp:
                out["creationTimestamp" if number == 8 else "deletionTimestamp"] = stamp
        elif number in (11, 12):
            key, text = _pair(_message(value))
            out.setdefault("labels" if number == 11 else "annotations", {})[key] = text
        elif number == 13:
            out.setdefault("ownerReferences", []).append({})
        elif number == 14:
            out.setdefault("finalizers", []).append(_text(value))
    return out


def _self_subject_review(data: bytes) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for number, _, value in _fields(data):
        if number == 1:
            out["metadata"] = _metadata(_message(value))
    return out


def _access_review(data: bytes) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for number, _, value in _fields(data):
        if number == 1:
            out["metadata"] = _metadata(_message(value))
        elif number == 2:
            out["spec"] = _access_spec(_message(value))
    return out


def _rules_review(data: bytes) -> dict[str, Any]:
    # SelfSubjectRulesReview: 1 metadata, 2 spec {1: namespace}.
    out: dict[str, Any] = {}
    for number, _, value in _fields(data):
        if number == 1:
            out["metadata"] = _metadata(_message(value))
        elif number == 2:
            out["spec"] = _strings(_message(value), {1: "namespace"})
    return out


def _token_review(data: bytes) -> dict[str, Any]:
    # TokenReview: 1 metadata, 2 spec {1: token, 2: audiences (repeated)}.
    out: dict[str, Any] = {}
    for number, _, value in _fields(data):
        if number == 1:
            out["metadata"] = _metadata(_message(value))
        elif number == 2:
            spec: dict[str, Any] = {}
            for field, _, item in _fields(_message(value)):
                if field == 1 and _text(item):
                    spec["token"] = _text(item)
                elif field == 2:
                    spec.setdefault("audiences", []).append(_text(item))
            out["spec"] = spec
    return out


def _int64(value: int | bytes) -> int:
    if not isinstance(value, int):
        raise BadRequest("malformed protobuf body: a number was expected")
    return value - (1 << 64) if value >= 1 << 63 else value


def _token_request(data: bytes) -> dict[str, Any]:
    # TokenRequest: 1 metadata, 2 spec {1: audiences (repeated), 3: boundObjectRef {1: kind,
    # 2: apiVersion, 3: name, 4: uid}, 4: expirationSeconds}.
    out: dict[str, Any] = {}
    for number, _, value in _fields(data):
        if number == 1:
            out["metadata"] = _metadata(_message(value))
        elif number == 2:
            spec: dict[str, Any] = {}
            for field, _, item in _fields(_message(value)):
                if field == 1:
                    spec.setdefault("audiences", []).append(_text(item))
                elif field == 3:
                    names = {1: "kind", 2: "apiVersion", 3: "name", 4: "uid"}
                    spec["boundObjectRef"] = _strings(_message(item), names)
                elif field == 4:
                    spec["expirationSeconds"] = _int64(item)
            out["spec"] = spec
    return out


def _delete_options(data: bytes) -> dict[str, Any]:
    # DeleteOptions: 1 gracePeriodSeconds, 2 preconditions {1: uid, 2: resourceVersion},
    # 3 orphanDependents, 4 propagationPolicy, 5 dryRun (repeated).
    out: dict[str, Any] = {}
    for number, _, value in _fields(data):
        if number == 1:
            out["gracePeriodSeconds"] = _int64(value)
        elif number == 2:
            out["preconditions"] = _strings(_message(value), {1: "uid", 2: "resourceVersion"})
        elif number == 3:
            out["orphanDependents"] = bool(value)
        elif number == 4 and _text(value):
            out["propagationPolicy"] = _text(value)
        elif number == 5:
            out.setdefault("dryRun", []).append(_text(value))
    return out


def _eviction(data: bytes) -> dict[str, Any]:
    # Eviction: 1 metadata, 2 deleteOptions.
    out: dict[str, Any] = {}
    for number, _, value in _fields(data):
        if number == 1:
            out["metadata"] = _metadata(_message(value))
        elif number == 2:
            out["deleteOptions"] = _delete_options(_message(value))
    return out


_READERS: Final[dict[str, Callable[[bytes], dict[str, Any]]]] = {
    "SelfSubjectAccessReview": _access_review,
    "SubjectAccessReview": _access_review,
    "LocalSubjectAccessReview": _access_review,
    "SelfSubjectRulesReview": _rules_review,
    "SelfSubjectReview": _self_subject_review,
    "TokenReview": _token_review,
    "TokenRequest": _token_request,
    "Eviction": _eviction,
}


def decode_review_protobuf(data: bytes, expected_kind: str) -> dict[str, Any]:
    """The review in ``data`` (magic + ``runtime.Unknown``) as its JSON shape; the envelope's
    apiVersion and kind are kept for the caller to check against the endpoint's."""
    if not data.startswith(_MAGIC):
        raise BadRequest("malformed protobuf body: the k8s magic prefix is missing")
    api_version = kind = ""
    raw = b""
    for number, _, value in _fields(data[len(_MAGIC) :]):
        if number == 1:
            names = _strings(_message(value), {1: "apiVersion", 2: "kind"})
            api_version, kind = names.get("apiVersion", ""), names.get("kind", "")
        elif number == 2:
            raw = _message(value)
    reader = _READERS.get(kind or expected_kind, _READERS[expected_kind])
    body = reader(raw)
    if api_version:
        body["apiVersion"] = api_version
    if kind:
        body["kind"] = kind
    return body
