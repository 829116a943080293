"""Where a changelog reads a table's committed changes from, one class per table format
(rules/changelog.py says why each publish happens once; docs/changelog_topics.md):

- ``StagedFeed`` (parquet, orc): the run stages its version's events before the commit;
  after it, they are attached as offset = version;
- ``DeltaFeed``: Delta's change data feed of every committed version above the topic's
  high-water mark, appended after the commit;
- ``IcebergFeed``: the events recorded inside the run's branch commit, attached after
  the fast-forward (rules/changelog_iceberg.py).

``changelog_feed(file_format)`` chooses the class by the table's format, and
``feed_of(topic)`` by the run's changelog topic, which records that format.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Callable, Optional

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.jammi.mutable_table import version_locations
from dbt.adapters.jammi.mutable_table.rules import changelog, changelog_iceberg, changelog_sql
from dbt.adapters.jammi.mutable_table.version_locations import parse_version
from dbt.adapters.jammi.topic.topic_formats import offsets_from_partitions

RunSql = Callable[[str], Sequence[Sequence[Any]]]

logger = AdapterLogger("jammi")


class StagedFeed:
    """parquet / orc: each version's events are staged before its commit."""

    name = "parquet"

    def topic_fields(self, state: Any) -> dict[str, Any]:
        """What the run's changelog topic records besides its backing table."""
        return {"table_format": self.name}

    def start(self, run_sql: RunSql, relation: Any, state: Any) -> int:
        """The first version a changelog turned on for an existing table publishes, set
        on the table: its next committed version (an adopted table's location is not a
        version directory: its first is 1)."""
        since = (parse_version(state["location"]) or 0) + 1
        self._record_since(run_sql, relation, since)
        return since

    def _record_since(self, run_sql: RunSql, relation: Any, since: int) -> None:
        run_sql(
            f"alter table {relation} set tblproperties ('{changelog.SINCE_PROPERTY}' = '{since}')"
        )

    def publish(
        self, run_sql: RunSql, definition: Mapping[str, Any], relation: Any, location: Any
    ) -> None:
        """After a commit: attach the events staged for ``location`` (the committed
        version directory) as offset = version."""
        topic = definition["changelog_topic"]
        version = parse_version(location or "")
        if location is None or version is None:
            raise ValueError(f"a changelog publish needs a committed version, not {location!r}")
        staged = changelog.staged_dir(topic["location"], location)
        changelog.attach_version(run_sql, topic["backing"], version, staged)

    def repair(
        self, run_sql: RunSql, definition: Mapping[str, Any], relation: Any, state: Any
    ) -> None:
        """Before a plan: publish the table's version if its run stopped after the
        commit (not read when the table records it as published)."""
        topic = definition["changelog_topic"]
        version = parse_version(state["location"]) if state.get("location") else None
        if version is None or version < int(topic["since"]):
            return
        if changelog.marked_published(state["properties"], definition, state["location"]):
            return  # the run that committed it published it, and recorded so after
        published = offsets_from_partitions(run_sql(f"show partitions {topic['backing']}"))
        if version not in published:
            self.publish(run_sql, definition, relation, state["location"])
            _log_repaired(definition, version)


class DeltaFeed(StagedFeed):
    name = "delta"

    def start(self, run_sql: RunSql, relation: Any, state: Any) -> int:
        since = delta_table_version(run_sql, relation) + 1
        run_sql(
            f"alter table {relation} set tblproperties "
            f"('delta.enableChangeDataFeed' = 'true', '{changelog.SINCE_PROPERTY}' = '{since}')"
        )
        return since

    def publish(
        self, run_sql: RunSql, definition: Mapping[str, Any], relation: Any, location: Any
    ) -> None:
        """Append the change data feed of every committed version above the topic's
        high-water mark (``location`` is not needed)."""
        backing = definition["changelog_topic"]["backing"]
        published = int(run_sql(f"select coalesce(max(_offset), 0) from {backing}")[0][0])
        start_at = max(published, int(definition["changelog_topic"]["since"]))
        current = delta_table_version(run_sql, relation)
        if start_at <= current:
            raw = changelog_sql.delta_changes_sql(definition, relation, start_at, current)
            publish_sql = changelog_sql.delta_publish_sql(definition, backing, raw)
            changelog.publish_delta(run_sql, publish_sql, changelog.subject_of(definition))

    def repair(
        self, run_sql: RunSql, definition: Mapping[str, Any], relation: Any, state: Any
    ) -> None:
        self.publish(run_sql, definition, relation, None)


class IcebergFeed(StagedFeed):
    name = "iceberg"

    def topic_fields(self, state: Any) -> dict[str, Any]:
        """Also the tag of the CREATE the first version's records count from
        (rules/changelog_iceberg.py)."""
        created = (
            changelog_iceberg.created_tag(version_locations.new_run_id())
            if state is None
            else state["properties"].get(changelog_iceberg.CREATED_BY_PROPERTY)
        )
        return {"table_format": self.name, "created_tag": created}

    def start(self, run_sql: RunSql, relation: Any, state: Any) -> int:
        created = state["properties"].get(changelog_iceberg.CREATED_BY_PROPERTY)
        since = changelog_iceberg.next_offset(run_sql, str(relation), created)
        self._record_since(run_sql, relation, since)
        return since

    def publish(
        self, run_sql: RunSql, definition: Mapping[str, Any], relation: Any, location: Any
    ) -> None:
        """Attach every committed version the topic lacks."""
        changelog_iceberg.publish(run_sql, definition, str(relation))

    def repair(
        self, run_sql: RunSql, definition: Mapping[str, Any], relation: Any, state: Any
    ) -> None:
        for offset in changelog_iceberg.publish(run_sql, definition, str(relation)):
            _log_repaired(definition, offset)


_FEEDS: dict[str, StagedFeed] = {f.name: f for f in (DeltaFeed(), IcebergFeed())}
STAGED = StagedFeed()


def changelog_feed(file_format: Any) -> StagedFeed:
    """The feed of a table stored as ``file_format``: Delta and Iceberg by name, every
    other format a changelog can read stages its events (rules/changelog_phases.py
    refuses the others first)."""
    return _FEEDS.get(str(file_format).lower(), STAGED)


def feed_of(topic: Mapping[str, Any]) -> StagedFeed:
    """The feed of the run's changelog topic, by the table format it records."""
    return changelog_feed(topic["table_format"])


def delta_table_version(run_sql: RunSql, relation: Any) -> int:
    rows = run_sql(f"describe history {changelog_sql.delta_table(relation)} limit 1")
    return int(rows[0][0])


def _log_repaired(definition: Mapping[str, Any], version: Optional[int]) -> None:
    logger.info(
        f"{changelog.subject_of(definition)}: published version {version} to its changelog "
        "(its run stopped after the commit)"
    )
