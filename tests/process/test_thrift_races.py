"""Real concurrency over a Spark Thrift Server: two `dbt run` processes started back to
back against one server (the metastore they share is the server's), racing on one
mutable_table or one topic (parquet; Delta in the Delta thrift lane). Each scenario runs
several rounds and asserts, per round: a run that reports success has all its rows in
the table; a run that fails has none and says why in a message that is not a raw stack
trace; rows committed earlier are never lost and the table is never dropped; a topic has
one backing table, and every successful publish is readable through its view.

Runs in the thrift lane (`make thrift-lane`, which starts the server and sets
JAMMI_THRIFT_HOST/PORT); skipped elsewhere.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from tests.process.harness import (
    SERVER_RACES,
    DbtResult,
    ThriftSql,
    first_line,
    is_clear_failure,
    report,
    run_together,
    thrift_project,
)

pytestmark = SERVER_RACES

FORMAT = os.environ.get("JAMMI_TEST_FILE_FORMAT", "parquet")  # the lane's: parquet, delta, iceberg
# The racing table keeps a changelog on every format (on Iceberg its records commit in
# the run's branch commit), so the races also check it holds each committed run once.
CHANGELOG = True

# A Delta commit over thrift takes about twice as long: fewer rounds keep the Delta
# thrift lane inside CI's time (each round still races two processes on one table).
# The gate's Thrift slice races fewer rounds (JAMMI_RACE_ROUNDS, scripts/lane_map.py).
UPSERT_ROUNDS = int(os.environ.get("JAMMI_RACE_ROUNDS") or (6 if FORMAT == "parquet" else 3))
FIRST_RUN_TRIALS = 2
TOPIC_FIRST_TRIALS = 3 if FORMAT == "parquet" else 2
PUBLISH_ROUNDS = 2
SEED_ROWS = 50_000  # the table every upsert rewrites: a write that takes a while
UPSERT_ROWS = 1_000
EVENTS = 100
WRITERS = ("a", "b")
REPLAN = "re-planning after a concurrent commit"  # logged by a run whose commit lost
CLAIM_LOST = "offset claim lost to a concurrent publish"  # logged by a publish that retried

MUTABLE_SQL = """
{{ config(materialized='mutable_table', primary_key=['id'], file_format='FORMAT',
          changelog=CHANGELOG) }}
select cast({{ var('first_id') }} + id as bigint) as id, '{{ var('writer') }}' as writer,
  cast({{ var('round') }} as int) as round
from range({{ var('rows') }})
"""

TOPIC_SQL = """
{{{{ config(materialized='topic', topic_name='{name}', file_format='FORMAT') }}}}
select cast(id as bigint) as event_id, '{{{{ var('writer') }}}}' as writer,
  cast({{{{ var('round') }}}} as int) as round
