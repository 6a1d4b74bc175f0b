"""Compile checks of the CEL expressions that admission objects store (webhook match
conditions, ValidatingAdmissionPolicy validations, message expressions, audit annotations and
variables), as Kubernetes makes them when such an object is written, and their evaluation.

Each expression is parsed and type-checked with the variables Kubernetes declares for it:
``object``, ``oldObject``, ``request`` and ``namespaceObject`` always, ``authorizer`` (with
its library) where the expression may call it, ``params`` when the policy has a ``paramKind``,
``variables`` when the policy declares variables. They are declared ``dyn``, so a name
Kubernetes does not declare is refused with cel-go's "undeclared reference" message, while
fields of these variables are not checked.

cel-cpp names a whole undeclared select chain (``'params.x'``, at its last dot) where cel-go
names its root identifier (``'params'``, where it starts); the message is rewritten to
cel-go's, caret line included.

Evaluation (further down) compiles each expression once (:func:`compile_admission_expression`)
and evaluates it against one :class:`Activation` per request, with Kubernetes' cost limits and
error texts; ValidatingAdmissionPolicy and webhook ``matchConditions`` share it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from kstore.api.cel._ast import (
    Call,
    Comprehension,
    CreateList,
    CreateMap,
    Expr,
    Ident,
    Select,
)
from kstore.api.cel._environment import (
    CompileError,
    check_with_variables,
    compile_with_variables,
)
from kstore.api.cel._fields import error_at
from kstore.api.cel._interpreter import Evaluator, State, build, unescape
from kstore.api.cel._k8s_library import FUNCTIONS as K8S_FUNCTIONS
from kstore.api.cel._values import CostExceeded, ErrorValue, EvalError, NoOverload
from kstore.api.cel.rules import PER_CALL_LIMIT, RUNTIME_COST_BUDGET
from kstore.api.schema import ANY, SCALAR, FieldSchema, SchemaType

__all__ = [
    "ADMISSION_FUNCTIONS",
    "AUTHZ_FUNCTIONS",
    "MATCH_CONDITIONS_BUDGET",
    "OUT_OF_BUDGET",
    "PER_CALL_LIMIT",
    "RUNTIME_COST_BUDGET",
    "Activation",
    "AdmissionCelError",
    "AuthorizationCheck",
    "AuthorizationDecision",
    "Authorize",
    "CompiledExpression",
    "OutOfBudget",
    "Variables",
    "admission_compile_error",
    "admission_variables",
    "allow_all",
    "compile_admission_expression",
    "match_conditions",
    "openapi_field_schema",
    "root_reference",
    "undefined_field_error",
]

_ALWAYS: Final = frozenset(("object", "oldObject", "request", "namespaceObject"))
_UNDECLARED: Final = re.compile(
    r"ERROR: <input>:(?P<line>\d+):(?P<col>\d+): undeclared reference to '(?P<name>[\w.]+)' "
    r"\(in container ''\)\n \| (?P<source>[^\n]*)\n \| \.*\^"
)


def root_reference(message: str) -> str:
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


def admission_variables(
    *, params: bool, authorizer: bool, variables: frozenset[str] | None
) -> frozenset[str]:
    """The variable names Kubernetes declares for an admission expression."""
    names = set(_ALWAYS)
    if params:
        names.add("params")
    if authorizer:
        names.add("authorizer")
    if variables is not None:
        names.add("variables")
    return frozenset(names)


def admission_compile_error(
    expression: str,
    *,
    params: bool,
    authorizer: bool,
    variables: frozenset[str] | None = None,
) -> str | None:
    """Kubernetes' error detail for ``expression`` (``compilation failed: ERROR: ...``), or
    None when it compiles. ``variables`` is None when the policy declares none."""
    names = admission_variables(params=params, authorizer=authorizer, variables=variables)
    try:
        check_with_variables(expression, names, authorizer=authorizer)
    except CompileError as exc:
        return f"compilation failed: {root_reference(str(exc))}"
    return None


# -- evaluation -------------------------------------------------------------------------------
#
# Kubernetes' admission CEL (k8s.io/apiserver/pkg/admission/plugin/cel): every expression of a
# policy (or a webhook's matchConditions) is compiled once, with the variables it may read
# declared; a request evaluates them against one activation holding ``object``, ``oldObject``,
# ``request``, ``params``, ``namespaceObject``, ``authorizer`` and ``variables``. Each
# evaluation may spend ``PER_CALL_LIMIT``; what it spent (the lazily evaluated variables it
# read included) comes off the budget of the policy binding (``RUNTIME_COST_BUDGET``) or of
# the match conditions (``MATCH_CONDITIONS_BUDGET``).

#: k8s.io/apiserver/pkg/apis/cel: RuntimeCELCostBudgetMatchConditions.
MATCH_CONDITIONS_BUDGET: Final = 2_500_000
OUT_OF_BUDGET: Final = (
    "validation failed due to running out of cost budget, no further validation rules will be run"
)


class AdmissionCelError(Exception):
    """An expression that could not be evaluated; ``str()`` is Kubernetes' text for it."""


