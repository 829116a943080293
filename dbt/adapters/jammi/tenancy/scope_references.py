"""A bound run's statement with its reads of tenant-scoped relations scoped, in the
statement's own characters.

In a run bound to a tenant the guard (``bound_statement.scoped_statement``)
finds, on the statement's analyzed plan, which tenant-scoped tables it reads without the
adapter's scope and by which names (the table, or a view over it). This module replaces
each read of such a name -- a table reference in a ``FROM``, a ``JOIN`` or a MERGE's
``USING`` -- by the scoped form ``tenant_scoped()`` renders, keeping the reference's own
text and alias::

    from analytics.prices p      ->  from (select * from analytics.prices where (...)) p
    join `analytics`.`prices`    ->  join (select * from `analytics`.`prices` where (...)) `prices`

The statement is never re-rendered: sqlglot (Spark dialect) only says where each table
reference starts and ends, and everything else stays the characters dbt sent. Written-to
tables (``INSERT INTO``, ``CREATE``, ``MERGE INTO``, ``DELETE FROM``, ``UPDATE``) are
left alone, and so are references with a time-travel clause. The guard analyzes the
result again and runs it only when Spark's plan shows every scan scoped: this module
proposes, the plan decides.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Optional

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from dbt.adapters.jammi.tenancy.plan import scoped_relation_sql, table_key

_DIALECT = sqlglot.Dialect.get_or_raise("spark")


def scope_references(sql: str, names: Collection[str], tenant: str) -> str:
    """``sql`` with each read of a relation in ``names`` (``db.table`` as
    :func:`table_key` gives it; a bare name for a temporary view) scoped to ``tenant``.
    ``sql`` itself when nothing matches or sqlglot cannot parse it."""
    wanted = {table_key(name) for name in names}
    try:
        statements = sqlglot.parse(sql, read=_DIALECT)
    except (SqlglotError, RecursionError):
        return sql
    if len(statements) != 1 or statements[0] is None:
        return sql
    edits = []
    for table in statements[0].find_all(exp.Table):
        span = _read_span(sql, table, wanted)
        if span is not None:
            edits.append(span)
    for start, end, alias in sorted(edits, reverse=True):
        scoped = scoped_relation_sql(sql[start:end], tenant)
        sql = sql[:start] + scoped + (f" {alias}" if alias else "") + sql[end:]
    return sql


def _read_span(sql: str, table: exp.Table, wanted: set[str]) -> Optional[tuple[int, int, str]]:
    """(start, end, alias to add) of a read of a wanted relation, else None."""
    if not _is_read(table) or table.args.get("version") is not None:
        return None
    parts = table.parts
    positions = [part.meta for part in parts]
    if not parts or any("start" not in p or "end" not in p for p in positions):
        return None
    start, end = positions[0]["start"], positions[-1]["end"] + 1
    text = sql[start:end]
    if _key(text) not in wanted or _key(text) != _key(".".join(p.sql("spark") for p in parts)):
        return None
    alias = "" if table.alias else sql[positions[-1]["start"] : end]
    return start, end, alias


def _is_read(table: exp.Table) -> bool:
    parent = table.parent
    if isinstance(parent, (exp.From, exp.Join)):
        return True
    return isinstance(parent, exp.Merge) and table.arg_key == "using"


def _key(text: str) -> str:
    return table_key(re.sub(r"\s+", "", text))
