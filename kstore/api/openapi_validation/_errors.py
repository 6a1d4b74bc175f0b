"""kube-openapi's validation errors, and their conversion to field causes as apiextensions does it.

The validator records :class:`OpenAPIError` values worded exactly as kube-openapi's ``errors``
package words them (``spec.replicas in body must be of type integer: "string"``): that text is
what kube-openapi de-duplicates on, and it is the detail of most causes. :func:`to_causes` then
does what apiextensions' ``kubeOpenAPIResultToFieldErrors`` does:

- the cause's field is the error's ``Name`` with one leading ``.`` removed, appended to the
  caller's path; an error with no name (or ``.``) gets the caller's path itself, which is
  ``<nil>`` when the caller gave none (Kubernetes validates a custom resource with a nil path);
- ``required`` → ``Required value``; ``enum`` → ``Unsupported value: <v>: supported values:
  ...`` (strings as they are, other values as JSON); ``maxLength`` → ``Too long: may not be more
  than N bytes`` (kube-openapi counts characters, the message says bytes); ``maxItems`` and
  ``maxProperties`` → ``Too many: <n>: must have at most N items``; a type error →
  ``FieldValueTypeInvalid`` with the message as detail; any other failure → ``Invalid value``
  with the message as detail and the bad value (``""`` when there is none);
- errors that are not kube-openapi ``Validation`` errors (``anyOf``/``oneOf``/``allOf``/``not``
  summaries, numeric range errors) → ``Invalid value: ""`` on the caller's path.
"""

from __future__ import annotations

from typing import Any, Final

from kstore.api.validation._render import go_json
from kstore.api.validation.field import (
    Path,
    invalid,
    not_supported,
    required,
    too_long,
    too_many,
    type_invalid,
)
from kstore.errors import Cause

__all__ = [
    "ENUM",
    "INVALID",
    "MAX_ITEMS",
    "MAX_PROPERTIES",
    "PLAIN",
    "REQUIRED",
    "TOO_LONG",
    "TYPE",
    "OpenAPIError",
    "to_causes",
]

# What kind of kube-openapi error; decides the field.Error constructor.
REQUIRED: Final = 1
ENUM: Final = 2
TOO_LONG: Final = 3
MAX_ITEMS: Final = 4
MAX_PROPERTIES: Final = 5
TYPE: Final = 6
INVALID: Final = 7  # any other *errors.Validation
PLAIN: Final = 8  # not an *errors.Validation (composite summaries, range checks)

_NIL_PATH: Final = Path("<nil>")


class OpenAPIError:
    """One kube-openapi error: its kind, ``Name`` (the openapi path), value and message."""

    __slots__ = ("kind", "limit", "message", "name", "value", "values")

    def __init__(
        self,
        kind: int,
        name: str,
        message: str,
        value: Any = None,
        limit: int = -1,
        values: tuple[Any, ...] = (),
    ) -> None:
        self.kind = kind
        self.name = name
        self.message = message
        self.value = value
        self.limit = limit
        self.values = values

    def __repr__(self) -> str:
        return f"OpenAPIError({self.kind}, {self.name!r}, {self.message!r})"


def _enum_text(value: Any) -> str:
    return value if isinstance(value, str) else go_json(value)


def to_causes(errors: list[OpenAPIError], base: Path | None) -> list[Cause]:
    """The causes Kubernetes returns for these errors, in order, duplicates (same text) dropped."""
    causes: list[Cause] = []
    seen: set[str] = set()
    root = base if base is not None else _NIL_PATH
    for err in errors:
        if err.message in seen:
            continue
        seen.add(err.message)
        if err.kind == PLAIN:
            causes.append(invalid(root, "", err.message))
            continue
        name = err.name
        if name and name != ".":
            name = name[1:] if name.startswith(".") else name
            path = base.child(name) if base is not None else Path(name)
        else:
            path = root
        value = "" if err.value is None else err.value
        kind = err.kind
        if kind == REQUIRED:
            causes.append(required(path))
        elif kind == ENUM:
            causes.append(not_supported(path, err.value, [_enum_text(v) for v in err.values]))
        elif kind == TOO_LONG:
            causes.append(too_long(path, err.limit))
        elif kind in (MAX_ITEMS, MAX_PROPERTIES):
            causes.append(too_many(path, err.value, err.limit))
        elif kind == TYPE:
            causes.append(type_invalid(path, value, err.message))
        else:
            causes.append(invalid(path, value, err.message))
    return causes
