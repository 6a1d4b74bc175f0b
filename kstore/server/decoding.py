"""Request bodies to hub objects, as the API server's create and update handlers decode them.

The endpoint decides the kind and version: a body may omit ``apiVersion`` and ``kind`` (the
Python client sends neither unless the user sets them) and gets the path's; a body naming
another version of the group is a 400 (``the API version in the data (apps/v1beta1) does not
match the expected API version (apps/v1)``), another kind too. A value of the wrong JSON type
for its field (a string in ``spec.replicas``, bad base64 in a Secret's ``data``) fails the
decode whatever ``fieldValidation`` says: 400 with Go's unmarshal message, as the typed decode
of the API server answers it. A body that is not JSON at all is refused with Go's scanner
error, as kube-apiserver's first read of its ``apiVersion`` and ``kind`` refuses it (``the
object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json
parse error: unexpected end of JSON input ({"apiVersion":"v1",)``). Then, per
``fieldValidation``: unknown fields (against the kind's schema) and duplicate fields fail the
request (Strict, 400 ``strict decoding error``), come back as warnings (Warn) or are dropped
(Ignore); unknown fields are pruned in every case, defaults are applied and the object is
converted to the hub. Unknown fields and types are found in one walk
(:func:`kstore.codec.strict.check_fields`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kstore.api.gvk import GroupVersionKind, Object
from kstore.api.scheme import Scheme
from kstore.codec.json import MEDIA_TYPE_JSON
from kstore.codec.json_syntax import go_syntax_error
from kstore.codec.serializer import Serializer
from kstore.codec.strict import FieldValidation
from kstore.codec.versioning import unknown_fields
from kstore.errors import BadRequest

__all__ = ["DecodedBody", "check_endpoint_type", "decode_body"]


@dataclass(frozen=True, slots=True)
class DecodedBody:
    hub: Object
    warnings: list[str] = field(default_factory=list)


def check_endpoint_type(api_version: str, kind: str, expected: GroupVersionKind) -> None:
    """BadRequest, worded as the API server's, unless a body's apiVersion and kind are the
    endpoint's."""
    if api_version != expected.api_version:
        raise BadRequest(
            f"the API version in the data ({api_version}) does not match the expected API "
            f"version ({expected.api_version})"
        )
    if kind != expected.kind:
        raise BadRequest(
            f'{kind} in version "{expected.version}" cannot be handled as a {expected.kind}: '
            f"the kind in the data does not match the endpoint's kind"
        )


def _summary(data: bytes, limit: int = 30) -> str:
    """Go's ``summarizeData``: the start of a body that looks like an object, else its hex."""
    if data.startswith(b"{"):
        text = data[:limit].decode("utf-8", "replace")
    else:
        text = data[:limit].hex()
    return text + " ..." if len(data) > limit else text


def decode_body(
    scheme: Scheme,
    data: bytes,
    serializer: Serializer,
    expected: GroupVersionKind,
    validation: FieldValidation,
) -> DecodedBody:
    """Decode a create/update body for the endpoint of ``expected``."""
    if not data.strip():
        raise BadRequest(f"the body of the request was empty: a {expected.kind} is required")
    try:
        if validation is FieldValidation.IGNORE:
            obj = serializer.decode(data)
            problems: list[str] = []
        else:
            result = serializer.decode_strict(data)
            obj, problems = result.obj, list(result.problems)
    except BadRequest:
        syntax = go_syntax_error(data) if serializer.media_type == MEDIA_TYPE_JSON else None
        if syntax is None:
            raise
        raise BadRequest(
            f"the object provided is unrecognized (must be of type {expected.kind}): "
            f"couldn't get version/kind; json parse error: {syntax} ({_summary(data)})"
        ) from None
    api_version = obj.get("apiVersion") or expected.api_version
    kind = obj.get("kind") or expected.kind
    if not isinstance(api_version, str) or not isinstance(kind, str):
        raise BadRequest("apiVersion and kind must be strings")
    check_endpoint_type(api_version, kind, expected)
    obj["apiVersion"], obj["kind"] = api_version, kind
    metadata = obj.get("metadata")
    if metadata is None:
        obj["metadata"] = {}
    elif not isinstance(metadata, dict):
        raise BadRequest(
            f'{kind} in version "{expected.version}" cannot be handled as a {kind}: '
            f"metadata must be an object"
        )
    problems.extend(
        unknown_fields(scheme, obj, expected, report=validation is not FieldValidation.IGNORE)
    )
    if problems and validation is FieldValidation.STRICT:
        raise BadRequest(
            f'{kind} in version "{expected.version}" cannot be handled as a {kind}: '
            f"strict decoding error: {', '.join(problems)}"
        )
    scheme.default(obj)
    return DecodedBody(scheme.to_hub(obj), problems)
