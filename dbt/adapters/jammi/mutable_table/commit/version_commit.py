"""The commits that write a table's rows: a first run's create (every format) and the
rewrite formats' next version (parquet, orc), each one protocol in Python. The
materialization renders the next state (the planner's ``get_next_state_sql``) and calls
it once (apply_service.py); everything else, in order, is here.

A rewrite commit writes the complete next version to a fresh directory
``<table base>/v<version>_<run id>`` (its version log row first, then the rows, the
tombstones it carries, an identity column's mark, the changelog's staged events), then
swaps the table's location with one compare-and-swap (rewrite_commit.py). A create
writes the registry first (shared, created if missing), then the table and its registry
row, all or nothing. ``fail_at`` (var ``jammi_fail_at``, run_errors.FAILURE_PHASES) puts
a failing statement where a test asks, so the crash tests can stop a run at each phase.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable, Optional

from dbt.adapters.jammi.common.validation import quote_identifier, sql_string_literal
from dbt.adapters.jammi.mutable_table import version_locations
from dbt.adapters.jammi.mutable_table.commit.attempt import Attempt, TableWrite
from dbt.adapters.jammi.mutable_table.commit.transaction import Transaction
from dbt.adapters.jammi.mutable_table.run_errors import failure_sql
from dbt.adapters.jammi.mutable_table.table_format import table_format

if TYPE_CHECKING:
    from dbt.adapters.jammi.mutable_table.commit.commit_service import CommitService
    from dbt.adapters.jammi.mutable_table.rules.rules_service import RulesService
    from dbt.adapters.jammi.mutable_table.steps import StepRunner
    from dbt.adapters.jammi.mutable_table.versions.versions_service import VersionsService

Step = dict[str, Any]


@dataclass(frozen=True)
class CommitParts:
    """The services the protocols write through (given by apply_service.py): the kept
    versions' log, the row rules' records, the all-or-nothing steps, the swap."""

    versions: VersionsService
    rules: RulesService
    steps: StepRunner
    commits: CommitService


def staging_table_sql(staging: str, select_sql: str, properties: Mapping[str, str]) -> str:
    """The rewrite applier's staged change set: a parquet table stamped with its owner
    (``properties``: ownership.holder_properties)."""
    stamped = ",\n    ".join(
        f"{sql_string_literal(key)} = {sql_string_literal(value)}"
        for key, value in properties.items()
    )
    return (
        f"create table {staging} using parquet\n"
        f"  tblproperties (\n    {stamped}\n  )\n  as\n  {select_sql}"
    )


def layout_columns(definition: Mapping[str, Any]) -> list[str]:
    """The columns rows are laid out by: the ordering column, then every index's."""
    columns: list[str] = []
    if definition.get("ordering_column"):
        columns.append(str(definition["ordering_column"]))
    for index in definition.get("indexes") or []:
        columns += [c for c in index["columns"] if c not in columns]
    return columns


def sort_clause(definition: Mapping[str, Any]) -> str:
    """Rows sorted within each file by the layout columns, so that min/max statistics
    skip files and row groups for predicates on them (the rewrite formats have no
    indexes of their own)."""
    columns = layout_columns(definition)
    return f"sort by {', '.join(quote_identifier(c) for c in columns)}" if columns else ""


def zorder_sql(definition: Mapping[str, Any], relation: str, file_format: str) -> str:
    """The format's layout of a new table by the index columns, the ordering column
    first when no index has it (``TableFormat.layout_sql``: Delta's ``optimize ... zorder
    by``, Iceberg's write order). Empty when the definition has none."""
    names: list[str] = []
    for index in definition.get("indexes") or []:
        names += [c for c in index["columns"] if c not in names]
    ordering = definition.get("ordering_column")
    if ordering and ordering not in names:
        names.insert(0, str(ordering))
    columns = [quote_identifier(c) for c in names]
    if not columns:
        return ""
    return table_format(file_format).layout_sql(relation, columns)


def write_version_sql(
    definition: Mapping[str, Any],
    location: str,
    file_format: str,
    next_state_sql: str,
    fail_at: Optional[str],
) -> str:
    failing = (
        "\n  where coalesce(cast(raise_error('jammi_fail_at=write: injected failure while "
        "writing') as boolean), true)"
        if fail_at == "write"
        else ""
    )
    return (
        f"insert overwrite directory {sql_string_literal(location)} using {file_format}\n"
        f"  select * from (\n{next_state_sql}\n  ) as next_state{failing}\n"
        f"  {sort_clause(definition)}"
    )


def storage_columns_sql(definition: Mapping[str, Any]) -> str:
    columns = [f"{quote_identifier(n)} {t}" for n, t in definition["storage_columns"]]
    return ",\n    ".join([*columns, "tenant_id string"])


def create_storage_table_sql(
    definition: Mapping[str, Any], relation: str, file_format: str, location: str, properties: str
) -> str:
    """A parquet/orc storage table over its first version directory, already written."""
    return (
        f"create table {relation} (\n    {storage_columns_sql(definition)}\n  )\n"
        f"  using {file_format}\n  location {sql_string_literal(location)}\n  {properties}"
    )


