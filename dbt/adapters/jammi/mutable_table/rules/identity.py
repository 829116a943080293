"""Config ``identity_column``: the engine numbers every new key (bigint 1, 2, 3, ...).

At most one column; the model may output it or not, its values are ignored either way.
A key keeps its number through updates, partial updates and re-sent rows; a number is
never handed out twice, not after its key is deleted, not to two racing runs.

The high-water mark (the highest number ever handed out) is committed with the rows:

- parquet/orc: a one-row file in the version directory's ``_jammi_identity/``
  sub-directory (Spark's file readers skip names starting with ``_``), written before
  the compare-and-swap commit (commit/rewrite_commit.py), so the mark becomes current with the
  version's rows or not at all;
- Delta: the MERGE's own commit records where its numbering started
  (``commitInfo.userMetadata``, set around the MERGE only); the mark after that commit
  is that start plus the MERGE's ``numTargetRowsInserted``, both in one Delta commit.
  The MERGE refuses to number from a start below a number already stored (a run that
  committed between this run's mark read and its MERGE): it stops with
  ``IDENTITY_MOVED_MARKER`` and the run re-plans, as after a Delta conflict;
- Iceberg: a row ``(tag, high_water)`` of the table ``<table>__jammi_identity``,
  appended after the run's MERGE into its own branch and tagged with the branch's
  snapshot; the fast-forward that makes the rows current makes the mark count
  (commit/branch_commit.py). A mark counts while its snapshot is in the table's
  current ancestry.

A run numbers its inserts from ``identity_from`` = the greater of that mark and the
highest stored number (a table whose mark cannot be read still never repeats a live
number). The planner (identity.sql) gives inserts ``identity_from + row_number()``
in key order and every other row its stored number.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Optional

from dbt.adapters.jammi.common.columns import ColumnDef, single_column
from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.types import INTEGER_TYPES
from dbt.adapters.jammi.common.validation import validate_column_name

if TYPE_CHECKING:
    from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition

# The definition options this rule owns (registered in rules/registry.py).
OPTIONS = ("identity_column",)

IDENTITY_TYPE = "bigint"
# Where a rewrite version keeps its mark: inside the version directory, skipped by readers.
MARK_DIR = "_jammi_identity"
MARK_COLUMN = "high_water"
# Delta: the commit's userMetadata carries `<invocation tag>|jammi.identity_from:<n>` (no
# `;`: Spark's SET takes a value up to the first one).
COMMIT_MARK = "|jammi.identity_from:"
# Iceberg: the marks beside the table, tagged with the snapshot that commits them.
MARK_TABLE_SUFFIX = "__jammi_identity"
MARK_TAG_COLUMN = "_tag"
# The MERGE stops with this when another run stored numbers above its start.
IDENTITY_MOVED_MARKER = "jammi-identity-moved"


def definition_fields(
    opts: Mapping[str, Any], draft: MutableTableDefinition, subject: str
) -> dict[str, Any]:
    """The definition's ``identity_column``, validated against the key fields."""
    return {
        "identity_column": validate_identity_column(
            opts.get("identity_column"),
            subject,
            {c.name: c.type for c in draft.columns},
            draft.primary_key,
            draft.version_columns,
            draft.tenant_from,
            draft.history,
            opts,
        )
    }


def validate_identity_column(
    value: Any,
    subject: str,
    types: Mapping[str, str],
    primary_key: Sequence[str],
    version_columns: Sequence[str],
    tenant_from: Optional[str],
    history: str,
    opts: Mapping[str, Any],
) -> Optional[str]:
    """The identity column's name, or None when the option is unset."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)) and len(value) > 1:
        raise JammiValidationError(
            subject,
            f"identity_column names {len(value)} columns ({', '.join(map(str, value))}); "
            "a table has at most one identity column",
            f"keep one: identity_column: '{value[0]}'",
        )
    column = validate_column_name(single_column("identity_column", value, subject), subject)
    fix = f"choose another name for identity_column, or remove the option (got '{column}')"
    roles = {
        "a primary_key column": column in primary_key,
        "a version_column": column in version_columns,
        "the tenant_from column": column == tenant_from,
        "a merge_functions column": column in (opts.get("merge_functions") or {}),
        "the ttl_column": column == opts.get("ttl_column"),
    }
    for role, taken in roles.items():
        if taken:
            raise JammiValidationError(
                subject,
                f"identity_column '{column}' is also {role}; the engine assigns its values "
                "and ignores the model's",
                fix,
            )
    if history != "none":
        raise JammiValidationError(
            subject,
            f"identity_column '{column}' is set with history: {history}; an scd2 history "
            "stores a key in many rows, which would share or split its number",
            "remove identity_column, or keep history: none",
        )
    if column in types and types[column] not in INTEGER_TYPES:
        raise JammiValidationError(
            subject,
            f"identity_column '{column}' is output with type {types[column]}; the engine "
            f"stores it as {IDENTITY_TYPE} and ignores the model's values",
            f"leave '{column}' out of the select list, or output it as an integer, "
            f"e.g. cast(null as bigint) as {column}",
        )
    return column


def numbered_columns(columns: list[ColumnDef], identity_column: Optional[str]) -> list[ColumnDef]:
    """The model's columns with the identity column (when output) typed as stored."""
    return [ColumnDef(c.name, IDENTITY_TYPE) if c.name == identity_column else c for c in columns]


