"""Compile checks of the CEL expressions that admission objects store (webhook match
conditions, ValidatingAdmissionPolicy validations, message expressions, audit annotations and
variables), as Kubernetes makes them when such an object is written. Evaluation is not here.

Each expression is parsed and type-checked with the variables Kubernetes declares for it:
``object``, ``oldObject``, ``request`` and ``namespaceObject`` always, ``authorizer`` (with
its library) where the expression may call it, ``params`` when the policy has a ``paramKind``,
``variables`` when the policy declares variables. They are declared ``dyn``, so a name
Kubernetes does not declare is refused with cel-go's "undeclared reference" message, while
fields of these variables are not checked.
"""

from __future__ import annotations

from typing import Final

from kstore.api.cel._environment import CompileError, check_with_variables

__all__ = ["admission_compile_error"]

_ALWAYS: Final = frozenset(("object", "oldObject", "request", "namespaceObject"))


def admission_compile_error(
    expression: str,
    *,
    params: bool,
    authorizer: bool,
    variables: frozenset[str] | None = None,
) -> str | None:
    """Kubernetes' error detail for ``expression`` (``compilation failed: ERROR: ...``), or
    None when it compiles. ``variables`` is None when the policy declares none."""
    names = set(_ALWAYS)
    if params:
        names.add("params")
    if authorizer:
        names.add("authorizer")
    if variables is not None:
        names.add("variables")
    try:
        check_with_variables(expression, frozenset(names), authorizer=authorizer)
    except CompileError as exc:
        return f"compilation failed: {exc}"
    return None
