"""SCD Type 2: what the change-set planner needs to know, decided in Python.

The planner itself is one SQL query (``get_scd2_change_set_sql``); this module turns a
mutable_table definition (the dict ``adapter.mutable_table_definition`` returns) into
the quoted column lists and options that query is emitted from, so the Jinja only loops.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Optional

from dbt.adapters.base import available
from dbt.adapters.base.meta import AdapterMeta

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.validation import TENANT_COLUMN, quote_identifier


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
    storage_columns: tuple[StorageColumn, ...]
    valid_from: str
    valid_to: str
    effective_time_column: Optional[str]
    run_time_ms: int
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
        return int(time.time() * 1000)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    return int(moment.timestamp() * 1000)


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
    version_column = definition.get("version_column")
    return Scd2Plan(
        tenant_column=q(TENANT_COLUMN),
        key_columns=tuple(q(c) for c in primary_key),
        value_columns=tuple(q(n) for n, _ in values),
        value_types=tuple(t for _, t in values),
        track_columns=tuple(q(c) for c in definition.get("track_columns") or ()),
        storage_columns=tuple(storage),
        valid_from=q(valid_from),
        valid_to=q(valid_to),
        effective_time_column=q(valid_from) if valid_from in user_names else None,
        run_time_ms=epoch_millis(run_started_at),
        version_column=q(version_column) if version_column else None,
        delete_when=definition.get("delete_when"),
        hard_deletes=definition.get("hard_deletes") == "delete",
    )


class Scd2AdapterMixin(metaclass=AdapterMeta):
    """``adapter.scd2_*`` methods; mixed into JammiAdapter."""

    @available
    def scd2_plan(
        self, definition: Mapping[str, Any], run_started_at: Optional[datetime.datetime] = None
    ) -> dict[str, Any]:
        """The scd2 change-set planner's inputs (see ``plan_scd2``)."""
        return plan_scd2(definition, run_started_at).to_dict()
