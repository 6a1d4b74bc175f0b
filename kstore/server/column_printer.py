"""Table columns defined by data: a CRD version's ``additionalPrinterColumns``.

As apiextensions-apiserver's table convertor: a first ``Name`` column, then one column per
definition, each cell the first value its JSONPath selects (None when it selects nothing);
``string`` cells print the value as kubectl's JSONPath printer does (a string as it is, any
other value as JSON), ``integer``/``number``/``boolean`` cells keep a value of that type only,
``date`` cells are the age of the timestamp (``<invalid>`` when it is not one). A column without
a description is described by its path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from kstore.api.gvk import Object
from kstore.api.jsonpath import compile_json_path
from kstore.api.scheme import PrinterColumn
from kstore.codec.json import dumps as json_dumps
from kstore.server.durations import parse_timestamp, translate_timestamp_since
from kstore.server.printers import Column, Printer

__all__ = ["columns_printer"]

_NAME = Column(
    "Name",
    "string",
    "name",
    "Name must be unique within a namespace. Is required when creating resources, although some "
    "resources may allow a client to request the generation of an appropriate name "
    "automatically. Name is primarily intended for creation idempotence and configuration "
    "definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
    0,
)


def _string_cell(value: Any) -> Any:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return json_dumps(value).decode()


def _cell(kind: str, value: Any, now: datetime) -> Any:
    if value is None:
        return None
    if kind == "string":
        return _string_cell(value)
    if kind == "integer":
        if isinstance(value, bool):
            return None
        return int(value) if isinstance(value, int | float) else None
    if kind == "number":
        if isinstance(value, bool):
            return None
        return float(value) if isinstance(value, int | float) else None
    if kind == "boolean":
        return value if isinstance(value, bool) else None
    if kind == "date":
        if not isinstance(value, str):
            return None
        if parse_timestamp(value) is None:
            return "<invalid>"
        return translate_timestamp_since(value, now)
    return None


def columns_printer(columns: Sequence[PrinterColumn]) -> Printer:
    """The printer of a kind whose columns are ``columns`` (after Name)."""
    paths: list[tuple[str, Callable[[Any], list[Any]]]] = [
        (c.type, compile_json_path(c.json_path)) for c in columns
    ]
    headers = [_NAME] + [
        Column(
            c.name,
            c.type,
            c.format,
            c.description
            or f"Custom resource definition column (in JSONPath format): {c.json_path}",
            c.priority,
        )
        for c in columns
    ]

    def cells(obj: Object, now: datetime) -> list[Any]:
        row: list[Any] = [(obj.get("metadata") or {}).get("name", "")]
        for kind, select in paths:
            found = select(obj)
            row.append(_cell(kind, found[0], now) if found else None)
        return row

    return Printer(tuple(headers), cells)
