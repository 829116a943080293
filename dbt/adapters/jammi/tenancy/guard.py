"""The tenant read guard: every statement of a bound run, checked against what Spark
resolves it to read (docs/tenancy.md).

In a run bound to a tenant, the connection manager hands each statement to
:meth:`TenantGuard.check` before it runs: models, tests (``--store-failures`` too),
snapshots, seeds, analyses, ``dbt show``, hooks and operations alike. The guard has Spark
analyze the statement without running it and finds the scans of tenant-scoped tables
(mutable tables, topic backing tables, also through views, CTEs, ephemeral models and
subqueries). A statement whose every such scan is restricted by the adapter's own scope
filter (``tenancy/plan.py``) runs as it is. Otherwise the reads are scoped in the statement's
own text (``scope_references``) and the result is analyzed again: it runs when every scan
is now scoped, and anything still unscoped fails before it runs.

The adapter's own statements inside its materializations (planning, applying, offset
claims) read whole tables by design, after the model's SQL passed the check; they run
*trusted*: within :meth:`TenantGuard.trusted` (Python) or while a materialization holds
the node's trust (``adapter.tenant_guard_trust``), which is tied to the thread and the
node's connection so it can never carry over to another node. Unbound runs skip all of
this: the guard costs nothing there.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Callable, Optional

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.jammi.tenancy.plan import UNNAMED_SCAN, PlanNode, UnscopedScan, unscoped_scans

# Statements that read no rows: metadata, drops, session state. Everything else is
# analyzed (a ``set`` is analyzed too: a session variable can hold a query).
_NO_ROWS = frozenset({"show", "describe", "desc", "drop", "use", "refresh", "explain"})
_LEADING = re.compile(r"^(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*", re.DOTALL)
DEFINITION_PROPERTY = "jammi.definition"


class TenantReadError(DbtRuntimeError):
    """A bound run tried to read a tenant-scoped relation without the adapter's scope."""


def first_keyword(sql: str) -> str:
    rest = sql[_LEADING.match(sql).end() :]  # type: ignore[union-attr]
    match = re.match(r"[A-Za-z]+", rest)
    return match.group(0).lower() if match else ""


def reads_rows(sql: str) -> bool:
    return first_keyword(sql) not in _NO_ROWS


def unscoped_read_message(subject: str, scans: Sequence[UnscopedScan], tenant: str) -> str:
    tables = list(dict.fromkeys(scan.table for scan in scans))
    by_path = UNNAMED_SCAN in tables
    return (
        f"{subject} reads {', '.join(tables)} without the adapter's tenant scope in a run "
        f"bound to tenant {tenant!r}, and the adapter could not scope it; it would see "
        "other tenants' rows, so nothing was run.\n"
        "  The adapter scopes a bound run's reads itself where it can: each reference of "
        "a tenant-scoped table or view (ref(), source(), this, a name in plain SQL) in a "
        "FROM, a JOIN or a MERGE's USING. It cannot scope "
        + (
            "a table read by its path (format.`<location>`)"
            if by_path
            else "a read through a view or expression that does not pass tenant_id "
            "through unchanged, or a reference the statement's text does not show"
        )
        + ".\n  Fix: read the table by name, through {{ tenant_scoped(ref('...')) }} where "
        "the scope belongs (topics: topic_events(), topic_range(), topic_backing_table()); "
        "a filter written by hand is not the adapter's scope. Run unbound (no profile "
        "tenant, no var jammi_tenant) to read every tenant's rows."
    )


class TenantGuard:
    """Per adapter: the bound tenant, the cache of which tables are tenant-scoped, and
    the trust of the adapter's own statements."""

    def __init__(self, resolve_tenant: Callable[[], Optional[str]]) -> None:
        self._resolve_tenant = resolve_tenant
        self._tenant: Optional[str] = None
        self._resolved = False
        self._lock = threading.Lock()
        self._local = threading.local()
        self._node_trust: dict[int, str] = {}
        self._tenant_tables: dict[str, bool] = {}
        self.statements_checked = 0
        self.statements_scoped = 0
        self.table_lookups = 0

    # --- binding -----------------------------------------------------------------

    @property
    def tenant(self) -> Optional[str]:
        if not self._resolved:
            self._tenant = self._resolve_tenant()
            self._resolved = True
        return self._tenant

    # --- trust -------------------------------------------------------------------

    @contextmanager
    def trusted(self) -> Iterator[None]:
        """Statements the adapter itself generates, run unchecked."""
        self._local.depth = getattr(self._local, "depth", 0) + 1
        try:
            yield
        finally:
            self._local.depth -= 1

    def trust_node(self, connection_name: Optional[str], on: bool) -> None:
        key = threading.get_ident()
        with self._lock:
            if on and connection_name:
                self._node_trust[key] = connection_name
            else:
                self._node_trust.pop(key, None)

    def is_trusted(self, connection_name: Optional[str]) -> bool:
        if getattr(self._local, "depth", 0) > 0:
            return True
        owner = self._node_trust.get(threading.get_ident())
        return owner is not None and owner == connection_name

    # --- the check ---------------------------------------------------------------

    def needs_check(self, sql: str, connection_name: Optional[str]) -> bool:
        """Cheapest test first; an invalid binding fails the first statement that reads."""
        return reads_rows(sql) and not self.is_trusted(connection_name) and self.tenant is not None

    def unscoped(
        self, plan: PlanNode, table_properties: Callable[[str], dict[str, str]]
    ) -> list[UnscopedScan]:
        """The scans of tenant-scoped tables that ``plan`` reads unscoped."""
        self.statements_checked += 1

        def is_tenant_table(table: str) -> bool:
            if table not in self._tenant_tables:
                self.table_lookups += 1
                self._tenant_tables[table] = DEFINITION_PROPERTY in table_properties(table)
            return self._tenant_tables[table]

        return unscoped_scans(plan, is_tenant_table)

    def check_plan(
        self,
        plan: PlanNode,
        subject: str,
        table_properties: Callable[[str], dict[str, str]],
    ) -> None:
        """Raise TenantReadError when ``plan`` reads a tenant-scoped table unscoped."""
        scans = self.unscoped(plan, table_properties)
        if scans:
            raise TenantReadError(unscoped_read_message(subject, scans, self.tenant or ""))
