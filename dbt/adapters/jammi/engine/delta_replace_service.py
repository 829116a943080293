"""The engine wing's service: how `jammi__create_table_as` rebuilds a delta table
(``adapter.delta_replace_plan`` on the face, impl.py; engine/delta_replace.py decides)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

from dbt.adapters.jammi.common.sql_session import SqlSession
from dbt.adapters.jammi.engine.delta_replace import (
    REPLACE_AS_SELECT,
    column_list_sql,
    contract_ordered,
    partition_columns,
    replace_as_select_unsupported,
    replace_mode,
    table_columns,
    wanted_partition_columns,
)
from dbt.adapters.jammi.engine.describe import query_columns, result_rows


class DeltaReplaceService:
    def __init__(self, sql: SqlSession) -> None:
        self.sql = sql

    def plan(
        self,
        relation: Any,
        compiled_code: str,
        partition_by: Any,
        contract_columns: Optional[Sequence[str]] = None,
    ) -> dict[str, str]:
        """How an existing delta table is rebuilt (delta_replace.py): ``mode``
        ``replace_as_select`` where this Spark can run a Delta replace-as-select (probed
        once per connection with ``select version()``: dbt-spark's statement then
        applies); else ``overwrite`` when the model keeps its columns and partitioning,
        or ``replace`` with the new ``column_list``. The model's query is described as
        any of its statements is (under the tenant read guard); with an enforced
        contract, its columns in the contract's order (``contract_columns``), as the
        contract's subquery selects them. The table's columns and partitioning are the
        adapter's own reads."""
        if not replace_as_select_unsupported(self.sql.spark_version()):
            return {"mode": REPLACE_AS_SELECT, "column_list": ""}
        _, described = self.sql.execute(f"describe query {compiled_code}", fetch=True)
        columns = contract_ordered(query_columns(result_rows(described)), contract_columns)
        stored = table_columns(result_rows(self.sql.trusted(f"describe table {relation}")))
        detail = self.sql.trusted(f"describe detail {relation}")
        mode = replace_mode(
            columns,
            stored,
            wanted_partition_columns(partition_by),
            partition_columns(detail.rows[0]["partitionColumns"]),
        )
        return {"mode": mode, "column_list": column_list_sql(columns)}
