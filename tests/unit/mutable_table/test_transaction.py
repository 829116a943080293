"""A commit's records (commit/transaction.py) and what the row rules add to one
(rules/rules_service.py), against recorded statements: which records, in which order,
with what each writes outside the table."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from dbt.adapters.jammi.mutable_table.commit.attempt import Attempt, TableWrite
from dbt.adapters.jammi.mutable_table.commit.transaction import Record, Transaction
from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition
from dbt.adapters.jammi.mutable_table.rules.rules_service import RulesService
from tests.unit.recorded_engine import RecordedEngine

LOCATION = "file:/w/s/accounts/v0000000008_r2"
PLANNED = "file:/w/s/accounts/v0000000007_r1"
TOPIC = {
    "backing": "s.__topic_a",
    "location": "file:/w/__topic_a",
    "file_format": "parquet",
    "table_format": "parquet",
    "since": 1,
    "created_tag": "create_r0",
}


def definition(**config: Any) -> dict[str, Any]:
    config.setdefault("primary_key", ["id"])
    schema = {"id": "bigint", "name": "string"}
    return MutableTableDefinition.from_config("accounts", schema, config).to_dict()


def rules(engine: RecordedEngine) -> RulesService:
    return RulesService(SimpleNamespace(rows=engine), None, None)  # type: ignore[arg-type]


def test_a_transaction_keeps_its_records_in_order_with_their_undo_paths():
    records = Transaction()
    assert not records and records.steps() == []
    records.add("tombstones", "insert a", ("file:/v",))
    records.add("changelog", "stage b", ("file:/t/_staging/b",))
    records.add("changelog", "record b")
    assert records and records.statements() == ["insert a", "stage b", "record b"]
    assert records.steps()[0] == {"sql": "insert a", "undo_paths": ["file:/v"]}
    assert records.undo_paths("changelog") == ["file:/t/_staging/b"]
    assert records.undo_paths("identity") == []
    assert records.records[2] == Record("changelog", "record b")


def test_a_record_belongs_to_a_rule():
    with pytest.raises(ValueError, match="one of tombstones, identity, changelog"):
        Record("ttl", "delete from t")


def test_a_rewrite_writes_tombstones_identity_and_changelog_beside_its_version():
    engine = RecordedEngine()
    defn = dict(definition(identity_column="sk", changelog=True), identity_from=40)
    defn["changelog_topic"] = TOPIC
    write = TableWrite(defn, "s.accounts", "parquet", "NEXT")
    attempt = Attempt(planned_location=PLANNED, tombstones_sql="select 1", change_set="cs")
    records = Transaction()
    rules(engine).add_version_records(records, write, attempt, LOCATION)
    assert [r.rule for r in records.records] == ["tombstones", "identity", "changelog"]
    assert records.records[0].undo_paths == (LOCATION,)
    assert records.records[1].undo_paths == (LOCATION,) and "40" in records.records[1].sql
    assert records.undo_paths("changelog") == ["file:/w/__topic_a/_staging/changes_v0000000008_r2"]
    assert engine.statements == []  # identity_from given: nothing is read


def test_a_table_without_rules_adds_no_records():
    records = Transaction()
    write = TableWrite(definition(), "s.accounts", "parquet", "NEXT")
    rules(RecordedEngine()).add_version_records(records, write, Attempt(), LOCATION)
    rules(RecordedEngine()).add_branch_records(records, write, Attempt(change_set="cs"))
    rules(RecordedEngine()).add_create_records(records, write, Attempt(change_set="cs"))
    assert not records


def test_iceberg_branch_records_make_their_tables_and_skip_a_changelog_without_changes():
    defn = dict(definition(identity_column="sk", changelog=True), identity_from=3)
    defn["changelog_topic"] = {**TOPIC, "table_format": "iceberg"}
    write = TableWrite(defn, "s.accounts", "iceberg", "MERGE")
    changed = Attempt(change_set="cs", counts={"total": 2}, tombstone_insert="insert t")
    engine = RecordedEngine()
    records = Transaction()
    rules(engine).add_branch_records(records, write, changed)
    assert [r.rule for r in records.records] == ["tombstones", "identity", "changelog", "changelog"]
    assert records.statements()[0] == "insert t"
    assert [s.split(" (")[0] for s in engine.statements] == [
        "create table if not exists s.accounts__jammi_identity",
        "create table if not exists s.accounts__jammi_changelog",
    ]
    unchanged = Transaction()
    rules(RecordedEngine()).add_branch_records(unchanged, write, Attempt(change_set="cs"))
    assert [r.rule for r in unchanged.records] == ["identity"]


def test_iceberg_create_records_stage_the_first_version_before_the_create():
    defn = dict(definition(changelog=True))
    defn["changelog_topic"] = {**TOPIC, "table_format": "iceberg"}
    records = Transaction()
    write = TableWrite(defn, "s.accounts", "iceberg", "FIRST")
    rules(RecordedEngine()).add_create_records(records, write, Attempt(change_set="cs"))
    statements = records.statements()
    assert statements[0].startswith("create table if not exists s.accounts__jammi_changelog")
    assert "'create_r0', 1," in statements[-1]
