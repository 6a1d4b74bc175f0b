"""Admission CEL evaluation (kstore.api.cel.admission): the activation's variables, lazily
evaluated variables and their cost, budgets, match conditions and the authorizer library."""

from __future__ import annotations

import pytest

from kstore.api.cel.admission import (
    OUT_OF_BUDGET,
    RUNTIME_COST_BUDGET,
    Activation,
    AdmissionCelError,
    AuthorizationCheck,
    AuthorizationDecision,
    CompiledExpression,
    OutOfBudget,
    compile_admission_expression,
    match_conditions,
)

REQUEST = {
    "operation": "CREATE",
    "namespace": "ns",
    "name": "obj",
    "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
    "userInfo": {"username": "alice", "groups": ["dev"]},
}


def test_variables_are_evaluated_once_and_their_cost_is_charged_to_the_reader() -> None:
    calls: list[AuthorizationCheck] = []

    def authorize(check: AuthorizationCheck) -> AuthorizationDecision:
        calls.append(check)
        return AuthorizationDecision(True)

    variables = {
        "ok": compile_admission_expression(
            "authorizer.group('').resource('pods').check('get').allowed()",
            params=False,
            authorizer=True,
            variables=frozenset({"ok"}),
        )
    }
    twice = compile_admission_expression(
        "variables.ok && variables.ok",
        params=False,
        authorizer=True,
        variables=frozenset({"ok"}),
    )
    activation = Activation(
        object={}, old_object=None, request=REQUEST, authorize=authorize, variables=variables
    )
    value, left = activation.evaluate(twice, RUNTIME_COST_BUDGET)
    assert value is True
    assert len(calls) == 1
    alone, left_alone = Activation(
        object={}, old_object=None, request=REQUEST, authorize=authorize, variables=variables
    ).evaluate(variables["ok"], RUNTIME_COST_BUDGET)
    assert alone is True
    # The reader paid for the variable it read (once) on top of its own selections.
    assert RUNTIME_COST_BUDGET - left > RUNTIME_COST_BUDGET - left_alone


def test_errors_are_worded_as_kubernetes_words_them() -> None:
    activation = Activation(object={"spec": {}}, old_object=None, request=REQUEST)
    compiled = compile_admission_expression("object.spec.x == 1", params=False, authorizer=False)
    with pytest.raises(AdmissionCelError) as info:
        activation.evaluate(compiled, RUNTIME_COST_BUDGET)
    assert str(info.value) == "expression 'object.spec.x == 1' resulted in error: no such key: x"
    with pytest.raises(OutOfBudget) as spent:
        activation.evaluate(compiled, 0)
    assert str(spent.value) == OUT_OF_BUDGET


def test_the_per_call_limit_is_an_error_of_the_expression() -> None:
    heavy = compile_admission_expression(
        "lists.range(300).all(a, lists.range(300).all(b, lists.range(300).all(c, true)))",
        params=False,
        authorizer=False,
    )
    activation = Activation(object={}, old_object=None, request=REQUEST)
    with pytest.raises(AdmissionCelError) as info:
        activation.evaluate(heavy, RUNTIME_COST_BUDGET)
    assert not isinstance(info.value, OutOfBudget)
    assert str(info.value).endswith(
        "resulted in error: operation cancelled: actual cost limit exceeded"
    )


def test_match_conditions_false_wins_over_errors_and_errors_aggregate() -> None:
    activation = Activation(object={"a": 1}, old_object=None, request=REQUEST)

    def conditions(*texts: str) -> list[tuple[str, CompiledExpression]]:
        return [
            (f"c{i}", compile_admission_expression(t, params=False, authorizer=True))
            for i, t in enumerate(texts)
        ]

    assert match_conditions(conditions("object.a == 1", "true"), activation) is True
    assert match_conditions(conditions("object.b == 1", "false"), activation) is False
    one = match_conditions(conditions("object.b == 1", "true"), activation)
    assert one == "expression 'object.b == 1' resulted in error: no such key: b"
    two = match_conditions(conditions("object.b == 1", "object.c == 1"), activation)
    assert two == (
        "[expression 'object.b == 1' resulted in error: no such key: b, "
        "expression 'object.c == 1' resulted in error: no such key: c]"
    )


def test_the_authorizer_library() -> None:
    asked: list[AuthorizationCheck] = []

    def authorize(check: AuthorizationCheck) -> AuthorizationDecision:
        asked.append(check)
        if check.verb == "boom":
            raise RuntimeError("authorizer down")
        return AuthorizationDecision(check.verb == "get", "only get")

    activation = Activation(object={}, old_object=None, request=REQUEST, authorize=authorize)

    def run(text: str) -> object:
        compiled = compile_admission_expression(text, params=False, authorizer=True)
        return activation.evaluate(compiled, RUNTIME_COST_BUDGET)[0]

    assert (
        run(
            "authorizer.group('apps').resource('deployments').subresource('scale')"
            ".namespace('ns').name('web').check('get').allowed()"
        )
        is True
    )
    check = asked[-1]
    assert (check.api_group, check.resource, check.subresource, check.namespace, check.name) == (
        "apps",
        "deployments",
        "scale",
        "ns",
        "web",
    )
    assert check.user == {"username": "alice", "groups": ["dev"]}
    assert run("authorizer.path('/metrics').check('post').reason()") == "only get"
    assert (asked[-1].resource_request, asked[-1].path) == (False, "/metrics")
    assert run("authorizer.requestResource.check('boom').errored()") is True
    assert run("authorizer.requestResource.check('boom').error()") == "authorizer down"
    assert (asked[-1].resource, asked[-1].api_version, asked[-1].namespace) == (
        "deployments",
        "v1",
        "ns",
    )
    assert (
        run(
            "authorizer.serviceAccount('ns', 'bot').group('').resource('pods')"
            ".check('get').allowed()"
        )
        is True
    )
    assert asked[-1].user == {
        "username": "system:serviceaccount:ns:bot",
        "groups": ["system:serviceaccounts", "system:serviceaccounts:ns"],
    }
