"""Each table format's changelog feed (rules/changelog_feeds.py) against a recorded
engine: which class a format gets, what it records on the run's topic, where a
changelog turned on for an existing table starts, and what a publish runs."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from dbt.adapters.jammi.mutable_table.rules.changelog_feeds import (
    DeltaFeed,
    IcebergFeed,
    StagedFeed,
    changelog_feed,
    feed_of,
)
from tests.unit.recorded_engine import RecordedEngine


class Relation(SimpleNamespace):
    def __str__(self) -> str:
        return f"{self.schema}.{self.identifier}"


RELATION = Relation(schema="s", identifier="accounts", database=None)


@pytest.mark.parametrize(
    "name, cls",
    [("delta", DeltaFeed), ("Iceberg", IcebergFeed), ("parquet", StagedFeed), ("orc", StagedFeed)],
)
def test_the_feed_is_chosen_by_the_tables_format(name, cls):
    assert type(changelog_feed(name)) is cls
    assert type(feed_of({"table_format": name})) is cls


def test_the_topic_records_the_tables_format_and_iceberg_its_created_tag():
    assert changelog_feed("orc").topic_fields(None) == {"table_format": "parquet"}
    assert changelog_feed("delta").topic_fields(None) == {"table_format": "delta"}
    new = changelog_feed("iceberg").topic_fields(None)
    assert new["table_format"] == "iceberg" and new["created_tag"].startswith("create_")
    stored = {"properties": {"jammi.changelog_created_by": "create_r1"}}
    assert changelog_feed("iceberg").topic_fields(stored)["created_tag"] == "create_r1"
    # the feed is read back from what the topic records
    assert type(feed_of(changelog_feed("iceberg").topic_fields(None))) is IcebergFeed


def test_a_rewrite_table_starts_at_its_next_version_an_adopted_one_at_1():
    engine = RecordedEngine()
    state = {"location": "file:/w/accounts/v0000000004_r", "properties": {}}
    assert StagedFeed().start(engine, RELATION, state) == 5
    assert engine.statements == [
        "alter table s.accounts set tblproperties ('jammi.changelog_since' = '5')"
    ]
    adopted = {"location": "file:/w/accounts", "properties": {}}
    assert StagedFeed().start(RecordedEngine(), RELATION, adopted) == 1


def test_delta_starts_after_its_newest_version_with_its_change_data_feed_on():
    engine = RecordedEngine({"describe history": [(11,)]})
    assert DeltaFeed().start(engine, RELATION, {"properties": {}}) == 12
    assert "'delta.enableChangeDataFeed' = 'true'" in engine.statements[-1]
    assert "'jammi.changelog_since' = '12'" in engine.statements[-1]


def test_iceberg_starts_after_its_newest_committed_record():
    engine = RecordedEngine({"select _offset, staged": [(2, "file:/t/a"), (3, "file:/t/b")]})
    state = {"properties": {"jammi.changelog_created_by": "create_r1"}}
    assert IcebergFeed().start(engine, RELATION, state) == 4
    assert engine.statements[-1] == (
        "alter table s.accounts set tblproperties ('jammi.changelog_since' = '4')"
    )


def test_a_rewrite_publish_needs_the_committed_version():
    topic = {"backing": "s.__topic_a", "location": "file:/w/__topic_a"}
    with pytest.raises(ValueError, match="needs a committed version"):
        StagedFeed().publish(RecordedEngine(), {"changelog_topic": topic}, RELATION, None)
    engine = RecordedEngine()
    committed = "file:/w/accounts/v0000000009_r"
    StagedFeed().publish(engine, {"changelog_topic": topic}, RELATION, committed)
    assert engine.statements == [
        "alter table s.__topic_a add partition (_offset=9) "
        "location 'file:/w/__topic_a/_staging/changes_v0000000009_r'"
    ]
