"""Configs ``ttl_ms`` / ``ttl_column``: rows older than ``ttl_ms`` are deleted by the run.

A row's age is now minus its ``ttl_column`` (bigint epoch milliseconds, written by the
model); with ``history: scd2`` it is now minus ``valid_to``, so only closed intervals age
and the open row never expires by TTL alone. Without ``ttl_column`` (history none) the
engine keeps the time each key was last written in ``WRITTEN_AT_COLUMN``. The planner
(``ttl.sql``) adds the deletes to the run's own change set, so they commit with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Optional

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.types import INTEGER_TYPES, is_time_or_integer
from dbt.adapters.jammi.common.validation import require_positive_int
from dbt.adapters.jammi.mutable_table.rules.merge_functions import combines_in_batch

if TYPE_CHECKING:
    from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition

# The definition options this rule owns (registered in rules/registry.py).
OPTIONS = ("ttl_ms", "ttl_column")

# Engine-maintained: when the key's row was last inserted or updated (epoch ms).
WRITTEN_AT_COLUMN = "_written_at"


def expired_in_plan(definition: Mapping[str, Any]) -> bool:
    """Whether the history-none planner finds the expired stored rows in its own read of
    the stored rows (``change_set.sql``); not when merge functions combine a key's rows
    (merge_functions.combines_in_batch: that plan reads the stored rows apart), nor for
    scd2: ``ttl.sql`` then reads them again."""
    if not definition.get("ttl_ms") or definition.get("history") == "scd2":
        return False
    return not combines_in_batch(definition)


def definition_fields(
    opts: Mapping[str, Any], draft: MutableTableDefinition, subject: str
) -> dict[str, Any]:
    """The definition's ``ttl_ms`` and ``ttl_column``, validated against its columns."""
    types = {c.name: c.type for c in draft.columns}
    ttl_ms, ttl_column = validate_ttl(
        opts.get("ttl_ms"), opts.get("ttl_column"), subject, types, draft.history
    )
    return {"ttl_ms": ttl_ms, "ttl_column": ttl_column}


def validate_ttl(
    ttl_ms: Any,
    ttl_column: Any,
    subject: str,
    types: Mapping[str, str],
    history: str,
) -> tuple[Optional[int], Optional[str]]:
    """``(ttl_ms, ttl_column)`` of a model's config, both None when TTL is off."""
    if ttl_ms is None:
        if ttl_column is not None:
            raise JammiValidationError(
                subject,
                "'ttl_column' is set but 'ttl_ms' is not",
                "set ttl_ms (e.g. 604800000 for 7 days), or remove ttl_column",
            )
        return None, None
    require_positive_int(ttl_ms, "ttl_ms", subject)
    if ttl_column is None:
        return ttl_ms, None
    if not isinstance(ttl_column, str) or not ttl_column:
        raise JammiValidationError(
            subject,
            f"'ttl_column' must be one column name, got {ttl_column!r}",
            "set ttl_column to a bigint epoch-millisecond column such as 'last_seen_ms'",
        )
    if history == "scd2":
        raise JammiValidationError(
            subject,
            "ttl_column is set with history: scd2, where a row's age is the time its "
            "interval closed (valid_to)",
            "remove ttl_column; ttl_ms alone trims closed intervals",
        )
    if ttl_column not in types:
        raise JammiValidationError(
            subject,
            f"ttl_column '{ttl_column}' is not in the model's output (columns: {', '.join(types)})",
            f"add '{ttl_column}' to the model's select list or fix ttl_column",
        )
    if not is_time_or_integer(types[ttl_column]):
        raise JammiValidationError(
            subject,
            f"ttl_column '{ttl_column}' has type {types[ttl_column]}",
            f"output it as a timestamp, a date or bigint epoch milliseconds: "
            f"cast(... as timestamp) as {ttl_column}",
        )
    return ttl_ms, ttl_column


def age_column(definition: Mapping[str, Any]) -> str:
    """The column a row's age is read from: valid_to (scd2), ttl_column, or the engine's
    ``_written_at``."""
    if definition.get("history") == "scd2":
        return str(definition["valid_to"])
    return str(definition.get("ttl_column") or WRITTEN_AT_COLUMN)


def age_millis_sql(column_sql: str, spark_type: str) -> str:
    """A TTL age column as epoch milliseconds: whole numbers are already; a date or
    timestamp converts (a timestamp_ntz or a date counts as UTC: the session time zone
    the adapter sets)."""
    if spark_type.lower() in INTEGER_TYPES:
        return column_sql
    return f"unix_millis(cast({column_sql} as timestamp))"


def ttl_cutoff_ms(ttl_ms: int, now: int) -> int:
    """Rows whose age column is below this are expired."""
    return now - int(ttl_ms)


def written_at_needed(definition: Mapping[str, Any]) -> bool:
    """The engine's last-written column is kept: TTL without ttl_column, history none."""
    return (
        bool(definition.get("ttl_ms"))
        and not definition.get("ttl_column")
        and (definition.get("history", "none") == "none")
    )


def expire_definition(
    table: str, stored: Optional[Mapping[str, Any]], ttl_ms: Any = None
) -> dict[str, Any]:
    """The definition ``expire_mutable_table`` plans with: the recorded one, with no
    hard deletes (its batch is empty, which must not read as "every key is gone") and
    ``ttl_ms`` replaced for this operation when given."""
    subject = f"expire_mutable_table '{table}'"
    if not stored:
        raise JammiValidationError(
            subject,
            "the table's recorded definition cannot be read",
            "run the table's model once (it records the definition), then expire",
        )
    if ttl_ms is not None:
        require_positive_int(ttl_ms, "ttl_ms", subject)
    elif not stored.get("ttl_ms"):
        raise JammiValidationError(
            subject,
            "the table has no ttl_ms configured",
            "set ttl_ms (and ttl_column) on the model and run it, or pass --args "
            "'{table: ..., ttl_ms: 86400000}' for a table with history: scd2 or ttl_column",
        )
    has_age = (
        stored.get("history") == "scd2"
        or stored.get("ttl_column")
        or any(c[0] == WRITTEN_AT_COLUMN for c in stored.get("storage_columns") or [])
    )
    if not has_age:
        raise JammiValidationError(
            subject,
            "the table keeps no row age (no ttl_column, no history, no engine-written time)",
            "set ttl_ms (and ttl_column) on the model and run it once",
        )
    definition = dict(stored)
    definition["ttl_ms"] = ttl_ms if ttl_ms is not None else stored["ttl_ms"]
    definition["hard_deletes"] = "ignore"
    definition["batch_columns"] = [c[0] for c in stored["columns"]]
    return definition
