"""Which tenant-scoped tables an analyzed Spark plan reads without the adapter's scoping.

The tenant read guard (``tenancy/guard.py``) asks Spark to analyze every statement of a
bound run and hands the analyzed plan to :func:`unscoped_reads` as a tree of
:class:`PlanNode` (built from the JVM plan on ``method: session``, from ``EXPLAIN
EXTENDED`` elsewhere). The decision is structural, on what Spark resolved, never on
names in the SQL text: a scan of a tenant-scoped table is allowed only when the rows it
produces pass, before anything else touches them, through a filter that is exactly the
adapter's scope ``(tenant_id = '<bound tenant>' OR tenant_id IS NULL)`` on that scan's
own ``tenant_id`` attribute. Between the scan and that filter only aliases, views and
projections that pass ``tenant_id`` through unchanged (or cast) may stand;
``tenant_scoped()`` renders exactly that shape. Any other filter, join, aggregate or
expression in between is an unscoped read, even one that mentions ``tenant_id``: a
forged ``... or true``, or a predicate that errors on another tenant's row, would see
rows the run may not see.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Optional

from dbt.adapters.jammi.common.validation import TENANT_COLUMN, sql_string_literal

RELATION = "relation"  # a scan: table (None when read by path), attrs
VIEW = "view"  # a catalog or temporary view: table, attrs (its output)
ALIAS = "alias"  # SubqueryAlias: passes everything through
PROJECT = "project"  # passthrough: input attr id -> output attr ids (plain or cast attrs)
FILTER = "filter"  # scope_attr: the attr id if the condition is exactly the scope
OTHER = "other"


@dataclass
class PlanNode:
    kind: str
    table: Optional[str] = None
    attrs: dict[str, int] = field(default_factory=dict)
    passthrough: dict[int, set[int]] = field(default_factory=dict)
    scope_attr: Optional[int] = None
    children: list[PlanNode] = field(default_factory=list)

    def walk(self, parents: tuple[PlanNode, ...] = ()) -> Iterator[tuple[PlanNode, tuple]]:
        yield self, parents
        for child in self.children:
            yield from child.walk((*parents, self))


def scoped_relation_sql(relation: str, tenant: Optional[str]) -> str:
    """``relation`` as a run bound to ``tenant`` may read it: its own and shared rows.
    This is the one shape :func:`unscoped_reads` accepts (``tenant_scoped()``, the
    topic macros and the consumer SQL all render it here)."""
    if tenant is None:
        return relation
    column, literal = TENANT_COLUMN, sql_string_literal(tenant)
    return f"(select * from {relation} where ({column} = {literal} or {column} is null))"


def table_key(name: str) -> str:
    """``spark_catalog.db.t``, `` `db`.`t` `` -> ``db.t`` (lowercase, unquoted)."""
    parts = [p.strip("`").lower() for p in name.replace("`.`", ".").split(".")]
    parts = [p for p in parts if p]
    if len(parts) > 2 and parts[0] == "spark_catalog":
        parts = parts[1:]
    return ".".join(parts)


# How a scan without a catalog table is named in the guard's error: Spark resolved it
# from a path (``delta.`<location>` ``, ``parquet.`<dir>` ``), so it cannot be looked up.
UNNAMED_SCAN = "a table read by its path"


def is_topic_backing(table: str) -> bool:
    return table.rsplit(".", 1)[-1].startswith("__topic_")


def _scoped(parents: tuple[PlanNode, ...], attr: int) -> bool:
    """Walk up from a scan whose tenant attribute is ``attr``: True when the adapter's
    scope filter is reached through aliases, views and passthrough projections only."""
    carried = {attr}  # the attribute ids that still hold the scan's tenant_id
    for node in reversed(parents):
        if node.kind == FILTER:
            return node.scope_attr in carried
        if node.kind == ALIAS:
            continue
        if node.kind == VIEW:
            carried &= set(node.attrs.values())
        elif node.kind == PROJECT:
            carried = {out for a in carried for out in node.passthrough.get(a, ())}
        else:
            return False
        if not carried:
            return False
    return False


def unscoped_reads(root: PlanNode, is_tenant_table: Callable[[str], bool]) -> list[str]:
    """Tenant-scoped tables (``db.table``) that ``root`` reads without the scope filter.

    ``is_tenant_table`` answers for tables that carry a ``tenant_id`` column and are not
    topic backing tables (it may look the table up: mutable tables carry their definition
    as a table property); it is asked at most once per table per call.

    A scan with a ``tenant_id`` column that Spark resolved from a path, not from the
    catalog (``delta.`<location>` ``, ``parquet.`<dir>` ``: a relation without a catalog
    table), cannot be looked up, and a tenant-scoped table's own files are one such path
    away: it counts as tenant-scoped and is reported as :data:`UNNAMED_SCAN`.
    """
    answers: dict[str, bool] = {UNNAMED_SCAN: True}
    unscoped: list[str] = []
    for node, parents in root.walk():
        if node.kind != RELATION:
            continue
        attr = node.attrs.get(TENANT_COLUMN)
        if attr is None:
            continue
        table = node.table or UNNAMED_SCAN
        if table not in answers:
            answers[table] = is_topic_backing(table) or is_tenant_table(table)
        if not answers[table]:
            continue
        if not _scoped(parents, attr) and table not in unscoped:
            unscoped.append(table)
    return unscoped
