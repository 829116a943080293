"""One statement of a bound run: it runs as it is, runs with its reads scoped, or fails
before it runs. This module owns that decision; every statement of a bound run passes
through :func:`scoped_statement` (the connection manager's ``add_query``, and
``adapter.tenant_guard_scoped_sql`` for a model's SQL), as a straight pipeline:

1. **analyze** -- Spark's analyzed plan of the statement (tenancy/statement_plans.py);
2. **decide** -- the scans of tenant-scoped tables the plan reads without the adapter's
   scope (tenancy/plan.py's rule; tenancy/guard.py knows the run's tenant, its trust
   and which tables are tenant-scoped);
3. **rewrite** -- those reads scoped in the statement's own characters
   (tenancy/scope_references.py);
4. **verify** -- the rewritten statement analyzed and decided again: it runs only when
   every read is now scoped.

Unbound, trusted, or reading no rows: the statement runs unchecked (step 0, the guard's
``needs_check``). docs/tenancy.md.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, Callable, Optional

from dbt.adapters.contracts.connection import Connection

from dbt.adapters.jammi.tenancy.guard import TenantGuard, TenantReadError, unscoped_read_message
from dbt.adapters.jammi.tenancy.plan import PlanNode, UnscopedScan
from dbt.adapters.jammi.tenancy.scope_references import scope_references
from dbt.adapters.jammi.tenancy.statement_plans import statement_plan, table_properties

PropertiesOf = Callable[[str], dict[str, str]]


def scoped_statement(
    guard: TenantGuard, connection: Connection, sql: str, bindings: Any = None
) -> str:
    """The statement to run for ``sql`` in this run.

    Unbound, trusted, or reading no rows: ``sql`` itself, unchecked. Bound: ``sql``
    itself when Spark's plan shows every read of a tenant-scoped table scoped; else
    ``sql`` with those reads scoped in its own text (``scope_references``), when the
    plan of the result shows every read scoped; else TenantReadError, and nothing ran.
    A statement with bindings (a seed's inserts) is checked, never rewritten."""
    if not guard.needs_check(sql, connection.name):
        return sql
    tenant = guard.tenant or ""
    subject = subject_of(connection.name)
    properties: PropertiesOf = functools.partial(table_properties, connection)
    scans = decide(guard, analyze(connection, sql, bindings, tenant, subject), properties)
    if not scans:
        return sql
    scoped = rewrite(sql, bindings, scans, tenant)
    if scoped != sql and verified(guard, connection, scoped, tenant, properties):
        guard.statements_scoped += 1
        return scoped
    raise TenantReadError(unscoped_read_message(subject, scans, tenant))


def subject_of(connection_name: Optional[str]) -> str:
    """``model.project.orders`` -> ``model 'orders'``."""
    if not connection_name:
        return "a statement"
    parts = connection_name.split(".")
    if len(parts) >= 3:
        return f"{parts[0].replace('_', ' ')} '{parts[-1]}'"
    return f"'{connection_name}'"


def analyze(connection: Connection, sql: str, bindings: Any, tenant: str, subject: str) -> PlanNode:
    """The statement's analyzed plan; a statement Spark cannot analyze fails here, with
    Spark's reason (the same error would stop the statement itself)."""
    try:
        return statement_plan(connection, sql, bindings, tenant)
    except Exception as exc:  # Spark's parse/analysis error, reported as the reason
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise TenantReadError(
            f"{subject}: in a run bound to tenant {tenant!r} every statement is analyzed "
            f"before it runs, and Spark could not analyze this one: {detail}\n"
            "  Fix: correct the SQL (the same error would stop the statement itself)"
        ) from None


def decide(guard: TenantGuard, plan: PlanNode, properties: PropertiesOf) -> list[UnscopedScan]:
    """The scans of tenant-scoped tables ``plan`` reads unscoped."""
    return guard.unscoped(plan, properties)


def rewrite(sql: str, bindings: Any, scans: Sequence[UnscopedScan], tenant: str) -> str:
    """``sql`` with the reads of ``scans`` scoped in its own text; ``sql`` itself when
    it has bindings or a scan was reached by no name the text could show."""
    names = {name for scan in scans for name in scan.names}
    return sql if bindings or not names else scope_references(sql, names, tenant)


def verified(
    guard: TenantGuard, connection: Connection, scoped: str, tenant: str, properties: PropertiesOf
) -> bool:
    """Whether Spark's plan of the rewritten statement shows every read scoped (a
    rewrite that does not analyze is not verified: the original reads are reported)."""
    try:
        return not decide(guard, statement_plan(connection, scoped, None, tenant), properties)
    except Exception:
        return False
