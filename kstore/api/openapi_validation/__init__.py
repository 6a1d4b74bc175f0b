"""OpenAPI v3 validation of custom objects, with kube-apiserver v1.36's messages and field paths.

A CustomResourceDefinition version's ``openAPIV3Schema`` (JSONSchemaProps as a plain dict) is
compiled once::

    validator = compile_validator(schema)
    causes = validator.validate(obj)                # [] when valid
    causes = validator.validate(status, Path("status"))
    causes = validator.validate_update(obj, old)    # errors of unchanged values ratcheted

``validate`` returns what apiextensions' ``ValidateCustomResource`` returns for the same object,
cause by cause: kube-openapi's ``SchemaValidator`` checks (see :mod:`._node` for the order and
the rules), its messages (``spec.replicas in body must be of type integer: "string"``), and the
conversion to field errors (see :mod:`._errors`), including the ``<nil>`` field of errors that
Kubernetes reports without a path when no path is given. Identical messages are reported once.

Semantics worth knowing (all as in Kubernetes):

- ``null`` is valid only for an untyped schema or one with ``nullable: true``; otherwise it is a
  type error (``must be of type object: "null"``). Nothing else is checked on a ``null``, but
  an ``enum`` never accepts it;
- ``x-kubernetes-int-or-string`` makes the type ``integer,string``;
  ``x-kubernetes-preserve-unknown-fields`` and ``x-kubernetes-embedded-resource`` do not change
  validation (pruning and metadata checks are elsewhere);
- a float that is an integer (``1.0``, and anything within 1e-9 relative of one, up to 2**53)
  passes ``type: integer``; any other float fails it, with a second error from the range check
  (``Checked value must be of type integer (default format) in spec.x``);
- ``int32``/``int64`` and ``float`` formats are range checks; string formats are those listed in
  :mod:`._formats`; formats Kubernetes does not know are ignored;
- ``maxLength``/``minLength`` count characters, though the message says ``bytes``;
- ``pattern`` uses Go's RE2 dialect (see :mod:`._pattern`).

Not here (other modules): pruning, defaulting, structural-schema checks of the CRD itself, list
types, CEL rules. Ratcheting of unchanged values on update is :meth:`OpenAPIValidator.
validate_update` (see :mod:`._node`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kstore.api.openapi_validation._errors import OpenAPIError, to_causes
from kstore.api.openapi_validation._node import NO_OLD, Node, compile_node
from kstore.api.validation.field import Path
from kstore.errors import Cause

__all__ = ["OpenAPIValidator", "compile_validator"]


class OpenAPIValidator:
    """A compiled ``openAPIV3Schema``; thread-safe and reusable (it holds no per-call state)."""

    __slots__ = ("_root",)

    def __init__(self, root: Node) -> None:
        self._root = root

    def validate(self, obj: Any, path: Path | None = None) -> list[Cause]:
        """The causes Kubernetes reports for ``obj``; ``path`` prefixes every field."""
        errors: list[OpenAPIError] = []
        self._root.run(obj, "", errors)
        if not errors:
            return []
        return to_causes(errors, path)

    def validate_update(self, obj: Any, old: Any, path: Path | None = None) -> list[Cause]:
        """As :meth:`validate` for an update from ``old``: Kubernetes' ratcheting drops the
        errors of values equal to their correlated old values (CRDValidationRatcheting).
        Callers may validate first and ratchet only when that found something: the outcome
        is the same, and an update that is valid pays for one walk only."""
        errors: list[OpenAPIError] = []
        self._root.run_update(obj, NO_OLD if old is None else old, "", errors)
        if not errors:
            return []
        return to_causes(errors, path)


def compile_validator(schema: Mapping[str, Any]) -> OpenAPIValidator:
    """Compile a CRD version's ``openAPIV3Schema``.

    Raises ``ValueError`` for keywords a CRD schema may not hold (``patternProperties``,
    ``dependencies``, ``additionalItems``, ``$ref``, ``definitions``, ``items`` as an array):
    Kubernetes rejects such a CustomResourceDefinition before any object is validated.
    """
    return OpenAPIValidator(compile_node(schema))
