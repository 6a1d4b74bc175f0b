"""Turn a checked CEL AST into a tree of Python closures, with cel-go's cost tracking.

Each node becomes ``fn(act, st) -> value``: ``act`` is the variable bindings (one dict,
mutated and restored by comprehensions), ``st`` the :class:`State` of this evaluation. Errors
are exceptions (:class:`EvalError`); ``&&``, ``||`` and comprehension accumulators absorb them
as CEL's commutative logic requires.

Cost (the unit of Kubernetes' budgets) is charged as cel-go's runtime ``CostTracker`` charges
it: 1 per identifier and per field selection or index, nothing for constants, ``&&``, ``||``,
``?:`` and the fold itself, 10 per list literal and 30 per map literal, and per call what
:mod:`._cost` says (1 unless the function traverses its input). The count is checked against
``st.limit`` after every call and before every comprehension step, so a runaway expression
stops within one step of its limit (:class:`CostExceeded`) instead of running to its end.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping
from typing import Any, Final

from kstore.api.cel._ast import (
    Call,
    Comprehension,
    Const,
    CreateList,
    CreateMap,
    Expr,
    Ident,
    Select,
)
from kstore.api.cel._cost import CALL_COSTS, STRING_TRAVERSAL
from kstore.api.cel._extensions import EXTENSIONS
from kstore.api.cel._stdlib import FUNCTIONS
from kstore.api.cel._values import (
    LIST_TYPES,
    NONE,
    CelType,
    CostExceeded,
    ErrorValue,
    EvalError,
    NoOverload,
    Optional,
)

__all__ = ["Evaluator", "State", "build"]

Evaluator = Callable[[dict[str, Any], "State"], Any]

# Type names usable as values (``type(x) == int``), spelled as type_of() names them.
_TYPE_IDENTS: Final = {
    "int": "int",
    "uint": "uint",
    "double": "double",
    "string": "string",
    "bool": "bool",
    "bytes": "bytes",
    "list": "list",
    "map": "map",
    "null_type": "null_type",
    "type": "type",
    "net.IP": "net.IP",
    "net.CIDR": "net.CIDR",
    "kubernetes.URL": "kubernetes.URL",
    "kubernetes.Quantity": "kubernetes.Quantity",
    "kubernetes.Semver": "kubernetes.Semver",
    "kubernetes.NamedFormat": "kubernetes.NamedFormat",
}
_ABSENT: Final = object()
LIST_CREATE_COST: Final = 10
MAP_CREATE_COST: Final = 30


class State:
    """The running cost of one evaluation and the limit it may not pass."""

    __slots__ = ("cost", "limit")

    def __init__(self, limit: int) -> None:
        self.cost = 0
        self.limit = limit


def build(
    expr: Expr,
    functions: Mapping[str, Callable[..., Any]],
    map_selects: frozenset[int] = frozenset(),
) -> Evaluator:
    """Compile once; the result is called for every evaluation.

    A field whose value is null reads as absent (``has()`` is false, selecting it is ``no such
    key``), as Kubernetes treats object fields, except in the selections ``map_selects``
    names, which read a map where null is a value.
    """
    return _Builder(functions, map_selects).node(expr, frozenset())


class _Builder:
    def __init__(
        self, functions: Mapping[str, Callable[..., Any]], map_selects: frozenset[int]
    ) -> None:
        self.functions = {**FUNCTIONS, **EXTENSIONS, **functions}
        self.map_selects = map_selects

    def node(self, e: Expr, accus: frozenset[str]) -> Evaluator:
        if isinstance(e, Const):
            value = e.value
            return lambda act, st: value
        if isinstance(e, Ident):
            return self.ident(e.name, e.name in accus)
        if isinstance(e, Select):
            return self.select(e, accus)
        if isinstance(e, Call):
            return self.call(e, accus)
        if isinstance(e, CreateList):
            return self.create_list(e, accus)
        if isinstance(e, CreateMap):
            return self.create_map(e, accus)
        return self.comprehension(e, accus)

    def ident(self, name: str, is_accu: bool) -> Evaluator:
        if is_accu:

            def accu(act: dict[str, Any], st: State) -> Any:
                st.cost += 1
                v = act[name]
                if type(v) is ErrorValue:
                    raise v.error
                return v

            return accu

        def ident(act: dict[str, Any], st: State) -> Any:
            st.cost += 1
            try:
                return act[name]
            except KeyError:
                if name in _TYPE_IDENTS:
                    return CelType(_TYPE_IDENTS[name])
                raise EvalError(f"no such attribute: {name}") from None

        return ident

    def select(self, e: Select, accus: frozenset[str]) -> Evaluator:
        operand = self.node(e.operand, accus)
        name = e.field
        alt = unescape(name)
        null_is_value = e.id in self.map_selects
        if e.test_only:

            def has(act: dict[str, Any], st: State) -> Any:
                # Kubernetes charges nothing for has() (PresenceTestHasCost(false)).
                v = operand(act, st)
                if type(v) is dict:
                    found = v.get(name, _ABSENT)
                    if found is _ABSENT and alt is not None:
                        found = v.get(alt, _ABSENT)
                    return found is not _ABSENT and (found is not None or null_is_value)
                raise NoOverload()

            return has

        def select(act: dict[str, Any], st: State) -> Any:
            v = operand(act, st)
            st.cost += 1
            if type(v) is Optional:
                # Optional chaining: a field of an empty optional is empty; of a present
                # one, an optional of the field (absent is empty, as with ``.?``).
                if not v.has_value() or type(v.value) is not dict:
                    return NONE if not v.has_value() else _no_overload()
                inner = v.value.get(name, _ABSENT)
                if inner is _ABSENT and alt is not None:
                    inner = v.value.get(alt, _ABSENT)
                if inner is _ABSENT or (inner is None and not null_is_value):
                    return NONE
                return Optional(inner)
            if type(v) is dict:
                found = v.get(name, _ABSENT)
                if found is _ABSENT and alt is not None:
                    found = v.get(alt, _ABSENT)
                if found is _ABSENT or (found is None and not null_is_value):
                    raise EvalError(f"no such key: {name}")
                return found
            if hasattr(v, "cel_field"):
                return v.cel_field(name)
            raise NoOverload()

        return select

    def call(self, e: Call, accus: frozenset[str]) -> Evaluator:
        fname = e.function
        args = [self.node(a, accus) for a in e.args]
        if e.target is not None:
            args.insert(0, self.node(e.target, accus))
        if fname == "_&&_":
            return _logic(args[0], args[1], False)
        if fname == "_||_":
            return _logic(args[0], args[1], True)
        if fname == "_?_:_":
            return _conditional(args[0], args[1], args[2])
        if fname == "@not_strictly_false":
            inner = args[0]

            def not_strictly_false(act: dict[str, Any], st: State) -> Any:
                st.cost += 1
                try:
                    return inner(act, st) is not False
                except EvalError:
                    return True

            return not_strictly_false
        if fname == "_?._":
            # The field name arrives as a string constant argument.
            operand, field_name = args[0], e.args[-1]
            assert isinstance(field_name, Const)
            fld = field_name.value
            alt = unescape(fld)
            fn = self.functions["_?._"]

            def opt_select(act: dict[str, Any], st: State) -> Any:
                v = operand(act, st)
                st.cost += 1
                out = fn(v, fld)
                if alt is not None and type(out) is Optional and not out.has_value():
                    out = fn(v, alt)
                return out

            return opt_select
        impl = self.functions.get(fname)
        if impl is None:
            message = f"no such overload: {fname}"

            def missing(act: dict[str, Any], st: State) -> Any:
                raise EvalError(message)

            return missing
        cost_of = CALL_COSTS.get(fname)
        if cost_of is None and len(args) == 1:
            a0 = args[0]

            def call1(act: dict[str, Any], st: State) -> Any:
                v = a0(act, st)
                st.cost += 1
                if st.cost > st.limit:
                    raise CostExceeded(st.cost)
                return impl(v)

            return call1
        if cost_of is None and len(args) == 2:
            a0, a1 = args

            def call2(act: dict[str, Any], st: State) -> Any:
                v0 = a0(act, st)
                v1 = a1(act, st)
                st.cost += 1
                if st.cost > st.limit:
                    raise CostExceeded(st.cost)
                return impl(v0, v1)

            return call2

        fast = _FAST_BINARY.get(fname)
        if fast is not None and len(args) == 2:
            return _binary(args[0], args[1], impl, cost_of, fast)

        if cost_of is not None and len(args) == 2:
            b0, b1 = args
            charge = cost_of

            def call2_sized(act: dict[str, Any], st: State) -> Any:
                v0 = b0(act, st)
                v1 = b1(act, st)
                result = impl(v0, v1)
                st.cost += charge((v0, v1), result)
                if st.cost > st.limit:
                    raise CostExceeded(st.cost)
                return result

            return call2_sized

        def calln(act: dict[str, Any], st: State) -> Any:
            values = tuple([a(act, st) for a in args])
            result = impl(*values)
            st.cost += cost_of(values, result) if cost_of is not None else 1
            if st.cost > st.limit:
                raise CostExceeded(st.cost)
            return result

        return calln

    def create_list(self, e: CreateList, accus: frozenset[str]) -> Evaluator:
        elements = [
            (self.node(x, accus), i in e.optional_indices) for i, x in enumerate(e.elements)
        ]

        def create_list(act: dict[str, Any], st: State) -> Any:
            st.cost += LIST_CREATE_COST
            out = []
            for fn, optional in elements:
                v = fn(act, st)
                if optional:
                    if type(v) is not Optional:
                        raise NoOverload()
                    if v.has_value():
                        out.append(v.value)
                else:
                    out.append(v)
            return out

        return create_list

    def create_map(self, e: CreateMap, accus: frozenset[str]) -> Evaluator:
        entries = [(self.node(k, accus), self.node(v, accus), o) for k, v, o in e.entries]

        def create_map(act: dict[str, Any], st: State) -> Any:
            st.cost += MAP_CREATE_COST
            out: dict[Any, Any] = {}
            for kf, vf, optional in entries:
                k = kf(act, st)
                v = vf(act, st)
                if type(k) not in (str, int, bool) and not hasattr(k, "__index__"):
                    raise EvalError(f"unsupported key type: {type(k).__name__}")
                if k in out:
                    raise EvalError(f"Failed with repeated key: {k}")
                if optional:
                    if type(v) is not Optional:
                        raise NoOverload()
                    if v.has_value():
                        out[k] = v.value
                else:
                    out[k] = v
            return out

        return create_map

    def comprehension(self, e: Comprehension, accus: frozenset[str]) -> Evaluator:
        iter_range = self.node(e.iter_range, accus)
        inner = accus | {e.accu_var}
        accu_init = self.node(e.accu_init, accus)
        cond = self.node(e.loop_condition, inner)
        step = self.node(e.loop_step, inner)
        result = self.node(e.result, inner)
        var, var2, accu_var = e.iter_var, e.iter_var2, e.accu_var

        def comprehension(act: dict[str, Any], st: State) -> Any:
            r = iter_range(act, st)
            if type(r) is dict:
                pairs: Any = r.items() if var2 else ((k, None) for k in r)
            elif type(r) in LIST_TYPES:
                pairs = enumerate(r) if var2 else ((x, None) for x in r)
            else:
                raise NoOverload()
            saved = {n: act[n] for n in (var, var2, accu_var) if n and n in act}
            try:
                act[accu_var] = accu_init(act, st)
                for first, second in pairs:
                    # A fold costs nothing itself (cel-go); its steps' calls are charged.
                    if st.cost > st.limit:
                        raise CostExceeded(st.cost)
                    if var2:
                        act[var], act[var2] = first, second
                    else:
                        act[var] = first
                    if not cond(act, st):
                        break
                    try:
                        act[accu_var] = step(act, st)
                    except EvalError as err:
                        act[accu_var] = ErrorValue(err)
                return result(act, st)
            finally:
                for n in (var, var2, accu_var):
                    if n:
                        act.pop(n, None)
                act.update(saved)

        return comprehension


def _no_overload() -> Any:
    raise NoOverload()


# The comparisons rules use most, on the operand types that need no conversion: an int
# against an int (and, for equality, a bool against a bool, a string against a string) is
# compared by Python's operator, charged as :mod:`._cost` charges it, without the general
# call's tuple and cost function. Any other pair takes the general path.
_FAST_BINARY: Final[dict[str, Callable[[Any, Any], bool]]] = {
    "_<_": operator.lt,
    "_<=_": operator.le,
    "_>_": operator.gt,
    "_>=_": operator.ge,
    "_==_": operator.eq,
    "_!=_": operator.ne,
}
_EQUALITY: Final = frozenset({operator.eq, operator.ne})


def _binary(
    left: Evaluator,
    right: Evaluator,
    impl: Callable[[Any, Any], Any],
    cost_of: Callable[[tuple[Any, Any], Any], int] | None,
    op: Callable[[Any, Any], bool],
) -> Evaluator:
    equality = op in _EQUALITY

    def binary(act: dict[str, Any], st: State) -> Any:
        v0 = left(act, st)
        v1 = right(act, st)
        t0 = type(v0)
        if t0 is type(v1):
            if t0 is int or (equality and t0 is bool):
                st.cost += 1
                if st.cost > st.limit:
                    raise CostExceeded(st.cost)
                return op(v0, v1)
            if equality and t0 is str:
                st.cost += math.ceil(min(len(v0), len(v1)) * STRING_TRAVERSAL)
                if st.cost > st.limit:
                    raise CostExceeded(st.cost)
                return op(v0, v1)
        result = impl(v0, v1)
        st.cost += cost_of((v0, v1), result) if cost_of is not None else 1
        if st.cost > st.limit:
            raise CostExceeded(st.cost)
        return result

    return binary


def _logic(left: Evaluator, right: Evaluator, is_or: bool) -> Evaluator:
    """``&&`` / ``||``: either side may decide, errors only count when nothing decides."""
    decisive = is_or

    def logic(act: dict[str, Any], st: State) -> Any:
        err: EvalError | None = None
        try:
            a = left(act, st)
            if a is decisive:
                return decisive
            if type(a) is not bool:
                raise NoOverload()
        except EvalError as exc:
            err = exc
        b = right(act, st)
        if b is decisive:
            return decisive
        if type(b) is not bool:
            raise NoOverload()
        if err is not None:
            raise err
        return not decisive

    return logic


def _conditional(cond: Evaluator, then: Evaluator, otherwise: Evaluator) -> Evaluator:
    def conditional(act: dict[str, Any], st: State) -> Any:
        c = cond(act, st)
        if c is True:
            return then(act, st)
        if c is False:
            return otherwise(act, st)
        raise NoOverload()

    return conditional


_ESCAPES: Final = {"__dash__": "-", "__dot__": ".", "__slash__": "/", "__underscores__": "__"}
_RESERVED: Final = frozenset(
    [
        "true",
        "false",
        "null",
        "in",
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    ]
)


def escape(name: str) -> str | None:
    """A property name as CEL spells it (Kubernetes' ``cel.Escape``); None when it can't be."""
    if name in _RESERVED:
        return f"__{name}__"
    out = name.replace("__", "__underscores__").replace(".", "__dot__")
    out = out.replace("-", "__dash__").replace("/", "__slash__")
    if not out or not (out[0].isalpha() or out[0] == "_"):
        return None
    if not all((c.isalnum() and c.isascii()) or c == "_" for c in out):
        return None
    return out


def unescape(name: str) -> str | None:
    """The property name an escaped CEL field name stands for; None when nothing is escaped."""
    if "__" not in name:
        return None
    if name.startswith("__") and name.endswith("__") and name[2:-2] in _RESERVED:
        return name[2:-2]
    out, i = [], 0
    while i < len(name):
        if name.startswith("__", i):
            for esc, plain in _ESCAPES.items():
                if name.startswith(esc, i):
                    out.append(plain)
                    i += len(esc)
                    break
            else:
                out.append(name[i])
                i += 1
        else:
            out.append(name[i])
            i += 1
    text = "".join(out)
    return text if text != name else None
