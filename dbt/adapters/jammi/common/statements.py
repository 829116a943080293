"""One statement, its rows: what the Python-side protocols (commit claims, offset claims,
topic registration) run through the adapter's connection."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dbt.adapters.base.meta import AdapterMeta

# Spark's optimizer infers filters from every alias of a constrained column; over the
# change set's projection (one CASE on the change kind per column) that inference grows
# combinatorially: a 3-row unique index check planned for 100 s and ran out of heap on
# Delta, 7 s without it. The statements that filter a change set are planned without it.
CONSTRAINT_PROPAGATION = "spark.sql.constraintPropagation.enabled"

# Where a connection's handle keeps its server's Spark version (``_spark_version``).
SPARK_VERSION_ATTR = "_jammi_spark_version"


class StatementsMixin(metaclass=AdapterMeta):
    """``_run_sql`` and ``_execute_trusted``, shared by the adapter's mixins."""

    def _run_query_without_constraint_propagation(self, sql: str) -> Any:
        """``sql``'s result (an agate table), planned with Spark's constraint propagation
        off; the session's own setting is put back afterwards, also when ``sql`` fails.
        Only the plan's shape changes, never its result."""
        execute = self.execute  # type: ignore[attr-defined]
        _, current = execute(f"set {CONSTRAINT_PROPAGATION}", fetch=True)
        before = str(current.rows[0][1]) if current.rows else "true"
        if before.strip().lower() == "false":
            return execute(sql, fetch=True)[1]
        execute(f"set {CONSTRAINT_PROPAGATION}=false")
        try:
            return execute(sql, fetch=True)[1]
        finally:
            execute(f"set {CONSTRAINT_PROPAGATION}={before}")

    def _execute_trusted(self, sql: str) -> Any:
        """``sql``'s result (an agate table). For statements the adapter generates
        itself: the tenant read guard trusts them (the connection manager's
        ``trusted_statements``)."""
        with self.connections.trusted_statements():  # type: ignore[attr-defined]
            _, table = self.execute(sql, fetch=True)  # type: ignore[attr-defined]
        return table

    def _run_sql(self, sql: str) -> Sequence[Sequence[Any]]:
        """Rows of a statement the adapter generates itself (``_execute_trusted``)."""
        return [tuple(row) for row in self._execute_trusted(sql).rows]

    def _spark_version(self) -> str:
        """The server's Spark version (``select version()``, once per connection)."""
        handle = self.connections.get_thread_connection().handle  # type: ignore[attr-defined]
        version = getattr(handle, SPARK_VERSION_ATTR, None)
        if version is None:
            rows = self._run_sql("select version()")
            version = str(rows[0][0]) if rows else ""
            setattr(handle, SPARK_VERSION_ATTR, version)
        return str(version)
