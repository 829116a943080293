"""Jinja-facing helpers of the per-row rules: TTL (``mutable_table/rules/ttl.py``) and the
identity column's high-water mark (``mutable_table/rules/identity.py``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

from dbt.adapters.base import available

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.statements import StatementsMixin
from dbt.adapters.jammi.common.validation import quote_identifier, require_positive_int
from dbt.adapters.jammi.mutable_table.rules import identity
from dbt.adapters.jammi.mutable_table.rules.ttl import WRITTEN_AT_COLUMN, now_ms, ttl_cutoff_ms


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


class MutableRulesAdapterMixin(StatementsMixin):
    @available
    def mutable_ttl_cutoff(self, ttl_ms: int, now: int) -> int:
        """Epoch milliseconds: rows whose age column is below this have expired (``now``:
        the plan's clock, the definition's run-only ``now_ms``)."""
        return ttl_cutoff_ms(int(ttl_ms), int(now))

    @available
    def mutable_written_at_column(self) -> str:
        return WRITTEN_AT_COLUMN

    @available
    def mutable_now_ms(self) -> int:
        """The run's clock, epoch milliseconds (the engine's ``_written_at``)."""
        return now_ms()

    @available
    def mutable_expire_definition(
        self, table: str, stored: Optional[Mapping[str, Any]], ttl_ms: Any = None
    ) -> dict[str, Any]:
        return expire_definition(table, stored, ttl_ms)

    @available
    def mutable_identity_from(
        self,
        definition: Mapping[str, Any],
        relation: Any,
        file_format: str,
        location: Optional[str] = None,
    ) -> Optional[int]:
        """Where this plan numbers new keys from (``identity.py``): the greatest of the
        committed high-water mark and the highest stored number; 0 for a new table, None
        without an identity column. ``location``: the version planned from (parquet/orc)."""
        column = definition.get("identity_column")
        if not column:
            return None
        if relation is None:
            return 0
        stored = self._run_sql(f"select max({quote_identifier(column)}) from {relation}")
        mark = (
            self._delta_identity_mark(relation)
            if file_format == "delta"
            else self._version_identity_mark(location)
        )
        return identity.identity_from(stored[0][0] if stored else None, mark)

    def _version_identity_mark(self, location: Optional[str]) -> Optional[int]:
        """The mark a rewrite version carries; None for a version written without one."""
        if not location:
            return None
        path = identity.mark_location(location)
        try:
            rows = self._run_sql(f"select max({identity.MARK_COLUMN}) from parquet.`{path}`")
        except Exception as exc:  # noqa: BLE001 - engine errors arrive untyped
            if identity.no_mark(str(exc)):
                return None
            raise
        return int(rows[0][0]) if rows and rows[0][0] is not None else None

    def _delta_identity_mark(self, relation: Any) -> Optional[int]:
        """The mark of the newest MERGE that numbered rows (its commit's userMetadata)."""
        for limit in (" limit 100", ""):
            rows = self._run_sql(f"describe history {relation}{limit}")
            mark = identity.delta_high_water([identity.history_entry(row) for row in rows])
            if mark is not None or len(rows) < 100:
                return mark
        return None

    @available
    def mutable_identity_mark_location(self, location: str) -> str:
        return identity.mark_location(location)

    @available
    def mutable_identity_moved_marker(self) -> str:
        return identity.IDENTITY_MOVED_MARKER
