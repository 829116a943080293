"""An Iceberg table's changelog (rules/changelog_iceberg.py) against a fake engine, no
Spark: the records its branch commit appends, which records count, and what a publish
attaches (each committed version the topic lacks, once, in offset order)."""

from __future__ import annotations

import pytest

from dbt.adapters.jammi.mutable_table.commit.branch_commit import HEAD_TAG
from dbt.adapters.jammi.mutable_table.rules import changelog, changelog_iceberg, changelog_phases
from tests.unit.mutable_table.test_changelog_phases import RELATION, definition
from tests.unit.recorded_engine import RecordedEngine

TOPIC = {
    "backing": "s.accounts_changes",
    "location": "file:/w/accounts_changes",
    "file_format": "parquet",
    "since": 1,
    "table_format": "iceberg",
    "created_tag": "create_abc",
}


def logged() -> dict:
    return {**definition(), "changelog_topic": dict(TOPIC)}


def test_the_branch_records_stage_the_events_then_tag_their_row_with_the_head():
    stage, record = changelog_iceberg.branch_records(logged(), "s.accounts", "cs")
    offset = changelog_iceberg.next_offset_sql("s.accounts", "create_abc")
    staged = f"file:/w/accounts_changes/_staging/changes_iceberg_{HEAD_TAG}"
    # the events: the change set's rows with the stored rows they replace, numbered by
    # the offset the record gets, in a directory named after the branch's snapshot
    assert stage.startswith(f"insert overwrite directory '{staged}' using parquet")
    assert f"cast({offset} as bigint) as table_version" not in stage  # not pre-paired
    assert f"{offset} as _commit_version" in stage
    assert "join (select _change, tenant_id, `id` from cs" in stage
    assert record == (
        f"insert into s.accounts__jammi_changelog select '{HEAD_TAG}', {offset}, '{staged}'"
    )
    # the offset counts committed rows only: the table's ancestry, or the first version's
    assert offset == (
        "(select coalesce(max(_offset), 0) + 1 from s.accounts__jammi_changelog where tag in "
        "(select cast(snapshot_id as string) from s.accounts.history where is_current_ancestor)"
        " or tag = 'create_abc')"
    )


def test_the_first_version_is_staged_and_recorded_before_the_create():
    steps = changelog_iceberg.create_steps(logged(), "s.accounts", "cs")
    assert [s["sql"].split(" (")[0] for s in steps][0] == (
        "create table if not exists s.accounts__jammi_changelog"
    )
    assert "_changes/_staging/changes_iceberg_create_abc' using parquet" in steps[1]["sql"]
    assert "1 as _commit_version" in steps[1]["sql"]
    assert steps[2]["sql"] == (
        "insert into s.accounts__jammi_changelog values ('create_abc', 1, "
        "'file:/w/accounts_changes/_staging/changes_iceberg_create_abc')"
    )


def test_an_iceberg_plan_does_not_carry_previous_values():
    assert not changelog.previous_in_plan(logged())
    parquet = {**logged(), "changelog_topic": {**TOPIC, "table_format": None}}
    assert changelog.previous_in_plan(parquet)


COMMITTED = "select _offset, staged from s.accounts__jammi_changelog"


def test_a_publish_attaches_each_committed_version_the_topic_lacks_in_order():
    engine = RecordedEngine(
        {
            COMMITTED: [(3, "d3"), (1, "d1"), (2, "d2")],
            "show partitions": [("_offset=1",)],
        }
    )
    assert changelog_iceberg.publish(engine, logged(), "s.accounts") == [2, 3]
    attached = [s for s in engine.statements if s.startswith("alter table")]
    assert attached == [
        "alter table s.accounts_changes add partition (_offset=2) location 'd2'",
        "alter table s.accounts_changes add partition (_offset=3) location 'd3'",
    ]


def test_a_publish_before_any_record_attaches_nothing():
    missing = RuntimeError("[TABLE_OR_VIEW_NOT_FOUND] s.accounts__jammi_changelog")
    engine = RecordedEngine({COMMITTED: missing})
    assert changelog_iceberg.publish(engine, logged(), "s.accounts") == []
    assert not any(s.startswith("show partitions") for s in engine.statements)


def test_an_offset_attached_by_a_concurrent_repair_from_the_same_directory_is_fine():
    engine = RecordedEngine(
        {
            COMMITTED: [(1, "file:/w/t/_staging/changes_iceberg_7")],
            "show partitions": [],
            "alter table": RuntimeError("PARTITIONS_ALREADY_EXIST _offset=1"),
            "describe formatted": [("Location", "file:/w/t/_staging/changes_iceberg_7")],
        }
    )
    assert changelog_iceberg.publish(engine, logged(), "s.accounts") == []


