"""Static cost estimate of a rule (what Kubernetes checks when a CRD is written).

cel-go's ``checker.Cost`` with Kubernetes' size estimator and library estimator, kept to the
maximum (the only bound Kubernetes compares): identifiers cost 1, a field selection 1 on a
map or object, ``has()`` nothing, list literals 10 and map literals 30, ``&&``/``||``/``?:``
the sum (or worst branch) of their operands, a comprehension its range's maximum size times
the cost of one step, and calls 1 or a traversal cost proportional to the maximum size of
their operands. Sizes come from the schema (:mod:`._decl`) along paths such as
``self.spec.items.@items.name``, from literals, or are unknown (2^64-1).

The limit is ``StaticEstimatedCostLimit`` (10,000,000) per rule, after multiplying by how many
times the rule may run in one object (the product of the enclosing ``maxItems`` /
``maxProperties``, or when one is missing, how many of the smallest such value fit in a
request).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

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
from kstore.api.cel._decl import Decl, decl_of

__all__ = [
    "STATIC_COST_LIMIT",
    "STATIC_CRD_COST_LIMIT",
    "U64",
    "cost_error_message",
    "estimate_cost",
]

STATIC_COST_LIMIT: Final = 10_000_000
# StaticEstimatedCRDCostLimit: all rules of one CRD version's schema together.
STATIC_CRD_COST_LIMIT: Final = 100_000_000
U64: Final = (1 << 64) - 1
_TRAVERSAL: Final = 0.1
_REGEX: Final = 0.25
_SCALARS: Final = frozenset(
    {"bool", "int", "uint", "double", "google.protobuf.Duration", "google.protobuf.Timestamp"}
)
_DECL_TYPES: Final = {
    "bool": "bool",
    "int": "int",
    "double": "double",
    "duration": "google.protobuf.Duration",
    "timestamp": "google.protobuf.Timestamp",
    "string": "string",
    "bytes": "bytes",
    "list": "list",
    "map": "map",
    "object": "object",
    "dyn": "dyn",
}


def cost_error_message(name: str, cost: int, limit: int) -> str:
    """Kubernetes' ``getCostErrorMessage``."""
    factor = cost / limit
    if factor > 100.0:
        text = "more than 100x"
    elif factor < 1.5:
        text = f"{factor:f}x"
    else:
        text = f"{factor:.1f}x"
    return (
        f"{name} exceeds budget by factor of {text} (try simplifying the rule, or adding "
        "maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )


def _add(a: int, b: int) -> int:
    return min(a + b, U64)


def _mul(a: int, b: int) -> int:
    return min(a * b, U64)


def _factor(x: int, f: float) -> int:
    return min(math.ceil(x * f), U64)


@dataclass(slots=True)
class _Var:
    path: tuple[str, ...] | None
    size: int | None


def estimate_cost(ast: CheckedAst, schema: Mapping[str, Any], is_root: bool = False) -> int:
    """The rule's worst-case cost (cel-go's ``CostEstimate.Max``)."""
    return _Coster(ast, decl_of(schema, is_root)).cost(ast.expr)


class _Coster:
    def __init__(self, ast: CheckedAst, root: Decl | None) -> None:
        self.ast = ast
        self.root = root
        self.paths: dict[int, tuple[str, ...]] = {}
        self.sizes: dict[int, int] = {}
        self.entry_sizes: dict[int, int] = {}  # the max size of a list literal's elements
        self.scopes: dict[str, list[_Var]] = {}

    # --- types, paths and sizes ----------------------------------------------------------------

    def decl_at(self, path: tuple[str, ...] | None) -> Decl | None:
        # Kubernetes' sizeEstimator drops the path's first name, assuming it is self: any other
        # variable (a type name such as ``int``) is sized as self too, and so is it here.
        if not path or self.root is None:
            return None
        node: Decl | None = self.root
        for name in path[1:]:
            if node is None:
                return None
            if name in ("@items", "@values"):
                node = node.elem
            elif name == "@keys":
                node = Decl("string", 0, 2) if node.kind == "map" else None
            else:
                node = node.fields.get(name)
        return node

    def type_of(self, e: Expr) -> str:
        found = self.decl_at(self.path_of(e))
        if found is not None:
            return _DECL_TYPES[found.kind]
        text = self.ast.types.get(e.id, "dyn")
        return text

    def path_of(self, e: Expr) -> tuple[str, ...] | None:
        if isinstance(e, Ident):
            var = self.peek(e.name)
            if var is not None:
                return var.path
        return self.paths.get(e.id)

    def peek(self, name: str) -> _Var | None:
        stack = self.scopes.get(name)
        return stack[-1] if stack else None

    def size(self, e: Expr) -> int | None:
        if e.id in self.sizes:
            return self.sizes[e.id]
        if isinstance(e, Const):
            v = e.value
            if isinstance(v, (str, bytes)):
                return len(v)
            return 1
        if isinstance(e, CreateList):
            return len(e.elements)
        if isinstance(e, CreateMap):
            return len(e.entries)
        found = self.decl_at(self.path_of(e))
        if found is not None:
            return found.max_elements
        t = self.type_of(e)
        if t in _SCALARS or (
            t.startswith("optional_type(") and t[len("optional_type(") : -1] in _SCALARS
        ):
            return 1
        if isinstance(e, Ident):
            var = self.peek(e.name)
            if var is not None and var.size is not None:
                return var.size
        return None

    def size_or_unknown(self, e: Expr) -> int:
        found = self.size(e)
        return U64 if found is None else found

    # --- costs -----------------------------------------------------------------------------

    def cost(self, e: Expr) -> int:
        if isinstance(e, Const):
            return 0
        if isinstance(e, Ident):
            if self.peek(e.name) is None:
                self.paths[e.id] = (e.name,)
            return 1
        if isinstance(e, Select):
            if e.test_only:
                return self.cost(e.operand)  # has() is free in Kubernetes' environment
            total = self.cost(e.operand)
            operand_type = self.type_of(e.operand)
            if operand_type in ("map", "object") or operand_type.startswith("map("):
                total = _add(total, 1)
            parent = self.path_of(e.operand)
            if parent is not None:
                self.paths[e.id] = (*parent, e.field)
            return total
        if isinstance(e, CreateList):
            total = 10
            for x in e.elements:
                total = _add(total, self.cost(x))
            return total
        if isinstance(e, CreateMap):
            total = 30
            for k, v, _ in e.entries:
                total = _add(total, _add(self.cost(k), self.cost(v)))
            return total
        if isinstance(e, Comprehension):
            return self.comprehension(e)
        return self.call(e)

    def comprehension(self, e: Comprehension) -> int:
        total = _add(self.cost(e.iter_range), self.cost(e.accu_init))
        self.push(e.accu_var, _Var(self.path_of(e.accu_init), self.size(e.accu_init)))
        range_type = self.type_of(e.iter_range)
        range_path = self.path_of(e.iter_range)
        is_list = range_type == "list" or range_type.startswith("list(")
        if e.iter_var2:
            key_sub = "@indices" if is_list else "@keys"
            value_sub = "@items" if is_list else "@values"
            self.push(e.iter_var, _Var(_sub(range_path, key_sub), None))
            self.push(
                e.iter_var2,
                _Var(_sub(range_path, value_sub), self.entry_sizes.get(e.iter_range.id)),
            )
        else:
            sub = "@items" if is_list else "@keys"
            size = self.entry_sizes.get(e.iter_range.id) if is_list else None
            self.push(e.iter_var, _Var(_sub(range_path, sub), size))
        loop = self.cost(e.loop_condition)
        step = self.cost(e.loop_step)
        self.pop(e.iter_var)
        if e.iter_var2:
            self.pop(e.iter_var2)
        total = _add(total, self.cost(e.result))
        self.pop(e.accu_var)
        count = self.size_or_unknown(e.iter_range)
        total = _add(total, _mul(count, _add(step, loop)))
        if isinstance(e.accu_init, Const):
            init = self.size(e.accu_init)
            if init is not None:
                self.sizes[e.id] = init
        elif isinstance(e.accu_init, (CreateList, CreateMap)):
            self.sizes[e.id] = count
        return total

    def push(self, name: str, var: _Var) -> None:
        self.scopes.setdefault(name, []).append(var)

    def pop(self, name: str) -> None:
        self.scopes[name].pop()

    def call(self, e: Call) -> int:
        if e.function == "dyn" and len(e.args) == 1:
            arg_cost = self.cost(e.args[0])
            found = self.size(e.args[0])
            if found is not None:
                self.sizes[e.id] = found
            return _add(1, arg_cost)
        arg_costs = [self.cost(a) for a in e.args]
        args_total = 0
        for c in arg_costs:
            args_total = _add(args_total, c)
        overloads = self.ast.overloads.get(e.id, ())
        if not overloads:
            return 0
        total = 0
        if e.target is not None:
            total = self.cost(e.target)
        worst = 0
        for overload in overloads:
            worst = max(worst, self.function_cost(e, overload, arg_costs, args_total))
            if overload == "index_list" and e.args:
                self.paths[e.id] = (*(self.path_of(e.args[0]) or ()), "@items")
                if e.args[0].id in self.entry_sizes:
                    self.sizes[e.id] = self.entry_sizes[e.args[0].id]
            elif overload == "index_map" and e.args:
                self.paths[e.id] = (*(self.path_of(e.args[0]) or ()), "@values")
        if isinstance(e.target, Expr) and e.function in (
            "lowerAscii",
            "upperAscii",
            "substring",
            "trim",
        ):
            self.sizes.setdefault(e.id, self.size_or_unknown(e.target))
        return _add(total, worst)

    def function_cost(self, e: Call, overload: str, arg_costs: list[int], args_total: int) -> int:
        k8s = self.k8s_cost(e, overload)
        if k8s is not None:
            return _add(k8s, args_total)
        args = e.args
        target = e.target
        size = self.size_or_unknown
        if overload in ("starts_with_string", "ends_with_string") and len(args) == 1:
            # cel-go sizes the prefix here (the argument), where its runtime sizes the string.
            return _add(_factor(size(args[0]), _TRAVERSAL), args_total)
        if overload in ("string_to_bytes", "bytes_to_string", "strings_quote") and len(args) == 1:
            return _add(_factor(size(args[0]), _TRAVERSAL), args_total)
        if overload == "in_list" and len(args) == 2:
            return _add(size(args[1]), args_total)
        if overload == "matches_string":
            text, pattern = (target, args[0]) if target is not None else (args[0], args[1])
            return _add(
                _mul(_factor(_add(size(text), 1), _TRAVERSAL), _factor(size(pattern), _REGEX)),
                args_total,
            )
        if overload == "contains_string" and target is not None:
            return _add(
                _mul(_factor(size(target), _TRAVERSAL), _factor(size(args[0]), _TRAVERSAL)),
                args_total,
            )
        if overload in ("logical_or", "logical_and"):
            return _add(arg_costs[0], arg_costs[1])
        if overload == "conditional":
            return _add(arg_costs[0], max(arg_costs[1], arg_costs[2]))
        if overload in ("add_string", "add_bytes", "add_list") and len(args) == 2:
            result = _add(size(args[0]), size(args[1]))
            self.sizes[e.id] = result
            if overload == "add_list":
                return _add(1, args_total)
            return _add(_factor(result, _TRAVERSAL), args_total)
        if overload in _SIZED_COMPARISONS and len(args) == 2:
            smallest = min(size(args[0]), size(args[1]))
            return _add(_factor(smallest, _TRAVERSAL), args_total)
        return _add(1, args_total)

    def k8s_cost(self, e: Call, overload: str) -> int | None:
        """Kubernetes' library ``EstimateCallCost``; None when it has no estimate."""
        fn, target, args = e.function, e.target, e.args
        size = self.size_or_unknown
        if fn in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf") and target is not None:
            target_type = self.type_of(target)
            if target_type == "list" or target_type.startswith("list("):
                element = self.element_type(target)
                per = 1
                if element in ("string", "bytes"):
                    per = _add(1, _factor(self.element_size(target), _TRAVERSAL))
                return _mul(size(target), per)
            return _factor(size(target), _TRAVERSAL)
        if fn == "url" and len(args) == 1:
            return _factor(size(args[0]), _TRAVERSAL)
        if fn in ("lowerAscii", "upperAscii", "substring", "trim") and target is not None:
            return _factor(size(target), _TRAVERSAL)
        if fn == "replace" and target is not None and len(args) >= 2:
            return _factor(size(target), 2 * _TRAVERSAL)
        if fn == "split" and target is not None:
            return _factor(size(target), 2 * _TRAVERSAL)
        if fn == "join" and target is not None:
            total = _mul(size(target), self.element_size(target))
            if args:
                total = _add(total, _mul(size(args[0]), max(size(target) - 1, 0)))
            self.sizes[e.id] = total
            return _factor(total, _TRAVERSAL)
        if fn in ("find", "findAll") and target is not None and args:
            text = _factor(_add(size(target), 1), _TRAVERSAL)
            return _mul(text, _factor(size(args[0]), _REGEX))
        if fn in ("cidr", "isIP", "isCIDR", "quantity", "isQuantity") and target is not None:
            return _factor(size(args[0]), _TRAVERSAL) if args else None
        if fn == "ip" and target is not None:
            if overload == "cidr_ip" or not args:
                return 1
            return _factor(size(args[0]), _TRAVERSAL)
        if fn == "ip.isCanonical" and target is not None and args:
            return _factor(size(args[0]), 2 * _TRAVERSAL)
        if fn in (
            "masked",
            "prefixLength",
            "family",
            "isUnspecified",
            "isLoopback",
            "isLinkLocalMulticast",
            "isLinkLocalUnicast",
        ):
            return 1
        if fn == "containsIP" and target is not None and args:
            cost = _factor(32, _TRAVERSAL)
            if overload == "cidr_contains_ip_string":
                cost = _add(cost, _factor(size(args[0]), _TRAVERSAL))
            return cost
        if fn == "containsCIDR" and target is not None and args:
            cost = _add(_add(_factor(32, _TRAVERSAL), _factor(16, _TRAVERSAL)), 1)
            if overload == "cidr_contains_cidr_string":
                cost = _add(cost, _factor(size(args[0]), _TRAVERSAL))
            return cost
        if fn in (
            "sign",
            "asInteger",
            "isInteger",
            "asApproximateFloat",
            "isGreaterThan",
            "isLessThan",
            "compareTo",
            "add",
            "sub",
        ):
            return 1
        return None

    def element_type(self, e: Expr) -> str:
        found = self.decl_at(self.path_of(e))
        if found is not None and found.elem is not None:
            return _DECL_TYPES[found.elem.kind]
        t = self.type_of(e)
        return t[len("list(") : -1] if t.startswith("list(") else "dyn"

    def element_size(self, e: Expr) -> int:
        found = self.decl_at(self.path_of(e))
        if found is not None and found.elem is not None:
            return found.elem.max_elements
        if e.id in self.entry_sizes:
            return self.entry_sizes[e.id]
        return 1 if self.element_type(e) in _SCALARS else U64


_SIZED_COMPARISONS: Final = frozenset(
    {
        "less_string",
        "greater_string",
        "less_equals_string",
        "greater_equals_string",
        "less_bytes",
        "greater_bytes",
        "less_equals_bytes",
        "greater_equals_bytes",
        "equals",
        "not_equals",
    }
)


def _sub(path: tuple[str, ...] | None, name: str) -> tuple[str, ...] | None:
    return None if path is None else (*path, name)
