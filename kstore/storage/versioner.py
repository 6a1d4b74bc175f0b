"""resourceVersion strings <-> revisions, and the object-side rules around them.

Kubernetes' ``APIObjectVersioner`` rules, for every backend:

- ``""`` and ``"0"`` both parse to revision 0 ("any" / "latest"); anything else must be an
  unsigned 64-bit decimal integer, else BadRequest with Kubernetes' field-error wording;
- an object's resourceVersion is never stored inside its value: :func:`prepare_for_storage`
  clears it (and ``selfLink``) before encoding, :func:`with_resource_version` sets it from the
  backend's revision after decoding;
- preconditions (uid, resourceVersion) are checked on the current object with Kubernetes'
  messages, and fail as Conflict (the HTTP mapping of ``InvalidObj`` on update and delete).
"""

from __future__ import annotations

from kstore.api.gvk import Object
from kstore.errors import BadRequest, Conflict
from kstore.storage.interface import Preconditions

__all__ = [
    "MAX_REVISION",
    "check_preconditions",
    "object_resource_version",
    "parse_list_resource_version",
    "parse_resource_version",
    "prepare_for_storage",
    "with_resource_version",
]

#: The largest revision a resourceVersion string can name (Go's uint64).
MAX_REVISION = (1 << 64) - 1


def _parse_uint64(text: str) -> int | None:
    if not text or not text.isascii() or not text.isdigit():
        return None
    value = int(text)
    return value if value <= MAX_REVISION else None


def _invalid_detail(text: str) -> str:
    # Go's strconv.ParseUint wording, as it appears inside the field error Kubernetes returns.
    reason = "invalid syntax"
    if text and text.isascii() and text.isdigit():
        reason = "value out of range"
    quoted = '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    parse_error = f"strconv.ParseUint: parsing {quoted}: {reason}"
    return f"resourceVersion: Invalid value: {quoted}: {parse_error}"


def parse_resource_version(text: str) -> int:
    """The revision a resourceVersion string names; ``""`` and ``"0"`` give 0.

    Raises BadRequest (``resourceVersion: Invalid value: ...``) for anything that is not an
    unsigned 64-bit integer, e.g. ``"-1"`` or ``"abc"``.
    """
    if text in ("", "0"):
        return 0
    value = _parse_uint64(text)
    if value is None:
        raise BadRequest(_invalid_detail(text))
    return value


def parse_list_resource_version(text: str) -> int:
    """As :func:`parse_resource_version`, worded as list and get report it
    (``invalid resource version: ...``)."""
    if text in ("", "0"):
        return 0
    value = _parse_uint64(text)
    if value is None:
        raise BadRequest(f"invalid resource version: {_invalid_detail(text)}")
    return value


def object_resource_version(obj: Object) -> int:
    """The revision in ``obj.metadata.resourceVersion`` (0 when unset); BadRequest when it is
    not a revision."""
    meta = obj.get("metadata")
    text = meta.get("resourceVersion", "") if isinstance(meta, dict) else ""
    if text is None:
        return 0
    if not isinstance(text, str):
        raise BadRequest(f"resourceVersion must be a string, not {type(text).__name__}")
    return parse_resource_version(text)


def prepare_for_storage(obj: Object) -> Object:
    """A shallow copy of ``obj`` without ``resourceVersion`` and ``selfLink`` in its metadata.

    Only ``metadata`` is copied, so the caller's object is never mutated and nothing else is
    duplicated on the hot path.
    """
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or ("resourceVersion" not in meta and "selfLink" not in meta):
        return obj
    out = dict(obj)
    new_meta = dict(meta)
    new_meta.pop("resourceVersion", None)
    new_meta.pop("selfLink", None)
    out["metadata"] = new_meta
    return out


def with_resource_version(obj: Object, revision: int) -> Object:
    """Set ``metadata.resourceVersion`` on ``obj`` (owned by the caller) and return it.

    Revision 0 clears it, as Kubernetes' ``UpdateObject`` does."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
        obj["metadata"] = meta
    if revision:
        meta["resourceVersion"] = str(revision)
    else:
        meta.pop("resourceVersion", None)
    return obj


def check_preconditions(
    preconditions: Preconditions | None, obj: Object, *, resource: str, name: str
) -> None:
    """Raise Conflict, worded as Kubernetes words it, when ``obj`` fails ``preconditions``.

    ``resource`` is the qualified resource (``pods``, ``widgets.example.com``) and ``name`` the
    object's name, for the message ``Operation cannot be fulfilled on <resource> "<name>": ...``.
    """
    if preconditions is None:
        return
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    problem = ""
    if preconditions.uid is not None and preconditions.uid != meta.get("uid", ""):
        problem = (
            f"Precondition failed: UID in precondition: {preconditions.uid}, "
            f"UID in object meta: {meta.get('uid', '')}"
        )
    elif preconditions.resource_version is not None and preconditions.resource_version != meta.get(
        "resourceVersion", ""
    ):
        problem = (
            "Precondition failed: ResourceVersion in precondition: "
            f"{preconditions.resource_version}, ResourceVersion in object meta: "
            f"{meta.get('resourceVersion', '')}"
        )
    if problem:
        raise Conflict(
            f'Operation cannot be fulfilled on {resource} "{name}": {problem}',
            name=name,
            kind=resource.partition(".")[0],
            group=resource.partition(".")[2],
        )
