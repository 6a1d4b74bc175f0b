"""The literal checks Kubernetes adds after type-checking (cel-go's extended validations).

- ``duration('...')`` and ``timestamp('...')`` with a constant argument must parse:
  ``invalid duration argument`` / ``invalid timestamp argument``;
- a constant pattern given to ``matches`` must compile: ``invalid matches argument``;
- list and map literals must be homogeneous: ``expected type 'int' but found 'string'``
  (literals inside a string ``format`` call are exempt). The checker types ``self`` as ``dyn``
  here, so a ``dyn`` element is taken as matching: a mixed literal that Kubernetes' typed
  ``self`` would reveal can go unreported, but nothing Kubernetes accepts is refused.

Each error is positioned at the offending argument or element, in cel-go's format.
"""

from __future__ import annotations

from collections.abc import Callable

from kstore.api.cel._ast import (
    Call,
    CheckedAst,
    Comprehension,
    Const,
    CreateList,
    CreateMap,
    Expr,
    Select,
)
from kstore.api.cel._fields import error_at
from kstore.api.cel._stdlib import FUNCTIONS, regex
from kstore.api.cel._values import EvalError

__all__ = ["check_literals"]


def check_literals(ast: CheckedAst, source: str) -> str:
    """Every literal error of the rule joined as cel-go joins issues, or ""."""
    found: list[str] = []

    def report(e: Expr, message: str) -> None:
        found.append(error_at(source, ast.positions.get(e.id, 0), message))

    def walk(e: Expr, in_format: bool) -> None:
        if isinstance(e, Call):
            if e.function in ("duration", "timestamp") and e.args and isinstance(e.args[0], Const):
                try:
                    FUNCTIONS[e.function](e.args[0].value)
                except EvalError:
                    report(e.args[0], f"invalid {e.function} argument")
            if e.function == "matches" and e.args and isinstance(e.args[0], Const):
                pattern = e.args[0].value
                if isinstance(pattern, str):
                    try:
                        regex(pattern)
                    except EvalError:
                        report(e.args[0], "invalid matches argument")
            inner = in_format or e.function == "format"
            if e.target is not None:
                walk(e.target, inner)
            for a in e.args:
                walk(a, inner)
        elif isinstance(e, CreateList):
            if not in_format:
                _homogeneous(
                    ast, [(x, i in e.optional_indices) for i, x in enumerate(e.elements)], report
                )
            for x in e.elements:
                walk(x, in_format)
        elif isinstance(e, CreateMap):
            if not in_format:
                _homogeneous(ast, [(k, False) for k, _, _ in e.entries], report)
                _homogeneous(ast, [(v, opt) for _, v, opt in e.entries], report)
            for k, v, _ in e.entries:
                walk(k, in_format)
                walk(v, in_format)
        elif isinstance(e, Select):
            walk(e.operand, in_format)
        elif isinstance(e, Comprehension):
            for part in (e.iter_range, e.accu_init, e.loop_condition, e.loop_step, e.result):
                walk(part, in_format)

    walk(ast.expr, False)
    return "\n".join(found)


def _homogeneous(
    ast: CheckedAst, items: list[tuple[Expr, bool]], report: Callable[[Expr, str], None]
) -> None:
    first: str | None = None
    for e, optional in items:
        t = ast.types.get(e.id, "dyn")
        if optional and t.startswith("optional_type(") and t.endswith(")"):
            t = t[len("optional_type(") : -1]
        if "dyn" in t:
            continue
        if first is None:
            first = t
            continue
        if t != first:
            report(e, f"expected type '{first}' but found '{t}'")
            return