class OutOfBudget(AdmissionCelError):
    """The budget is spent: no further expression of the policy runs."""

    def __init__(self) -> None:
        super().__init__(OUT_OF_BUDGET)


@dataclass(frozen=True, slots=True)
class AuthorizationCheck:
    """What an ``authorizer`` check asks: Kubernetes' ``authorizer.AttributesRecord`` for the
    user the check is about (``user`` in ``UserInfo``'s JSON shape: username, uid, groups,
    extra)."""

    user: Mapping[str, Any]
    verb: str
    resource_request: bool
    path: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    field_selector: str = ""
    label_selector: str = ""


@dataclass(frozen=True, slots=True)
class AuthorizationDecision:
    """``allowed`` (Kubernetes' DecisionAllow), its reason, and an error when the authorizer
    failed."""

    allowed: bool
    reason: str = ""
    error: str = ""


#: Decides one check; what the server's authorization filter would answer.
Authorize = Callable[[AuthorizationCheck], AuthorizationDecision]


def allow_all(check: AuthorizationCheck) -> AuthorizationDecision:
    """The authorizer of a store with no authorization (``kstore.open``): everything allowed."""
    return AuthorizationDecision(True)


class _Decision:
    __slots__ = ("decision",)

    def __init__(self, decision: AuthorizationDecision) -> None:
        self.decision = decision


class _Authorizer:
    """The ``authorizer`` variable: checks are asked for ``user`` (the requester, or the
    service account :func:`serviceAccount` names)."""

    __slots__ = ("authorize", "request_check", "user")

    def __init__(
        self,
        user: Mapping[str, Any],
        authorize: Authorize,
        request_check: dict[str, str] | None = None,
    ) -> None:
        self.user = user
        self.authorize = authorize
        self.request_check = request_check

    def cel_field(self, name: str) -> Any:
        if name == "requestResource" and self.request_check is not None:
            return _Check(self, {**self.request_check, "kind": "resource"})
        raise AdmissionCelError(f"no such key: {name}")


class _Check:
    """A path, group or resource check being built (``kind`` says which)."""

    __slots__ = ("authorizer", "fields")

    def __init__(self, authorizer: _Authorizer, fields: dict[str, str]) -> None:
        self.authorizer = authorizer
        self.fields = fields

    def with_field(self, kind: str, name: str, value: Any) -> _Check:
        if type(value) is not str:
            raise NoOverload()
        return _Check(self.authorizer, {**self.fields, "kind": kind, name: value})

    def check(self, verb: Any) -> _Decision:
        if type(verb) is not str:
            raise NoOverload()
        f = self.fields
        if f["kind"] == "path":
            request = AuthorizationCheck(
                user=self.authorizer.user, verb=verb, resource_request=False, path=f["path"]
            )
        else:
            request = AuthorizationCheck(
                user=self.authorizer.user,
                verb=verb,
                resource_request=True,
                api_group=f.get("group", ""),
                api_version=f.get("version", "*"),
                resource=f.get("resource", ""),
                subresource=f.get("subresource", ""),
                namespace=f.get("namespace", ""),
                name=f.get("name", ""),
                field_selector=f.get("fieldSelector", ""),
                label_selector=f.get("labelSelector", ""),
            )
        try:
            return _Decision(self.authorizer.authorize(request))
        except Exception as exc:
            return _Decision(AuthorizationDecision(False, "", str(exc) or type(exc).__name__))


