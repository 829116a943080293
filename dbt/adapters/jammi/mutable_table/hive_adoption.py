"""Adopting a Hive-format table (text, or parquet/orc under a Hive SerDe): a table dbt
built on a session whose ``CREATE TABLE`` defaults to Hive's format (Spark 3.5's
``spark.sql.legacy.createHiveTableByDefault``), or one made outside dbt
(docs/mutable_table.md#existing-relations).

A mutable table's versions need a format it commits to (parquet, orc, Delta, Iceberg),
so the Hive table's rows are rewritten once, as the model's format (the format given,
or ``auto``'s), under a new location, and the Hive table is kept, renamed, with every
file it has: nothing of it is ever deleted. The checks of any adoption (keys present,
no NULL or duplicate stored keys) run on the Hive table before anything is written, so
a refused table is left as it was.

The rewrite is three statements (``HiveConversion.statements``), none of which loses
the rows whichever it stops after:

1. ``CREATE TABLE <name>__jammi_adopting ... AS SELECT`` the Hive table's rows (and a
   NULL ``tenant_id``: they are shared rows), at the new location, marked with
   ``jammi.adopting_from``; a run stopped here leaves the Hive table as it was, and the
   next run drops the marked table and starts again;
2. ``ALTER TABLE <name> RENAME TO <name>__jammi_hive``: the Hive table keeps its rows
   under that name; a run stopped here leaves no table of the model's name, and the
   next run's start renames the marked table to it (``recovery_statements``), then
   adopts it as any table of its format;
3. ``ALTER TABLE <name>__jammi_adopting RENAME TO <name>``: the table has the model's
   name, and the adoption goes on as for a table of its format.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from dbt.adapters.jammi.common.validation import TENANT_COLUMN, quote_identifier, sql_string_literal
from dbt.adapters.jammi.mutable_table.table_format import table_format

HIVE = "hive"
ADOPTING_SUFFIX = "__jammi_adopting"
KEPT_SUFFIX = "__jammi_hive"
ADOPTING_PROPERTY = "jammi.adopting_from"
# the formats whose location a mutable table manages itself (a version directory under it)
LOCATED_FORMATS = ("parquet", "orc", "delta", "iceberg")


def adopting_name(relation: str) -> str:
    """The rewritten table's name until it takes the model's (``schema.name``)."""
    return f"{relation}{ADOPTING_SUFFIX}"


def kept_name(relation: str) -> str:
    """The Hive table's name once its rows have been rewritten."""
    return f"{relation}{KEPT_SUFFIX}"


@dataclass(frozen=True)
class HiveConversion:
    """The rewrite of one Hive table (``relation``, ``schema.name``) as ``file_format``
    at ``location``; ``add_tenant``: its rows gain a NULL ``tenant_id``."""

    relation: str
    file_format: str
    location: str
    add_tenant: bool

    def statements(self) -> list[str]:
        tenant = f", cast(null as string) as {quote_identifier(TENANT_COLUMN)}"
        marker = f"{sql_string_literal(ADOPTING_PROPERTY)} = {sql_string_literal(self.relation)}"
        create = (
            f"create table {adopting_name(self.relation)} using {self.file_format}\n"
            f"location {sql_string_literal(self.location)}\n"
            f"tblproperties ({marker})\n"
            f"as select *{tenant if self.add_tenant else ''} from {self.relation}"
        )
        identifier = self.relation.rpartition(".")[2]
        return [
            create,
            f"alter table {self.relation} rename to {kept_name(self.relation)}",
            f"alter table {adopting_name(self.relation)} rename to {identifier}",
        ]


def new_location(hive_location: str, run_id: str) -> str:
    """Where the rewritten rows go: beside the Hive table's files, never among them."""
    return f"{hive_location.rstrip('/')}__jammi_{run_id}"


def is_marked_for(properties: Mapping[str, str], relation: str) -> bool:
    """Whether a table is the rewrite of ``relation`` a stopped run left."""
    return str(properties.get(ADOPTING_PROPERTY, "")).lower() == relation.lower()


def recovery_statements(relation: str, adopting_exists: bool, marked: bool) -> list[str]:
    """What the start of a run whose model's table does not exist does first: a rewrite
    a stopped run left after renaming the Hive table aside takes the model's name."""
    if not (adopting_exists and marked):
        return []
    return [f"alter table {adopting_name(relation)} rename to {relation.rpartition('.')[2]}"]


def leftover_statements(adopting_exists: bool, marked: bool, relation: str) -> list[str]:
    """Before a rewrite: a marked rewrite of this table that a stopped run left (the Hive
    table still holds the model's name) is dropped, and made again."""
    if adopting_exists and marked:
        return [f"drop table {adopting_name(relation)}"]
    return []


def stored_tenant(stored_columns: Sequence[Sequence[Any]]) -> bool:
    """Whether the Hive table already has a ``tenant_id`` column."""
    return any(str(n).lower() == TENANT_COLUMN for n, _ in stored_columns)


def location_of(file_format: str, location: str) -> Optional[str]:
    """A run's state ``location`` for the rewritten table: the rewrite formats' (their
    versions go under it), none for Delta and Iceberg."""
    return None if table_format(file_format).applies_by_merge else location


def recover(
    relation: str,
    listed: Callable[[str], bool],
    properties_of: Callable[[str], Mapping[str, str]],
    execute: Callable[[str], Any],
) -> bool:
    """At the start of a run whose model's table does not exist: the rewrite a stopped
    run left after renaming the Hive table aside takes the model's name (True: the run
    then adopts it)."""
    adopting = adopting_name(relation)
    exists = listed(adopting)
    marked = exists and is_marked_for(properties_of(adopting), relation)
    statements = recovery_statements(relation, exists, marked)
    for sql in statements:
        execute(sql)
    return bool(statements)


def convert(
    conversion: HiveConversion,
    listed: Callable[[str], bool],
    properties_of: Callable[[str], Mapping[str, str]],
    execute: Callable[[str], Any],
) -> None:
    """The rewrite: a marked copy a stopped run left beside the Hive table dropped, then
    the three statements."""
    adopting = adopting_name(conversion.relation)
    exists = listed(adopting)
    marked = exists and is_marked_for(properties_of(adopting), conversion.relation)
    for sql in leftover_statements(exists, marked, conversion.relation):
        execute(sql)
    for sql in conversion.statements():
        execute(sql)
