"""The changelog's phases (rules/changelog_phases.py) against a fake engine, no Spark:
what refuses a run, where the first published version comes from, what a repair
publishes, and what a publish appends."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.mutable_table import table_records
from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition
from dbt.adapters.jammi.mutable_table.rules import changelog, changelog_phases
from tests.unit.recorded_engine import RecordedEngine


class Relation(SimpleNamespace):
    def __str__(self) -> str:
        return f"{self.schema}.{self.identifier}"


RELATION = Relation(schema="s", identifier="accounts", database=None)


def definition(**config: Any) -> dict:
    config.setdefault("primary_key", ["id"])
    config.setdefault("changelog", True)
    schema = {"id": "bigint", "name": "string"}
    return MutableTableDefinition.from_config("accounts", schema, config).to_dict()


def state(location: str = "file:/w/accounts/v0000000007_r", **properties: str) -> dict:
    return {"properties": dict(properties), "location": location, "file_format": "parquet"}


@pytest.mark.parametrize("file_format", ["hudi"])
def test_a_format_without_a_readable_history_is_refused(file_format):
    with pytest.raises(JammiValidationError, match="changelog: true needs file_format delta"):
        changelog_phases.check_format(definition(), file_format)


def test_a_name_another_model_holds_is_refused_and_a_missing_registry_holds_none():
    taken = RecordedEngine({"select relation_name": [("orders_topic",)]})
    with pytest.raises(JammiValidationError) as raised:
        changelog_phases.check_name_free(taken, definition(), "s.topics", "s")
    assert "'accounts.changes' is already used by model 'orders_topic'" in str(raised.value)
    missing = RecordedEngine(
        {"select relation_name": RuntimeError("[TABLE_OR_VIEW_NOT_FOUND] s.topics")}
    )
    changelog_phases.check_name_free(missing, definition(), "s.topics", "s")


def test_a_new_table_over_an_earlier_tables_events_is_refused():
    topic = {"name": "accounts.changes"}
    held = RecordedEngine({"select count(*)": [(3,)]})
    with pytest.raises(JammiValidationError, match="holds 3 event"):
        changelog_phases.check_no_earlier_events(held, definition(), topic, "s.__t", "s.topics")
    changelog_phases.check_no_earlier_events(
        RecordedEngine({"select count(*)": [(0,)]}), definition(), topic, "s.__t", "s.topics"
    )


def test_changed_columns_are_refused():
    topic = {"name": "accounts.changes", "columns": [["change_kind", "string"]]}
    with pytest.raises(JammiValidationError, match="columns are fixed once published"):
        changelog_phases.check_columns(definition(), topic, [["change_kind", "int"]])


@pytest.mark.parametrize(
    "changelog, properties, topic, writes",
    [
        (True, {}, None, True),  # registers the topic
        (True, {}, {"name": "t"}, True),  # starts on an existing table
        (True, {"jammi.changelog_since": "3"}, {"name": "t"}, False),
        (False, {"jammi.changelog_since": "3"}, None, True),  # stops
        (False, {}, None, False),
    ],
)
def test_what_preparation_writes(changelog, properties, topic, writes):
    defn = definition(changelog=changelog)
    assert changelog_phases.preparation_writes(defn, state(**properties), topic) is writes


def test_start_on_an_existing_rewrite_table_records_its_next_version():
    engine, found = RecordedEngine(), state()
    assert changelog_phases.start(engine, RELATION, found, "parquet") == 8
    assert engine.statements == [
        "alter table s.accounts set tblproperties ('jammi.changelog_since' = '8')"
    ]
    assert found["properties"]["jammi.changelog_since"] == "8"
    # an adopted table (its location is no version directory) starts at its first
    assert changelog_phases.start(RecordedEngine(), RELATION, state("file:/w/accounts"), "orc") == 1


def test_start_on_delta_turns_the_change_data_feed_on():
    engine = RecordedEngine({"describe history": [(41,)]})
    assert changelog_phases.start(engine, RELATION, state(), "delta") == 42
    assert (
        "'delta.enableChangeDataFeed' = 'true', 'jammi.changelog_since' = '42'"
        in (engine.statements[-1])
    )


def test_start_keeps_a_recorded_version_and_a_new_table_starts_at_its_first():
    engine = RecordedEngine()
    assert (
        changelog_phases.start(engine, RELATION, state(**{"jammi.changelog_since": "5"}), "parquet")
        == 5
    )
    assert changelog_phases.start(engine, RELATION, None, "delta") == 0
    assert changelog_phases.start(engine, RELATION, None, "parquet") == 1
    assert engine.statements == []


def test_stop_forgets_the_first_version_only_when_recorded():
    engine = RecordedEngine()
    changelog_phases.stop(engine, RELATION, state())
    assert engine.statements == []
    changelog_phases.stop(engine, RELATION, state(**{"jammi.changelog_since": "5"}))
    assert engine.statements == [
        "alter table s.accounts unset tblproperties if exists "
        "('jammi.changelog_since', 'jammi.changelog_published')"
    ]


def with_topic(file_format: str, since: int = 1) -> dict:
    defn = definition()
    defn["changelog_topic"] = {
        "backing": "s.__topic_a",
        "location": None if file_format == "delta" else "file:/w/__topic_a",
        "file_format": file_format,
        "table_format": file_format,
        "since": since,
    }
    return defn


def test_repair_attaches_a_committed_unpublished_version_once():
    unpublished = RecordedEngine({"show partitions": [("_offset=6",)]})
    changelog_phases.repair(unpublished, with_topic("parquet"), RELATION, state())
    assert unpublished.statements[-1] == (
        "alter table s.__topic_a add partition (_offset=7) "
        "location 'file:/w/__topic_a/_staging/changes_v0000000007_r'"
    )
    published = RecordedEngine({"show partitions": [("_offset=6",), ("_offset=7",)]})
    changelog_phases.repair(published, with_topic("parquet"), RELATION, state())
    assert published.statements == ["show partitions s.__topic_a"]
    # versions before the changelog started are never published
    early = RecordedEngine()
    changelog_phases.repair(early, with_topic("parquet", since=8), RELATION, state())
    assert early.statements == []


def test_repair_reads_nothing_when_the_table_records_its_version_as_published():
    clean = RecordedEngine()
    marked = state(**{"jammi.changelog_published": "7@s.__topic_a"})
    changelog_phases.repair(clean, with_topic("parquet"), RELATION, marked)
    assert clean.statements == []
    # an older version's mark, or another topic's (one created anew), is read as before
    for mark in ("6@s.__topic_a", "7@s.__topic_b", "7"):
        engine = RecordedEngine({"show partitions": [("_offset=6",)]})
        stale = state(**{"jammi.changelog_published": mark})
        changelog_phases.repair(engine, with_topic("parquet"), RELATION, stale)
        assert engine.statements[0] == "show partitions s.__topic_a"
        assert "add partition (_offset=7)" in engine.statements[-1]


def test_the_published_mark_is_a_rewrite_formats_committed_version():
    location = "file:/w/accounts/v0000000008_r"
    assert changelog.published_mark(with_topic("parquet"), location) == "8@s.__topic_a"
    assert changelog.published_mark(with_topic("parquet"), None) is None
    assert changelog.published_mark(with_topic("delta"), location) is None
    iceberg = with_topic("parquet")
    iceberg["changelog_topic"]["table_format"] = "iceberg"
    assert changelog.published_mark(iceberg, location) is None
    # a stored definition (an expiry records one) carries no topic: no mark
    assert changelog.published_mark(definition(), location) is None
    clause = table_records.properties_clause(definition(), "parquet", 8, published="8@s.t")
    assert "'jammi.changelog_published' = '8@s.t'" in clause
    assert "changelog_published" not in table_records.properties_clause(definition(), "parquet", 8)


def test_delta_publish_appends_the_versions_above_the_high_water_mark():
    engine = RecordedEngine(
        {"select coalesce(max(_offset), 0)": [(4,)], "describe history": [(6,)]}
    )
    changelog_phases.publish(engine, with_topic("delta", since=2), RELATION, None)
    append = engine.statements[-1]
    assert append.startswith("insert into s.__topic_a select cast(table_version + 1 as bigint)")
    assert "from table_changes('`s`.`accounts`', 4, 6)" in append
    caught_up = RecordedEngine(
        {"select coalesce(max(_offset), 0)": [(7,)], "describe history": [(6,)]}
    )
    changelog_phases.publish(caught_up, with_topic("delta"), RELATION, None)
    assert not any(s.startswith("insert") for s in caught_up.statements)
