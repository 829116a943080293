"""What a query's result looks like to Python: its rows (an agate table from ``run_query``
or plain rows), the columns ``DESCRIBE QUERY`` reports, and Delta's ``DESCRIBE HISTORY``
entries."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

# DESCRIBE HISTORY's columns, in order (Delta 3.x / 4.x).
DELTA_HISTORY_COLUMNS = (
    "version",
    "timestamp",
    "userId",
    "userName",
    "operation",
    "operationParameters",
    "job",
    "notebook",
    "clusterId",
    "readVersion",
    "isolationLevel",
    "isBlindAppend",
    "operationMetrics",
    "userMetadata",
    "engineInfo",
)


def result_rows(table: Any) -> list[list[Any]]:
    """The rows of a ``run_query`` result (an agate table) or of plain rows, as lists."""
    return [list(row) for row in getattr(table, "rows", table) or []]


def query_columns(rows: Sequence[Sequence[Any]]) -> list[list[str]]:
    """The (name, type) columns of ``DESCRIBE QUERY`` rows, in output order."""
    columns = []
    for row in rows:
        if len(row) < 2 or not row[0] or str(row[0]).startswith("#"):
            continue
        columns.append([str(row[0]), str(row[1])])
    return columns


def delta_history_entry(row: Sequence[Any]) -> dict[str, Any]:
    """One ``DESCRIBE HISTORY`` row as a dict by column name; ``operationMetrics`` parsed
    when it arrives as text (over Thrift), {} when it cannot be."""
    entry = dict(zip(DELTA_HISTORY_COLUMNS, row))
    metrics = entry.get("operationMetrics") or {}
    if isinstance(metrics, str):
        try:
            metrics = json.loads(metrics)
        except ValueError:
            metrics = {}
    entry["operationMetrics"] = metrics
    return entry
