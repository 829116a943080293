"""SCD Type 2: what the change-set planner needs to know, decided in Python.

The planner itself is one SQL query (``get_scd2_change_set_sql``); this module turns a
mutable_table definition (the dict ``run_config.run_definition`` returns) into
the quoted column lists and options that query is emitted from, so the Jinja only loops.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Optional

from dbt.adapters.jammi.common.clock import now_ms
from dbt.adapters.jammi.common.columns import single_column
from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.types import INTEGER_TYPES, is_time_or_integer
from dbt.adapters.jammi.common.validation import (
    TENANT_COLUMN,
    column_list,
    quote_identifier,
    require_choice,
    require_columns,
)
from dbt.adapters.jammi.mutable_table.column_types import version_columns

# The definition's options for history (validated here, next to the planner they drive).
HISTORY_MODES = ("none", "scd2")


def validate_history(
    opts: Mapping[str, Any], names: Sequence[str], types: Mapping[str, str], subject: str
) -> tuple[str, str, str]:
    """``history``, ``valid_from``, ``valid_to``: the mode and the interval bounds."""
    history = require_choice(opts.get("history", "none"), "history", HISTORY_MODES, subject)
    valid_from = single_column("valid_from", opts.get("valid_from", "valid_from"), subject)
    valid_to = single_column("valid_to", opts.get("valid_to", "valid_to"), subject)
    if history == "scd2":
        if valid_from == valid_to:
            raise JammiValidationError(
                subject,
                f"valid_from and valid_to are both '{valid_from}'",
                "give the interval bounds two different column names",
            )
        if valid_to in names:
            raise JammiValidationError(
                subject,
                f"column '{valid_to}' (valid_to) is in the model's output; the engine maintains it",
                f"remove '{valid_to}' from the select list",
            )
        if valid_from in names and not is_time_or_integer(types[valid_from]):
            raise JammiValidationError(
                subject,
                f"valid_from column '{valid_from}' has type {types[valid_from]}",
                f"output the effective time as a timestamp, a date or bigint epoch "
                f"milliseconds: cast(... as timestamp) as {valid_from}",
            )
    return history, valid_from, valid_to


def validate_track_columns(
    opts: Mapping[str, Any],
    names: Sequence[str],
    primary_key: Sequence[str],
    history: str,
    valid_from: str,
    subject: str,
) -> list[str]:
    """``track_columns``: the non-key columns whose change opens a new version (scd2)."""
    track_columns: list[str] = []
    if "track_columns" in opts:
        if history != "scd2":
            raise JammiValidationError(
                subject,
                "'track_columns' is set but history is not scd2",
                "remove track_columns or set history: scd2",
            )
        track_columns = column_list(opts["track_columns"], "track_columns", subject)
        require_columns(track_columns, names, "track_columns", subject)
        bad = [c for c in track_columns if c in primary_key or c == valid_from]
        if bad:
            raise JammiValidationError(
                subject,
                f"track_columns includes key column '{bad[0]}'",
                "list only non-key columns in track_columns",
            )
    elif history == "scd2":
        track_columns = [c for c in names if c not in primary_key and c not in (valid_from,)]
    return track_columns


@dataclass(frozen=True)
class StorageColumn:
    """One output column of the change set: its quoted name, type and role."""

    name: str
    quoted: str
    type: str
    role: str  # key | value | valid_from | valid_to


@dataclass(frozen=True)
class Scd2Plan:
    tenant_column: str
    key_columns: tuple[str, ...]
    value_columns: tuple[str, ...]
    value_types: tuple[str, ...]
    track_columns: tuple[str, ...]
    track_types: tuple[str, ...]
    storage_columns: tuple[StorageColumn, ...]
    valid_from: str
    valid_to: str
    effective_time_column: Optional[str]
    run_time_ms: int
    interval_type: str
    run_time: str
    version_column: Optional[str]
    delete_when: Optional[str]
    hard_deletes: bool

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["storage_columns"] = [asdict(c) for c in self.storage_columns]
        return data


def epoch_millis(moment: Optional[datetime.datetime]) -> int:
    """A run's time as bigint epoch milliseconds (naive datetimes are UTC)."""
    if moment is None:
        return now_ms()
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    return int(moment.timestamp() * 1000)


def interval_value_sql(moment_ms: int, interval_type: str) -> str:
    """A moment (epoch milliseconds) as a value of the history's interval type: bigint
    milliseconds, or a timestamp / timestamp_ntz / date (UTC)."""
    if interval_type.lower() in INTEGER_TYPES:
        return f"cast({moment_ms} as bigint)"
    return f"cast(timestamp_millis({moment_ms}) as {interval_type})"


def _pairs(columns: Sequence[Any]) -> list[tuple[str, str]]:
    return [(str(c[0]), str(c[1])) for c in columns]


def plan_scd2(
    definition: Mapping[str, Any], run_started_at: Optional[datetime.datetime] = None
) -> Scd2Plan:
    """The planner's inputs for a definition with ``history: scd2``."""
    table = definition.get("table_id", "?")
    if definition.get("history") != "scd2":
        raise JammiValidationError(
            f"mutable_table '{table}'",
            f"the scd2 change-set planner was called for history {definition.get('history')!r}",
            "set history: scd2 or use the plain change-set planner",
        )
    q = quote_identifier
    primary_key = list(definition["primary_key"])
    valid_from = definition["valid_from"]
    valid_to = definition["valid_to"]
    user_columns = _pairs(definition["columns"])
    # the batch carries its effective time when the model outputs valid_from; after
    # schema reconciliation `columns` no longer lists it, `batch_columns` always does
    user_names = list(definition.get("batch_columns") or [name for name, _ in user_columns])
    values = [(n, t) for n, t in user_columns if n not in primary_key and n != valid_from]
    storage = []
    for name, spark_type in _pairs(definition["storage_columns"]):
        if name in primary_key:
            role = "key"
        elif name == valid_from:
            role = "valid_from"
        elif name == valid_to:
            role = "valid_to"
        else:
            role = "value"
        storage.append(StorageColumn(name, q(name), spark_type, role))
    versions = version_columns(definition.get("version_column"))
    track = list(definition.get("track_columns") or ())
    types = dict(user_columns)
    interval_type = next((c.type for c in storage if c.role == "valid_from"), "bigint")
    run_time_ms = epoch_millis(run_started_at)
    return Scd2Plan(
        tenant_column=q(TENANT_COLUMN),
        key_columns=tuple(q(c) for c in primary_key),
        value_columns=tuple(q(n) for n, _ in values),
        value_types=tuple(t for _, t in values),
        track_columns=tuple(q(c) for c in track),
        track_types=tuple(types.get(c, "") for c in track),
        storage_columns=tuple(storage),
        valid_from=q(valid_from),
        valid_to=q(valid_to),
        effective_time_column=q(valid_from) if valid_from in user_names else None,
        run_time_ms=run_time_ms,
        interval_type=interval_type,
        run_time=interval_value_sql(run_time_ms, interval_type),
        version_column=", ".join(q(c) for c in versions) if versions else None,
        delete_when=definition.get("delete_when"),
        hard_deletes=definition.get("hard_deletes") == "delete",
    )
