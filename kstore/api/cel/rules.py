"""``x-kubernetes-validations``: compile every rule of a schema once, evaluate on writes.

:func:`compile_schema_rules` walks an ``openAPIV3Schema`` (properties, ``items``,
``additionalProperties``) and compiles each rule where it is declared; compile errors come
back as causes at ``<path>.properties[spec].x-kubernetes-validations[0].rule``, worded as
Kubernetes' CRD validation words them. :meth:`CompiledRules.validate` never parses again.

Evaluation follows kube-apiserver's ``schema/cel`` validator:

- a rule runs at the node that carries it with ``self`` bound to the value there; rules under
  ``items``/``additionalProperties`` run once per element; null values are not validated;
- a transition rule (one that references ``oldSelf``) runs only when an old value is found at
  the same place: same property of a correlated object, same key of a map (unless
  ``x-kubernetes-map-type: atomic``), same key values in a ``x-kubernetes-list-type: map``
  list; with ``optionalOldSelf: true`` it always runs and ``oldSelf`` is an optional;
- ``self`` holds the values as the schema types them (numbers as doubles, formatted strings
  as timestamps/durations/bytes, set and map lists with their own equality); at a resource
  root ``metadata`` shows only ``name`` and ``generateName``;
- a false (or non-bool) result reports ``message``, else the evaluated ``messageExpression``,
  else ``failed rule: <rule>``; ``reason`` picks the cause type and ``fieldPath`` the field;
  the value is shown for scalars and omitted for objects and arrays;
- ratcheting: on update, a rule without ``oldSelf`` failing on an unchanged value (or under
  an unchanged nearest correlated ancestor) gives a warning, not a cause. Ratcheting
  correlates more than ``oldSelf`` does, as Kubernetes' ``CorrelatedObject``: the keys of
  atomic maps too, and the items of lists without a list type by index (never those of
  ``set`` and ``atomic`` lists); the root's ``apiVersion`` and ``kind`` never ratchet;
- cost: each evaluation may spend ``PER_CALL_LIMIT`` and one request ``RUNTIME_COST_BUDGET``;
  the interpreter stops an evaluation as soon as it passes its limit, and no rule runs after
  the budget is gone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from kstore.api.cel._compiler import (
    Node,
    Rule,
    TotalCost,
    compile_node,
    total_cost_errors,
)
from kstore.api.cel._compiler import (
    root_context as _root_context,
)
from kstore.api.cel._interpreter import State
from kstore.api.cel._values import NONE, CostExceeded, EvalError, NoOverload, Optional
from kstore.api.validation._render import go_quote
from kstore.api.validation.field import (
    OMIT_VALUE,
    Path,
    duplicate,
    forbidden,
    invalid,
    required,
)
from kstore.errors import Cause

__all__ = ["PER_CALL_LIMIT", "RUNTIME_COST_BUDGET", "CompiledRules", "compile_schema_rules"]

# k8s.io/apiserver/pkg/apis/cel: PerCallLimit and RuntimeCELCostBudget.
PER_CALL_LIMIT: Final = 1_000_000
RUNTIME_COST_BUDGET: Final = 10_000_000
_MAX_MESSAGE_EXPRESSION_BYTES: Final = 5 * 1024

_MESSAGE_BUDGET_GONE: Final = (
    "messageExpression evaluation failed due to running out of cost budget, no further "
    "validation rules will be run"
)
_BUDGET_GONE: Final = (
    "validation failed due to running out of cost budget, no further validation rules will be run"
)

Schema = Mapping[str, Any]


class _Run:
    """One validate() call: the causes found, the ratcheted ones, the budget left."""

    __slots__ = ("causes", "remaining", "warnings")

    def __init__(self, remaining: int, warnings: list[str] | None) -> None:
        self.causes: list[Cause] = []
        self.warnings = warnings
        self.remaining = remaining


class _Stop(Exception):
    """No further rule may run (cost budget or per-call limit)."""


class CompiledRules:
    """Every rule of one schema, compiled; ``errors`` lists the ones that did not compile."""

    def __init__(self, root: Node | None, errors: list[Cause]) -> None:
        self._root = root
        self.errors = errors

    @property
    def empty(self) -> bool:
        """Whether the schema has no rule at all (validating is then a no-op)."""
        return self._root is None

    def validate(
        self,
        new: Any,
        old: Any = None,
        *,
        path: Path | None = None,
        budget: int = RUNTIME_COST_BUDGET,
        warnings: list[str] | None = None,
    ) -> list[Cause]:
        """Causes for every rule ``new`` breaks (``old`` is the stored object on update).

        Ratcheting (Kubernetes' CRDValidationRatcheting, on by default): on update, a rule
        that does not use ``oldSelf`` and fails on a value equal to its old value (or inside
        an uncorrelatable part whose nearest correlatable ancestor is unchanged) is not a
        cause; its text goes to ``warnings`` when given.
        """
        return self.run(new, old, path=path, budget=budget, warnings=warnings)[0]

    def run(
        self,
        new: Any,
        old: Any = None,
        *,
        path: Path | None = None,
        budget: int = RUNTIME_COST_BUDGET,
        warnings: list[str] | None = None,
        ratchet: bool = True,
    ) -> tuple[list[Cause], int]:
        """As :meth:`validate`, with the budget left (-1 once a limit stopped the rules);
        ``ratchet=False`` reports every failure, as Kubernetes checks a CRD's defaults."""
        if self._root is None:
            return [], budget
        run = _Run(budget, warnings)
        try:
            if old is None or not ratchet:
                _validate(self._root, path, new, old, False, run)
            else:
                _validate_update(self._root, path, new, old, old, new == old, run)
        except _Stop:
            return run.causes, -1
        return run.causes, run.remaining


def compile_schema_rules(
    schema: Schema, path: Path | None = None, *, is_root: bool = True
) -> CompiledRules:
    """Compile the rules of a CRD version's ``openAPIV3Schema`` (``path``: where it sits), or
    of a node inside one (``is_root=False`` unless the node is an embedded resource)."""
    errors: list[Cause] = []
    base = path if path is not None else Path("openAPIV3Schema")
    total = TotalCost()
    root, _ = compile_node(schema, base, errors, is_root=is_root, ctx=_root_context(total))
    errors.extend(total_cost_errors(total, base))
    return CompiledRules(None if root.empty() else root, errors)


def _child(path: Path | None, name: str) -> Path:
    return Path(name) if path is None else path.child(name)


def _key(path: Path | None, key: str) -> Path:
    return Path("").key(key) if path is None else path.key(key)


def _index(path: Path | None, i: int) -> Path:
    return Path("").index(i) if path is None else path.index(i)


def _validate(node: Node, path: Path | None, new: Any, old: Any, ratchet: bool, run: _Run) -> None:
    # ``ratchet``: the nearest correlated node (this one when ``old`` was found) is unchanged.
    if new is None:
        return
    if node.rules:
        _run_rules(node, path, new, old, ratchet, run)
    if type(new) is list:
        if node.items is not None:
            old_for = _list_correlation(node, old)
            for i, item in enumerate(new):
                prior = old_for(item)
                flag = ratchet if prior is None else item == prior
                _validate(node.items, _index(path, i), item, prior, flag, run)
    elif type(new) is dict:
        old_map = old if type(old) is dict and node.correlatable_map else None
        if node.additional is not None:
            for k, v in new.items():
                prior = old_map.get(k) if old_map is not None else None
                flag = ratchet if prior is None else v == prior
                _validate(node.additional, _key(path, k), v, prior, flag, run)
        for k, sub in node.properties.items():
            if k in new:
                prior = old_map.get(k) if old_map is not None else None
                flag = ratchet if prior is None else new[k] == prior
                _validate(sub, _child(path, k), new[k], prior, flag, run)


_MISSING: Final[Any] = object()


def _validate_update(
    node: Node, path: Path | None, new: Any, old: Any, corr: Any, unchanged: bool, run: _Run
) -> None:
    """:func:`_validate` on update: ``old`` is what ``oldSelf`` sees (None when it does not
    correlate), ``corr`` the old value ratcheting correlates (``_MISSING`` when none), and
    ``unchanged`` whether this value or its nearest correlated ancestor equals its old value."""
    if new is None:
        return
    if node.rules:
        _run_rules(node, path, new, old, unchanged, run)
    if type(new) is list:
        items = node.items
        if items is None:
            return
        old_for = _list_correlation(node, old)
        if node.list_map_keys:
            corr_for = old_for if corr is old else _list_correlation(node, corr)
        for i, item in enumerate(new):
            prior = old_for(item)
            if node.list_map_keys:
                c = corr_for(item)
                c = _MISSING if c is None else c
            elif node.index_correlated and type(corr) is list and i < len(corr):
                c = _MISSING if corr[i] is None else corr[i]
            else:
                c = _MISSING
            flag = unchanged if c is _MISSING else item == c
            _validate_update(items, _index(path, i), item, prior, c, flag, run)
    elif type(new) is dict:
        old_map = old if type(old) is dict and node.correlatable_map else None
        corr_map = corr if type(corr) is dict else None
        at_root = path is None
        if node.additional is not None:
            for k, v in new.items():
                prior = old_map.get(k) if old_map is not None else None
                c = corr_map.get(k, _MISSING) if corr_map is not None else _MISSING
                flag = unchanged if c is _MISSING else v == c
                _validate_update(node.additional, _key(path, k), v, prior, c, flag, run)
        for k, sub in node.properties.items():
            if k in new:
                v = new[k]
                prior = old_map.get(k) if old_map is not None else None
                if at_root and k in ("apiVersion", "kind"):
                    c, flag = _MISSING, False  # both sides read in one version: never ratcheted
                else:
                    c = corr_map.get(k, _MISSING) if corr_map is not None else _MISSING
                    flag = unchanged if c is _MISSING else v == c
                _validate_update(sub, _child(path, k), v, prior, c, flag, run)


def _list_correlation(node: Node, old: Any) -> Callable[[Any], Any]:
    keys = node.list_map_keys
    if not keys or type(old) is not list:
        return lambda item: None
    index: dict[tuple[Any, ...], Any] = {}
    for item in old:
        if type(item) is dict:
            index.setdefault(tuple(_hashable(item.get(k)) for k in keys), item)

    def find(item: Any) -> Any:
        if type(item) is not dict:
            return None
        return index.get(tuple(_hashable(item.get(k)) for k in keys))

    return find


def _hashable(v: Any) -> Any:
    return v if isinstance(v, (str, int, float, bool, type(None))) else repr(v)


def _self_value(node: Node, value: Any) -> Any:
    if node.convert is not None:
        value = node.convert(value)
    if node.is_root and type(value) is dict and type(value.get("metadata")) is dict:
        # At a resource root, metadata shows only name and generateName.
        meta = value["metadata"]
        shown = {k: meta[k] for k in ("name", "generateName") if k in meta}
        return {**value, "metadata": shown}
    return value


def _run_rules(node: Node, path: Path | None, new: Any, old: Any, ratchet: bool, run: _Run) -> None:
    causes, budget = run.causes, run
    where = path if path is not None else Path("")
    field_text = str(path) if path is not None else ""
    if budget.remaining <= 0:
        causes.append(_at(invalid(where, node.schema_type, _BUDGET_GONE), field_text))
        raise _Stop
    self_value = _self_value(node, new)
    old_value = _self_value(node, old) if old is not None else None
    for rule in node.rules:
        if rule.program is None:
            detail = f"rule compile error: {rule.compile_error}"
            causes.append(_at(invalid(where, node.schema_type, detail), field_text))
            continue
        act: dict[str, Any] = {"self": self_value}
        if rule.uses_old_self or rule.optional_old_self:
            if rule.optional_old_self:
                act["oldSelf"] = NONE if old_value is None else Optional(old_value)
            elif old_value is None:
                continue
            else:
                act["oldSelf"] = old_value
        # As kube-apiserver: the program's own limit is the per-call one; the request budget is
        # checked on the cost actually spent, before anything else about the outcome.
        st = State(PER_CALL_LIMIT)
        try:
            result = rule.program(act, st)
        except CostExceeded:
            if st.cost > budget.remaining:
                causes.append(_at(invalid(where, node.schema_type, _BUDGET_GONE), field_text))
            else:
                detail = (
                    "'operation cancelled: actual cost limit exceeded': no further validation "
                    "rules will be run due to call cost exceeds limit for rule: "
                    f"{rule.error_string}"
                )
                causes.append(_at(invalid(where, node.schema_type, detail), field_text))
            raise _Stop from None
        except EvalError as err:
            _charge(budget, st, where, node.schema_type, field_text)
            causes.append(_at(_runtime_error(err, rule, where, node.schema_type), field_text))
            continue
        _charge(budget, st, where, node.schema_type, field_text)
        if result is True:
            continue
        target = _child(path, rule.field_path) if rule.field_path else path
        detail = _message(rule, act, run, target, node.schema_type)
        cause = _reasoned(rule, target, node.schema_type, new, detail)
        if ratchet and not rule.uses_old_self:
            if run.warnings is not None:
                run.warnings.append(cause.render())
        else:
            causes.append(cause)


def _charge(run: _Run, st: State, where: Path, schema_type: str, field_text: str) -> None:
    if st.cost > run.remaining:
        run.causes.append(_at(invalid(where, schema_type, _BUDGET_GONE), field_text))
        raise _Stop
    run.remaining -= st.cost


def _runtime_error(err: EvalError, rule: Rule, where: Path, schema_type: str) -> Cause:
    if isinstance(err, NoOverload):
        # Only dyn values (int-or-string...) get past the checker to meet this.
        detail = (
            f"'{err}': call arguments did not match a supported operator, function or macro "
            f"signature for rule: {rule.error_string}"
        )
        return invalid(where, schema_type, detail)
    return invalid(where, schema_type, f"{err} evaluating rule: {rule.error_string}")


def _text(path: Path | None) -> str:
    return str(path) if path is not None else ""


def _at(cause: Cause, field_text: str) -> Cause:
    # A rule at the resource root reports no field (Kubernetes validates with a nil path).
    return cause if cause.field == field_text else Cause(cause.type, cause.message, field_text)


def _message(
    rule: Rule, act: dict[str, Any], budget: _Run, path: Path | None, schema_type: str
) -> str:
    if rule.message_program is not None:
        where = path if path is not None else Path("")
        st = State(PER_CALL_LIMIT)
        value: Any = None
        try:
            value = rule.message_program(act, st)
        except CostExceeded:
            detail = (
                "no further validation rules will be run due to call cost exceeds limit for "
                f"messageExpression: {go_quote(str(rule.source.get('messageExpression', '')))}"
            )
            if st.cost > budget.remaining:
                detail = _MESSAGE_BUDGET_GONE
            budget.causes.append(_at(invalid(where, schema_type, detail), _text(path)))
            raise _Stop from None
        except EvalError:
            value = None  # falls back to the message, as Kubernetes does
        if st.cost > budget.remaining:
            budget.causes.append(
                _at(invalid(where, schema_type, _MESSAGE_BUDGET_GONE), _text(path))
            )
            raise _Stop
        budget.remaining -= st.cost
        if type(value) is str:
            # An empty, multi-line or overlong message falls back, as in Kubernetes.
            text = value.strip()
            if text and "\n" not in text and len(text.encode()) <= _MAX_MESSAGE_EXPRESSION_BYTES:
                return text
    message = str(rule.source.get("message") or "").strip()
    return message or f"failed rule: {str(rule.source.get('rule', '')).strip()}"


def _reasoned(rule: Rule, path: Path | None, schema_type: str, value: Any, detail: str) -> Cause:
    where = path if path is not None else Path("")
    # A failed rule shows the value itself, except whole objects and arrays (omitted).
    shown = OMIT_VALUE if schema_type in ("object", "array") else value
    reason = rule.source.get("reason")
    if reason == "FieldValueForbidden":
        cause = forbidden(where, detail)
    elif reason == "FieldValueRequired":
        cause = required(where, detail)
    elif reason == "FieldValueDuplicate":
        cause = duplicate(where, shown)
    else:
        cause = invalid(where, shown, detail)
    return _at(cause, str(path) if path is not None else "")
