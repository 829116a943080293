"""The ``adapter.tenant_guard_*`` methods: what the materializations and macros use to
check a model's SQL up front, to run the adapter's own statements trusted, and to
report what the guard cost (docs/tenancy.md)."""

from __future__ import annotations

from typing import Any, Optional

from dbt.adapters.base import available
from dbt.adapters.base.meta import AdapterMeta

from dbt.adapters.jammi.tenancy.connection_hook import check_statement
from dbt.adapters.jammi.tenancy.guard import TenantGuard
from dbt.adapters.jammi.tenancy.plan import scoped_relation_sql


class TenantGuardAdapterMixin(metaclass=AdapterMeta):
    @property
    def tenant_guard(self) -> TenantGuard:
        return self.connections.tenant_guard  # type: ignore[attr-defined]

    @available
    def tenant_guard_check_sql(self, sql: str) -> str:
        """In a bound run, fail now (before anything is written) if ``sql`` reads a
        tenant-scoped relation without the adapter's scope. Renders nothing."""
        if self.tenant_guard.tenant is not None and sql:
            connection = self.connections.get_thread_connection()  # type: ignore[attr-defined]
            check_statement(self.tenant_guard, connection, sql)
        return ""

    @available
    def tenant_guard_trust(self, on: bool) -> str:
        """Trust (or stop trusting) the statements of the node this thread is running:
        a materialization's own statements, after the model's SQL passed the check."""
        connection = self.connections.get_thread_connection()  # type: ignore[attr-defined]
        self.tenant_guard.trust_node(connection.name, bool(on))
        return ""

    @available
    def tenant_guard_engine_query(self, sql: str) -> Any:
        """Run a statement the adapter's macros generated (offsets, high-water marks),
        unchecked, and return its rows as an agate table."""
        with self.tenant_guard.trusted():
            _, table = self.execute(sql, fetch=True)  # type: ignore[attr-defined]
        return table

    @available
    def tenant_scoped_sql(self, relation: Any, tenant: Optional[str]) -> str:
        """``relation`` as the bound tenant may read it (tenant_scoped())."""
        return scoped_relation_sql(str(relation), tenant)
