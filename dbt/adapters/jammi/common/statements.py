"""One statement, its rows: what the Python-side protocols (commit claims, offset claims,
topic registration) run through the adapter's connection."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dbt.adapters.base.meta import AdapterMeta


class StatementsMixin(metaclass=AdapterMeta):
    """``_run_sql``, shared by the adapter's mixins."""

    def _run_sql(self, sql: str) -> Sequence[Sequence[Any]]:
        """Statements the adapter generates itself: trusted by the tenant read guard."""
        with self.connections.tenant_guard.trusted():  # type: ignore[attr-defined]
            _, table = self.execute(sql, fetch=True)  # type: ignore[attr-defined]
        return [tuple(row) for row in table.rows]
