"""The create and rewrite commits' protocols (commit/version_commit.py) over a recorded
services: which steps each writes, in which order, with what it may undo, given the
typed write and attempt (commit/attempt.py)."""

from __future__ import annotations

from typing import Any

import pytest

from dbt.adapters.jammi.mutable_table.commit import version_commit
from dbt.adapters.jammi.mutable_table.commit.attempt import Attempt, TableWrite
from dbt.adapters.jammi.mutable_table.commit.transaction import Transaction

LOCATION = "file:/w/s/accounts/v0000000002_r2"
PLANNED = "file:/w/s/accounts/v0000000001_r1"
RECORDS = {"properties": "tblproperties ()", "register": "insert into registry values ()"}


class Target:
    schema, identifier = "s", "accounts"

    def __str__(self) -> str:
        return "s.accounts"


def definition(**extra: Any) -> dict[str, Any]:
    return {"table_id": "accounts", "storage_columns": [["id", "bigint"]], **extra}


class RecordedApplier:
    """What the protocols ask of the services they are given (version_commit.CommitParts),
    recorded in one object; each answer names its call."""

    def __init__(self, swaps: bool = True) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.swaps = swaps
        self.executed: list[dict[str, Any]] = []
        self.cleanup: list[str] = []
        self.versions = self  # the kept versions' service: its version log
        self.rules = self  # the row rules' service: their records
        self.steps = self  # the step runner: what it was given
        self.commits = self  # the commit paths: the swap

    def version_log_location(self, location: str) -> str:
        return f"{location}/_log"

    def version_log_sql(self, *args: Any) -> str:
        self.calls.append(("version_log", *args))
        return "version log"

    def add_version_records(
        self, records: Transaction, write: TableWrite, attempt: Attempt, location: str
    ) -> None:
        self.calls.append(("version_records", attempt.planned_location, location))
        if attempt.tombstones_sql:
            records.add("tombstones", f"tombstones {attempt.tombstones_sql}", (location,))
        records.add("identity", "identity mark", (location,))
        if write.definition.get("changelog_topic"):
            records.add("changelog", "changelog stage", ("file:/w/topic/_staging/x",))

    def add_create_records(self, records: Transaction, write: TableWrite, attempt: Any) -> None:
        if write.definition.get("changelog_topic"):
            records.add("changelog", "changelog create")

    def all_or_nothing(self, steps: list[dict[str, Any]], cleanup: Any) -> None:
        self.executed = steps
        self.cleanup = list(cleanup)

    def commit_version(self, *args: Any) -> bool:
        self.calls.append(("swap", *args))
        return self.swaps


def sqls(steps: list[dict[str, Any]]) -> list[str]:
    return [step["sql"].split("\n")[0] for step in steps]


def test_a_rewrite_writes_the_log_the_rows_its_records_then_swaps():
    applier = RecordedApplier()
    write = TableWrite(definition(changelog_topic={"backing": "t"}), Target(), "orc", "NEXT")
    attempt = Attempt(
        planned_location=PLANNED,
        counts={"total": 3},
        invocation_id="inv",
        cleanup=("drop view cs",),
        tombstones_sql="select 1",
        last_attempt=False,
        kind="rollback",
    )
    ran: list[str] = []
    committed = version_commit.commit_rewrite(applier, ran.append, write, attempt, LOCATION)
    assert committed == LOCATION
    assert sqls(applier.executed) == [
        "version log",
        f"insert overwrite directory '{LOCATION}' using orc",
        "tombstones select 1",
        "identity mark",
        "changelog stage",
    ]
    assert applier.calls[0] == ("version_records", PLANNED, LOCATION)
    assert applier.calls[1] == ("version_log", LOCATION, PLANNED, {"total": 3}, "inv", "rollback")
    swap = applier.calls[2]
    assert swap[0] == "swap" and str(swap[1]) == "s.accounts" and swap[2:4] == (PLANNED, LOCATION)
    # a lost swap on a non-last attempt re-plans; the staged events' directory goes too
    assert swap[-2:] == (False, [f"{LOCATION}/_log", "file:/w/topic/_staging/x"])
    assert applier.cleanup == ["drop view cs"] and ran == []


def test_a_rewrite_that_loses_its_swap_commits_nothing():
    applier = RecordedApplier(swaps=False)
    write = TableWrite(definition(), Target(), "parquet", "NEXT")
    attempt = Attempt(planned_location=PLANNED, fail_at="before_commit")
    assert version_commit.commit_rewrite(applier, [].append, write, attempt, LOCATION) is None
    assert sqls(applier.executed)[-1].startswith("select raise_error('jammi_fail_at=before_commit")


@pytest.mark.parametrize("file_format", ["delta", "iceberg"])
def test_a_merge_format_is_created_with_its_rows_in_one_statement(file_format):
    applier = RecordedApplier()
    write = TableWrite(definition(changelog_topic={"b": 1}), Target(), file_format, "FIRST")
    steps = version_commit.create_steps(applier, write, Attempt(), None, RECORDS)
    expected = ["create table s.accounts", RECORDS["register"]]
    if file_format == "iceberg":
        expected.insert(0, "changelog create")
    assert sqls(steps) == expected
    assert f"using {file_format}" in steps[-2]["sql"] and "FIRST" in steps[-2]["sql"]
    created = [step for step in steps if step.get("creates")]
    assert [step["creates"] for step in created] == ["s.accounts"]
    assert created[0]["undo_sql"] == "drop table if exists s.accounts"


def test_a_rewrite_format_is_created_over_its_first_version_directory():
    applier = RecordedApplier()
    write = TableWrite(definition(), Target(), "parquet", "FIRST")
    attempt = Attempt(
        counts={"total": 2}, invocation_id="inv", fail_at="register", tombstones_sql="select 1"
    )
    steps = version_commit.create_steps(applier, write, attempt, LOCATION, RECORDS)
    assert sqls(steps) == [
        "version log",
        f"insert overwrite directory '{LOCATION}' using parquet",
        "identity mark",
        "create table s.accounts (",
        "select raise_error('jammi_fail_at=register: injected failure')",
        RECORDS["register"],
    ]
    assert applier.calls[0] == ("version_log", LOCATION, None, {"total": 2}, "inv")
    # a first version's records: no plan to read from, and no tombstones yet
    assert applier.calls[1] == ("version_records", None, LOCATION)
    assert steps[0]["undo_paths"][0] == LOCATION


def test_an_attempt_from_the_materialization_keeps_its_values_and_refuses_others():
    attempt = Attempt.from_mapping(
        {"fail_at": None, "last_attempt": 0, "cleanup": ["a", "b"], "counts": {"total": 4}}
    )
    assert attempt == Attempt(last_attempt=False, cleanup=("a", "b"), counts={"total": 4})
    assert attempt.changes == 4 and Attempt().changes == 0
    with pytest.raises(ValueError, match="an attempt has no colour"):
        Attempt.from_mapping({"colour": "red"})
