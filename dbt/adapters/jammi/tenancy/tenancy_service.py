"""The tenancy wing's service: what the materializations and macros use to check a
model's SQL up front, to run the adapter's own statements trusted, and to scope a
relation to the bound tenant (docs/tenancy.md). The adapter's face (impl.py) hands
``adapter.tenant_guard_*`` and ``tenant_scoped_sql`` to it."""

from __future__ import annotations

from typing import Any, Optional

from dbt.adapters.jammi.common.sql_session import SqlSession
from dbt.adapters.jammi.common.validation import validate_tenant_value
from dbt.adapters.jammi.tenancy.bound_statement import scoped_statement
from dbt.adapters.jammi.tenancy.plan import scoped_relation_sql


class TenancyService:
    def __init__(self, sql: SqlSession) -> None:
        self.sql = sql

    def bound_tenant(self, override: Any = None) -> Optional[str]:
        """The tenant this run is bound to: var jammi_tenant, else the profile field.

        A var that is set must name a tenant: an empty or blank value is an error, never
        a silent fallback to an unbound run (which would write shared rows)."""
        if override is not None:
            return validate_tenant_value(override, "tenant binding (var 'jammi_tenant')")
        tenant = self.sql.credentials.tenant
        if tenant is None:
            return None
        return validate_tenant_value(tenant, "profile field 'tenant'")

    def scoped_sql(self, sql: str) -> str:
        """``sql`` as a bound run may run it: as it is when every read of a
        tenant-scoped relation is scoped, else with those reads scoped by the adapter;
        TenantReadError when that is not possible. Unbound runs: ``sql`` itself. The
        jammi materializations run the model's SQL through this, then run the result
        trusted (it is inlined in the adapter's own statements). Called only to check
        (jammi_check_tenant_reads), it fails a bound run before anything is written."""
        guard = self.sql.tenant_guard
        if guard.tenant is None or not sql:
            return sql
        return scoped_statement(guard, self.sql.thread_connection(), sql)

    def trust(self, on: bool) -> str:
        """Trust (or stop trusting) the statements of the node this thread is running:
        a materialization's own statements, after the model's SQL passed the check."""
        self.sql.tenant_guard.trust_node(self.sql.thread_connection().name, bool(on))
        return ""

    @staticmethod
    def scoped_relation(relation: Any, tenant: Optional[str]) -> str:
        """``relation`` as the bound tenant may read it (tenant_scoped())."""
        return scoped_relation_sql(str(relation), tenant)
