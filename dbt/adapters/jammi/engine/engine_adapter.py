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
    def delta_replace_mode(
        self, query_rows: Any, table_rows: Any, partition_by: Any, detail_partitions: Any
    ) -> str:
        return replace_mode(
            query_columns(result_rows(query_rows)),
            table_columns(result_rows(table_rows)),
            wanted_partition_columns(partition_by),
            partition_columns(detail_partitions),
        )

    @available
    def delta_replace_column_list(self, query_rows: Any) -> str:
        return column_list_sql(query_columns(result_rows(query_rows)))