def test_an_offset_attached_from_another_directory_fails_naming_the_staged_events():
    engine = RecordedEngine(
        {
            COMMITTED: [(1, "file:/w/t/_staging/changes_iceberg_8")],
            "show partitions": [],
            "alter table": RuntimeError("PARTITIONS_ALREADY_EXIST _offset=1"),
            "describe formatted": [("Location", "file:/w/t/_staging/changes_iceberg_7")],
        }
    )
    with pytest.raises(changelog.ChangelogPublishError) as raised:
        changelog_iceberg.publish(engine, logged(), "s.accounts")
    message = str(raised.value)
    assert "version 1 is already published from file:/w/t/_staging/changes_iceberg_7" in message
    assert "Fix: publish the events in file:/w/t/_staging/changes_iceberg_8" in message


def test_turned_on_for_an_existing_table_it_starts_after_the_committed_records():
    engine = RecordedEngine({COMMITTED: [(4, "d4"), (5, "d5")]})
    state = {"properties": {}, "location": "file:/w/accounts", "file_format": "iceberg"}
    assert changelog_phases.start(engine, RELATION, state, "iceberg") == 6
    assert engine.statements[-1] == (
        "alter table s.accounts set tblproperties ('jammi.changelog_since' = '6')"
    )
    assert state["properties"]["jammi.changelog_since"] == "6"


def test_a_repair_before_the_plan_publishes_what_a_stopped_run_committed():
    engine = RecordedEngine({COMMITTED: [(1, "d1")], "show partitions": []})
    state = {"properties": {}, "location": "file:/w/accounts", "file_format": "iceberg"}
    changelog_phases.repair(engine, logged(), RELATION, state)
    assert "alter table s.accounts_changes add partition (_offset=1) location 'd1'" in (
        engine.statements
    )


def iceberg_topic_logged() -> dict:
    topic = dict(TOPIC, file_format="iceberg", columns=["_row_idx", "_produced_at", "id"])
    return {**definition(), "changelog_topic": topic}


def test_an_iceberg_topic_stores_each_version_it_lacks_by_one_merge_in_order():
    engine = RecordedEngine(
        {COMMITTED: [(3, "d3"), (1, "d1"), (2, "d2")], "select coalesce(max(_offset)": [(1,)]}
    )
    assert changelog_iceberg.publish(engine, iceberg_topic_logged(), "s.accounts") == [2, 3]
    merges = [s for s in engine.statements if s.startswith("merge into")]
    assert [m.split("cast(")[1].split(" as")[0] for m in merges] == ["2", "3"]
    views = [s for s in engine.statements if s.startswith("create temporary view")]
    assert views[0].endswith("using parquet options (path 'd2')")
    view = views[0].split()[3]
    assert f"from {view} staged) source on target._offset = 2" in merges[0]
    assert f"drop view if exists {view}" in engine.statements
    assert not any(s.startswith(("show partitions", "alter table")) for s in engine.statements)


def test_an_iceberg_version_another_run_stored_first_is_not_stored_again():
    taken = RuntimeError("SparkRuntimeException: jammi: topic offset already claimed: 2")
    conflict = RuntimeError("ValidationException: Found conflicting files that can contain")
    answers = {COMMITTED: [(2, "d2")], "select coalesce(max(_offset)": [(1,)]}
    engine = RecordedEngine({**answers, "merge into": taken})
    assert changelog_iceberg.publish(engine, iceberg_topic_logged(), "s.accounts") == []

    class ConflictThenTaken(RecordedEngine):
        def __call__(self, sql):
            if sql.startswith("merge into"):
                self.statements.append(sql)
                merges = sum(s.startswith("merge into") for s in self.statements)
                raise conflict if merges == 1 else taken
            return super().__call__(sql)

    engine = ConflictThenTaken(answers)
    assert changelog_iceberg.publish(engine, iceberg_topic_logged(), "s.accounts") == []
    assert sum(s.startswith("merge into") for s in engine.statements) == 2


def test_other_errors_of_an_iceberg_version_store_are_raised():
    answers = {COMMITTED: [(1, "d1")], "select coalesce(max(_offset)": [(0,)]}
    engine = RecordedEngine({**answers, "merge into": RuntimeError("[PATH_NOT_FOUND] d1")})
    with pytest.raises(RuntimeError, match="PATH_NOT_FOUND"):
        changelog_iceberg.publish(engine, iceberg_topic_logged(), "s.accounts")
