"""Real commit conflicts in one JVM, on Delta (the delta lane) and on Iceberg (the iceberg
lane): while a mutable_table run's MERGE is running, another session (its own
``SparkSession.newSession()``, in a thread released together with the MERGE by a barrier)
merges other keys into the same table. The format refuses one of the two commits (Delta's
conflict exceptions; Iceberg's serializable MERGE: conflicting files, or a lost metadata
swap); when it is the run's, the run re-plans against the new snapshot and merges again
(mutable_table/commit/merge_commit.py, engine/commit_conflicts.py). Nothing is lost: the
run's batch and the other writer's rows are all in the table, and the run reports the
conflicts it retried."""

from __future__ import annotations

import threading

import pytest

from dbt.adapters.jammi.mutable_table.commit import merge_commit
from dbt.adapters.jammi.mutable_table.commit.commit_service import CommitService
from tests.conftest import test_file_format
from tests.functional.mutable_table.util import rows, run
from tests.functional.topic.fixtures import spark

ROUNDS = 3
BASE_ROWS = 200_000  # a MERGE over this takes long enough for the other commit to land

LANE_FORMAT = test_file_format()
ITEMS = f"""
{{{{ config(materialized='mutable_table', primary_key=['id'], file_format='{LANE_FORMAT}') }}}}
select cast(id as bigint) as id, {{{{ var('round', 0) }}}} as round
from range({{{{ var('rows', {BASE_ROWS}) }}}})
"""

pytestmark = [
    pytest.mark.delta,
    pytest.mark.session_only,
    pytest.mark.skipif(
        test_file_format() not in ("delta", "iceberg"),
        reason="needs Delta Lake or Iceberg (their lanes)",
    ),
]


class TestDeltaMergeConflictReplans:
    @pytest.fixture(scope="class")
    def models(self):
        return {"items.sql": ITEMS}

    def test_concurrent_merge_is_replanned_and_nothing_is_lost(self, project, monkeypatch):
        table = f"{project.test_schema}.items"
        run(project, "items")
        outcomes: list[bool] = []
        other_errors: list[BaseException] = []
        original = CommitService.commit_merge

        def racing_commit(self, merge_sql, model_name, last_attempt, *args):
            if outcomes:  # a re-plan: no second racer
                result = original(self, merge_sql, model_name, last_attempt, *args)
                outcomes.append(result["committed"])
                return result
            barrier = threading.Barrier(2)
            racer = threading.Thread(target=other_writer, args=(barrier,))
            racer.start()
            barrier.wait(timeout=60)
            try:
                result = original(self, merge_sql, model_name, last_attempt, *args)
                outcomes.append(result["committed"])
            finally:
                racer.join(timeout=300)
            return result

        def other_writer(barrier: threading.Barrier) -> None:
            session = spark().newSession()
            barrier.wait(timeout=60)
            try:
                session.sql(
                    f"merge into {table} t using (select cast(-1 - id as bigint) as id, "
                    f"cast(-1 as int) as round, cast(null as string) as tenant_id "
                    f"from range({round_no * 10}, {round_no * 10 + 10})) s on t.id = s.id "
                    "when not matched then insert (id, round, tenant_id) "
                    "values (s.id, s.round, s.tenant_id)"
                ).collect()
            except Exception as exc:  # noqa: BLE001 - a refused racer is fine, recorded
                if not merge_commit.is_commit_conflict(str(exc)):
                    other_errors.append(exc)
                else:
                    refused_racers.append(round_no)

        monkeypatch.setattr(CommitService, "commit_merge", racing_commit)
        refused_racers: list[int] = []
        replans = 0
        for round_no in range(1, ROUNDS + 1):
            outcomes.clear()
            # each round updates every base key and adds 1,000 new ones
            result = run(project, "items", {"round": round_no, "rows": BASE_ROWS + 1000 * round_no})
            replans += outcomes.count(False)
            assert outcomes[-1] is True
            # run_results.json: the counts of the plan that committed, re-planned or not
            reported = result.results[0].adapter_response
            stored = BASE_ROWS + 1000 * (round_no - 1)
            assert (reported["rows_updated"], reported["rows_inserted"]) == (stored, 1000)
            assert reported["rows_deleted"] == 0
        monkeypatch.undo()

        assert other_errors == []
        print(
            f"\n{LANE_FORMAT} merge conflicts (in-JVM): rounds={ROUNDS} run conflicts={replans} "
            f"racer conflicts={len(refused_racers)} lost updates=0"
        )
        # every round raced: either the run re-planned or the racer was refused
        assert replans + len(refused_racers) >= ROUNDS
        assert replans >= 1, "the run never lost a commit race: the re-plan was not exercised"
        # the run's last batch, complete
        found = rows(
            project, f"select round, count(*), min(id), max(id) from {table} group by round"
        )
        by_round = {r[0]: r[1:] for r in found}
        assert by_round[ROUNDS] == (BASE_ROWS + 1000 * ROUNDS, 0, BASE_ROWS + 1000 * ROUNDS - 1)
        # the racers' rows: all of every racer that committed
        committed_racers = [n for n in range(1, ROUNDS + 1) if n not in refused_racers]
        assert by_round.get(-1, (0,))[0] == 10 * len(committed_racers)
