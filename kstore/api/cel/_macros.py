"""Macros cel-cpp does not parse: cel-go's two-variable comprehensions and ``sortBy``.

Kubernetes 1.36 enables cel-go's ``TwoVarComprehensions`` (``all``, ``exists``,
``existsOne``, ``transformList``, ``transformMap``, ``transformMapEntry`` taking an index or
key variable and a value variable) and the lists extension's ``sortBy``. cel-cpp's parser
reads them as plain calls, so its checker then finds their variables undeclared. For such a
rule the parsed (unchecked) AST is taken and the calls are expanded here exactly as cel-go
expands them; the rule then runs without cel-cpp's type check (the schema field check and
literal checks still apply).

Synthesized nodes get negative ids, which have no source position and no checked type.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Final

from kstore.api.cel._ast import (
    Call,
    CheckedAst,
    Comprehension,
    Const,
    CreateList,
    CreateMap,
    Expr,
    Ident,
    Select,
)

__all__ = ["expand_macros", "has_unparsed_macros"]

_ACCU: Final = "@result"
_TWO_VAR: Final = frozenset(
    {"all", "exists", "existsOne", "transformList", "transformMap", "transformMapEntry"}
)


def _walk(e: Expr) -> Iterator[Expr]:
    yield e
    if isinstance(e, Select):
        yield from _walk(e.operand)
    elif isinstance(e, Call):
        if e.target is not None:
            yield from _walk(e.target)
        for a in e.args:
            yield from _walk(a)
    elif isinstance(e, CreateList):
        for x in e.elements:
            yield from _walk(x)
    elif isinstance(e, CreateMap):
        for k, v, _ in e.entries:
            yield from _walk(k)
            yield from _walk(v)
    elif isinstance(e, Comprehension):
        for part in (e.iter_range, e.accu_init, e.loop_condition, e.loop_step, e.result):
            yield from _walk(part)


def _is_macro(e: Expr) -> bool:
    if not isinstance(e, Call) or e.target is None:
        return False
    if e.function in _TWO_VAR and len(e.args) in (3, 4):
        return isinstance(e.args[0], Ident) and isinstance(e.args[1], Ident)
    return e.function == "sortBy" and len(e.args) == 2 and isinstance(e.args[0], Ident)


def has_unparsed_macros(ast: CheckedAst) -> bool:
    return any(_is_macro(e) for e in _walk(ast.expr))


def expand_macros(ast: CheckedAst, qualified: set[str]) -> CheckedAst:
    """Expand the macros; also resolve ``lists.range(...)``-style namespaced calls (named in
    ``qualified``), which only the checker would otherwise resolve."""
    ids = itertools.count(-1, -1)

    def new_call(function: str, *args: Expr) -> Call:
        return Call(next(ids), None, function, list(args))

    def accu() -> Ident:
        return Ident(next(ids), _ACCU)

    def expand(e: Expr) -> Expr:
        if isinstance(e, Select):
            return Select(e.id, expand(e.operand), e.field, e.test_only)
        if isinstance(e, CreateList):
            return CreateList(e.id, [expand(x) for x in e.elements], e.optional_indices)
        if isinstance(e, CreateMap):
            return CreateMap(
                e.id, [(expand(k), expand(v), o) for k, v, o in e.entries], e.message_name
            )
        if isinstance(e, Comprehension):
            return Comprehension(
                e.id,
                e.iter_var,
                e.iter_var2,
                expand(e.iter_range),
                e.accu_var,
                expand(e.accu_init),
                expand(e.loop_condition),
                expand(e.loop_step),
                expand(e.result),
            )
        if not isinstance(e, Call):
            return e
        if isinstance(e.target, Ident) and f"{e.target.name}.{e.function}" in qualified:
            name = f"{e.target.name}.{e.function}"
            return Call(e.id, None, name, [expand(a) for a in e.args])
        target = expand(e.target) if e.target is not None else None
        args = [expand(a) for a in e.args]
        if not _is_macro(e):
            return Call(e.id, target, e.function, args)
        assert target is not None
        if e.function == "sortBy":
            var = args[0]
            assert isinstance(var, Ident)
            keys = Comprehension(
                next(ids),
                var.name,
                "",
                target,
                _ACCU,
                CreateList(next(ids), [], frozenset()),
                Const(next(ids), True),
                new_call("_+_", accu(), CreateList(next(ids), [args[1]], frozenset())),
                accu(),
            )
            return Call(e.id, None, "lists.@sortByAssociatedKeys", [target, keys])
        first, second = args[0], args[1]
        assert isinstance(first, Ident) and isinstance(second, Ident)
        body = args[2:]
        init: Expr
        condition: Expr = Const(next(ids), True)
        result: Expr = accu()
        if e.function == "all":
            init = Const(next(ids), True)
            condition = new_call("@not_strictly_false", accu())
            step: Expr = new_call("_&&_", accu(), body[0])
        elif e.function == "exists":
            init = Const(next(ids), False)
            condition = new_call("@not_strictly_false", new_call("!_", accu()))
            step = new_call("_||_", accu(), body[0])
        elif e.function == "existsOne":
            init = Const(next(ids), 0)
            step = new_call("_?_:_", body[0], new_call("_+_", accu(), Const(next(ids), 1)), accu())
            result = new_call("_==_", accu(), Const(next(ids), 1))
        else:
            if e.function == "transformList":
                init = CreateList(next(ids), [], frozenset())
                grown: Expr = new_call(
                    "_+_", accu(), CreateList(next(ids), [body[-1]], frozenset())
                )
            elif e.function == "transformMap":
                init = CreateMap(next(ids), [])
                grown = new_call("cel.@mapInsert", accu(), Ident(next(ids), first.name), body[-1])
            else:
                init = CreateMap(next(ids), [])
                grown = new_call("cel.@mapInsert", accu(), body[-1])
            step = new_call("_?_:_", body[0], grown, accu()) if len(body) == 2 else grown
        return Comprehension(
            e.id, first.name, second.name, target, _ACCU, init, condition, step, result
        )

    return CheckedAst(expand(ast.expr), ast.positions, ast.references, ast.overloads, ast.types)
