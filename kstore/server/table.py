"""``meta.k8s.io`` Table answers, what ``kubectl get`` prints.

A Table has ``columnDefinitions`` and one row per object; each row's ``object`` is, as the API
server sends by default (``includeObject=Metadata``), a ``PartialObjectMetadata`` with the
object's full metadata (kubectl's ``-A``, ``--show-labels`` and ``-L`` read it). Columns come
from :mod:`kstore.server.printers` for the built-in kinds, from
:mod:`kstore.server.column_printer` for kinds whose versions define columns (CRDs), else
Kubernetes' default for kinds without a printer: ``Name`` and ``Created At``.

Ages are rendered on the server as Kubernetes' ``duration.HumanDuration`` does (``0s``,
``5m10s``, ``3h``, ``2d4h``...): kubectl prints the cells as they come.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from kstore.api.gvk import Object
from kstore.server.printers import Column, Printer, printer_for

__all__ = ["build_table"]

_NAME = Column("Name", "string", "name", "Name must be unique within a namespace.", 0)
_CREATED = Column(
    "Created At",
    "date",
    "",
    "CreationTimestamp is a timestamp representing the server time when this object was created.",
    0,
)


def build_table(
    objects: Sequence[Object],
    *,
    kind: str,
    group: str,
    meta_version: str,
    printer: Printer | None = None,
    list_metadata: Object | None = None,
    include_object: str = "Metadata",
    headers: bool = True,
) -> Object:
    """A Table of external (versioned) objects of one kind, in ``printer``'s columns (by
    default the kind's built-in printer, else Name and Created At)."""
    if printer is None:
        printer = printer_for(group, kind)
    now = datetime.now(UTC)
    columns: Sequence[Column] = printer.columns if printer is not None else (_NAME, _CREATED)
    rows: list[Object] = []
    for obj in objects:
        meta = obj.get("metadata") or {}
        if printer is not None:
            cells: list[Any] = printer.cells(obj, now)
        else:
            cells = [meta.get("name", ""), meta.get("creationTimestamp")]
        row: Object = {"cells": cells}
        if include_object == "Object":
            row["object"] = obj
        elif include_object != "None":
            row["object"] = {
                "kind": "PartialObjectMetadata",
                "apiVersion": f"meta.k8s.io/{meta_version}",
                "metadata": meta,
            }
        rows.append(row)
    table: Object = {
        "kind": "Table",
        "apiVersion": f"meta.k8s.io/{meta_version}",
        "metadata": list_metadata or {},
        "columnDefinitions": [c.to_dict() for c in columns] if headers else [],
        "rows": rows,
    }
    return table
