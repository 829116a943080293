"""The row rules' service: what a run's phases ask of the rules that keep records of
their own, each deciding in its module: tombstones (``rules/tombstone_phases.py``), the
identity column's high-water mark (``rules/identity_phases.py``) and the changelog
(``rules/changelog_phases.py``, its topic registered through the topic registry's
service). The face's ``adapter.mutable_tombstones_apply`` and ``changelog_publish``
(impl.py) hand their calls here; the run's start, the attempts and the commits use it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Optional

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.jammi.common.clock import now_ms
from dbt.adapters.jammi.common.relations import Relations
from dbt.adapters.jammi.common.sql_session import SqlSession
from dbt.adapters.jammi.mutable_table.commit.attempt import Attempt, TableWrite
from dbt.adapters.jammi.mutable_table.commit.transaction import Transaction
from dbt.adapters.jammi.mutable_table.format_reads import format_reads
from dbt.adapters.jammi.mutable_table.rules import (
    changelog,
    changelog_iceberg,
    changelog_phases,
    identity_phases,
    tombstone_phases,
    tombstones,
)
from dbt.adapters.jammi.mutable_table.rules.changelog_feeds import changelog_feed
from dbt.adapters.jammi.mutable_table.run_errors import failure_sql
from dbt.adapters.jammi.mutable_table.table_format import table_format
from dbt.adapters.jammi.topic.definition import TopicDefinition
from dbt.adapters.jammi.topic.registry_service import TopicRegistryService
from dbt.adapters.jammi.topic.registry_sql import stored_columns
from dbt.adapters.jammi.topic.topic_formats import topic_format

logger = AdapterLogger("Jammi")


class RulesService:
    """``topic_registry``: where a changelog registers its topic."""

    def __init__(
        self, sql: SqlSession, relations: Relations, topic_registry: TopicRegistryService
    ) -> None:
        self.sql, self.relations, self.topic_registry = sql, relations, topic_registry

    # --- tombstones (rules/tombstones.py) -------------------------------------------

    def tombstones_prepare(
        self, definition: Mapping[str, Any], relation: Any, state: Any, file_format: str
    ) -> dict[str, Any]:
        """Before a plan: where it reads the keys' live tombstones from, and its clock
        (tombstone_phases.prepare); the attempt's definition takes these values
        (``mutable_plan_prepare``)."""
        return tombstone_phases.prepare(
            definition,
            state,
            file_format,
            now_ms(),
            lambda: self._tombstone_table(relation),
            lambda: self._committed_tombstone_tags(relation, file_format),
            lambda location: self._tombstones_readable(file_format, location),
        )

    def tombstones_apply(
        self,
        definition: Mapping[str, Any],
        relation: Any,
        state: Any,
        file_format: str,
        candidates_sql: str,
        invocation_id: str,
    ) -> dict[str, Any]:
        """Before the commit: the tombstones the plan leaves (tombstone_phases.apply)."""
        table = self.tombstone_relation(relation)
        return tombstone_phases.apply(
            self.sql.rows, definition, state, file_format, candidates_sql, str(table), invocation_id
        )

    def tombstones_rollback(
        self,
        definition: Mapping[str, Any],
        relation: Any,
        file_format: str,
        history: Sequence[Mapping[str, Any]],
        to_version: int,
        kept_location: Optional[str] = None,
    ) -> Optional[str]:
        """Rollback: the kept version's tombstones become the current ones. parquet/orc:
        the complete set the rollback's version carries (its statement); Delta and
        Iceberg: the tombstones of later commits stop counting (here; None)."""
        if table_format(file_format).applies_by_merge:
            later = tombstone_phases.rollback_merge_tags(file_format, history, to_version)
            tombstone_phases.rollback_merge(self.sql.rows, self._tombstone_table(relation), later)
            return None
        return tombstone_phases.rollback_rewrite_sql(
            definition,
            file_format,
            str(kept_location),
            lambda location: self._tombstones_readable(file_format, location),
        )

    @staticmethod
    def tombstone_relation(relation: Any) -> Any:
        identifier = tombstones.tombstone_table_identifier(relation.identifier)
        return relation.incorporate(path={"identifier": identifier})

    def _tombstone_table(self, relation: Any) -> Optional[str]:
        """The tombstone table beside a MERGE table, if it exists."""
        table = self.tombstone_relation(relation)
        found = self.relations.get_relation(table.database, table.schema, table.identifier)
        return None if found is None else str(found)

    def _tombstones_readable(self, file_format: str, location: str) -> bool:
        return tombstone_phases.readable(self.sql.rows, file_format, location)

    def _committed_tombstone_tags(self, relation: Any, file_format: str) -> str:
        """What the tags of a MERGE format's counting tombstones are ``in``
        (tombstone_phases.py: Delta's invocations, Iceberg's snapshots)."""
        store = tombstone_phases.merge_tombstones(file_format)
        return store.committed_tags(self.sql.rows, str(relation))

    # --- identity (rules/identity_phases.py) ------------------------------------------

    def identity_from(
        self,
        definition: Mapping[str, Any],
        relation: Any,
        file_format: str,
        location: Optional[str] = None,
    ) -> Optional[int]:
        """Where a plan against ``relation`` numbers new keys from
        (identity_phases.numbered_from)."""
        table = None if relation is None else str(relation)
        reads = format_reads(file_format, self.sql.rows)
        return identity_phases.numbered_from(
            self.sql.rows, definition, table, lambda name: reads.identity_mark(name, location)
        )

    def identity_prepare(
        self, definition: Mapping[str, Any], plan_target: Any, state: Any, file_format: str
    ) -> dict[str, Any]:
        """Before planning against ``plan_target`` (None: a new table), the run's
        definition takes ``identity_from`` and, on the MERGE formats, ``identity_guard``:
        the plan stops (jammi-identity-moved) when the table already stores a number
        above ``identity_from``, and the run re-plans. Nothing without an identity
        column."""
        if not definition.get("identity_column"):
            return {}
        location = state.get("location") if state is not None else None
        start = self.identity_from(definition, plan_target, file_format, location)
        guard = plan_target is not None and table_format(file_format).applies_by_merge
        return {"identity_from": start, "identity_guard": guard}

    # --- changelog (rules/changelog_phases.py) ---------------------------------------------

    def changelog_check(
        self, definition: Mapping[str, Any], relation: Any, state: Any, file_format: str
    ) -> dict[str, Any]:
        """Everything that refuses a changelog run, read before anything is written: the
        format, a topic name another model has taken, a changed set of columns, a table
        created anew while its changelog holds an earlier table's events. ``topic``: the
        table's registered changelog topic, or None; ``writes``: whether preparing it
        writes (changelog_phases.preparation_writes)."""
        return changelog_phases.check(
            self.sql.rows,
            definition,
            relation,
            state,
            file_format,
            lambda: self.topic_registry.registration(relation),
            lambda name: self._changelog_columns(definition, name),
            lambda topic: str(self.topic_registry.backing_relation(relation, topic)),
        )

    def _changelog_columns(self, definition: Mapping[str, Any], name: str) -> Any:
        """The event columns as a topic of that name records them."""
        return _changelog_topic_definition(definition, name)["columns"]

    def changelog_prepare(
        self,
        definition: Mapping[str, Any],
        relation: Any,
        state: Any,
        file_format: str,
        checked: Optional[dict[str, Any]] = None,
    ) -> Optional[dict[str, Any]]:
        """Before the plan: register the changelog topic unless ``checked`` (what
        ``_changelog_check`` returned; it runs here when not given) found it, and record
        the first version it publishes. The run's changelog topic: {backing, location,
        file_format, since}; None when the changelog is off (a table that had one
        forgets its first version)."""
        if checked is None:
            checked = self.changelog_check(definition, relation, state, file_format)
        topic = checked["topic"]
        if not definition.get("changelog"):
            changelog_phases.stop(self.sql.rows, relation, state)
            return None
        if topic is None:
            # with the table as its relation, so topic_events(ref('the_table')) finds it;
            # a concurrent run may have registered it since changelog_check looked
            name = changelog.topic_name(definition["table_id"])
            candidate = _changelog_topic_definition(definition, name)
            topic = self.topic_registry.registration(relation)
            if topic is None:
                topic = self.topic_registry.register_first(
                    relation,
                    candidate,
                    definition["table_id"],
                    stored_format=topic_format(file_format).name,
                )
            changelog_phases.check_columns(definition, topic, candidate["columns"])
        backing = self.topic_registry.backing_relation(relation, topic)
        since = changelog_phases.start(self.sql.rows, relation, state, file_format)
        staged = topic_format(topic["file_format"]).stages_under_location
        return {
            "backing": str(backing),
            "location": self.topic_registry.table_location(backing) if staged else None,
            "file_format": topic["file_format"],
            "since": since,
            "columns": stored_columns(topic),
            **changelog_feed(file_format).topic_fields(state),
        }

    def changelog_repair(self, definition: dict[str, Any], relation: Any, state: Any) -> str:
        """Before every plan: publish what a run that stopped after its commit left."""
        changelog_phases.repair(self.sql.rows, definition, relation, state)
        return ""

    def changelog_publish(
        self,
        definition: dict[str, Any],
        relation: Any,
        location: Optional[str],
        fail_at: Optional[str] = None,
        cleanup: Sequence[str] = (),
    ) -> str:
        """After the commit: the committed version to the table's changelog (nothing
        without one). ``fail_at`` ``changelog``: the test hook stops the run between the
        table's commit and the publish, after dropping the run's relations
        (``cleanup``); the next run's repair publishes it."""
        if not definition.get("changelog_topic"):
            return ""
        if fail_at == "changelog":
            for statement in cleanup:
                self.sql.trusted(statement)
            self.sql.rows(failure_sql(fail_at))
        changelog_phases.publish(self.sql.rows, definition, relation, location)
        return ""

    # --- a commit's records (commit/transaction.py) -----------------------------------

    def add_version_records(
        self, records: Transaction, write: TableWrite, attempt: Attempt, location: str
    ) -> None:
        """A rewrite format's records, written beside the version at ``location`` before
        its swap: the next live tombstones, an identity column's high-water mark, the
        changelog's staged events. A rewrite plans against ``write.target`` from
        ``attempt.planned_location``; a create has neither."""
        definition = write.definition
        planned = attempt.planned_location
        target = None if planned is None else str(write.target)
        if attempt.tombstones_sql:
            sql = tombstone_phases.write_sql(location, write.file_format, attempt.tombstones_sql)
            records.add("tombstones", sql, (location,))
        if definition.get("identity_column"):
            # a rollback plans without identity_from: the mark is read from the version
            # planned from and its rows
            start = definition.get("identity_from")
            if start is None:
                start = self.identity_from(definition, target, "parquet", planned)
            change_set = str(attempt.change_set)
            sql = identity_phases.mark_write_sql(definition, change_set, location, start or 0)
            records.add("identity", sql, (location,))
        if definition.get("changelog_topic"):
            step = changelog_phases.stage_step(
                definition, target, str(attempt.change_set), location
            )
            records.add("changelog", step["sql"], tuple(step["undo_paths"]))

    def add_branch_records(self, records: Transaction, write: TableWrite, attempt: Attempt) -> None:
        """Iceberg: what must commit with the run's MERGE, each append tagged with the
        branch's snapshot (commit/branch_commit.py): the plan's new tombstones, an
        identity column's high-water mark (its table created once), and the changelog's
        staged events and their row when the plan changes rows."""
        definition, target, change_set = (
            write.definition,
            str(write.target),
            str(attempt.change_set),
        )
        if attempt.tombstone_insert:
            records.add("tombstones", attempt.tombstone_insert)
        if definition.get("identity_column"):
            self.sql.rows(identity_phases.mark_table_sql(target))
            start = definition.get("identity_from")
            records.add(
                "identity", identity_phases.branch_record_sql(definition, target, change_set, start)
            )
        if definition.get("changelog_topic") and attempt.changes > 0:
            self.sql.rows(changelog_iceberg.records_table_sql(target))
            for sql in changelog_iceberg.branch_records(definition, target, change_set):
                records.add("changelog", sql)

    def add_create_records(self, records: Transaction, write: TableWrite, attempt: Attempt) -> None:
        """Iceberg, a first run's records before its CREATE: the changelog's first
        version's events staged and recorded (rules/changelog_iceberg.py)."""
        if write.definition.get("changelog_topic"):
            target, change_set = str(write.target), str(attempt.change_set)
            for step in changelog_iceberg.create_steps(write.definition, target, change_set):
                records.add("changelog", step["sql"])


def _changelog_topic_definition(definition: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The changelog's topic as a topic model of that name would define it."""
    columns = [(str(n), str(t)) for n, t in changelog.event_columns(definition)]
    return TopicDefinition.from_config(
        definition["table_id"], columns, {"topic_name": name}
    ).to_dict()