def _service_account_user(namespace: str, name: str) -> dict[str, Any]:
    return {
        "username": f"system:serviceaccount:{namespace}:{name}",
        "groups": ["system:serviceaccounts", f"system:serviceaccounts:{namespace}"],
    }


def _member(kinds: tuple[type, ...], fn: Callable[..., Any]) -> Callable[..., Any]:
    def call(receiver: Any, *args: Any) -> Any:
        if type(receiver) not in kinds:
            raise NoOverload()
        return fn(receiver, *args)

    return call


def _service_account(a: _Authorizer, namespace: Any, name: Any) -> _Authorizer:
    if type(namespace) is not str or type(name) is not str:
        raise NoOverload()
    return _Authorizer(_service_account_user(namespace, name), a.authorize)


def _path(a: _Authorizer, path: Any) -> _Check:
    return _Check(a, {}).with_field("path", "path", path)


def _group(a: _Authorizer, group: Any) -> _Check:
    return _Check(a, {}).with_field("group", "group", group)


def _resource_field(name: str) -> Callable[[_Check, Any], _Check]:
    def step(c: _Check, value: Any) -> _Check:
        if c.fields["kind"] == "path" or (name == "resource") != (c.fields["kind"] == "group"):
            raise NoOverload()
        return c.with_field("resource", name, value)

    return step


def _decision_error(d: _Decision) -> str:
    return d.decision.error


#: The authorizer library's functions (``k8s.io/apiserver/pkg/cel/library/authz.go``).
AUTHZ_FUNCTIONS: Final[dict[str, Callable[..., Any]]] = {
    "path": _member((_Authorizer,), _path),
    "group": _member((_Authorizer,), _group),
    "serviceAccount": _member((_Authorizer,), _service_account),
    "resource": _member((_Check,), _resource_field("resource")),
    "subresource": _member((_Check,), _resource_field("subresource")),
    "namespace": _member((_Check,), _resource_field("namespace")),
    "name": _member((_Check,), _resource_field("name")),
    "fieldSelector": _member((_Check,), _resource_field("fieldSelector")),
    "labelSelector": _member((_Check,), _resource_field("labelSelector")),
    "check": _member((_Check,), _Check.check),
    "allowed": _member((_Decision,), lambda d: d.decision.allowed),
    "reason": _member((_Decision,), lambda d: d.decision.reason),
    "errored": _member((_Decision,), lambda d: bool(d.decision.error)),
    "error": _member((_Decision,), _decision_error),
}
#: Every function an admission expression may call, by the name the checker resolves.
ADMISSION_FUNCTIONS: Final = {**K8S_FUNCTIONS, **AUTHZ_FUNCTIONS}
_FUNCTIONS: Final = ADMISSION_FUNCTIONS


@dataclass(frozen=True, slots=True)
class CompiledExpression:
    """One expression, compiled (``program``) or not (``error``: Kubernetes' compile error)."""

    source: str
    program: Evaluator | None
    error: str = ""
    result_type: str = "DYN"


def compile_admission_expression(
    expression: str,
    *,
    params: bool,
    authorizer: bool,
    variables: frozenset[str] | None = None,
) -> CompiledExpression:
    """Compile ``expression`` with the variables Kubernetes declares for it (see
    :func:`admission_compile_error`); compile once, evaluate per request."""
    names = admission_variables(params=params, authorizer=authorizer, variables=variables)
    try:
        ast, result_type = compile_with_variables(expression, names, authorizer=authorizer)
    except CompileError as exc:
        return CompiledExpression(
            expression, None, f"compilation failed: {root_reference(str(exc))}"
        )
    return CompiledExpression(expression, build(ast.expr, _FUNCTIONS), "", result_type)


