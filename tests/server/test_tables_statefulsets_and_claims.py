"""Table columns and cells of StatefulSets, as Kubernetes' ``printStatefulSet`` prints them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from kstore.server.table import build_table


def _created(seconds: int = 30) -> str:
    return (datetime.now(UTC) - timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _columns(table: dict[str, Any]) -> list[tuple[str, int]]:
    return [(c["name"], c["priority"]) for c in table["columnDefinitions"]]


def test_statefulset_columns_and_cells() -> None:
    sts = {
        "metadata": {"name": "web", "creationTimestamp": _created()},
        "spec": {
            "replicas": 3,
            "template": {
                "spec": {
                    "containers": [
                        {"name": "nginx", "image": "nginx:1.27"},
                        {"name": "log", "image": "busybox"},
                    ]
                }
            },
        },
        "status": {"replicas": 3, "readyReplicas": 2},
    }
    table = build_table([sts], kind="StatefulSet", group="apps", meta_version="v1")
    assert _columns(table) == [
        ("Name", 0),
        ("Ready", 0),
        ("Age", 0),
        ("Containers", 1),
        ("Images", 1),
    ]
    cells = table["rows"][0]["cells"]
    assert cells[:2] == ["web", "2/3"]
    assert cells[2].endswith("s")
    assert cells[3:] == ["nginx,log", "nginx:1.27,busybox"]
    scaled_to_zero = {"metadata": {"name": "db"}, "spec": {"replicas": 0}}
    cells = build_table([scaled_to_zero], kind="StatefulSet", group="apps", meta_version="v1")[
        "rows"
    ][0]["cells"]
    assert cells[:2] == ["db", "0/0"] and cells[3:] == ["", ""]
