"""kubectl's JSONPath, as CRD printer columns use it."""

from __future__ import annotations

import pytest

from kstore.api.jsonpath import JSONPathError, compile_json_path

OBJ = {
    "metadata": {"name": "w", "labels": {"app.kubernetes.io/name": "web"}},
    "spec": {"replicas": 3, "ports": [{"port": 80}, {"port": 443}]},
    "status": {
        "conditions": [
            {"type": "Ready", "status": "True", "observedGeneration": 2},
            {"type": "Stalled", "status": "False"},
        ]
    },
}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (".spec.replicas", [3]),
        ("{.spec.replicas}", [3]),
        ("$.spec.replicas", [3]),
        (".spec.missing", []),
        (".spec.ports[0].port", [80]),
        (".spec.ports[-1].port", [443]),
        (".spec.ports[*].port", [80, 443]),
        (".spec.ports[0:1].port", [80]),
        ('.status.conditions[?(@.type=="Ready")].status', ["True"]),
        (".status.conditions[?(@.type=='Stalled')].status", ["False"]),
        ('.status.conditions[?(@.type!="Ready")].type', ["Stalled"]),
        (".status.conditions[?(@.observedGeneration>1)].type", ["Ready"]),
        (".status.conditions[?(@.observedGeneration)].type", ["Ready"]),
        (".metadata.labels['app.kubernetes.io/name']", ["web"]),
        ("..port", [80, 443]),
        (".metadata.labels.*", ["web"]),
    ],
)
def test_paths_select_what_kubectl_selects(path: str, expected: list[object]) -> None:
    assert compile_json_path(path)(OBJ) == expected


@pytest.mark.parametrize("path", [".spec[", ".spec.ports[x]", ".status.conditions[?(@.a==)]"])
def test_a_path_that_does_not_parse_is_an_error(path: str) -> None:
    with pytest.raises(JSONPathError):
        compile_json_path(path)
