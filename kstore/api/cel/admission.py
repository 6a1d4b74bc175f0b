"""Compile checks of the CEL expressions that admission objects store (webhook match
conditions, ValidatingAdmissionPolicy validations, message expressions, audit annotations and
variables), as Kubernetes makes them when such an object is written. Evaluation is not here.

Each expression is parsed and type-checked with the variables Kubernetes declares for it:
``object``, ``oldObject``, ``request`` and ``namespaceObject`` always, ``authorizer`` (with
its library) where the expression may call it, ``params`` when the policy has a ``paramKind``,
``variables`` when the policy declares variables. They are declared ``dyn``, so a name
Kubernetes does not declare is refused with cel-go's "undeclared reference" message, while
fields of these variables are not checked.

cel-cpp names a whole undeclared select chain (``'params.x'``, at its last dot) where cel-go
names its root identifier (``'params'``, where it starts); the message is rewritten to
cel-go's, caret line included.
"""

from __future__ import annotations

import re
from typing import Final

from kstore.api.cel._environment import CompileError, check_with_variables

__all__ = ["admission_compile_error"]

_ALWAYS: Final = frozenset(("object", "oldObject", "request", "namespaceObject"))
_UNDECLARED: Final = re.compile(
    r"ERROR: <input>:(?P<line>\d+):(?P<col>\d+): undeclared reference to '(?P<name>[\w.]+)' "
    r"\(in container ''\)\n \| (?P<source>[^\n]*)\n \| \.*\^"
)


def _root_reference(message: str) -> str:
    """cel-go's wording of an undeclared select chain: its root identifier, where it starts."""

    def rewrite(match: re.Match[str]) -> str:
        name = match["name"]
        if "." not in name:
            return match[0]
        root, _, _ = name.partition(".")
        prefix = name.rpartition(".")[0]
        col = int(match["col"]) - len(prefix)
        if col < 1:
            return match[0]
        return (
            f"ERROR: <input>:{match['line']}:{col}: undeclared reference to '{root}' "
            f"(in container '')\n | {match['source']}\n | {'.' * (col - 1)}^"
        )

    return _UNDECLARED.sub(rewrite, message)


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
        return f"compilation failed: {_root_reference(str(exc))}"
    return None
