"""Two `dbt run` processes racing inserts into one identity_column table over one Spark
Thrift Server (parquet: the rewrite applier's version claim decides; Delta, in the Delta
thrift lane: the MERGE's conflict and the identity guard make the loser re-plan and
number again). Per round: no number is held by two keys, a key never changes its
number, a number once handed out never comes back for another key (the round's first
writer also deletes the highest numbered key), and a run that reports success has all
its rows in the table.

Runs in the thrift lanes (JAMMI_THRIFT_HOST/PORT) and over Connect on Iceberg with a REST
catalog (scripts/connect_server.py lane --iceberg-rest); skipped elsewhere.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.process.harness import (
    SERVER_RACES,
    first_line,
    is_clear_failure,
    report,
    run_together,
    thrift_project,
)

pytestmark = SERVER_RACES

FORMAT = os.environ.get("JAMMI_TEST_FILE_FORMAT", "parquet")
ROUNDS = 3 if FORMAT == "parquet" else 2
ROWS = 100  # new keys per writer and round
WRITERS = ("a", "b")
REPLAN = "re-planning after a concurrent commit"

# var first_key .. first_key + rows - 1 are new keys; var delete_key (if any) is deleted
NUMBERED_SQL = """
{{ config(materialized='mutable_table', primary_key=['id'], identity_column='item_no',
          delete_when='is_deleted', file_format='FORMAT') }}
select cast({{ var('first_key') }} + id as bigint) as id, '{{ var('writer') }}' as writer,
  false as is_deleted
from range({{ var('rows') }})
{% if var('delete_key', none) is not none %}
union all select cast({{ var('delete_key') }} as bigint), 'delete', true
{% endif %}
"""


@pytest.fixture(scope="module")
def race(tmp_path_factory: pytest.TempPathFactory):
    models = {"numbered.sql": NUMBERED_SQL.replace("FORMAT", FORMAT)}
    root: Path = tmp_path_factory.mktemp("identity_race_project")
    with thrift_project(root, "identity_race", models) as found:
        yield found


def dbt_run(writer: str, first_key: int, rows: int, delete_key=None) -> list[str]:
    variables = {"writer": writer, "first_key": first_key, "rows": rows}
    if delete_key is not None:
        variables["delete_key"] = delete_key
    return ["run", "--select", "numbered", "--vars", json.dumps(variables)]


def first_key(writer: str, round_no: int) -> int:
    return 1_000_000 * round_no + 100_000 * WRITERS.index(writer)


def test_racing_inserts_never_share_or_reuse_a_number(race) -> None:
    project, sql, schema = race
    table = f"{schema}.numbered"
    seed = project.run(dbt_run("seed", 0, ROWS), "seed")
    assert seed.model("numbered").ok, seed.model("numbered").message

    numbers_of: dict[int, int] = {}  # every key ever seen -> its number
    keys_of: dict[int, int] = {}  # every number ever handed out -> its key
    problems: list[str] = []
    replans = successes = 0
    for round_no in range(1, ROUNDS + 1):
        highest = sql.rows(f"select id from {table} order by item_no desc limit 1")
        invocations = {
            w: dbt_run(
                w, first_key(w, round_no), ROWS, highest[0][0] if w == "a" and highest else None
            )
            for w in WRITERS
        }
        results = run_together(project, invocations, f"identity{round_no}")
        replans += sum(r.output.count(REPLAN) for r in results.values())
        stored = sql.rows(f"select id, item_no, writer from {table}")
        numbers = [int(n) for _, n, _ in stored]
        duplicates = len(numbers) - len(set(numbers))
        if duplicates:
            problems.append(f"round {round_no}: {duplicates} duplicate numbers")
        if any(n is None or n < 1 for n in numbers):
            problems.append(f"round {round_no}: a row without a positive number")
        for key, number, _ in stored:
            key, number = int(key), int(number)
            if numbers_of.setdefault(key, number) != number:
                problems.append(f"key {key} renumbered {numbers_of[key]} -> {number}")
            if keys_of.setdefault(number, key) != key:
                problems.append(f"number {number} reused: key {keys_of[number]}, then {key}")
        for writer, result in results.items():
            outcome = result.model("numbered")
            written = sum(1 for _, _, w in stored if w == writer)
            if outcome.ok:
                successes += 1
                if written < ROWS:  # earlier rounds' rows of the writer count too
                    problems.append(f"round {round_no}: {writer} succeeded, {written} rows")
            elif not is_clear_failure(outcome.message):
                problems.append(f"{writer}: unclear failure: {first_line(outcome.message)}")
    report(
        f"identity race ({FORMAT}): rounds={ROUNDS} successes={successes} re-plans={replans} "
        f"numbers={len(keys_of)}"
    )
    assert not problems, "\n".join(problems[:20])
    stored = sql.rows(f"select count(*), count(distinct item_no) from {table}")
    assert stored[0][0] == stored[0][1], f"duplicate numbers: {stored}"