from range({events})
"""


def mutable_model_sql() -> str:
    """The racing mutable_table model on the lane's format (with its changelog where the
    format takes one)."""
    return MUTABLE_SQL.replace("FORMAT", FORMAT).replace("CHANGELOG", str(CHANGELOG).lower())


def first_runs() -> list[str]:
    return [f"first_race_{i}" for i in range(1, FIRST_RUN_TRIALS + 1)]


def first_topics() -> list[str]:
    return [f"topic_race_{i}" for i in range(1, TOPIC_FIRST_TRIALS + 1)]


@pytest.fixture(scope="module")
def race(tmp_path_factory: pytest.TempPathFactory):
    mutable_sql = mutable_model_sql()
    topic_sql = TOPIC_SQL.replace("FORMAT", FORMAT)
    models = {"race_items.sql": mutable_sql}
    models.update({f"{name}.sql": mutable_sql for name in first_runs()})
    topics = [*first_topics(), "topic_shared"]
    models.update(
        {f"{n}.sql": topic_sql.format(name=n.replace("_", ".", 1), events=EVENTS) for n in topics}
    )
    root: Path = tmp_path_factory.mktemp("race_project")
    with thrift_project(root, "race", models) as found:
        yield found


def dbt_run(model: str, writer: str, round_no: int, first_id: int = 0, rows: int = 0) -> list:
    variables = {"writer": writer, "round": round_no, "first_id": first_id, "rows": rows}
    return ["run", "--select", model, "--vars", json.dumps(variables)]


def upsert_keys(writer: str, round_no: int) -> int:
    """The first key a writer upserts in a round: every (writer, round) has its own."""
    return SEED_ROWS + 1_000_000 * round_no + 100_000 * WRITERS.index(writer)


def tally(results: dict[str, DbtResult], model: str, counts: Counter, problems: list) -> dict:
    """Count successes and (clear or raw) failures; return {writer: succeeded}."""
    succeeded = {}
    for writer, result in results.items():
        outcome = result.model(model)
        succeeded[writer] = outcome.ok
        if outcome.ok:
            counts["successes"] += 1
        elif is_clear_failure(outcome.message):
            counts["clean failures"] += 1
            # a clean failure is allowed, but what it said is reported: the lanes' logs
            # then tell which of the expected refusals it was
            report(f"race {model} {writer}: failed cleanly: {first_line(outcome.message)}")
        else:
            counts["unclear failures"] += 1
            problems.append(f"{model} {writer}: unclear failure: {first_line(outcome.message)}")
    return succeeded


def summary(scenario: str, rounds: int, counts: Counter, keys: tuple[str, ...]) -> None:
    fields = ("successes", "clean failures", "unclear failures", *keys)
    report(f"race {scenario}: rounds={rounds} " + " ".join(f"{k}={counts[k]}" for k in fields))


def writer_rows(sql: ThriftSql, table: str) -> dict[tuple[str, int], int]:
    found = sql.rows(f"select writer, round, count(*) from {table} group by writer, round")
    return {(w, int(r)): int(n) for w, r, n in found}


def changelog_problems(sql: ThriftSql, schema: str, table: str, committed: dict) -> list[str]:
    """The changelog of ``table`` must hold each committed (writer, round) exactly once,
    as one complete publish of inserts, with offsets increasing."""
    backing = sql.rows(f"select backing_table from {schema}.topics where relation_name = '{table}'")
    if len(backing) != 1:
        return [f"{table}: {len(backing)} changelog registrations"]
    found = sql.rows(
        "select _offset, min(writer), max(writer), min(round), max(round), count(*), "
        "count(distinct id), count_if(change_kind = 'insert') "
        f"from {schema}.{backing[0][0]} group by _offset order by _offset"
    )
    problems = []
    published = []
    for offset, writer, writer_max, round_no, round_max, events, ids, inserts in found:
        key = (writer, int(round_no))
        complete = writer == writer_max and round_no == round_max
        if not complete or not int(events) == int(ids) == int(inserts) == committed.get(key):
            problems.append(f"changelog offset {offset} is not one committed run: {found}")
        published.append(key)
    if sorted(published) != sorted(committed) or len(set(published)) != len(published):
        problems.append(f"changelog publishes {published}, committed {sorted(committed)}")
    return problems


def test_concurrent_upserts_of_different_keys(race) -> None:
    project, sql, schema = race
    table = f"{schema}.race_items"
    seed = project.run(dbt_run("race_items", "seed", 0, 0, SEED_ROWS), "seed")
    assert seed.model("race_items").ok, seed.model("race_items").message
    committed = {("seed", 0): SEED_ROWS}
    lost_earlier: set[tuple[str, int]] = set()
    counts: Counter = Counter()
    problems: list[str] = []
    for round_no in range(1, UPSERT_ROUNDS + 1):
        results = run_together(
            project,
            {
                w: dbt_run("race_items", w, round_no, upsert_keys(w, round_no), UPSERT_ROWS)
                for w in WRITERS
            },
            f"upsert{round_no}",
        )
        succeeded = tally(results, "race_items", counts, problems)
        counts["re-plans"] += sum(r.output.count(REPLAN) for r in results.values())
        if not sql.table_exists(schema, "race_items"):
            counts["tables dropped"] += 1
            problems.append(f"round {round_no}: {table} no longer exists")
            break
        stored = writer_rows(sql, table)
        for writer, ok in succeeded.items():
            found = stored.get((writer, round_no), 0)
            if ok and found != UPSERT_ROWS:
                counts["lost updates"] += 1
                problems.append(f"round {round_no}: {writer} succeeded, {found} rows stored")
            elif not ok and found:
                problems.append(f"round {round_no}: {writer} failed but {found} rows stored")
            if ok and found == UPSERT_ROWS:  # a lost update is counted once, above
                committed[(writer, round_no)] = UPSERT_ROWS
        missing = {k for k, v in committed.items() if k[1] < round_no and stored.get(k) != v}
        if missing - lost_earlier:
            problems.append(f"round {round_no}: earlier commits gone: {missing - lost_earlier}")
        lost_earlier |= missing
    counts["earlier commits lost"] = len(lost_earlier)
    changelog = changelog_problems(sql, schema, "race_items", committed) if CHANGELOG else []
    counts["changelog problems"] = len(changelog)
    problems += changelog
    summary(
        f"mutable_table upserts {'with' if CHANGELOG else 'without'} changelog ({FORMAT})",
        UPSERT_ROUNDS,
        counts,
        (
            "re-plans",
            "lost updates",
            "earlier commits lost",
            "tables dropped",
            "changelog problems",
        ),
    )
    assert problems == [], "\n".join(problems)


def test_concurrent_first_runs(race) -> None:
    project, sql, schema = race
    counts: Counter = Counter()
    problems: list[str] = []
    for trial, model in enumerate(first_runs(), start=1):
        results = run_together(
            project,
            {w: dbt_run(model, w, 0, 1_000 * WRITERS.index(w), UPSERT_ROWS) for w in WRITERS},
            model,
        )
        succeeded = tally(results, model, counts, problems)
        if not sql.table_exists(schema, model):
            if any(succeeded.values()):
                counts["tables dropped"] += 1
            problems.append(f"trial {trial}: {model} does not exist after {succeeded}")
            continue
        if not any(succeeded.values()):
            problems.append(f"trial {trial}: neither first run succeeded")
        stored = writer_rows(sql, f"{schema}.{model}")
        for writer, ok in succeeded.items():
            found = stored.get((writer, 0), 0)
            if ok and found != UPSERT_ROWS:
                counts["lost updates"] += 1
                problems.append(f"trial {trial}: {writer} succeeded, {found} rows stored")
            elif not ok and found:
                problems.append(f"trial {trial}: {writer} failed but {found} rows stored")
    summary(
        f"mutable_table first runs ({FORMAT})",
        FIRST_RUN_TRIALS,
        counts,
        ("lost updates", "tables dropped"),
    )
    assert problems == [], "\n".join(problems)


def check_topic(sql: ThriftSql, schema: str, model: str, expected: dict, problems: list) -> int:
    """One backing table per topic, the view reads it, and every successful publish
    ({(writer, round): True}) is in it; returns the number of orphaned publishes."""
    name = model.replace("_", ".", 1)
    registered = {
        r[0] for r in sql.rows(f"select backing_table from {schema}.topics where name = '{name}'")
    }
    if len(registered) != 1:
        problems.append(f"{name}: registry rows point to {len(registered)} tables {registered}")
    view_text = " ".join(
        str(r[1]) for r in sql.rows(f"describe table extended {schema}.{model}") if r[0]
    )
    read = [t for t in registered if t in view_text]
    if len(read) != 1:
        problems.append(f"{name}: the view reads {read or 'none'} of the registered {registered}")
    visible = {
        (w, int(r)): (int(n), int(o))
        for w, r, n, o in sql.rows(
            f"select writer, round, count(*), count(distinct _offset) from {schema}.{model} "
            "group by writer, round"
        )
    }
    orphaned = 0
    for (writer, round_no), ok in expected.items():
        found = visible.get((writer, round_no))
        if ok and found != (EVENTS, 1):
            orphaned += 1
            problems.append(f"{name}: {writer}'s publish (round {round_no}) reads as {found}")
        elif not ok and found:
            problems.append(f"{name}: {writer}'s failed publish (round {round_no}) is visible")
    return orphaned


def test_concurrent_first_publishes_of_a_topic(race) -> None:
    project, sql, schema = race
    counts: Counter = Counter()
    problems: list[str] = []
    for model in first_topics():
        results = run_together(project, {w: dbt_run(model, w, 0) for w in WRITERS}, model)
        succeeded = tally(results, model, counts, problems)
        expected = {(w, 0): ok for w, ok in succeeded.items()}
        counts["orphaned publishes"] += check_topic(sql, schema, model, expected, problems)
    summary(
        f"topic first publishes ({FORMAT})", TOPIC_FIRST_TRIALS, counts, ("orphaned publishes",)
    )
    assert problems == [], "\n".join(problems)


def test_concurrent_publishes_of_one_topic(race) -> None:
    project, sql, schema = race
    model = "topic_shared"
    first = project.run(dbt_run(model, "seed", 0), "topic_seed")
    assert first.model(model).ok, first.model(model).message
    expected = {("seed", 0): True}
    counts: Counter = Counter()
    problems: list[str] = []
    for round_no in range(1, PUBLISH_ROUNDS + 1):
        results = run_together(
            project, {w: dbt_run(model, w, round_no) for w in WRITERS}, f"publish{round_no}"
        )
        succeeded = tally(results, model, counts, problems)
        counts["claim retries"] += sum(r.output.count(CLAIM_LOST) for r in results.values())
        expected.update({(w, round_no): ok for w, ok in succeeded.items()})
    counts["orphaned publishes"] += check_topic(sql, schema, model, expected, problems)
    offsets = sql.rows(
        f"select _offset, count(distinct writer, round) from {schema}.{model} "
        "group by _offset having count(distinct writer, round) > 1"
    )
    counts["shared offsets"] = len(offsets)
    if offsets:
        problems.append(f"{model}: offsets holding more than one publish: {offsets}")
    summary(
        f"topic concurrent publishes ({FORMAT})",
        PUBLISH_ROUNDS,
        counts,
        ("claim retries", "orphaned publishes", "shared offsets"),
    )
    assert problems == [], "\n".join(problems)