def check_identity_unchanged(
    subject: str, stored: Optional[Mapping[str, Any]], batch: Mapping[str, Any], rebuild: str
) -> None:
    """An existing table's identity column cannot be added, moved or removed: its
    stored rows were numbered (or not) under the recorded one."""
    if stored is None:
        return
    before, after = stored.get("identity_column"), batch.get("identity_column")
    if before == after:
        return
    detail = (
        f"identity_column changed from '{before}' to '{after}'"
        if before and after
        else f"identity_column '{after}' is set"
        if after
        else f"identity_column '{before}' is removed"
    )
    raise JammiValidationError(
        subject,
        f"{detail} on the existing table; its stored rows were numbered under the recorded setting",
        f"set identity_column back to {before!r}, or {rebuild}",
    )


def identity_storage_column(definition: Mapping[str, Any]) -> Optional[list[str]]:
    """``[name, 'bigint']`` when the identity column is not among the model's columns
    (the engine adds it after them), else None."""
    column = definition.get("identity_column")
    if not column or any(c[0] == column for c in definition.get("columns") or []):
        return None
    return [column, IDENTITY_TYPE]


def mark_table(relation: str) -> str:
    """Iceberg: the marks' table beside ``relation`` (``schema.table``)."""
    return relation + MARK_TABLE_SUFFIX


def mark_location(version_location: str) -> str:
    return version_location.rstrip("/") + "/" + MARK_DIR


def commit_metadata(tag: str, identity_from: Optional[int]) -> str:
    """A Delta commit's userMetadata: the run's tag, plus where its numbering started."""
    return tag if identity_from is None else f"{tag}{COMMIT_MARK}{int(identity_from)}"


def commit_tag(metadata: str) -> str:
    """The tag part of a commit's userMetadata (what commit_metadata was given)."""
    return metadata.split(COMMIT_MARK, 1)[0]


def delta_high_water(history: Sequence[Mapping[str, Any]]) -> Optional[int]:
    """The mark of the newest MERGE commit that numbered rows: its start plus the rows it
    inserted. ``history``: DESCRIBE HISTORY rows as dicts (version, operation,
    operationMetrics, userMetadata); None when no commit records a start."""
    numbered = [
        entry
        for entry in history
        if entry.get("operation") == "MERGE" and COMMIT_MARK in str(entry.get("userMetadata"))
    ]
    if not numbered:
        return None
    newest = max(numbered, key=lambda entry: int(entry["version"]))
    start = str(newest["userMetadata"]).split(COMMIT_MARK, 1)[1]
    metrics = newest.get("operationMetrics") or {}
    inserted = int(metrics.get("numTargetRowsInserted") or 0)
    return int(start) + inserted if start.strip().isdigit() else None


_NO_PATH = ("PATH_NOT_FOUND", "Path does not exist", "does not exist")


def no_mark(message: str) -> bool:
    """A read of a version's mark failed because the version has none."""
    return any(marker in message for marker in _NO_PATH)


def identity_from(*marks: Any) -> int:
    """Where a run's numbering starts: the greatest known mark (none known: 0)."""
    known = [int(m) for m in marks if m is not None and str(m).strip().lstrip("-").isdigit()]
    return max([0, *known])


def identity_moved(message: str) -> bool:
    return IDENTITY_MOVED_MARKER in message
