"""What Spark resolves a statement of a bound run to, asked on its connection: the
analyzed plan (from the session's JVM on ``method: session``, from ``EXPLAIN EXTENDED``
elsewhere, through a Delta MERGE's operands where Delta prints the MERGE on one line),
a DataFrame's analyzed plan (the JVM's on ``session``, the one Spark Connect's server
prints on ``connect``), and a table's properties. The *analyze* step of
tenancy/bound_statement.py; nothing here decides."""

from __future__ import annotations

import contextlib
import io
from typing import Any, Optional

from dbt.adapters.contracts.connection import Connection

from dbt.adapters.jammi.engine.bindings import render_binding
from dbt.adapters.jammi.tenancy.merge_operands import merge_operands
from dbt.adapters.jammi.tenancy.plan import OTHER, PlanNode
from dbt.adapters.jammi.tenancy.plan_text import parse_plan, root_command

# Delta's MERGE command: printed on one line, its source and target inline
INLINE_MERGE = "MergeIntoCommand"


def _session() -> Any:
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession() or SparkSession.builder.getOrCreate()


def _with_bindings(sql: str, bindings: Optional[Any]) -> str:
    """The SQL dbt-spark's session cursor would run for ``sql`` and ``bindings``."""
    if not bindings:
        return sql
    return sql % tuple(render_binding(b) for b in bindings)


def _remote_rows(connection: Connection, sql: str, bindings: Optional[Any] = None) -> list:
    """Rows of ``sql`` on the connection, the way dbt runs a statement: a fresh cursor,
    left to the next ``cursor()`` call (closing dbt-spark's wrapper closes the
    connection itself)."""
    cursor = connection.handle.cursor()
    cursor.execute(sql, bindings)
    return list(cursor.fetchall() or [])


def statement_plan(connection: Connection, sql: str, bindings: Any, tenant: str) -> PlanNode:
    sql = sql.strip().rstrip(";")
    if connection.credentials.is_session:
        from dbt.adapters.jammi.tenancy.plan_jvm import analyzed_plan

        return analyzed_plan(_session(), _with_bindings(sql, bindings), tenant)
    rows = _remote_rows(connection, "explain extended " + sql, bindings)
    explain = "\n".join(str(row[0]) for row in rows)
    if root_command(explain) == INLINE_MERGE:
        return _merge_plan(connection, _with_bindings(sql, bindings), tenant)
    return parse_plan(explain, tenant)


def dataframe_plan(connection: Connection, dataframe: Any, tenant: str) -> PlanNode:
    """``dataframe``'s analyzed plan: from the embedded session's JVM, else (a Spark
    Connect DataFrame, no JVM in reach) from the plan its server prints."""
    if connection.credentials.is_session:
        from dbt.adapters.jammi.tenancy.plan_jvm import dataframe_plan as jvm_plan

        return jvm_plan(dataframe, tenant)
    return parse_plan(printed_plan(dataframe), tenant)


def printed_plan(dataframe: Any) -> str:
    """``dataframe.explain(extended=True)``'s text (parsed, analyzed, optimized and
    physical plans), as the server printed it."""
    explain_string = getattr(dataframe, "_explain_string", None)
    if callable(explain_string):
        return str(explain_string(extended=True))
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        dataframe.explain(extended=True)
    return printed.getvalue()


def _merge_plan(connection: Connection, sql: str, tenant: str) -> PlanNode:
    """Delta's MERGE prints its operands inline: analyze each one as its own query
    (``merge_operands``); the MERGE reads what the two of them read."""
    operands = merge_operands(sql)
    return PlanNode(
        OTHER,
        children=[
            statement_plan(connection, f"select * from {operand}", None, tenant)
            for operand in operands
        ],
    )


def table_properties(connection: Connection, table: str) -> dict[str, str]:
    sql = f"show tblproperties {table}"
    if connection.credentials.is_session:
        rows = [tuple(r) for r in _session().sql(sql).collect()]
    else:
        rows = _remote_rows(connection, sql)
    return {str(row[0]): str(row[1]) for row in rows}
