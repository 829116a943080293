"""The engine wing's face toward Jinja: ``adapter.delta_replace_*``, how
`jammi__create_table_as` rebuilds a delta table (engine/delta_replace.py decides)."""

from __future__ import annotations

from typing import Any

from dbt.adapters.base import available

from dbt.adapters.jammi.common.statements import StatementsMixin
from dbt.adapters.jammi.engine.delta_replace import (
    column_list_sql,
    partition_columns,
    replace_as_select_unsupported,
    replace_mode,
    table_columns,
    wanted_partition_columns,
)
from dbt.adapters.jammi.engine.describe import query_columns, result_rows


class DeltaReplaceAdapterMixin(StatementsMixin):
    """``adapter.delta_replace_*``: how `jammi__create_table_as` rebuilds a delta table."""

    @available
    def delta_replace_as_select_unsupported(self) -> bool:
        """Whether this Spark cannot run a Delta replace-as-select (probed once per
        connection with ``select version()``)."""
        return replace_as_select_unsupported(self._spark_version())

    @available
    def delta_replace_plan(
        self, relation: Any, compiled_code: str, partition_by: Any
    ) -> dict[str, str]:
        """How an existing delta table is rebuilt without a replace-as-select
        (delta_replace.py): ``mode`` ``overwrite`` when the model keeps its columns and
        partitioning, else ``replace`` with the new ``column_list``. The model's query is
        described as any of its statements is (under the tenant read guard); the table's
        columns and partitioning are the adapter's own reads."""
        _, described = self.execute(f"describe query {compiled_code}", fetch=True)  # type: ignore[attr-defined]
        columns = query_columns(result_rows(described))
        stored = table_columns(result_rows(self._execute_trusted(f"describe table {relation}")))
        detail = self._execute_trusted(f"describe detail {relation}")
        mode = replace_mode(
            columns,
            stored,
            wanted_partition_columns(partition_by),
            partition_columns(detail.rows[0]["partitionColumns"]),
        )
        return {"mode": mode, "column_list": column_list_sql(columns)}
