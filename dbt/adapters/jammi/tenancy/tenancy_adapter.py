"""The ``adapter.tenant_guard_*`` methods: what the materializations and macros use to
check a model's SQL up front, to run the adapter's own statements trusted, and to
report what the guard cost (docs/tenancy.md)."""

from __future__ import annotations

from typing import Any, Optional

from dbt.adapters.base import available

from dbt.adapters.jammi.common.statements import StatementsMixin
from dbt.adapters.jammi.tenancy.bound_statement import scoped_statement
from dbt.adapters.jammi.tenancy.guard import TenantGuard
from dbt.adapters.jammi.tenancy.plan import scoped_relation_sql


class TenantGuardAdapterMixin(StatementsMixin):
    @property
    def tenant_guard(self) -> TenantGuard:
        return self.connections.tenant_guard  # type: ignore[attr-defined]

    @available
    def tenant_guard_scoped_sql(self, sql: str) -> str:
        """``sql`` as a bound run may run it: as it is when every read of a
        tenant-scoped relation is scoped, else with those reads scoped by the adapter;
        TenantReadError when that is not possible. Unbound runs: ``sql`` itself. The
        jammi materializations run the model's SQL through this, then run the result
        trusted (it is inlined in the adapter's own statements). Called only to check
        (jammi_check_tenant_reads), it fails a bound run before anything is written."""
        if self.tenant_guard.tenant is None or not sql:
            return sql
        connection = self.connections.get_thread_connection()  # type: ignore[attr-defined]
        return scoped_statement(self.tenant_guard, connection, sql)

    @available
    def tenant_guard_trust(self, on: bool) -> str:
        """Trust (or stop trusting) the statements of the node this thread is running:
        a materialization's own statements, after the model's SQL passed the check."""
        connection = self.connections.get_thread_connection()  # type: ignore[attr-defined]
        self.tenant_guard.trust_node(connection.name, bool(on))
        return ""

    @available
    def tenant_scoped_sql(self, relation: Any, tenant: Optional[str]) -> str:
        """``relation`` as the bound tenant may read it (tenant_scoped())."""
        return scoped_relation_sql(str(relation), tenant)