class Variables:
    """The ``variables`` of one activation: each evaluated when first read, in the policy's
    order of declaration, then kept; its cost is charged to the expression that read it."""

    __slots__ = ("_activation", "_compiled", "_values")

    def __init__(self, compiled: Mapping[str, CompiledExpression], activation: Activation) -> None:
        self._compiled = compiled
        self._activation = activation
        self._values: dict[str, Any] = {}

    def cel_field(self, name: str) -> Any:
        try:
            value = self._values[name]
        except KeyError:
            value = self._values[name] = self._evaluate(name)
        if type(value) is ErrorValue:
            raise value.error
        return value

    def _evaluate(self, name: str) -> Any:
        compiled = self._compiled.get(name)
        if compiled is None:
            return ErrorValue(EvalError(f"no such key: {name}"))
        if compiled.program is None:
            return ErrorValue(
                EvalError(f'composited variable "{name}" fails to compile: {compiled.error}')
            )
        st = State(PER_CALL_LIMIT)
        try:
            return compiled.program(self._activation.bindings, st)
        except (EvalError, AdmissionCelError, CostExceeded) as exc:
            return ErrorValue(EvalError(f'composited variable "{name}" fails to evaluate: {exc}'))
        finally:
            self._activation.variable_cost += st.cost


class Activation:
    """The variables one request's evaluations read (see the module's evaluation notes)."""

    __slots__ = ("bindings", "variable_cost")

    def __init__(
        self,
        *,
        object: Any,
        old_object: Any,
        request: Mapping[str, Any],
        params: Any = None,
        namespace_object: Any = None,
        authorize: Authorize | None = None,
        variables: Mapping[str, CompiledExpression] | None = None,
    ) -> None:
        self.variable_cost = 0
        bindings: dict[str, Any] = {
            "object": object,
            "oldObject": old_object,
            "request": request,
            "params": params,
            "namespaceObject": namespace_object,
        }
        if authorize is not None:
            user = request.get("userInfo") or {}
            bindings["authorizer"] = _Authorizer(user, authorize, _request_check(request))
        if variables is not None:
            bindings["variables"] = Variables(variables, self)
        self.bindings = bindings

    def evaluate(self, compiled: CompiledExpression, budget: int) -> tuple[Any, int]:
        """The value of ``compiled`` and the budget left. Raises :class:`AdmissionCelError`
        with Kubernetes' text when it cannot be evaluated, :class:`OutOfBudget` when the
        budget is spent."""
        if compiled.program is None:
            raise AdmissionCelError(f"compilation error: {compiled.error}")
        st = State(PER_CALL_LIMIT)
        self.variable_cost = 0
        error: str | None = None
        value: Any = None
        try:
            value = compiled.program(self.bindings, st)
        except (EvalError, AdmissionCelError, CostExceeded) as exc:
            error = str(exc)
        # The variables read were evaluated apart; their cost is charged first, as in
        # Kubernetes, then the expression's own.
        if self.variable_cost > budget:
            raise OutOfBudget()
        budget -= self.variable_cost
        if st.cost > budget:
            raise OutOfBudget()
        budget -= st.cost
        if error is not None:
            raise AdmissionCelError(f"expression '{compiled.source}' resulted in error: {error}")
        return value, budget


def match_conditions(
    conditions: Sequence[tuple[str, CompiledExpression]],
    activation: Activation,
    budget: int = MATCH_CONDITIONS_BUDGET,
) -> bool | str:
    """Kubernetes' match-condition matcher (policies and webhooks): True when every condition
    (name, expression) holds, False as soon as one is false, else the errors' text (one error,
    or several in brackets), which the failure policy decides on."""
    errors: list[str] = []
    for _, compiled in conditions:
        try:
            value, budget = activation.evaluate(compiled, budget)
        except OutOfBudget as exc:
            return str(exc)
        except AdmissionCelError as exc:
            errors.append(str(exc))
            continue
        if value is False:
            return False
    if errors:
        return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
    return True


def _request_check(request: Mapping[str, Any]) -> dict[str, str]:
    resource = request.get("resource") or {}
    return {
        "group": str(resource.get("group") or ""),
        "version": str(resource.get("version") or ""),
        "resource": str(resource.get("resource") or ""),
        "subresource": str(request.get("subResource") or ""),
        "namespace": str(request.get("namespace") or ""),
        "name": str(request.get("name") or ""),
    }


# -- type checking ----------------------------------------------------------------------------
#
# Kubernetes' policy type checker compiles each validation against every kind the policy's
# rules name, ``object`` and ``oldObject`` typed by the kind's schema, and reports what does
# not check as ``status.typeChecking.expressionWarnings``. What kstore checks this way: fields
# selected on ``object``/``oldObject`` (and below, through lists, maps and comprehensions)
# must be fields of the kind.


