"""A Python model's DataFrames in a bound run, decided like a SQL statement
(bound_statement.py) on Spark's analyzed plan of the DataFrame:

- :func:`scoped_read` -- what ``dbt.ref()`` / ``dbt.source()`` hand the model: the
  relation as it is when its plan reads no tenant-scoped table, else the relation
  scoped (``plan.scoped_relation_sql``, the shape ``tenant_scoped()`` renders), verified
  on its plan; else TenantReadError;
- :func:`check_dataframe` -- the DataFrame the model returns, before anything is written:
  every scan of a tenant-scoped table in its plan must sit under the adapter's scope, so
  a read that bypassed ``dbt.ref`` (``spark.read`` of a table's files, a read through
  another session object) fails the model;
- :class:`TenantBoundSession` -- the ``session`` the model receives: its ``sql()`` is
  scoped like a SQL statement, its ``table()`` of a tenant-scoped table refused when it
  is called (before any row reaches Python).

Unbound runs: ``session.table`` and no check. Nothing here runs a query; Spark analyzes
a DataFrame when it is built. docs/python_models.md, "Tenant-bound runs".
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from dbt.adapters.contracts.connection import Connection

from dbt.adapters.jammi.tenancy.bound_statement import scoped_statement
from dbt.adapters.jammi.tenancy.guard import TenantGuard, TenantReadError
from dbt.adapters.jammi.tenancy.plan import UNNAMED_SCAN, UnscopedScan, scoped_relation_sql
from dbt.adapters.jammi.tenancy.statement_plans import dataframe_plan, table_properties


def scoped_read(guard: TenantGuard, connection: Connection, session: Any, relation: str) -> Any:
    """``relation`` as a DataFrame the bound tenant may read (unbound: as it is)."""
    read = session.table(relation)
    tenant = guard.tenant
    if tenant is None:
        return read
    scans = unscoped_scans(guard, connection, read, tenant)
    if not scans:
        return read
    try:
        scoped = session.sql(scoped_relation_sql(relation, tenant))
        verified = not unscoped_scans(guard, connection, scoped, tenant)
    except Exception:  # a view without tenant_id cannot be scoped: report the reads
        verified = False
    if not verified:
        raise TenantReadError(python_read_message(connection.name, scans, tenant))
    guard.statements_scoped += 1
    return scoped


def check_dataframe(guard: TenantGuard, connection: Connection, dataframe: Any) -> None:
    """TenantReadError when ``dataframe`` reads a tenant-scoped table unscoped (unbound:
    nothing to check)."""
    tenant = guard.tenant
    if tenant is None:
        return
    scans = unscoped_scans(guard, connection, dataframe, tenant)
    if scans:
        raise TenantReadError(python_read_message(connection.name, scans, tenant))


def unscoped_scans(
    guard: TenantGuard, connection: Connection, dataframe: Any, tenant: str
) -> Sequence[UnscopedScan]:
    """The scans of tenant-scoped tables in ``dataframe``'s analyzed plan that sit under
    no scope filter of ``tenant``."""
    properties = functools.partial(table_properties, connection)
    return guard.unscoped(dataframe_plan(connection, dataframe, tenant), properties)


def python_read_message(connection_name: Any, scans: Sequence[UnscopedScan], tenant: str) -> str:
    tables = list(dict.fromkeys(scan.table for scan in scans))
    name = str(connection_name or "").split(".")[-1]
    how = (
        "reads a table's files by path"
        if UNNAMED_SCAN in tables
        else "reads them outside dbt.ref()/dbt.source(), or through a view that does not "
        "pass tenant_id through"
    )
    return (
        f"python model '{name}' reads {', '.join(tables)} without the adapter's tenant scope "
        f"in a run bound to tenant {tenant!r}: its DataFrame {how}, and would see other "
        "tenants' rows, so nothing was written.\n"
        "  Fix: read tenant-scoped tables with dbt.ref('...') or dbt.source('...', '...') "
        "(the adapter scopes those reads), not session.table(), session.sql() or "
        "spark.read. Run unbound (no profile tenant, no var jammi_tenant) to read every "
        "tenant's rows."
    )


class TenantBoundSession:
    """The SparkSession a Python model receives in a bound run (unbound runs hand it the
    session itself). ``sql()`` passes the tenant guard's one entry for statements
    (``bound_statement.scoped_statement``: analyzed before it runs, its reads scoped in
    its text or refused), as a SQL model's statements do; ``table()`` of a tenant-scoped
    table is refused (read it with ``dbt.ref``/``dbt.source``), so rows a model would
    pull into Python (``collect()``) pass the guard too. Everything else is the
    session's own."""

    def __init__(self, session: Any, guard: TenantGuard, connection: Connection) -> None:
        self._session = session
        self._guard = guard
        self._connection = connection

    def sql(self, sqlQuery: str, args: Any = None, **kwargs: Any) -> Any:  # noqa: N803
        if args or kwargs:  # parameter markers: analyzed with their values bound
            read = self._session.sql(sqlQuery, args, **kwargs)
            check_dataframe(self._guard, self._connection, read)
            return read
        return self._session.sql(scoped_statement(self._guard, self._connection, sqlQuery))

    def table(self, tableName: str) -> Any:  # noqa: N803
        read = self._session.table(tableName)
        check_dataframe(self._guard, self._connection, read)
        return read

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)
