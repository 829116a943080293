"""The commits' service (mutable_table/apply_service.py) over recorded services: what
``adapter.mutable_commit`` hands each commit path, and the counts it answers with."""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from types import SimpleNamespace
from typing import Any

import pytest

from dbt.adapters.jammi.mutable_table.apply_service import MutableApplyService
from dbt.adapters.jammi.mutable_table.commit.attempt import AttemptOutcome


class RecordedCommits:
    """The commit paths' service: a MERGE reports what it changed."""

    def __init__(self) -> None:
        self.merges: list[tuple[Any, ...]] = []

    def commit_merge(self, *args: Any) -> dict[str, Any]:
        self.merges.append(args)
        return {"committed": True, "counts": {"total": 9, "source": "merge"}}


def service(commits: RecordedCommits) -> MutableApplyService:
    sql = SimpleNamespace(rows=lambda statement: [])
    return MutableApplyService(sql, None, commits, None, None, None)  # type: ignore[arg-type]


DEFINITION = {"table_id": "accounts"}


@pytest.mark.parametrize(
    "staged, answered",
    [
        (None, {"total": 9, "source": "merge"}),  # counted by the MERGE (Delta)
        ({"total": 2}, {"total": 2}),  # counted when staged (Iceberg, a change set)
    ],
)
def test_a_merge_answers_the_staged_counts_else_the_merges_own(staged, answered):
    commits = RecordedCommits()
    attempt = {"counts": staged, "last_attempt": False}
    result = service(commits).commit("merge", DEFINITION, "s.a", "delta", "MERGE", attempt)
    assert result == AttemptOutcome(committed=True, counts=answered)
    assert commits.merges == [("MERGE", "accounts", False, None)]


def test_the_values_only_one_kind_reads_come_as_keywords_and_an_unknown_one_is_refused():
    commits = RecordedCommits()
    run = service(commits)
    run.commit("merge", DEFINITION, "s.a", "delta", "MERGE", {}, tombstone_insert=None)
    assert len(commits.merges) == 1
    with pytest.raises(ValueError, match="an attempt has no planned_at"):
        run.commit("merge", DEFINITION, "s.a", "delta", "MERGE", {}, planned_at="x")
    with pytest.raises(ValueError, match="not 'append'"):
        run.commit("append", DEFINITION, "s.a", "delta", "x", {})


def test_an_outcome_is_frozen_and_takes_the_run_relations_in_a_copy():
    run = service(RecordedCommits())
    tried = run.outcome(True, {"total": 0})
    with pytest.raises(FrozenInstanceError):
        tried.committed = False  # type: ignore[misc]
    finished = tried.with_run_relations(["s.a__jammi_change_set"])
    assert finished.run_relations == ("s.a__jammi_change_set",) and tried.run_relations == ()
    assert run.outcome(False, rejected="duplicate_key") == AttemptOutcome(
        committed=False, rejected="duplicate_key"
    )
