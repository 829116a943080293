"""Jinja-facing helpers of the per-row rules: TTL (``mutable_table/rules/ttl.py``),
tombstones (``mutable_table/rules/tombstones.py``) and the identity column's high-water
mark (``mutable_table/rules/identity.py``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Optional

from dbt.adapters.base import available
from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.jammi.common.clock import now_ms
from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.statements import StatementsMixin
from dbt.adapters.jammi.common.validation import (
    quote_identifier,
    require_positive_int,
    sql_string_literal,
)
from dbt.adapters.jammi.engine.describe import delta_history_entry
from dbt.adapters.jammi.mutable_table import exact_casts
from dbt.adapters.jammi.mutable_table.commit import branch_commit
from dbt.adapters.jammi.mutable_table.rules import (
    changelog,
    changelog_phases,
    changelog_sql,
    identity,
    tombstones,
)
from dbt.adapters.jammi.mutable_table.rules.ttl import (
    WRITTEN_AT_COLUMN,
    age_column,
    age_millis_sql,
    ttl_cutoff_ms,
)
from dbt.adapters.jammi.mutable_table.version_locations import parse_version
from dbt.adapters.jammi.topic.registry_sql import REGISTRY_TABLE

logger = AdapterLogger("Jammi")


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
    def mutable_ttl_age_sql(self, definition: Mapping[str, Any]) -> str:
        """A stored row's age column as epoch milliseconds (a timestamp or date column
        converts), compared with ``mutable_ttl_cutoff``."""
        column = age_column(definition)
        types = {str(c[0]): str(c[1]) for c in definition["storage_columns"]}
        return age_millis_sql(quote_identifier(column), types.get(column, "bigint"))

    @available
    def mutable_exact_sum_type(self, stored_type: str) -> Optional[str]:
        """The type a merge function's sum of a whole-number or decimal column adds in
        (it cannot overflow), or None (floats add in their own type)."""
        return exact_casts.exact_sum_type(stored_type)

    @available
    def mutable_checked_cast(
        self, expr: str, source_type: str, stored_type: str, subject: str
    ) -> str:
        """``cast(expr as stored_type)`` that fails the statement instead of storing a
        value the stored type cannot hold exactly (exact_casts.checked_cast_sql)."""
        return exact_casts.checked_cast_sql(expr, source_type, stored_type, subject)

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

    # --- tombstones (rules/tombstones.py) -------------------------------------------

    @available
    def mutable_tombstone_retention_ms(self, definition: Mapping[str, Any]) -> Optional[int]:
        """How long the definition keeps tombstones; None when it keeps none."""
        return tombstones.retention_ms(definition)

    @available
    def mutable_tombstone_cutoff(self, definition: Mapping[str, Any]) -> int:
        """Epoch milliseconds: tombstones deleted before this have expired (the plan's
        clock, ``now_ms``)."""
        retention = tombstones.retention_ms(definition) or tombstones.DEFAULT_RETENTION_MS
        return tombstones.live_cutoff_ms(retention, int(definition["now_ms"]))

    @available
    def mutable_version_tombstone_dir(self, location: str) -> str:
        return tombstones.version_tombstone_dir(location)

    @available
    def mutable_tombstone_table_identifier(self, table_identifier: str) -> str:
        return tombstones.tombstone_table_identifier(table_identifier)

    @available
    def mutable_tombstone_columns(self, definition: Mapping[str, Any]) -> list[list[str]]:
        return tombstones.columns(definition)

    @available
    def mutable_tombstone_names(self) -> dict[str, str]:
        return {
            "deleted_ms": tombstones.DELETED_MS_COLUMN,
            "invocation": tombstones.INVOCATION_COLUMN,
            # Iceberg: what a record append carries in place of its snapshot's id
            "branch_head": branch_commit.HEAD_TAG,
        }

    @available
    def mutable_tombstones_readable(self, file_format: str, location: str) -> bool:
        """Whether a version directory holds tombstones (versions written before the
        rule, or without a version rule, have none). Asked of Spark, so it works over
        every connection method."""
        tomb_dir = tombstones.version_tombstone_dir(location)
        try:
            self._run_sql(f"select 1 from {file_format}.`{tomb_dir}` limit 0")  # type: ignore[attr-defined]
        except Exception as exc:  # noqa: BLE001 - only a missing path means "none"
            if tombstones.path_missing(str(exc)):
                return False
            raise
        return True

    @available
    def mutable_committed_tombstone_tags(self, relation: Any, file_format: str) -> str:
        """What the tags of counting tombstones are ``in``: Delta, the invocations with a
        commit in the table's history, listed ('' when none); Iceberg, a query of the
        snapshots in the table's current ancestry (branch_commit.py). A run that died
        before its commit left tombstones with neither."""
        if file_format == "iceberg":
            return branch_commit.committed_tags_sql(str(relation))
        history = self.mutable_delta_history(relation, 1_000_000)  # type: ignore[attr-defined]
        return ", ".join(
            sql_string_literal(tag) for tag in tombstones.committed_invocations(history)
        )

    @available
    def mutable_tombstone_tags_after(
        self, history: Sequence[Mapping[str, Any]], version: int, file_format: str
    ) -> list[str]:
        return tombstones.tags_after(history, version, file_format)

    @available
    def mutable_expire_delta_tombstones(self, relation: Any, expired_predicate: str) -> None:
        """Delete expired rows of a Delta tombstone table. Best effort: readers skip
        expired rows anyway, and a concurrent append may refuse the delete (a later run
        retries)."""
        try:
            self._run_sql(f"delete from {relation} where {expired_predicate}")  # type: ignore[attr-defined]
        except Exception as exc:  # noqa: BLE001 - expiry is retried by the next run
            logger.debug(f"mutable_table: tombstone expiry of {relation} deferred: {exc}")

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
        if file_format == "delta":
            mark = self._delta_identity_mark(relation)
        elif file_format == "iceberg":
            mark = self._iceberg_identity_mark(relation)
        else:
            mark = self._version_identity_mark(location)
        return identity.identity_from(stored[0][0] if stored else None, mark)

    def _iceberg_identity_mark(self, relation: Any) -> Optional[int]:
        """The highest mark in ``<table>__jammi_identity`` whose snapshot the table's
        ancestry holds (branch_commit.py); None before the first."""
        marks = identity.mark_table(str(relation))
        try:
            rows = self._run_sql(  # type: ignore[attr-defined]
                f"select max({identity.MARK_COLUMN}) from {marks} "
                f"where {identity.MARK_TAG_COLUMN} in "
                f"({branch_commit.committed_tags_sql(str(relation))})"
            )
        except Exception as exc:  # noqa: BLE001 - engine errors arrive untyped
            if "TABLE_OR_VIEW_NOT_FOUND" in str(exc) or "Table or view not found" in str(exc):
                return None
            raise
        return int(rows[0][0]) if rows and rows[0][0] is not None else None

    @available
    def mutable_identity_mark_table(self, relation: Any) -> str:
        """Iceberg: the table of an identity column's high-water marks."""
        return identity.mark_table(str(relation))

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
            mark = identity.delta_high_water([delta_history_entry(row) for row in rows])
            if mark is not None or len(rows) < 100:
                return mark
        return None

    @available
    def mutable_identity_mark_location(self, location: str) -> str:
        return identity.mark_location(location)

    @available
    def mutable_identity_moved_marker(self) -> str:
        return identity.IDENTITY_MOVED_MARKER

    # --- changelog (rules/changelog_phases.py) ---------------------------------------------

    @available
    def changelog_previous_in_plan(self, definition: Mapping[str, Any]) -> bool:
        return changelog.previous_in_plan(definition)

    @available
    def changelog_first_version_of_new_table(self, file_format: str) -> int:
        return changelog.first_version_of_new_table(file_format)

    @available
    def changelog_check(
        self, definition: dict[str, Any], relation: Any, state: Any, file_format: str
    ) -> dict[str, Any]:
        """Everything that refuses a changelog run, read before anything is written: the
        format, a topic name another model has taken, a changed set of columns, a table
        created anew while its changelog holds an earlier table's events. ``topic``: the
        table's registered changelog topic, or None; ``writes``: whether preparing it
        writes (changelog_phases.preparation_writes)."""
        topic = None
        if definition.get("changelog"):
            changelog_phases.check_format(definition, file_format)
            topic = self.topic_registration(relation)  # type: ignore[attr-defined]
            registry = f"{relation.schema}.{REGISTRY_TABLE}"
            if topic is None:
                changelog_phases.check_name_free(
                    self._run_sql, definition, registry, relation.schema
                )
            else:
                changelog_phases.check_columns(
                    definition, topic, self._changelog_columns(definition, topic["name"])
                )
                if state is None:
                    backing = self.topic_backing_relation(relation, topic)  # type: ignore[attr-defined]
                    changelog_phases.check_no_earlier_events(
                        self._run_sql, definition, topic, str(backing), registry
                    )
        writes = changelog_phases.preparation_writes(definition, state, topic)
        return {"topic": topic, "writes": writes}

    def _changelog_columns(self, definition: Mapping[str, Any], name: str) -> Any:
        """The event columns as a topic of that name records them."""
        columns = changelog.event_columns(definition)
        topic = self.topic_definition(definition["table_id"], columns, {"topic_name": name})  # type: ignore[attr-defined]
        return topic["columns"]

    @available
    def changelog_prepare(
        self,
        definition: dict[str, Any],
        relation: Any,
        state: Any,
        file_format: str,
        checked: Optional[dict[str, Any]] = None,
    ) -> Optional[dict[str, Any]]:
        """Before the plan: register the changelog topic unless ``checked`` (what
        ``changelog_check`` returned; it runs here when not given) found it, and record
        the first version it publishes. The run's changelog topic: {backing, location,
        file_format, since}; None when the changelog is off (a table that had one
        forgets its first version)."""
        if checked is None:
            checked = self.changelog_check(definition, relation, state, file_format)
        topic = checked["topic"]
        if not definition.get("changelog"):
            changelog_phases.stop(self._run_sql, relation, state)
            return None
        if topic is None:
            # with the table as its relation, so topic_events(ref('the_table')) finds it;
            # a concurrent run may have registered it since changelog_check looked
            name = changelog.topic_name(definition["table_id"])
            columns = changelog.event_columns(definition)
            candidate = self.topic_definition(definition["table_id"], columns, {"topic_name": name})  # type: ignore[attr-defined]
            topic = self.topic_registration(relation)  # type: ignore[attr-defined]
            if topic is None:
                stored = "delta" if file_format == "delta" else "parquet"
                topic = self._register_first(  # type: ignore[attr-defined]
                    relation, candidate, definition["table_id"], stored_format=stored
                )
            changelog_phases.check_columns(definition, topic, candidate["columns"])
        backing = self.topic_backing_relation(relation, topic)  # type: ignore[attr-defined]
        since = changelog_phases.start(self._run_sql, relation, state, file_format)
        delta = topic["file_format"] == "delta"
        return {
            "backing": str(backing),
            "location": None if delta else self.topic_table_location(backing),  # type: ignore[attr-defined]
            "file_format": topic["file_format"],
            "since": since,
        }

    @available
    def changelog_repair(self, definition: dict[str, Any], relation: Any, state: Any) -> str:
        """Before every plan: publish what a run that stopped after its commit left."""
        changelog_phases.repair(self._run_sql, definition, relation, state)
        return ""

    @available
    def changelog_publish(
        self, definition: dict[str, Any], relation: Any, location: Optional[str]
    ) -> str:
        """After the commit: the committed version to the table's changelog."""
        changelog_phases.publish(self._run_sql, definition, relation, location)
        return ""

    @available
    def changelog_stage_step(
        self, definition: dict[str, Any], target: Any, change_set: Any, location: str
    ) -> dict[str, Any]:
        """parquet/orc, a step of the commit before its claim: the events of
        ``change_set`` (planned against ``target``, None on the first run) staged for the
        version at ``location``, with the staged directory to remove if the commit fails."""
        topic = definition["changelog_topic"]
        version = int(parse_version(location) or 0)
        staged = changelog.staged_dir(topic["location"], location)
        target_sql = None if target is None else str(target)
        sql = changelog_sql.stage_sql(definition, target_sql, str(change_set), version, staged)
        return {"sql": sql, "undo_paths": [staged]}
