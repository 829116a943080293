"""A `rollback_mutable_table` racing a `dbt run` of the same parquet mutable_table over
a Spark Thrift Server (docs/versions.md): the version claim lets one of them commit on
top of the other's version or fails it with "re-run"; nothing either reports as done is
lost. Runs in the thrift lane (`make thrift-lane`); skipped elsewhere.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from tests.process.harness import (
    THRIFT_ONLY,
    ThriftSql,
    first_line,
    is_clear_failure,
    run_together,
    thrift_project,
)
from tests.process.test_thrift_races import (
    FORMAT,
    UPSERT_ROWS,
    dbt_run,
    mutable_model_sql,
    summary,
    upsert_keys,
    writer_rows,
)

pytestmark = THRIFT_ONLY

ROLLBACK_ROUNDS = 2


@pytest.fixture(scope="module")
def race(tmp_path_factory: pytest.TempPathFactory):
    root: Path = tmp_path_factory.mktemp("rollback_project")
    models = {"rollback_race.sql": mutable_model_sql()}
    with thrift_project(root, "rollback", models) as found:
        yield found


def current_location(sql: ThriftSql, table: str) -> str:
    return next(r[1] for r in sql.rows(f"describe table extended {table}") if r[0] == "Location")


def current_kind(sql: ThriftSql, location: str) -> str:
    """Whether the table's current version was written by a run or a rollback (its
    version log row, docs/versions.md)."""
    base, name = location.rstrip("/").rsplit("/", 1)
    return str(sql.rows(f"select kind from parquet.`{base}/_jammi_versions/{name}`")[0][0])


@pytest.mark.skipif(FORMAT != "parquet", reason="the parquet version claim; Delta: MERGE")
def test_rollback_racing_a_run(race) -> None:
    """Each round: a run of writer x (version V), then a rollback to V - 1 and a run of
    writer a started together. Whichever commits last decides the state, and nothing
    either of them reported as done may be missing: a rollback that committed last
    leaves the rows before x's run; a run that committed last has its rows, on top of
    the rollback if that committed, else on top of x's."""
    project, sql, schema = race
    model, table = "rollback_race", f"{schema}.rollback_race"
    seed = project.run(dbt_run(model, "seed", 0, 0, UPSERT_ROWS), "rollback_seed")
    assert seed.model(model).ok, seed.model(model).message
    counts: Counter = Counter()
    problems: list[str] = []
    for round_no in range(1, ROLLBACK_ROUNDS + 1):
        before = writer_rows(sql, table)
        x = project.run(
            dbt_run(model, "x", round_no, upsert_keys("b", round_no), UPSERT_ROWS), f"rbx{round_no}"
        )
        assert x.model(model).ok, x.model(model).message
        version = int(current_location(sql, table).rsplit("/", 1)[-1][1:11])
        rollback_args = json.dumps({"model": model, "to_version": version - 1})
        results = run_together(
            project,
            {
                "rollback": ["run-operation", "rollback_mutable_table", "--args", rollback_args],
                "run": dbt_run(model, "a", round_no, upsert_keys("a", round_no), UPSERT_ROWS),
            },
            f"rollback{round_no}",
        )
        rolled_back = results["rollback"].returncode == 0
        ran = results["run"].model(model).ok
        counts["rollbacks committed"] += rolled_back
        counts["runs committed"] += ran
        for name, ok, message in (
            ("rollback", rolled_back, results["rollback"].output),
            ("run", ran, results["run"].model(model).message),
        ):
            clear = "re-run" in (message or "") and is_clear_failure(first_line(message))
            counts["successes" if ok else "clean failures" if clear else "unclear failures"] += 1
            if not ok and not clear:
                problems.append(f"round {round_no}: {name} failed unclearly: {first_line(message)}")
        stored = writer_rows(sql, table)
        last = current_kind(sql, current_location(sql, table))
        has_x = stored.get(("x", round_no)) == UPSERT_ROWS
        has_a = stored.get(("a", round_no)) == UPSERT_ROWS
        if last == "rollback":
            lost = (
                not rolled_back
                or has_x
                or has_a
                or {k: v for k, v in stored.items() if k[0] not in ("x", "a") or k[1] != round_no}
                != before
            )
        else:
            lost = (ran and not has_a) or (rolled_back and has_x) or (not rolled_back and not has_x)
        if lost:
            counts["lost updates"] += 1
            problems.append(
                f"round {round_no}: last commit {last}, rollback ok={rolled_back}, run ok={ran}, "
                f"stored {sorted(stored.items())}, before {sorted(before.items())}"
            )
    summary(
        f"rollback racing a run ({FORMAT})",
        ROLLBACK_ROUNDS,
        counts,
        ("rollbacks committed", "runs committed", "lost updates"),
    )
    assert problems == [], "\n".join(problems)
