"""Compile a schema's ``x-kubernetes-validations`` into a tree of rule nodes, with the checks
Kubernetes makes when a CustomResourceDefinition is written.

Per rule, in Kubernetes' order (apiextensions ``validation.go``):

- field checks: ``rule`` not blank (Required ``rule is not specified``), ``message`` not blank
  and on one line, a multi-line ``rule`` needs a ``message``, ``messageExpression`` not blank,
  ``reason`` one of the four supported, ``fieldPath`` not blank, on one line and naming a field;
- when those found nothing at this node or below it, the CEL checks: the estimated cost
  (:mod:`._estimate`) within ``StaticEstimatedCostLimit``, the rule compiles and is a bool,
  the ``messageExpression`` compiles and is a string (and its cost), ``oldSelf`` is not used
  where old values cannot be correlated (below a list that is not ``x-kubernetes-list-type:
  map``, or a property of an ``atomic`` map), ``optionalOldSelf`` only with ``oldSelf``.

Invariant: a rule node holds programs only for rules that passed every check, so validation
never meets an uncompiled rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from kstore.api.cel._convert import Converter, converter
from kstore.api.cel._decl import decl_of, max_cardinality
from kstore.api.cel._environment import CompileError, compile_expression
from kstore.api.cel._estimate import (
    STATIC_COST_LIMIT,
    STATIC_CRD_COST_LIMIT,
    U64,
    cost_error_message,
    estimate_cost,
)
from kstore.api.cel._field_path import FieldPathError, valid_field_path
from kstore.api.cel._fields import check_fields, map_selects, root_view, static_type
from kstore.api.cel._interpreter import Evaluator, build
from kstore.api.cel._k8s_library import FUNCTIONS as K8S_FUNCTIONS
from kstore.api.cel._literals import check_literals
from kstore.api.validation.field import (
    GoStruct,
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
)
from kstore.errors import Cause

__all__ = ["Node", "Rule", "TotalCost", "compile_node", "root_context", "total_cost_errors"]

Schema = Mapping[str, Any]

_REASONS: Final = (
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
)


@dataclass(slots=True)
class Rule:
    """One compiled rule. ``program`` is None when the rule did not compile: validation then
    reports ``rule compile error: <compile_error>`` at the node, as Kubernetes' validator does
    for a stored CRD whose rule no longer compiles."""

    source: dict[str, Any]
    program: Evaluator | None
    uses_old_self: bool
    optional_old_self: bool
    message_program: Evaluator | None
    field_path: str
    compile_error: str = ""

    @property
    def error_string(self) -> str:
        message = str(self.source.get("message") or "").strip()
        return message or str(self.source.get("rule", "")).strip()


@dataclass(slots=True)
class Node:
    schema_type: str
    rules: list[Rule] = field(default_factory=list)
    properties: dict[str, Node] = field(default_factory=dict)
    items: Node | None = None
    additional: Node | None = None
    list_map_keys: tuple[str, ...] = ()
    #: Items of a list without ``x-kubernetes-list-type`` correlate by index for ratcheting.
    index_correlated: bool = False
    correlatable_map: bool = True
    is_root: bool = False
    # Turns the stored JSON into the CEL values the schema declares; None when not needed.
    convert: Converter | None = None

    def empty(self) -> bool:
        return not (self.rules or self.properties or self.items or self.additional)


@dataclass(slots=True)
class TotalCost:
    """Kubernetes' ``TotalCost``: every rule's estimated cost (times its cardinality) and
    messageExpression cost, summed, with the (at most 4) rules costing 1% of the CRD limit
    or more, most expensive first."""

    total: int = 0
    most_expensive: list[tuple[int, Path]] = field(default_factory=list)

    def observe(self, path: Path, cost: int) -> None:
        self.total = min(self.total + cost, U64)
        if cost < STATIC_CRD_COST_LIMIT // 100:
            return
        self.most_expensive.append((cost, path))
        self.most_expensive.sort(key=lambda entry: -entry[0])
        del self.most_expensive[4:]


@dataclass(slots=True)
class _Context:
    """Where a node sits: the highest path below which old values cannot be correlated, and
    how many times its rules may run per object (the product of enclosing ``maxItems`` and
    ``maxProperties``; None when unbounded)."""

    uncorrelatable: Path | None = None
    cardinality: int | None = 1
    total: TotalCost = field(default_factory=TotalCost)


def root_context(total: TotalCost) -> _Context:
    return _Context(total=total)


def compile_node(
    schema: Schema, path: Path, errors: list[Cause], *, is_root: bool, ctx: _Context | None = None
) -> tuple[Node, bool]:
    """(the node, whether field checks failed at or below it)."""
    ctx = ctx or _Context()
    node = Node(
        schema_type=str(schema.get("type", "")),
        list_map_keys=tuple(schema.get("x-kubernetes-list-map-keys") or ())
        if schema.get("x-kubernetes-list-type") == "map"
        else (),
        index_correlated=not schema.get("x-kubernetes-list-type"),
        correlatable_map=schema.get("x-kubernetes-map-type") != "atomic",
        is_root=is_root,
    )
    failed = False
    children = _times(ctx.cardinality, _max_elements(schema))
    additional = schema.get("additionalProperties")
    if isinstance(additional, Mapping):
        sub_ctx = _Context(ctx.uncorrelatable, children, ctx.total)
        child, bad = compile_node(
            additional,
            path.child("additionalProperties"),
            errors,
            is_root=_embedded(additional),
            ctx=sub_ctx,
        )
        failed |= bad
        node.additional = None if child.empty() else child
    for name, sub in (schema.get("properties") or {}).items():
        sub_ctx = _Context(ctx.uncorrelatable, children, ctx.total)
        if not node.correlatable_map and sub_ctx.uncorrelatable is None:
            sub_ctx.uncorrelatable = path
        child, bad = compile_node(
            sub, path.child("properties").key(name), errors, is_root=_embedded(sub), ctx=sub_ctx
        )
        failed |= bad
        if not child.empty():
            node.properties[name] = child
    items = schema.get("items")
    if isinstance(items, Mapping):
        sub_ctx = _Context(ctx.uncorrelatable, children, ctx.total)
        if schema.get("x-kubernetes-list-type") != "map" and sub_ctx.uncorrelatable is None:
            sub_ctx.uncorrelatable = path
        child, bad = compile_node(
            items, path.child("items"), errors, is_root=_embedded(items), ctx=sub_ctx
        )
        failed |= bad
        node.items = None if child.empty() else child

    rules = list(schema.get("x-kubernetes-validations") or ())
    rules_path = path.child("x-kubernetes-validations")
    for i, rule in enumerate(rules):
        failed |= _field_checks(rule, schema, rules_path.index(i), errors)
    view = root_view(schema) if is_root else schema
    # The CEL checks are reported only when the field checks passed at and below this node,
    # as Kubernetes does; the rules are compiled either way, for validation.
    cel_errors: list[Cause] = []
    for i, rule in enumerate(rules):
        compiled = _compile_rule(rule, view, rules_path.index(i), cel_errors, ctx)
        if compiled is not None:
            node.rules.append(compiled)
    if not failed:
        errors.extend(cel_errors)
    if node.rules:
        node.convert = converter(schema)
    return node, failed


def _embedded(schema: Schema) -> bool:
    # An embedded resource is a resource root of its own: apiVersion, kind, metadata.
    return bool(schema.get("x-kubernetes-embedded-resource"))


def _max_elements(schema: Schema) -> int | None:
    """How many times each child may occur per occurrence of ``schema`` (None: unbounded)."""
    kind = schema.get("type")
    if kind == "object":
        if schema.get("additionalProperties") is not None:
            bound = schema.get("maxProperties")
            return max(int(bound), 0) if bound is not None else None
        return 1
    if kind == "array":
        bound = schema.get("maxItems")
        return max(int(bound), 0) if bound is not None else None
    return 1


def _times(cardinality: int | None, factor: int | None) -> int | None:
    if cardinality is None or factor is None:
        return None
    return min(cardinality * factor, U64)


def _has_newlines(text: str) -> bool:
    return "\n" in text or "\r" in text


def _field_checks(rule: Mapping[str, Any], schema: Schema, path: Path, errors: list[Cause]) -> bool:
    start = len(errors)
    source = str(rule.get("rule") or "").strip()
    message = str(rule.get("message") or "")
    if not source:
        errors.append(required(path.child("rule"), "rule is not specified"))
    elif message and not message.strip():
        errors.append(invalid(path.child("message"), message, "must be non-empty if specified"))
    elif _has_newlines(message.strip()):
        errors.append(invalid(path.child("message"), message, "must not contain line breaks"))
    elif _has_newlines(source) and not message.strip():
        errors.append(
            required(
                path.child("message"), "message must be specified if rule contains line breaks"
            )
        )
    message_expression = str(rule.get("messageExpression") or "")
    if message_expression and not message_expression.strip():
        errors.append(
            required(
                path.child("messageExpression"), "messageExpression must be non-empty if specified"
            )
        )
    reason = rule.get("reason")
    if reason is not None and reason not in _REASONS:
        errors.append(not_supported(path.child("reason"), reason, _REASONS))
    field_path = str(rule.get("fieldPath") or "")
    if field_path and not field_path.strip():
        errors.append(
            invalid(path.child("fieldPath"), field_path, "must be non-empty if specified")
        )
    if _has_newlines(field_path):
        errors.append(invalid(path.child("fieldPath"), field_path, "must not contain line breaks"))
    if field_path:
        try:
            valid_field_path(field_path, schema)
        except FieldPathError:
            errors.append(invalid(path.child("fieldPath"), field_path, "must be a valid path"))
    return len(errors) > start


def rule_value(rule: Mapping[str, Any]) -> GoStruct:
    # field.Invalid shows the ValidationRule as JSON: `rule` always, the rest when set.
    value = GoStruct(rule=rule.get("rule", ""))
    for key in ("message", "messageExpression", "reason", "fieldPath", "optionalOldSelf"):
        if rule.get(key) not in (None, ""):
            value[key] = rule[key]
    return value


def _compile_rule(
    rule: Mapping[str, Any], schema: Schema, path: Path, errors: list[Cause], ctx: _Context
) -> Rule | None:
    source = str(rule.get("rule", ""))
    if not source.strip():
        return None  # reported by the field checks; nothing to run
    optional_old_self = bool(rule.get("optionalOldSelf"))
    program: Evaluator | None = None
    compile_error = ""
    uses_old_self = False
    try:
        ast, result_type = compile_expression(
            source, optional_old_self=optional_old_self, self_decl=decl_of(schema)
        )
        detail = check_fields(ast, source, schema, optional_old_self) or check_literals(ast, source)
        if detail:
            raise CompileError(detail)
    except CompileError as exc:
        compile_error = f"compilation failed: {exc}"
    else:
        uses_old_self = "oldSelf" in ast.references.values()
        cost = _scaled(estimate_cost(ast, schema), ctx.cardinality, schema)
        ctx.total.observe(path.child("rule"), cost)
        if cost > STATIC_COST_LIMIT:
            errors.append(
                forbidden(
                    path.child("rule"),
                    cost_error_message("estimated rule cost", cost, STATIC_COST_LIMIT),
                )
            )
        if result_type not in ("BOOL", "DYN") or static_type(ast, schema) not in ("", "bool"):
            compile_error = "cel expression must evaluate to a bool"
        else:
            program = build(ast.expr, K8S_FUNCTIONS, map_selects(ast, schema))
    if compile_error:
        errors.append(invalid(path.child("rule"), rule_value(rule), compile_error))
    message_program = _compile_message(rule, schema, path, errors, ctx.total)
    if uses_old_self:
        if ctx.uncorrelatable is not None:
            errors.append(
                invalid(
                    path.child("rule"),
                    source,
                    "oldSelf cannot be used on the uncorrelatable portion of the schema within "
                    f"{ctx.uncorrelatable}",
                )
            )
    elif rule.get("optionalOldSelf") is not None:
        errors.append(
            invalid(
                path.child("optionalOldSelf"),
                bool(rule["optionalOldSelf"]),
                "may not be set if oldSelf is not used in rule",
            )
        )
    field_path = str(rule.get("fieldPath") or "")
    try:
        normalized = valid_field_path(field_path, schema) if field_path else ""
    except FieldPathError:
        normalized = ""  # reported by the field checks; Kubernetes then reports at the node
    return Rule(
        source=dict(rule),
        program=program,
        uses_old_self=uses_old_self,
        optional_old_self=optional_old_self,
        message_program=message_program,
        field_path=normalized,
        compile_error=compile_error,
    )


def _compile_message(
    rule: Mapping[str, Any], schema: Schema, path: Path, errors: list[Cause], total: TotalCost
) -> Evaluator | None:
    text = str(rule.get("messageExpression") or "")
    if not text:
        return None
    where = path.child("messageExpression")
    try:
        ast, result_type = compile_expression(
            text,
            optional_old_self=bool(rule.get("optionalOldSelf")),
            self_decl=decl_of(schema),
        )
    except CompileError as exc:
        errors.append(
            invalid(where, rule_value(rule), f"messageExpression compilation failed: {exc}")
        )
        return None
    if result_type not in ("STRING", "DYN") or static_type(ast, schema) not in ("", "string"):
        errors.append(
            invalid(where, rule_value(rule), "messageExpression must evaluate to a string")
        )
        return None
    cost = estimate_cost(ast, schema)
    total.observe(where, cost)
    if cost > STATIC_COST_LIMIT:
        errors.append(
            forbidden(
                where,
                cost_error_message("estimated messageExpression cost", cost, STATIC_COST_LIMIT),
            )
        )
    return build(ast.expr, K8S_FUNCTIONS, map_selects(ast, schema))


def _scaled(cost: int, cardinality: int | None, schema: Schema) -> int:
    if cardinality is None:
        # Unbounded: as many of this node's smallest serialized value as fit in a request.
        decl = decl_of(schema)
        cardinality = max_cardinality(decl.min_size if decl is not None else 0)
    return min(cost * cardinality, U64)


def total_cost_errors(total: TotalCost, schema_path: Path) -> list[Cause]:
    """What Kubernetes reports when all rules of a schema together cost more than
    ``StaticEstimatedCRDCostLimit``."""
    if total.total <= STATIC_CRD_COST_LIMIT:
        return []
    found = [
        forbidden(
            path,
            "contributed to estimated rule cost total exceeding cost limit for entire "
            "OpenAPIv3 schema",
        )
        for _, path in total.most_expensive
    ]
    message = cost_error_message(
        "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
        total.total,
        STATIC_CRD_COST_LIMIT,
    )
    found.append(forbidden(schema_path, message))
    return found