def undefined_field_error(
    expression: str,
    schema: FieldSchema,
    *,
    params: bool,
    variables: frozenset[str] | None = None,
) -> str:
    """cel-go's error for the first field ``expression`` selects on ``object`` or
    ``oldObject`` that ``schema`` (the kind's structural schema) does not have; "" when none
    (or when the expression does not compile: that is reported when it is written)."""
    names = set(_ALWAYS) | {"authorizer"}
    if params:
        names.add("params")
    if variables is not None:
        names.add("variables")
    try:
        ast, _ = compile_with_variables(expression, frozenset(names), authorizer=True)
    except CompileError:
        return ""
    found: list[str] = []

    def visit(e: Expr, scope: Mapping[str, FieldSchema | None]) -> None:
        if found:
            return
        if isinstance(e, Select):
            parent = _schema_of(e.operand, scope)
            undefined = (
                parent is not None
                and parent.type is SchemaType.OBJECT
                and _field(parent, e.field) is None
            )
            if undefined:
                position = ast.positions.get(e.id, 0)
                found.append(error_at(expression, position, f"undefined field '{e.field}'"))
                return
            visit(e.operand, scope)
        elif isinstance(e, Call):
            for part in ([e.target] if e.target is not None else []) + list(e.args):
                visit(part, scope)
        elif isinstance(e, CreateList):
            for x in e.elements:
                visit(x, scope)
        elif isinstance(e, CreateMap):
            for k, v, _ in e.entries:
                visit(k, scope)
                visit(v, scope)
        elif isinstance(e, Comprehension):
            visit(e.iter_range, scope)
            over = _schema_of(e.iter_range, scope)
            inner = dict(scope)
            inner[e.iter_var] = None
            if over is not None and over.type is SchemaType.LIST and not e.iter_var2:
                inner[e.iter_var] = over.items
            if e.iter_var2:
                inner[e.iter_var2] = None
            inner[e.accu_var] = None
            for step in (e.accu_init, e.loop_condition, e.loop_step, e.result):
                visit(step, inner)

    visit(ast.expr, {"object": schema, "oldObject": schema})
    return found[0] if found else ""


def _field(schema: FieldSchema, name: str) -> FieldSchema | None:
    found = schema.fields.get(name)
    if found is None:
        plain = unescape(name)
        if plain is not None:
            found = schema.fields.get(plain)
    return found


def _schema_of(e: Expr, scope: Mapping[str, FieldSchema | None]) -> FieldSchema | None:
    if isinstance(e, Ident):
        return scope.get(e.name)
    if isinstance(e, Select) and not e.test_only:
        parent = _schema_of(e.operand, scope)
        if parent is None:
            return None
        if parent.type is SchemaType.OBJECT:
            return _field(parent, e.field)
        if parent.type is SchemaType.MAP:
            return parent.items
        return None
    if isinstance(e, Call) and e.function == "_[_]" and len(e.args) == 2:
        parent = _schema_of(e.args[0], scope)
        if parent is not None and parent.type in (SchemaType.LIST, SchemaType.MAP):
            return parent.items
    return None


def openapi_field_schema(schema: Mapping[str, Any], *, root: bool = True) -> FieldSchema:
    """A custom kind's OpenAPI v3 schema as a structural :class:`FieldSchema` (at a
    resource root, or an embedded resource, with ``apiVersion``, ``kind`` and an open
    ``metadata``)."""
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items")
        inner = openapi_field_schema(items, root=False) if isinstance(items, Mapping) else ANY
        return FieldSchema.list_of(inner)
    embedded = root or bool(schema.get("x-kubernetes-embedded-resource"))
    if kind != "object" and not embedded:
        return SCALAR
    properties = schema.get("properties")
    additional = schema.get("additionalProperties")
    if isinstance(additional, Mapping) and not properties:
        return FieldSchema.map_of(openapi_field_schema(additional, root=False))
    if not isinstance(properties, Mapping):
        if schema.get("x-kubernetes-preserve-unknown-fields"):
            return ANY
        properties = {}
    fields = {
        str(name): openapi_field_schema(sub, root=False)
        for name, sub in properties.items()
        if isinstance(sub, Mapping)
    }
    if embedded:
        fields.setdefault("apiVersion", SCALAR)
        fields.setdefault("kind", SCALAR)
        fields["metadata"] = ANY
    return FieldSchema.object(fields)
