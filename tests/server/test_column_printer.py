"""Tables of kinds whose columns are data: a CRD version's additionalPrinterColumns."""

from __future__ import annotations

from datetime import UTC, datetime

from kstore.api.custom_kinds import printer_columns
from kstore.server.column_printer import columns_printer
from kstore.server.table import build_table

NOW = datetime(2026, 12, 4, 12, 0, 0, tzinfo=UTC)
WIDGET = {
    "apiVersion": "example.com/v1",
    "kind": "Widget",
    "metadata": {"name": "w", "creationTimestamp": "2026-12-04T11:55:00Z"},
    "spec": {"replicas": 3, "ratio": 1, "ready": True, "tags": ["a", "b"]},
    "status": {"conditions": [{"type": "Ready", "status": "True"}]},
}


def test_cells_are_typed_as_their_columns_say() -> None:
    columns = printer_columns(
        [
            {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
            {"name": "Ratio", "type": "number", "jsonPath": ".spec.ratio"},
            {"name": "Ready", "type": "boolean", "jsonPath": ".spec.ready"},
            {"name": "Tags", "type": "string", "jsonPath": ".spec.tags"},
            {
                "name": "Status",
                "type": "string",
                "jsonPath": '.status.conditions[?(@.type=="Ready")].status',
                "priority": 1,
            },
            {"name": "Missing", "type": "string", "jsonPath": ".spec.nothing"},
            {"name": "Wrong", "type": "boolean", "jsonPath": ".spec.replicas"},
            {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
        ]
    )
    printer = columns_printer(columns)
    assert printer.cells(WIDGET, NOW) == ["w", 3, 1.0, True, '["a","b"]', "True", None, None, "5m"]
    headers = [c.to_dict() for c in printer.columns]
    assert headers[0]["name"] == "Name" and headers[0]["format"] == "name"
    assert headers[5]["priority"] == 1
    assert headers[1]["description"] == (
        "Custom resource definition column (in JSONPath format): .spec.replicas"
    )


def test_a_version_without_columns_prints_name_and_age() -> None:
    table = build_table(
        [WIDGET],
        kind="Widget",
        group="example.com",
        meta_version="v1",
        printer=columns_printer(printer_columns(None)),
    )
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Age"]
    assert table["rows"][0]["cells"][0] == "w"


def test_a_date_that_is_not_a_timestamp_is_invalid() -> None:
    printer = columns_printer(
        printer_columns([{"name": "T", "type": "date", "jsonPath": ".spec.tags[0]"}])
    )
    assert printer.cells(WIDGET, NOW) == ["w", "<invalid>"]