def create_storage_table_as_sql(
    definition: Mapping[str, Any], relation: str, file_format: str, select_sql: str, properties: str
) -> str:
    """A Delta or Iceberg storage table created with its first batch, one statement."""
    casts = [
        f"cast({quote_identifier(n)} as {t}) as {quote_identifier(n)}"
        for n, t in definition["storage_columns"]
    ]
    columns = ",\n    ".join([*casts, "cast(tenant_id as string) as tenant_id"])
    return (
        f"create table {relation}\n  using {file_format}\n  {properties}\n  as\n"
        f"  select\n    {columns}\n  from ({select_sql}) as first_batch"
    )


def commit_rewrite(
    parts: CommitParts,
    run_sql: Callable[[str], Any],
    write: TableWrite,
    attempt: Attempt,
    location: str,
) -> Optional[str]:
    """The next version of an existing parquet/orc table, written to ``location`` and
    swapped in. Returns ``location``, or None when the swap lost to a concurrent run and
    ``last_attempt`` is false (nothing committed: the caller re-plans). Any failure
    removes this run's directory and runs ``cleanup``; the table keeps its version."""
    definition, target, file_format = write.definition, write.target, write.file_format
    planned_location = str(attempt.planned_location)
    fail_at, cleanup = attempt.fail_at, attempt.cleanup
    records = Transaction()
    parts.rules.add_version_records(records, write, attempt, location)
    staged_paths = [
        parts.versions.version_log_location(location),
        *records.undo_paths("changelog"),
    ]
    steps: list[Step] = [
        {
            "sql": parts.versions.version_log_sql(
                location, planned_location, attempt.counts, attempt.invocation_id, attempt.kind
            ),
            "undo_paths": [parts.versions.version_log_location(location)],
        },
        {
            "sql": write_version_sql(definition, location, file_format, write.statement, fail_at),
            "undo_paths": [location],
        },
    ]
    steps += records.steps()
    if fail_at == "before_commit":
        steps.append({"sql": failure_sql("before_commit")})
    parts.steps.all_or_nothing(steps, cleanup)
    if fail_at == "concurrent_commit":
        # the test hook: what another run committing between this plan and its commit does
        other = version_locations.next_location(planned_location, "concurrent")
        run_sql(
            f"insert overwrite directory {sql_string_literal(other)} using {file_format} "
            f"select * from {target}"
        )
        run_sql(f"alter table {target} set location {sql_string_literal(other)}")
    committed = parts.commits.commit_version(
        target,
        planned_location,
        location,
        str(definition["table_id"]),
        cleanup,
        attempt.last_attempt,
        staged_paths,
    )
    return location if committed else None


def create_steps(
    parts: CommitParts,
    write: TableWrite,
    attempt: Attempt,
    location: Optional[str],
    records: Mapping[str, str],
) -> list[Step]:
    """A first run's steps, all or nothing: the table (Delta and Iceberg: created with
    its rows, then laid out; parquet/orc: the version log row, the first version
    directory, an identity column's mark, the changelog's staged events, then the table
    over it), then the registry row. The CREATE TABLE is the claim on the name
    (``creates``): if another run created it first, the run fails saying so and undoes
    only its own steps."""
    definition, target, file_format = write.definition, write.target, write.file_format
    first_state_sql, fail_at = write.statement, attempt.fail_at
    drop_table = f"drop table if exists {target}"
    steps: list[Step] = []
    rule_records = Transaction()
    stored_as = table_format(file_format)
    if stored_as.applies_by_merge:
        if stored_as.merges_on_branch:
            parts.rules.add_create_records(rule_records, write, attempt)
        steps += rule_records.steps()
        steps.append(
            {
                "sql": create_storage_table_as_sql(
                    definition, str(target), file_format, first_state_sql, records["properties"]
                ),
                "undo_sql": drop_table,
                "creates": str(target),
            }
        )
        if fail_at in ("write", "before_commit"):
            steps.append({"sql": failure_sql(str(fail_at))})
        zorder = zorder_sql(definition, str(target), file_format)
        if fail_at == "zorder":
            steps.append({"sql": failure_sql("zorder")})
        elif zorder:
            steps.append({"sql": zorder})
    else:
        assert location is not None  # the rewrite formats write a first version directory
        base = location.rstrip("/").rsplit("/", 1)[0]
        # this run's version directory, then the table's base if that leaves it empty
        undo_paths = [
            location,
            parts.versions.version_log_location(location),
            f"{base}/_jammi_versions/",
            f"{base}/",
        ]
        steps.append(
            {
                "sql": parts.versions.version_log_sql(
                    location, None, attempt.counts, attempt.invocation_id
                ),
                "undo_paths": undo_paths,
            }
        )
        steps.append(
            {
                "sql": write_version_sql(
                    definition, location, file_format, first_state_sql, fail_at
                ),
                "undo_paths": undo_paths,
            }
        )
        first = replace(attempt, tombstones_sql=None)
        parts.rules.add_version_records(rule_records, write, first, location)
        steps += rule_records.steps()
        if fail_at == "before_commit":
            steps.append({"sql": failure_sql("before_commit")})
        steps.append(
            {
                "sql": create_storage_table_sql(
                    definition, str(target), file_format, location, records["properties"]
                ),
                "undo_sql": drop_table,
                "creates": str(target),
            }
        )
    if fail_at == "register":
        steps.append({"sql": failure_sql("register")})
    steps.append({"sql": records["register"]})
    return steps
