"""Pod QoS sums quantities in exact billionths (plain ints for every usual quantity), with
memoised parsing: the shortcut must agree with exact fraction arithmetic for any quantity."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from kstore.api.quantity import nano_units, parse_quantity
from kstore.registry.strategies.pod import compute_pod_qos

_SUFFIXES = ["", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "e3", "E-2", "e-12"]
_quantities = st.builds(
    lambda sign, whole, frac, suffix: f"{sign}{whole}{frac}{suffix}",
    st.sampled_from(["", "+", "-"]),
    st.integers(0, 5000).map(str),
    st.sampled_from(["", ".", ".5", ".25", ".001", ".1234567891"]),
    st.sampled_from(_SUFFIXES),
)


@settings(max_examples=300, deadline=None)
@given(text=_quantities | st.text(max_size=6))
def test_billionths_are_the_exact_quantity(text: str) -> None:
    exact = parse_quantity(text)
    nanos = nano_units(text)
    if exact is None:
        assert nanos is None
        return
    assert nanos == exact * 10**9
    assert isinstance(nanos, int) == ((exact * 10**9).denominator == 1)
    # Memoised answers are the same value the second time (and immutable).
    assert nano_units(text) == nanos
    assert parse_quantity(text) == exact


def test_numbers_and_odd_values_are_quantities_as_before() -> None:
    assert nano_units(2) == 2 * 10**9
    assert nano_units(0.5) == 5 * 10**8
    assert nano_units(True) is None
    assert nano_units(None) is None
    assert nano_units("1e-12") == Fraction(1, 1000)


def _pod(*containers: dict[str, dict[str, str]]) -> dict[str, object]:
    return {
        "spec": {
            "containers": [{"name": f"c{i}", "resources": r} for i, r in enumerate(containers)]
        }
    }


def test_qos_compares_sums_exactly_across_units() -> None:
    # 0.5 cpu in two spellings, 1Gi as 1024Mi: equal requests and limits are Guaranteed.
    guaranteed = _pod(
        {"requests": {"cpu": "500m", "memory": "1024Mi"}, "limits": {"cpu": "0.5", "memory": "1Gi"}}
    )
    assert compute_pod_qos(guaranteed) == "Guaranteed"
    # A request one billionth of a core below its limit is not.
    burstable = _pod(
        {
            "requests": {"cpu": "499999999n", "memory": "1Gi"},
            "limits": {"cpu": "500m", "memory": "1Gi"},
        }
    )
    assert compute_pod_qos(burstable) == "Burstable"
    # Below a billionth the sums stay exact too.
    tiny = _pod(
        {"requests": {"cpu": "1e-12", "memory": "1"}, "limits": {"cpu": "1e-12", "memory": "1"}}
    )
    assert compute_pod_qos(tiny) == "Guaranteed"
    assert compute_pod_qos(_pod({})) == "BestEffort"
