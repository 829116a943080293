"""What a query's result looks like to Python: its rows (an agate table from ``run_query``
or plain rows) and the columns ``DESCRIBE QUERY`` reports."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


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
