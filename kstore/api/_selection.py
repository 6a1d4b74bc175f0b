"""What label and field selectors share: the operators and the compiled checks they match with.

Named after Kubernetes' ``pkg/selection``, which holds the one ``Operator`` type both selector
languages use. A selector compiles each requirement once into a :data:`Check` (a closure over
precomputed values) and joins them with :func:`all_of`, so that matching on the watch fan-out
path is only calls of those closures: no parsing, regex or operator dispatch.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from typing import TypeAlias

__all__ = ["Check", "Operator", "all_of", "always", "never"]

#: Whether a map of labels (or of field values) satisfies a compiled requirement.
Check: TypeAlias = Callable[[Mapping[str, str]], bool]


class Operator(enum.StrEnum):
    """How a key or field relates to values; the strings of Kubernetes' ``selection.Operator``.

    The members are declared in the order Kubernetes lists them in its "Unsupported value"
    message.
    """

    IN = "in"
    NOT_IN = "notin"
    EQUALS = "="
    DOUBLE_EQUALS = "=="
    NOT_EQUALS = "!="
    GREATER_THAN = "gt"
    LESS_THAN = "lt"
    EXISTS = "exists"
    DOES_NOT_EXIST = "!"


def always(_: Mapping[str, str]) -> bool:
    return True


def never(_: Mapping[str, str]) -> bool:
    return False


def all_of(checks: Sequence[Check]) -> Check:
    """One check that is the AND of ``checks``, shaped for the common small cases."""
    if not checks:
        return always
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda m: first(m) and second(m)
    frozen = tuple(checks)

    def every(m: Mapping[str, str]) -> bool:
        # A plain loop: all() over a generator measured 1.6x slower here (4 checks).
        for check in frozen:  # noqa: SIM110
            if not check(m):
                return False
        return True

    return every
